"""Serving a folder source's cells and embedded files as resources, and the files its prompts embed.

Every published cell is readable at a stable URI; a file is served only when
a served prompt embeds it (`embeds`), read through `sandbox`, so no symlink or
swap leads out of the served folder. Messages for clients name paths relative
to the served folder, never where it is on the server.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import posixpath
import stat
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from ..exceptions import EmbeddedFileArgumentError, PathRefusedError, ResourceError
from ..models import AudioContent, EmbeddedResource, ImageContent, PromptSpec, ResourceInfo, TextContent
from ..registry import digest_of
from ..rendering import is_textual_mime_type
from ..resources import ResourceListing
from .cells import NotebookPrompts, PublishedCell
from .embeds import EmbedRule, is_hidden_part
from .loading import NotebookState
from .sandbox import FileRefusal, read_inside, resolve_inside
from .uris import is_absolute_path, parse_notebook_uri, to_cell_uri, to_file_uri

__all__ = ["MAX_FILE_BYTES", "FolderResources", "Published"]

MAX_FILE_BYTES = 10_000_000  # an embedded file larger than this is refused rather than sent to a model
_OUTSIDE = "is outside the served folder"


def _normalized(relative: str) -> str | None:
    """`relative` (posix) without `.` and `..` parts, or None when it leaves the served folder."""
    normal = posixpath.normpath(relative)
    return None if normal == ".." or normal.startswith("../") or normal.startswith("/") else normal


@dataclass(frozen=True, slots=True)
class _Derived:
    """What is computed once per change of the served set rather than once per request."""

    rules: Mapping[str, EmbedRule]  # every embedded path template, joined to its notebook's folder
    cells: tuple[ResourceInfo, ...]
    cells_digest: bytes


class Published(Protocol):
    """What the resources read of their folder source: where it serves, and what it publishes now."""

    _states: Mapping[str, NotebookState]
    _version: int  # counts the changes published
    _lock: threading.RLock  # held while states and version change together

    @property
    def root(self) -> Path: ...


class FolderResources:
    """The resources of one folder source: its cells, and the files its prompts embed."""

    def __init__(self, source: Published) -> None:
        self._source = source
        self._derived: tuple[int, _Derived] | None = None

    @staticmethod
    def _refusal_through_links(rule: EmbedRule, resolved: str) -> str | None:
        """Why a templated `rule` may not read `resolved` (its symlinks resolved); None when it may.

        Symlinks inside the served folder are the author's to place, and are
        followed; but a value never reaches a hidden file or a notebook through one.
        """
        name = resolved.rsplit("/", 1)[-1]
        if rule.fixed or not (is_hidden_part(name) or name.casefold().endswith(".ipynb")):
            return None
        return "leads (through a symlink) to a hidden file or a notebook, which a prompt's argument may not select"

    def _resolved(self, relative: str, rules: Sequence[EmbedRule], shown: str) -> str:
        """`relative` with its symlinks resolved, once every check on it passed; raises refusals."""
        try:
            resolved = resolve_inside(self._source.root, relative)
        except FileRefusal as refusal:
            if refusal.kind == "outside":
                raise PathRefusedError(shown, f"{_OUTSIDE} (a symlink leads out of it)") from None
            raise
        reasons = [self._refusal_through_links(rule, resolved) for rule in rules]
        if None not in reasons:
            raise PathRefusedError(shown, next(r for r in reasons if r is not None))
        return resolved

    def read_file(self, spec: PromptSpec, path: str) -> bytes:
        """`NotebookFolderSource.read_file`: a file a prompt embeds, as its paths allow (errors told there)."""
        if spec.origin is None or spec.origin not in self._source._states:
            raise ResourceError(path, f"Prompt {spec.name!r} does not come from a notebook served here")
        if is_absolute_path(path):  # joining would silently drop the notebook's folder
            raise PathRefusedError(path, f"{_OUTSIDE}: an embedded path is relative to its notebook")
        relative = _normalized(posixpath.join(posixpath.dirname(spec.origin), path))
        if relative is None:
            raise PathRefusedError(path, _OUTSIDE)
        rules = [EmbedRule.of(spec.origin, t.path) for t in spec.messages if t.path is not None]
        allowing = [rule for rule in rules if rule.refusal(relative) is None]
        if not allowing:
            reasons = [reason for rule in rules if not rule.fixed and (reason := rule.refusal(relative))]
            raise PathRefusedError(path, reasons[0] if reasons else "is not a file this prompt embeds")
        fixed = any(rule.fixed for rule in allowing)
        try:
            resolved = self._resolved(relative, [r for r in allowing if r.fixed] or allowing, path)
            return read_inside(self._source.root, resolved, limit=MAX_FILE_BYTES).data
        except FileRefusal as refusal:
            if fixed:  # the notebook's own file: not the client's doing
                raise ResourceError(to_file_uri(relative), _describe(relative, refusal)) from None
            raise EmbeddedFileArgumentError(spec.name, path, _describe(relative, refusal)) from None

    def _derived_now(self) -> _Derived:
        """The embed rules and cell listing of the current set, computed once per change."""
        cached = self._derived
        if not self._source._lock.acquire(blocking=False):
            if cached is not None:
                return cached[1]  # a rescan after a swap holds the lock: what is served until it publishes
            self._source._lock.acquire()
        try:  # a consistent pair; the work itself is done outside the lock
            states, version = self._source._states, self._source._version
        finally:
            self._source._lock.release()
        if cached is not None and cached[0] == version:
            return cached[1]
        rules: dict[str, EmbedRule] = {}
        for key, state in states.items():
            for spec in state.loaded.prompts if state.loaded else ():
                for template in spec.messages:
                    if template.path is not None:
                        rule = EmbedRule.of(key, template.path)
                        rules.setdefault(rule.template, rule)
        cells = tuple(
            self._cell_info(key, cell) for key, state in states.items() for cell in (state.loaded or _EMPTY).cells
        )
        derived = _Derived(MappingProxyType(dict(sorted(rules.items()))), cells, digest_of(cells))
        self._derived = (version, derived)
        return derived

    @staticmethod
    def _cell_info(key: str, cell: PublishedCell) -> ResourceInfo:
        return ResourceInfo(
            uri=to_cell_uri(key, cell.key),
            name=f"{key}#cell={cell.key}",
            title=f"Cell {cell.number} of {key}",
            description=f"Part of the prompt{'s' if len(cell.prompts) > 1 else ''} {', '.join(cell.prompts)}",
            mime_type=cell.mime_type,
            size=len(cell.source.encode()) if cell.source is not None else None,
        )

    def list_resources(self) -> ResourceListing:
        """Every published cell, then every existing file a prompt embeds by a fixed path.

        The cells are listed once per change of the served notebooks; the
        embedded files are looked at on every call (their sizes change
        without a notebook changing).
        """
        derived = self._derived_now()
        files: list[ResourceInfo] = []
        for relative, rule in derived.rules.items():
            if not rule.fixed or _normalized(relative) is None:
                continue
            try:
                status = os.stat(self._source.root / resolve_inside(self._source.root, relative), follow_symlinks=False)
            except (FileRefusal, OSError, ValueError):
                continue
            if stat.S_ISREG(status.st_mode):
                mime_type = mimetypes.guess_type(relative, strict=False)[0]
                files.append(ResourceInfo(to_file_uri(relative), relative, mime_type=mime_type, size=status.st_size))
        fingerprint = digest_of([derived.cells_digest, *files]).hex()
        return ResourceListing((*derived.cells, *files), fingerprint)

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        """A cell's published source and media, or a file that a served prompt embeds."""
        location = parse_notebook_uri(uri, root=str(self._source.root))
        shown = _quoted(uri)
        state = self._source._states.get(location.path)
        if location.cell is not None:
            if state is None:
                raise ResourceError(uri, f"Unknown resource {shown}: {location.path!r} is not a served notebook")
            cells = (state.loaded or _EMPTY).cells
            cell = next((c for c in cells if c.key == location.cell), None)
            if cell is None:
                raise ResourceError(
                    uri, f"Unknown resource {shown}: no published cell {_quoted(location.cell)} in {location.path}"
                )
            return _cell_contents(uri, cell)
        if state is not None:
            raise ResourceError(uri, f"Unknown resource {shown}: name a cell, as {to_cell_uri(location.path, '<id>')}")
        allowing = [rule for rule in self._derived_now().rules.values() if rule.refusal(location.path) is None]
        if not allowing:
            raise ResourceError(uri, f"Unknown resource {shown}: no served prompt embeds {_quoted(location.path)}")
        try:
            resolved = self._resolved(location.path, allowing, location.path)
            data = read_inside(self._source.root, resolved, limit=MAX_FILE_BYTES).data
        except PathRefusedError as refusal:
            if refusal.reason.startswith(_OUTSIDE):
                raise
            # Allowed as written but not where its symlinks lead: as unknown as any file no prompt embeds.
            raise ResourceError(
                uri, f"Unknown resource {shown}: no served prompt embeds {_quoted(location.path)}"
            ) from None
        except FileRefusal as refusal:
            raise ResourceError(uri, _describe(location.path, refusal)) from None
        mime_type = mimetypes.guess_type(location.path, strict=False)[0]
        if is_textual_mime_type(mime_type):
            try:
                return [EmbeddedResource(uri=uri, mime_type=mime_type or "text/plain", text=data.decode("utf-8"))]
            except UnicodeDecodeError:
                pass
        blob = base64.b64encode(data).decode("ascii")
        return [EmbeddedResource(uri=uri, mime_type=mime_type or "application/octet-stream", blob=blob)]


def _quoted(text: str, limit: int = 200) -> str:
    """`text` quoted for a message, cut short: an error never echoes a huge request back."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text)} characters)"


def _describe(relative: str, refusal: FileRefusal) -> str:
    """A client-facing message for a file that cannot be read; it names the file relative to the served folder."""
    shown = _quoted(relative)
    if refusal.kind == "missing":
        detail = "" if str(refusal) == "no such file" else f" ({refusal})"
        return f"No file {shown} in the served folder{detail}"
    if refusal.kind == "too-large":
        return f"File {shown} is too large: {refusal}"
    if refusal.kind == "special":
        return f"{shown} is not a file that can be embedded: {refusal}"
    return f"File {shown} cannot be read: {refusal}"


_EMPTY = NotebookPrompts(prompts=())


def _cell_contents(uri: str, cell: PublishedCell) -> list[EmbeddedResource]:
    contents: list[EmbeddedResource] = []
    if cell.source is not None:
        contents.append(EmbeddedResource(uri=uri, mime_type=cell.mime_type, text=cell.source))
    for block in cell.media:
        if isinstance(block, ImageContent | AudioContent):
            contents.append(EmbeddedResource(uri=uri, mime_type=block.mime_type, blob=block.data))
        elif isinstance(block, TextContent):
            contents.append(EmbeddedResource(uri=uri, mime_type="text/plain", text=block.text))
    return contents or [EmbeddedResource(uri=uri, mime_type=cell.mime_type, text="")]
