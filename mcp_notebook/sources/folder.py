"""Serving a folder of notebooks: prompts in the registry, cells and files as resources, live reload.

Each notebook is one registry group, keyed by its path relative to the served
folder (posix). A notebook that stops loading (half-written, corrupt) keeps
its last good prompts; its error is logged and reported in `errors` and in
the registry's warnings until it loads again.
"""

from __future__ import annotations

import base64
import logging
import mimetypes
import os
import posixpath
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import anyio

from ..exceptions import NotebookFormatError, PathOutsideRootError, ResourceError
from ..models import AudioContent, EmbeddedResource, ImageContent, PromptSpec, ResourceInfo, TextContent
from ..registry import PromptRegistry
from ..rendering import PLACEHOLDER_PATTERN, is_textual_mime_type
from ..resources import ResourceProvider
from .cells import NotebookPrompts, PublishedCell, load_notebook
from .uris import is_absolute_path, normalize_relative_path, parse_notebook_uri, to_cell_uri, to_file_uri
from .watch import watch_paths

__all__ = ["MAX_FILE_BYTES", "NotebookFolderSource"]

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 10_000_000  # an embedded file larger than this is refused rather than sent to a model
_SKIPPED_FOLDERS = frozenset({".ipynb_checkpoints", "__pycache__", "node_modules"})


@dataclass(frozen=True, slots=True)
class _NotebookState:
    path: Path
    loaded: NotebookPrompts | None  # the last good load
    error: str | None = None
    stamp: tuple[int, int, int] | None = None  # (mtime_ns, size, inode) of the file that was loaded

    def group(self) -> tuple[tuple[PromptSpec, ...], tuple[str, ...]]:
        prompts = self.loaded.prompts if self.loaded else ()
        warnings = self.loaded.warnings if self.loaded else ()
        return prompts, (*warnings, self.error) if self.error else warnings


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size, status.st_ino)


def _is_hidden(parts: Iterable[str]) -> bool:
    return any(part.startswith(".") or part in _SKIPPED_FOLDERS for part in parts)


def _path_pattern(path: str) -> re.Pattern[str]:
    """A regex for the files a template path may name: each `{{placeholder}}` stands for any text."""
    pieces: list[str] = []
    position = 0
    for match in PLACEHOLDER_PATTERN.finditer(path):
        pieces.append(re.escape(path[position : match.start()]))
        pieces.append(".+" if match.group(1) else re.escape("{{"))
        position = match.end()
    pieces.append(re.escape(path[position:]))
    return re.compile("".join(pieces))


class NotebookFolderSource:
    """Publishes the prompts of notebook files and folders, and serves their cells as resources.

    Folders are searched recursively for `*.ipynb`, skipping hidden folders and
    `.ipynb_checkpoints`. The served root is the folder given, or the common
    parent of all the paths given; files that prompts embed must stay inside it.
    """

    def __init__(self, paths: Sequence[str | Path], registry: PromptRegistry) -> None:
        if not paths:
            raise ValueError("NotebookFolderSource needs at least one notebook file or folder")
        resolved = [Path(os.path.abspath(Path(p).expanduser())).resolve() for p in paths]
        for path in resolved:
            if not path.exists():
                raise FileNotFoundError(f"No such notebook or folder: {path}")
        self._folders = tuple(dict.fromkeys(p for p in resolved if p.is_dir()))
        self._files = tuple(dict.fromkeys(p for p in resolved if not p.is_dir()))
        self._root = Path(os.path.commonpath([*self._folders, *(f.parent for f in self._files)]))
        self._registry = registry
        self._lock = threading.RLock()
        self._states: Mapping[str, _NotebookState] = MappingProxyType({})

    @property
    def root(self) -> Path:
        """The served folder: every key is relative to it and no file read leaves it."""
        return self._root

    @property
    def notebooks(self) -> Mapping[str, Path]:
        """The served notebooks, by key (path relative to the root)."""
        return MappingProxyType({key: state.path for key, state in self._states.items()})

    @property
    def errors(self) -> Mapping[str, str]:
        """Why each notebook that currently fails to load fails, by key."""
        return MappingProxyType({key: s.error for key, s in self._states.items() if s.error})

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every warning about the served notebooks (malformed cells, load errors), by key."""
        return tuple(w for key in sorted(self._states) for w in self._states[key].group()[1])

    # -- finding and loading ---------------------------------------------------------------

    def _key(self, path: Path) -> str | None:
        """The key of a served notebook path, or None when this source does not serve it."""
        if path in self._files:
            return path.relative_to(self._root).as_posix()
        if path.suffix != ".ipynb":
            return None
        for folder in self._folders:
            if path.is_relative_to(folder) and not _is_hidden(path.relative_to(folder).parts):
                return path.relative_to(self._root).as_posix()
        return None

    def _discover(self, under: Path | None = None) -> dict[str, Path]:
        """Every served notebook on disk now (only those below `under`, when given)."""
        found: dict[str, Path] = {}
        for file in self._files:
            if file.is_file() and (under is None or file.is_relative_to(under)):
                found[file.relative_to(self._root).as_posix()] = file
        for folder in self._folders:
            start = folder
            if under is not None:
                if under.is_relative_to(folder):
                    start = under
                elif not folder.is_relative_to(under):
                    continue
            if _is_hidden(start.relative_to(folder).parts) or not start.is_dir():
                continue
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = sorted(d for d in dirnames if not _is_hidden([d]))
                for name in sorted(filenames):
                    if name.endswith(".ipynb") and not name.startswith("."):
                        path = Path(dirpath, name)
                        found[path.relative_to(self._root).as_posix()] = path
        return found

    def _load(self, key: str, path: Path, previous: _NotebookState | None) -> _NotebookState:
        stamp = _stamp(path)  # taken before reading: a save during the read makes the next look reload
        try:
            loaded = load_notebook(path, origin=key, root=str(self._root))
        except NotebookFormatError as error:
            kept = previous.loaded if previous else None
            note = "; its last good prompts stay served" if kept and kept.prompts else ""
            reason = str(error).removeprefix(f"{error.path}: ")  # the key already names the file
            log.warning("notebook %s failed to load: %s%s", key, reason, note)
            return _NotebookState(path=path, loaded=kept, error=f"{key}: {reason}{note}")
        return _NotebookState(path=path, loaded=loaded, stamp=stamp)

    def _apply(self, found: Mapping[str, Path], gone: Iterable[str], *, rescanned: Collection[str] = ()) -> bool:
        """Load `found`, forget `gone`, and publish the changed groups in one registry update.

        A `rescanned` notebook (found by looking at a folder again, not reported
        changed itself) whose file has the same modification time, size and
        inode as when it was last loaded is kept instead of being read again.
        """
        with self._lock:
            states = dict(self._states)
            changes: dict[str, tuple[Sequence[PromptSpec], Sequence[str]] | None] = {}
            for key in gone:
                if states.pop(key, None) is not None:
                    changes[key] = None
            for key, path in found.items():
                old = states.get(key)
                if key in rescanned and old is not None and self._unchanged(old, path):
                    continue
                new = self._load(key, path, old)
                states[key] = new
                if old is None or old.group() != new.group() or old.loaded != new.loaded:
                    changes[key] = new.group()
            self._states = MappingProxyType(dict(sorted(states.items())))
            if changes:
                self._registry.update(changes)
            return bool(changes)

    @staticmethod
    def _unchanged(state: _NotebookState, path: Path) -> bool:
        """Whether `path` is still the very file `state` was loaded from, untouched since."""
        return state.error is None and state.path == path and state.stamp is not None and state.stamp == _stamp(path)

    def scan(self) -> None:
        """Load every served notebook and publish them all as one registry change."""
        with self._lock:
            found = self._discover()
            self._apply(found, [key for key in self._states if key not in found])

    def reload(self, changed: Iterable[Path]) -> bool:
        """Reload the notebooks at `changed` paths (added, modified, deleted, renamed; folders too).

        Returns whether anything published changed. A notebook that fails to
        load keeps its last good prompts; the others are unaffected.
        """
        found: dict[str, Path] = {}
        rescanned: dict[str, Path] = {}
        gone: set[str] = set()
        with self._lock:
            for raw in changed:
                path = Path(os.path.abspath(raw if Path(raw).is_absolute() else self._root / raw))
                key = self._key(path)
                if key is not None:
                    if path.is_file():
                        found[key] = path
                    else:
                        gone.add(key)
                    continue
                # A folder that appeared, vanished or moved: look again at everything below it.
                if path.is_relative_to(self._root):
                    prefix = path.relative_to(self._root).as_posix()
                    below = {k for k in self._states if prefix == "." or k.startswith(prefix + "/")}
                    now = self._discover(under=path) if path.is_dir() else {}
                    rescanned.update(now)
                    gone |= below - set(now)
            below_only = {key: path for key, path in rescanned.items() if key not in found}
            return self._apply({**found, **below_only}, gone - set(found) - set(rescanned), rescanned=below_only)

    def _accepts(self, path: Path) -> bool:
        """Whether a changed path may matter: a served notebook, or anything (a folder) inside a served folder."""
        if self._key(path) is not None:
            return True
        return path.suffix != ".ipynb" and any(
            path.is_relative_to(folder) and not _is_hidden(path.relative_to(folder).parts) for folder in self._folders
        )

    async def watch(
        self,
        *,
        stop_event: anyio.Event | None = None,
        ready: Callable[[], None] | None = None,
    ) -> None:
        """Reload notebooks as they change on disk, until `stop_event` is set or the task is cancelled.

        `ready` is called once the watch is in place, after a fresh look at every
        notebook so that nothing saved before then is missed. Registry listeners
        are called on the thread running this coroutine.
        """

        def on_ready() -> None:
            try:
                self.reload([*self._folders, *self._files])
            finally:
                if ready is not None:
                    ready()

        flat = sorted({f.parent for f in self._files if not any(f.parent.is_relative_to(d) for d in self._folders)})
        await watch_paths(
            self._folders,
            flat,
            on_changes=self.reload,
            accept=self._accepts,
            ready=on_ready,
            stop_event=stop_event,
        )

    # -- files and resources -----------------------------------------------------------------

    def _read_under_root(self, relative: str, shown: str, uri: str) -> bytes:
        candidate = self._root / relative
        resolved = candidate.resolve()
        if not resolved.is_relative_to(self._root):  # a symlink that leads outside
            raise PathOutsideRootError(shown, str(self._root))
        if not resolved.is_file():
            raise ResourceError(uri, f"No file {relative!r} in the served folder {str(self._root)!r}")
        try:
            size = resolved.stat().st_size
            if size > MAX_FILE_BYTES:
                raise ResourceError(uri, f"File {relative!r} is {size} bytes; the limit is {MAX_FILE_BYTES}")
            return resolved.read_bytes()
        except OSError as error:
            raise ResourceError(uri, f"File {relative!r} cannot be read: {error.strerror or error}") from error

    def read_file(self, spec: PromptSpec, path: str) -> bytes:
        """The bytes of a file named relative to `spec`'s notebook, refusing anything outside the root.

        Raises `PathOutsideRootError` for absolute paths, `..` escapes and
        symlinks leading out of the served folder, and `ResourceError` for a
        missing file or a prompt that is not served here.
        """
        root = str(self._root)
        if spec.origin is None or spec.origin not in self._states:
            raise ResourceError(path, f"Prompt {spec.name!r} does not come from a notebook served here")
        if is_absolute_path(path):  # joining would silently drop the notebook's folder
            raise PathOutsideRootError(path, root)
        try:
            relative = normalize_relative_path(posixpath.join(posixpath.dirname(spec.origin), path), root=root)
        except PathOutsideRootError:
            raise PathOutsideRootError(path, root) from None  # name the path as the prompt gave it
        return self._read_under_root(relative, path, to_file_uri(relative))

    def _file_patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        """Every file path a served prompt embeds, relative to the root (placeholders as wildcards)."""
        patterns: dict[str, re.Pattern[str]] = {}
        for key, state in self._states.items():
            for spec in state.loaded.prompts if state.loaded else ():
                for template in spec.messages:
                    if template.path is not None:
                        full = posixpath.normpath(posixpath.join(posixpath.dirname(key), template.path))
                        patterns.setdefault(full, _path_pattern(full))
        return sorted(patterns.items())

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

    def list_resources(self) -> Sequence[ResourceInfo]:
        """Every published cell, then every existing file a prompt embeds by a fixed path."""
        states = self._states
        infos = [self._cell_info(key, cell) for key, state in states.items() for cell in (state.loaded or _EMPTY).cells]
        for relative, _ in self._file_patterns():
            if PLACEHOLDER_PATTERN.search(relative) or relative.startswith("../"):
                continue
            path = self._root / relative
            if path.is_file() and path.resolve().is_relative_to(self._root):
                mime_type = mimetypes.guess_type(relative, strict=False)[0]
                infos.append(
                    ResourceInfo(to_file_uri(relative), relative, mime_type=mime_type, size=path.stat().st_size)
                )
        return infos

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        """A cell's published source and media, or a file that a served prompt embeds."""
        location = parse_notebook_uri(uri, root=str(self._root))
        state = self._states.get(location.path)
        if location.cell is not None:
            if state is None:
                raise ResourceError(uri, f"Unknown resource {uri!r}: {location.path!r} is not a served notebook")
            cells = (state.loaded or _EMPTY).cells
            cell = next((c for c in cells if c.key == location.cell), None)
            if cell is None:
                raise ResourceError(
                    uri, f"Unknown resource {uri!r}: no published cell {location.cell!r} in {location.path}"
                )
            return _cell_contents(uri, cell)
        if state is not None:
            raise ResourceError(uri, f"Unknown resource {uri!r}: name a cell, as {to_cell_uri(location.path, '<id>')}")
        if not any(pattern.fullmatch(location.path) for _, pattern in self._file_patterns()):
            raise ResourceError(uri, f"Unknown resource {uri!r}: no served prompt embeds {location.path!r}")
        data = self._read_under_root(location.path, location.path, uri)
        mime_type = mimetypes.guess_type(location.path, strict=False)[0]
        if is_textual_mime_type(mime_type):
            try:
                return [EmbeddedResource(uri=uri, mime_type=mime_type or "text/plain", text=data.decode("utf-8"))]
            except UnicodeDecodeError:
                pass
        blob = base64.b64encode(data).decode("ascii")
        return [EmbeddedResource(uri=uri, mime_type=mime_type or "application/octet-stream", blob=blob)]


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


if TYPE_CHECKING:  # the server takes a folder source as its ResourceProvider; keep them in step

    def _as_resource_provider(source: NotebookFolderSource) -> ResourceProvider:
        return source
