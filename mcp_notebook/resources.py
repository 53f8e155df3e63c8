"""What a server needs from anything that publishes resources (notebook cells, linked files)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, overload

from .models import EmbeddedResource, ResourceInfo

__all__ = ["ResourceListing", "ResourceProvider"]


@dataclass(frozen=True, slots=True)
class ResourceListing(Sequence[ResourceInfo]):
    """Every resource with a fingerprint of the set, computed by the provider when the set changes.

    A provider that returns one lets a server page through a long listing
    without digesting it again for every page.
    """

    items: tuple[ResourceInfo, ...]
    fingerprint: str  # the same items, the same fingerprint

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> ResourceInfo: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ResourceInfo, ...]: ...

    def __getitem__(self, index: int | slice) -> ResourceInfo | tuple[ResourceInfo, ...]:
        return self.items[index]

    def __iter__(self) -> Iterator[ResourceInfo]:
        return iter(self.items)


class ResourceProvider(Protocol):
    """A source of resources for `resources/list` and `resources/read`."""

    def list_resources(self) -> Sequence[ResourceInfo]:
        """Every resource, in a stable order (a `ResourceListing` spares the server digesting it per page)."""
        ...

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        """The contents at `uri`; raises `ResourceError` (or `PathOutsideRootError`)."""
        ...
