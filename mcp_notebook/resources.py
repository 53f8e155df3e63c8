"""What a server needs from anything that publishes resources (notebook cells, linked files)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .models import EmbeddedResource, ResourceInfo

__all__ = ["ResourceProvider"]


class ResourceProvider(Protocol):
    """A source of resources for `resources/list` and `resources/read`."""

    def list_resources(self) -> Sequence[ResourceInfo]:
        """Every resource, in a stable order."""
        ...

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        """The contents at `uri`; raises `ResourceError` (or `PathOutsideRootError`)."""
        ...
