"""Serving a folder of notebooks: prompts in the registry, cells and files as resources, live reload.

Each notebook is one registry group, keyed by its path relative to the served
folder (posix). A notebook that stops loading (half-written, corrupt, nested
too deeply, a symlink leading out of the folder, a FIFO or other special
file) keeps its last good prompts; its error is logged and reported in
`errors` and in the registry's warnings until it loads again. Every file,
notebooks included, is read through `sandbox` (no symlink or swap leads out
of the folder) and the files a prompt embeds follow `embeds` (a templated
path selects only below its own folder). Messages for clients name paths
relative to the served folder, never where it is on the server.
"""

from __future__ import annotations

import base64
import functools
import gc
import logging
import mimetypes
import os
import pickle
import posixpath
import stat
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeGuard

import anyio

from ..exceptions import EmbeddedFileArgumentError, NotebookFormatError, PathRefusedError, ResourceError
from ..models import AudioContent, EmbeddedResource, ImageContent, PromptSpec, ResourceInfo, TextContent
from ..registry import PromptRegistry, digest_of
from ..rendering import is_textual_mime_type
from ..resources import ResourceListing, ResourceProvider
from .cells import NotebookPrompts, PublishedCell
from .embeds import EmbedRule, is_hidden_part
from .index import Entry, NotebookIndex, Stamp
from .loading import MAX_NOTEBOOK_BYTES, build, build_stored, failure_reason, read_notebook_inside
from .loading import digest as file_digest
from .offload import MIN_BYTES as MIN_OFFLOADED_BYTES
from .offload import BuildProcess
from .parallel import Built, SharedBuild, worker_count
from .sandbox import FileRefusal, SandboxedFile, look_inside, read_inside, resolve_inside
from .stored import Body, Interned, StoredBody, restore
from .uris import is_absolute_path, parse_notebook_uri, to_cell_uri, to_file_uri
from .watch import symlinks_on_the_way, watch_paths

__all__ = ["MAX_FILE_BYTES", "MAX_NOTEBOOK_BYTES", "NotebookFolderSource"]

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 10_000_000  # an embedded file larger than this is refused rather than sent to a model
_OUTSIDE = "is outside the served folder"


@dataclass(frozen=True, slots=True)
class _NotebookState:
    path: Path
    loaded: NotebookPrompts | None  # the last good load
    error: str | None = None
    stamp: tuple[int, int, int] | None = None  # (mtime_ns, size, inode) of the file that was loaded
    digest: bytes | None = None  # of the bytes of that file: what the registry tells this group's prompts by

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
    return any(is_hidden_part(part) for part in parts)


def _exists(path: Path) -> bool:
    """Whether something other than a folder is at `path` (a dangling symlink or a FIFO counts)."""
    return os.path.lexists(path) and not path.is_dir()


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


class NotebookFolderSource:
    """Publishes the prompts of notebook files and folders, and serves their cells as resources.

    Folders are searched recursively for `*.ipynb`, skipping hidden folders and
    `.ipynb_checkpoints`. The served root is the folder given, or the common
    parent of all the paths given; files that prompts embed must stay inside it.
    """

    def __init__(
        self, paths: Sequence[str | Path], registry: PromptRegistry, *, index_folder: Path | None = None
    ) -> None:
        if not paths:
            raise ValueError("NotebookFolderSource needs at least one notebook file or folder")
        # As given: a symlink on the way (git-sync's `current`) may be swapped to a new target later on.
        self._spelled = tuple(Path(os.path.abspath(Path(p).expanduser())) for p in paths)
        resolved = tuple(path.resolve() for path in self._spelled)
        for path in resolved:
            if not path.exists():
                raise FileNotFoundError(f"No such notebook or folder: {path}")
        self._serve_at(resolved)
        self._registry = registry
        # Notebooks loaded by an earlier run, reused while their files are unchanged (see sources/index.py).
        self._index_folder = index_folder
        self._index_root = self._root
        self._index = NotebookIndex(index_folder, self._root) if index_folder is not None else None
        self._index_writers: list[threading.Thread] = []
        self._builder = BuildProcess()  # builds large notebooks after a save (`offload.py`); started when first needed
        self._lock = threading.RLock()
        self._states: Mapping[str, _NotebookState] = MappingProxyType({})
        self._version = 0  # counts the changes published; what is derived from the prompts is keyed by it
        self._derived: tuple[int, _Derived] | None = None

    def _serve_at(self, resolved: tuple[Path, ...]) -> None:
        """Serve the paths given as they resolve now: `resolved` (the folders, the files, their common root)."""
        self._resolution = resolved
        self._folders = tuple(dict.fromkeys(p for p in resolved if p.is_dir()))
        self._files = tuple(dict.fromkeys(p for p in resolved if not p.is_dir()))
        self._root = Path(os.path.commonpath([*self._folders, *(f.parent for f in self._files)]))

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
            if _exists(file) and (under is None or file.is_relative_to(under)):
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
            root = str(self._root)
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = sorted(d for d in dirnames if not _is_hidden([d]))
                # Keys made from strings: pathlib per file is most of a large folder's walk.
                folder_key = Path(os.path.relpath(dirpath, root)).as_posix()
                prefix = "" if folder_key == "." else folder_key + "/"
                for name in sorted(filenames):
                    if name.endswith(".ipynb") and not name.startswith("."):
                        found[prefix + name] = Path(dirpath, name)
        return found

    def _read_notebook(self, key: str) -> SandboxedFile:
        return read_notebook_inside(self._root, key)

    def _look(self, key: str) -> Stamp | None:
        """The identity of the file of notebook `key`, found as reading it would find it; None if it is refused."""
        try:
            return look_inside(self._root, key)  # no symlink on the way: the path is its own resolution
        except FileRefusal:
            pass
        try:
            return look_inside(self._root, resolve_inside(self._root, key))
        except FileRefusal:
            return None  # loading it says why

    def _indexed(
        self, key: str, path: Path, stored: Mapping[str, Entry] | None, interned: Interned
    ) -> _NotebookState | None:
        """The notebook as an earlier run loaded it, if its file is exactly the one it was loaded from.

        `stored` holds the entries a whole scan looked up at once; without it, the index is asked.
        """
        index = self._index
        if index is None or (stored is not None and key not in stored):
            return None
        stamp = self._look(key)
        if stamp is None:
            return None
        entry = stored.get(key) if stored is not None else index.get(key, stamp)
        if entry is None or entry[0] != stamp:
            return None
        return self._restored(key, path, stamp, entry[1], entry[2], functools.partial(index.body, key, stamp), interned)

    def _restored(
        self,
        key: str,
        path: Path,
        stamp: Stamp,
        digest: bytes,
        listing: bytes,
        fetch: Callable[[], Body | None],
        interned: Interned,
    ) -> _NotebookState | None:
        """Notebook `key` from its stored `listing`, its messages and cells left to `fetch` (or its file)."""

        def body(names: tuple[str, ...]) -> StoredBody:
            return StoredBody(names, fetch, functools.partial(self._rebuild, key))

        loaded = restore(listing, body, origin=key, root=str(self._root), interned=interned)
        if loaded is None:
            return None
        return _NotebookState(path=path, loaded=loaded, stamp=stamp[:3], digest=digest)

    def _build(self, key: str) -> tuple[SandboxedFile, NotebookPrompts]:
        return build(self._root, key)

    def _rebuild(self, key: str) -> NotebookPrompts | None:
        """Notebook `key` read from its file as it is now, for a body the index no longer has; None if it fails."""
        try:
            return self._build(key)[1]
        except Exception:  # the next reload reports it; a prompt asked for meanwhile renders empty
            log.debug("notebook %s could not be read again", key, exc_info=True)
            return None

    def _build_stored(self, key: str) -> Built | None:
        """Notebook `key` built into the index's stored form (in a child of a shared first scan); None if it fails."""
        try:
            return build_stored(self._root, key)
        except Exception:  # loaded again by the parent, which reports why
            return None

    def _from_built(self, key: str, path: Path, built: Built, interned: Interned) -> _NotebookState | None:
        """The notebook a child of a shared first scan built, restored as an index entry would be."""
        stamp, digest, listing, body = built
        state = self._restored(key, path, stamp, digest, listing, functools.partial(pickle.loads, body), interned)
        if state is not None and self._index is not None:
            self._index.put_stored(key, stamp, digest, listing, body)
        return state

    def _load(
        self,
        key: str,
        path: Path,
        previous: _NotebookState | None,
        stored: Mapping[str, Entry] | None = None,
        interned: Interned | None = None,
        shared: SharedBuild | None = None,
        offload: bool = False,
    ) -> _NotebookState:
        """Notebook `key` loaded: from the index, from a child of a shared first scan, or built.

        With `offload`, a notebook of at least `offload.MIN_BYTES` is built by the helper process
        (`offload.py`), so that parsing it never holds this process's interpreter lock.
        """
        interned = {} if interned is None else interned
        if (indexed := self._indexed(key, path, stored, interned)) is not None:
            return indexed
        built = shared.get(key) if shared is not None and not shared.mine(key) else None
        if built is not None and (restored := self._from_built(key, path, built, interned)) is not None:
            return restored
        if offload and (status := _stamp(path)) is not None and status[1] >= MIN_OFFLOADED_BYTES:
            outcome = self._builder.build(self._root, key)
            if isinstance(outcome, str):
                return self._failed(key, path, previous, outcome)
            if outcome is not None and (restored := self._from_built(key, path, outcome, interned)) is not None:
                return restored
        try:
            file, loaded = self._build(key)
        except Exception as error:  # one notebook, whatever is wrong with it, never stops the others loading
            if isinstance(error, NotebookFormatError):
                reason = failure_reason(error)  # the key already names the file
            else:
                log.exception("notebook %s could not be loaded", key)
                reason = f"could not be loaded ({type(error).__name__}; the server log has the details)"
            return self._failed(key, path, previous, reason)
        digest = file_digest(file)
        if self._index is not None:
            self._index.put(key, (*file.stamp, file.ctime_ns), digest, loaded)
        return _NotebookState(path=path, loaded=loaded, stamp=file.stamp, digest=digest)

    @staticmethod
    def _failed(key: str, path: Path, previous: _NotebookState | None, reason: str) -> _NotebookState:
        """Notebook `key` that failed to load for `reason`: it keeps its last good prompts, if any."""
        kept = previous.loaded if previous else None
        note = "; its last good prompts stay served" if kept and kept.prompts else ""
        log.warning("notebook %s failed to load: %s%s", key, reason, note)
        digest = previous.digest if previous else None
        return _NotebookState(path=path, loaded=kept, error=f"{key}: {reason}{note}", digest=digest)

    def _apply(
        self,
        found: Mapping[str, Path],
        gone: Iterable[str],
        *,
        rescanned: Collection[str] = (),
        stored: Mapping[str, Entry] | None = None,
        shared: SharedBuild | None = None,
        store: bool = True,
        unless_moved: bool = False,
        offload: bool = False,
    ) -> bool:
        """Load `found`, forget `gone`, and publish the changed groups in one registry update.

        A `rescanned` notebook (found by looking at a folder again, not reported
        changed itself) whose file has the same modification time, size and
        inode as when it was last loaded is kept instead of being read again.
        `stored` holds the index's entries when a whole scan looked them up at once; `shared`
        is children building some of the notebooks meanwhile (this process's own share goes first).
        Without `store`, the caller writes the index itself. With `unless_moved`, nothing is
        published when a served path resolves elsewhere by then (see `_moved`). With `offload`,
        large notebooks are built by the helper process (`_load`).
        """
        interned: Interned = {}
        with self._lock:
            states = dict(self._states)
            changes: dict[str, tuple[Sequence[PromptSpec], Sequence[str]] | None] = {}
            digests: dict[str, bytes] = {}
            for key in gone:
                if states.pop(key, None) is not None:
                    changes[key] = None
            keys = list(found) if shared is None else sorted(found, key=lambda k: not shared.mine(k))
            for key in keys:
                path = found[key]
                old = states.get(key)
                if key in rescanned and old is not None and self._unchanged(old, path):
                    continue
                new = self._load(key, path, old, stored, interned, shared, offload)
                if self._same_prompts(old, new):
                    new = replace(new, digest=old.digest)  # other bytes, the same prompts: the same group
                states[key] = new
                if old is None or old.group() != new.group() or old.loaded != new.loaded:
                    changes[key] = new.group()
                    if new.digest is not None:
                        digests[key] = new.digest
            if unless_moved and changes and self._moved():
                return False  # what was read may be a swapped-away checkout being deleted: the swap is followed
            self._states = MappingProxyType(dict(sorted(states.items())))
            if shared is not None:  # published in the order found, whoever built them
                order = [*(k for k in changes if k not in found), *found]
                changes = {key: changes[key] for key in order if key in changes}
            if changes:
                self._version += 1
                self._registry.update(changes, digests=digests)
        if store and self._index is not None and changes:
            self._store_index(keep=None)
        return bool(changes)

    @staticmethod
    def _same_prompts(old: _NotebookState | None, new: _NotebookState) -> TypeGuard[_NotebookState]:
        """Whether `new` was read from other bytes than `old` and yet publishes the very same prompts."""
        if old is None or old.digest is None or new.digest == old.digest:
            return False
        return old.loaded is not None and new.loaded is not None and old.loaded.prompts == new.loaded.prompts

    def _store_index(self, *, keep: set[str] | None) -> None:
        """Write the notebooks loaded since the last write to the index, off the caller's thread."""
        index = self._index
        if index is not None:
            writer = threading.Thread(target=index.flush, kwargs={"keep": keep}, name="notebook-index", daemon=True)
            self._index_writers = [*(w for w in self._index_writers if w.is_alive()), writer]
            writer.start()

    def wait_for_index(self, timeout: float | None = None) -> None:
        """Wait until what was loaded so far is written to the persistent index (before the process exits)."""
        for writer in list(self._index_writers):
            writer.join(timeout)

    def close(self, timeout: float | None = 10.0) -> None:
        """When the server stops: what was loaded is written to the index (waiting at most `timeout`), then closed.

        The helper process that builds large notebooks, if one was started, ends too.
        """
        self._builder.close()
        self.wait_for_index(timeout)
        if self._index is not None:
            self._index.close()

    @staticmethod
    def _unchanged(state: _NotebookState, path: Path) -> bool:
        """Whether `path` is still the very file `state` was loaded from, untouched since."""
        return state.error is None and state.path == path and state.stamp is not None and state.stamp == _stamp(path)

    def scan(self, *, workers: int | None = 0, meanwhile: Callable[[], object] | None = None) -> None:
        """Load every served notebook and publish them all as one registry change.

        With `workers`, that many forked children build a share each of the notebooks the
        index does not have (`parallel.py`; None: as many as pay off here); the result is the same.
        `meanwhile` is other work of this process (a server's imports), done while children build.
        """
        with self._lock:
            found = self._discover()
            stored = self._index.entries() if self._index is not None else None
            shared = None
            if workers != 0:
                # Those the index has never seen (one stored for another file is rebuilt here: rare, and
                # telling it apart would cost a look at every file twice).
                unstored = [key for key in found if stored is None or key not in stored]
                count = worker_count(len(unstored)) if workers is None else workers
                shared = SharedBuild(unstored, self._build_stored, count, busy=meanwhile is not None) if count else None
            try:
                if meanwhile is not None:
                    meanwhile()
                gone = [key for key in self._states if key not in found]
                self._apply(found, gone, stored=stored, shared=shared, store=False)
            finally:
                if shared is not None:
                    shared.close()
        # After a whole scan the index also forgets notebooks that are gone.
        self._store_index(keep=set(found))

    def first_scan(self, meanwhile: Callable[[], object] | None = None) -> None:
        """`scan` for a server's start, whichever way it serves (stdio, HTTP, each worker), doing `meanwhile` too.

        The first scan makes millions of objects and hardly a cycle: collecting during it only
        costs time (a fifth of it at 100,000 prompts). What it built lives as long as the
        process, so it is then frozen out of later collections, which stay short (no pause of a
        second on a save). Collection is switched off for the whole process meanwhile.
        """
        enabled = gc.isenabled()
        gc.disable()
        try:
            self.scan(workers=None, meanwhile=meanwhile)
        finally:
            gc.freeze()
            if enabled:
                gc.enable()

    def reload(self, changed: Iterable[Path]) -> bool:
        """Reload the notebooks at `changed` paths (added, modified, deleted, renamed; folders too).

        Returns whether anything published changed. A notebook that fails to
        load keeps its last good prompts; the others are unaffected.
        """
        return self._reload(changed)

    def _reload(self, changed: Iterable[Path], *, in_turn: bool = False) -> bool:
        """`reload`; `in_turn` (the watch's turn-taker): publish nothing if swapped meanwhile, offload large builds."""
        found: dict[str, Path] = {}
        rescanned: dict[str, Path] = {}
        gone: set[str] = set()
        with self._lock:
            for raw in changed:
                path = Path(os.path.abspath(raw if Path(raw).is_absolute() else self._root / raw))
                key = self._key(path)
                if key is not None:
                    if _exists(path):
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
            gone -= set(found) | set(rescanned)
            changes = {**found, **below_only}
            return self._apply(changes, gone, rescanned=below_only, unless_moved=in_turn, offload=in_turn)

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
        poll: float | None = None,
    ) -> None:
        """Reload notebooks as they change on disk, until `stop_event` is set or the task is cancelled.

        `ready` is called (on the event loop) once the watch is in place, after a
        fresh look at every notebook so that nothing saved before then is missed.
        Reading, parsing and building run in a worker thread, one look after the
        other: the event loop only queues what changed. Registry listeners are
        called on that thread.

        A symlink on the way to a served path that is swapped to a new target
        (git-sync renames a new `current` over the old one, then deletes the old
        checkout) is followed: the new target is watched, then read whole, and
        published in one change; until then the old prompts stay served. A look
        that finds the served paths swapped meanwhile publishes nothing (it may
        have seen the old checkout half deleted). `poll` (seconds) looks for
        changes that often instead of asking the kernel (`polling.py`; network
        file systems are polled anyway).
        """
        announce = ready

        def announced() -> None:
            nonlocal announce
            if announce is not None:
                call, announce = announce, None
                call()

        first = True
        while await self._watch_until_swapped(first=first, stop_event=stop_event, ready=announced, poll=poll):
            first = False

    async def _watch_until_swapped(
        self, *, first: bool, stop_event: anyio.Event | None, ready: Callable[[], None], poll: float | None
    ) -> bool:
        """Watch what is served now, until `stop_event` (False) or a symlink on the way is swapped (True).

        One task, the turn-taker, does every look in a worker thread, strictly one after the other:
        once the watch is in place, the look at everything (`first`) or, after a swap was followed, the
        read of the new target; then each batch of changes queued meanwhile, merged. Every look begins
        by asking whether a served path was swapped; a swap ends the watch after that look, and no look
        of this watch runs after it. The loop only queues paths and wakes the turn-taker.
        """
        links = frozenset(link for path in self._spelled for link in symlinks_on_the_way(path))
        queue = _Batches()
        watching = anyio.Event()
        swapped = False

        def accept(path: Path) -> bool:
            return path in links or self._accepts(path)

        names = {path.name for path in (*self._files, *links)}

        def wanted(name: str) -> bool:
            return (name.endswith(".ipynb") and not name.startswith(".")) or name in names

        async def take_turns() -> None:
            nonlocal swapped
            await watching.wait()
            if first:  # a fresh look at everything, so that nothing saved before the watch is missed
                queue.add({*self._folders, *self._files})
            elif await anyio.to_thread.run_sync(self._rescan):
                swapped = True
                return
            if not first or not queue.pending():
                ready()
            while True:
                batch = await queue.take()
                if await anyio.to_thread.run_sync(self._turn, batch - links):
                    swapped = True
                    return
                ready()  # after the first look, which every later batch follows

        async with anyio.create_task_group() as group:

            async def watch_then_end() -> None:
                flat = {f.parent for f in self._files if not any(f.parent.is_relative_to(d) for d in self._folders)}
                await watch_paths(
                    self._folders,
                    sorted(flat | {link.parent for link in links}),
                    on_changes=queue.add,
                    accept=accept,
                    ready=watching.set,
                    stop_event=stop_event,
                    poll=poll,
                    wanted=wanted,
                    descend=lambda name: not is_hidden_part(name),
                )
                group.cancel_scope.cancel()

            async def turns_then_end() -> None:
                await take_turns()
                group.cancel_scope.cancel()

            group.start_soon(watch_then_end)
            group.start_soon(turns_then_end)
        return swapped

    def _turn(self, changed: set[Path]) -> bool:
        """One look, in the turn-taker's thread: follow a swap (True), or reload `changed` (False)."""
        if self._follow_swap():  # before a batch: a swap's deletions never empty what is served
            return True
        try:
            if changed:
                self._reload(changed, in_turn=True)
        except Exception:  # one failed reload must not end the watch
            log.exception("reloading changed notebooks failed")
        return self._follow_swap()  # swapped while it read: it published nothing, the new target is read

    def _moved(self) -> bool:
        """Whether a served path now resolves elsewhere than where it is served from (a swap not followed yet)."""
        try:
            return tuple(path.resolve(strict=True) for path in self._spelled) != self._resolution
        except (OSError, RuntimeError):
            return False

    def _follow_swap(self) -> bool:
        """Whether a served path now resolves elsewhere (a symlink on the way was swapped); if so, serve there.

        Only the paths change here: `_rescan` reads the new target once it is watched.
        A path that resolves to nothing (a link being replaced, a folder deleted) is no swap.
        """
        try:
            resolved = tuple(path.resolve(strict=True) for path in self._spelled)
        except (OSError, RuntimeError):
            return False
        if resolved == self._resolution:
            return False
        with self._lock:
            self._serve_at(resolved)
        for spelled, now in zip(self._spelled, resolved, strict=True):
            log.info("%s now leads to %s: serving the notebooks there", spelled, now)
        return True

    def _rescan(self) -> bool:
        """After a swap: read every notebook of the new target and publish them all as one registry change.

        Returns whether a served path was swapped again meanwhile (then followed, and nothing published).
        """
        with self._lock:
            if self._index is not None and self._index_folder is not None and self._index_root != self._root:
                self.wait_for_index()
                self._index.close()
                self._index = NotebookIndex(self._index_folder, self._root)
                self._index_root = self._root
            found = self._discover()
            gone = [key for key in self._states if key not in found]
            self._apply(found, gone, store=False, unless_moved=True, offload=True)
            if self._follow_swap():
                return True
            self._store_index(keep=set(found))
        return False

    # -- files and resources -----------------------------------------------------------------

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
            resolved = resolve_inside(self._root, relative)
        except FileRefusal as refusal:
            if refusal.kind == "outside":
                raise PathRefusedError(shown, f"{_OUTSIDE} (a symlink leads out of it)") from None
            raise
        reasons = [self._refusal_through_links(rule, resolved) for rule in rules]
        if None not in reasons:
            raise PathRefusedError(shown, next(r for r in reasons if r is not None))
        return resolved

    def read_file(self, spec: PromptSpec, path: str) -> bytes:
        """The bytes of a file named relative to `spec`'s notebook, as one of the prompt's embedded paths allows.

        Raises `PathRefusedError` (a `PathOutsideRootError`) for absolute
        paths, `..` escapes, symlinks leading out of the served folder, and a
        templated path whose value selects a file outside the template's
        folder, a hidden file or a notebook; `EmbeddedFileArgumentError` when
        an argument selects a file that is missing or cannot be read; and
        `ResourceError` for a fixed path that cannot be read, or a prompt that
        is not served here.
        """
        if spec.origin is None or spec.origin not in self._states:
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
            return read_inside(self._root, resolved, limit=MAX_FILE_BYTES).data
        except FileRefusal as refusal:
            if fixed:  # the notebook's own file: not the client's doing
                raise ResourceError(to_file_uri(relative), _describe(relative, refusal)) from None
            raise EmbeddedFileArgumentError(spec.name, path, _describe(relative, refusal)) from None

    def _derived_now(self) -> _Derived:
        """The embed rules and cell listing of the current set, computed once per change."""
        cached = self._derived
        if not self._lock.acquire(blocking=False):
            if cached is not None:
                return cached[1]  # a rescan after a swap holds the lock: what is served until it publishes
            self._lock.acquire()
        try:  # a consistent pair; the work itself is done outside the lock
            states, version = self._states, self._version
        finally:
            self._lock.release()
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
                status = os.stat(self._root / resolve_inside(self._root, relative), follow_symlinks=False)
            except (FileRefusal, OSError, ValueError):
                continue
            if stat.S_ISREG(status.st_mode):
                mime_type = mimetypes.guess_type(relative, strict=False)[0]
                files.append(ResourceInfo(to_file_uri(relative), relative, mime_type=mime_type, size=status.st_size))
        fingerprint = digest_of([derived.cells_digest, *files]).hex()
        return ResourceListing((*derived.cells, *files), fingerprint)

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        """A cell's published source and media, or a file that a served prompt embeds."""
        location = parse_notebook_uri(uri, root=str(self._root))
        shown = _quoted(uri)
        state = self._states.get(location.path)
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
            data = read_inside(self._root, resolved, limit=MAX_FILE_BYTES).data
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


class _Batches:
    """Paths changed since the last look, merged; a look waits on `take` for the next (all on the event loop)."""

    def __init__(self) -> None:
        self._paths: set[Path] = set()
        self._more = anyio.Event()

    def add(self, paths: Collection[Path]) -> None:
        self._paths.update(paths)
        self._more.set()

    def pending(self) -> bool:
        return bool(self._paths)

    async def take(self) -> set[Path]:
        while not self._paths:
            await self._more.wait()
            self._more = anyio.Event()
        paths, self._paths = self._paths, set()
        return paths


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
