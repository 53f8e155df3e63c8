"""Serving a folder of notebooks: prompts in the registry, cells and files as resources, live reload.

This module holds what is served and loads it; the other jobs are next to it:
`finding.py` (which notebooks, under which key), `loading.py` (one notebook
read and built), `reloading.py` (following the files off the event loop) and
`folder_resources.py` (cells and embedded files as resources).

Each notebook is one registry group, keyed by its path relative to the served
folder (posix). A notebook that stops loading (half-written, corrupt, nested
too deeply, a symlink leading out of the folder, a FIFO or other special
file) keeps its last good prompts; its error is logged and reported in
`errors` and in the registry's warnings until it loads again. Every file,
notebooks included, is read through `sandbox` (no symlink or swap leads out
of the folder) and the files a prompt embeds follow `embeds` (a templated
path selects only below its own folder). Messages for clients name paths
relative to the served folder, never where it is on the server.

Where skills are served (a skill catalog is set: `skills`), each notebook's
build finds the skills it declares too (`loading.build`), and the catalog
takes them from here (`notebook_skills`): a notebook is read once.
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import pickle
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeGuard

import anyio

from ..exceptions import NotebookFormatError
from ..models import EmbeddedResource, PromptSpec, Skill
from ..registry import PromptRegistry
from ..resources import ResourceListing, ResourceProvider
from .cells import NotebookPrompts
from .finding import Listed, Seen, ServedPaths, SwapBounds, present
from .folder_resources import MAX_FILE_BYTES, FolderResources
from .index import Entry, NotebookIndex, Stamp
from .loading import MAX_NOTEBOOK_BYTES, NotebookState, build, build_stored, failure_reason
from .loading import digest as file_digest
from .offload import MIN_BYTES as MIN_OFFLOADED_BYTES
from .offload import BuildProcess
from .parallel import Built, SharedBuild, worker_count
from .reloading import Refreshable, Reloader
from .sandbox import FileRefusal, SandboxedFile, look_inside, resolve_inside
from .stored import Body, Interned, StoredBody, restore
from .test_cells import PromptTest

__all__ = ["MAX_FILE_BYTES", "MAX_NOTEBOOK_BYTES", "NotebookFolderSource"]

log = logging.getLogger(__name__)


@contextmanager
def sources_unlogged() -> Iterator[None]:
    """The sources log nothing meanwhile (nor logging's last resort): for one-shot commands, which report every
    notebook's problem themselves, once."""
    sources = logging.getLogger("mcp_notebook.sources")
    propagate, sources.propagate = sources.propagate, False
    silent = logging.NullHandler()
    sources.addHandler(silent)
    try:
        yield
    finally:
        sources.removeHandler(silent)
        sources.propagate = propagate


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size, status.st_ino)


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
        self._given = tuple(Path(os.path.abspath(Path(p).expanduser())) for p in paths)
        resolved = tuple(path.resolve() for path in self._given)
        for path in resolved:
            if not path.exists():
                raise FileNotFoundError(f"No such notebook or folder: {path}")
        self._serve_at(resolved)
        self._swaps = SwapBounds.at(self._given, resolved)
        self._refused: tuple[Path, ...] | None = None  # a swap not followed, said once
        self._registry = registry
        # Notebooks loaded by an earlier run, reused while their files are unchanged (see sources/index.py).
        self._index_folder = index_folder
        self._index_root = self._root
        self._index = NotebookIndex(index_folder, self._root) if index_folder is not None else None
        self._index_writers: list[threading.Thread] = []
        self._builder = BuildProcess()  # builds large notebooks after a save (`offload.py`); started when first needed
        self._lock = threading.RLock()
        self._states: Mapping[str, NotebookState] = MappingProxyType({})
        self._version = 0  # counts the changes published; what is derived from the prompts is keyed by it
        self._resources = FolderResources(self)
        self._skills: Refreshable | None = None

    def _serve_at(self, resolved: tuple[Path, ...]) -> None:
        """Serve the paths given as they resolve now: `resolved` (the folders, the files, their common root)."""
        self._served = ServedPaths.at(resolved)  # one value: a reader never sees half a swap

    @property
    def _resolution(self) -> tuple[Path, ...]:
        return self._served.resolution

    @property
    def skills(self) -> Refreshable | None:
        """The skills found in these folders (`skills.py`), looked for again after a save that may change one.
        Set before the first scan: notebooks are looked at for skills only while it is set."""
        return self._skills

    @skills.setter
    def skills(self, catalog: Refreshable | None) -> None:
        self._skills = catalog

    @property
    def index(self) -> NotebookIndex | None:
        """The persistent index of this folder (the skills keep what they read in it too), or None."""
        return self._index

    @property
    def given_paths(self) -> tuple[Path, ...]:
        """The served paths as given (absolute), symlinks on the way unresolved: what a swap is looked for on."""
        return self._given

    @property
    def served_folders(self) -> tuple[Path, ...]:
        """The folders served, as the given paths resolve now."""
        return self._served.folders

    @property
    def served_files(self) -> tuple[Path, ...]:
        """The notebook files given one by one, as they resolve now."""
        return self._served.files

    @property
    def _root(self) -> Path:
        return self._served.root

    @property
    def root(self) -> Path:
        """The served folder: every key is relative to it and no file read leaves it."""
        return self._root

    @property
    def notebooks(self) -> Mapping[str, Path]:
        """The served notebooks, by key (path relative to the root)."""
        return MappingProxyType({key: state.path for key, state in self._states.items()})

    def state(self, key: str) -> NotebookState | None:
        """Notebook `key` as last loaded (its prompts, warnings and published cells), or None when not served."""
        return self._states.get(key)

    @property
    def errors(self) -> Mapping[str, str]:
        """Why each notebook that currently fails to load fails, by key."""
        return MappingProxyType({key: s.error for key, s in self._states.items() if s.error})

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every warning about the served notebooks (malformed cells, load errors), by key."""
        return tuple(w for key in sorted(self._states) for w in self._states[key].group()[1])

    def notebook_skills(self) -> dict[str, tuple[tuple[Skill, ...], tuple[str, ...]]]:
        """The skills each notebook declares and the warnings about them, by key, for those that have any (as
        loaded now: a notebook that fails to load declares none meanwhile)."""
        return {
            key: (state.loaded.skills or (), state.loaded.skill_warnings)
            for key, state in self._states.items()
            if state.error is None and state.loaded is not None and (state.loaded.skills or state.loaded.skill_warnings)
        }

    def prompt_tests(self) -> dict[str, tuple[tuple[PromptSpec, ...], tuple[PromptTest, ...]]]:
        """The prompt tests of each notebook that has any, by key, with the prompts as the notebook names them
        (a test names its own notebook's prompt, whatever name a clash with another notebook serves it under)."""
        return {
            key: (state.loaded.prompts, state.loaded.tests)
            for key, state in self._states.items()
            if state.loaded is not None and state.loaded.tests
        }

    def content_kinds(self) -> dict[str, tuple[frozenset[str], Mapping[str, tuple[str, ...]]]]:
        """For each notebook, by key: the names of its prompts as it names them, and the kinds of content other
        than text of those that have any (known without reading their messages)."""
        return {
            key: (frozenset(spec.name for spec in state.loaded.prompts), dict(state.loaded.media))
            for key, state in self._states.items()
            if state.loaded is not None
        }

    # -- finding and loading ---------------------------------------------------------------

    def _key(self, path: Path) -> str | None:
        """The key of a served notebook path, or None when this source does not serve it."""
        return self._served.key(path)

    def _discover(
        self, under: Path | None = None, seen: Seen | None = None, listed: Listed | None = None
    ) -> dict[str, Path]:
        """Every served notebook on disk now (only those below `under`), as `seen` found it where the watch polls,
        or as `listed` lists it (a listing of the tree already made)."""
        return self._served.discover(under, seen=seen, listed=listed)

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
    ) -> NotebookState | None:
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
    ) -> NotebookState | None:
        """Notebook `key` from its stored `listing`, its messages and cells left to `fetch` (or its file)."""

        def body(names: tuple[str, ...]) -> StoredBody:
            return StoredBody(names, fetch, functools.partial(self._rebuild, key))

        loaded = restore(
            listing, body, origin=key, root=str(self._root), interned=interned, skills=self._skills is not None
        )
        if loaded is None:
            return None
        return NotebookState(path=path, loaded=loaded, stamp=stamp[:3], digest=digest)

    def _build(self, key: str) -> tuple[SandboxedFile, NotebookPrompts]:
        return build(self._root, key, skills=self._skills is not None)

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
            return build_stored(self._root, key, skills=self._skills is not None)
        except Exception:  # loaded again by the parent, which reports why
            return None

    def _from_built(self, key: str, path: Path, built: Built, interned: Interned) -> NotebookState | None:
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
        previous: NotebookState | None,
        stored: Mapping[str, Entry] | None = None,
        interned: Interned | None = None,
        shared: SharedBuild | None = None,
        offload: bool = False,
    ) -> NotebookState:
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
            outcome = self._builder.build(self._root, key, skills=self._skills is not None)
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
        return NotebookState(path=path, loaded=loaded, stamp=file.stamp, digest=digest)

    @staticmethod
    def _failed(key: str, path: Path, previous: NotebookState | None, reason: str) -> NotebookState:
        """Notebook `key` that failed to load for `reason`: it keeps its last good prompts, if any."""
        kept = previous.loaded if previous else None
        note = "; its last good prompts stay served" if kept and kept.prompts else ""
        log.warning("notebook %s failed to load: %s%s", key, reason, note)
        digest = previous.digest if previous else None
        return NotebookState(path=path, loaded=kept, error=f"{key}: {reason}{note}", digest=digest)

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
    def _same_prompts(old: NotebookState | None, new: NotebookState) -> TypeGuard[NotebookState]:
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
    def _unchanged(state: NotebookState, path: Path) -> bool:
        """Whether `path` is still the very file `state` was loaded from, untouched since."""
        return state.error is None and state.path == path and state.stamp is not None and state.stamp == _stamp(path)

    def scan(
        self, *, workers: int | None = 0, meanwhile: Callable[[], object] | None = None, listed: Listed | None = None
    ) -> None:
        """Load every served notebook and publish them all as one registry change.

        With `workers`, that many forked children build a share each of the notebooks the
        index does not have (`parallel.py`; None: as many as pay off here); the result is the same.
        `meanwhile` is other work of this process (a server's imports), done while children build.
        `listed`: the served folders' tree as listed just before (by the skills), not walked again.
        """
        with self._lock:
            found = self._discover(listed=listed)
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

    def first_scan(self, meanwhile: Callable[[], object] | None = None, *, listed: Listed | None = None) -> None:
        """`scan` for a server's start, whichever way it serves (stdio, HTTP, each worker), doing `meanwhile` too.

        The first scan makes millions of objects and hardly a cycle: collecting during it only
        costs time (a fifth of it at 100,000 prompts). What it built lives as long as the
        process, so it is then frozen out of later collections, which stay short (no pause of a
        second on a save). Collection is switched off for the whole process meanwhile.
        """
        enabled = gc.isenabled()
        gc.disable()
        try:
            self.scan(workers=None, meanwhile=meanwhile, listed=listed)
        finally:
            gc.freeze()
            if enabled:
                gc.enable()

    def reload(self, changed: Iterable[Path], *, in_turn: bool = False, seen: Seen | None = None) -> bool:
        """Reload the notebooks at `changed` paths (added, modified, deleted, renamed; folders too).

        Returns whether anything published changed. A notebook that fails to
        load keeps its last good prompts; the others are unaffected. `in_turn`
        (the watch's turn-taker): publish nothing if swapped meanwhile, and
        build large notebooks in the helper process. With `seen` (the watch's
        first look at what it polls), what is there is what that look found.
        """
        found: dict[str, Path] = {}
        rescanned: dict[str, Path] = {}
        gone: set[str] = set()
        with self._lock:
            for raw in changed:
                path = Path(os.path.abspath(raw if Path(raw).is_absolute() else self._root / raw))
                key = self._key(path)
                if key is not None:
                    if present(path, seen):
                        found[key] = path
                    else:
                        gone.add(key)
                    continue
                # A folder that appeared, vanished or moved: look again at everything below it.
                if path.is_relative_to(self._root):
                    prefix = path.relative_to(self._root).as_posix()
                    below = {k for k in self._states if prefix == "." or k.startswith(prefix + "/")}
                    now = self._discover(under=path, seen=seen) if path.is_dir() else {}
                    rescanned.update(now)
                    gone |= below - set(now)
            below_only = {key: path for key, path in rescanned.items() if key not in found}
            gone -= set(found) | set(rescanned)
            changes = {**found, **below_only}
            return self._apply(changes, gone, rescanned=below_only, unless_moved=in_turn, offload=in_turn)

    def catch_up(self, path: Path) -> str | None:
        """Reload the notebook at `path` now, unless it is still the very file last loaded (a save the watch
        has not got to yet is seen at once); its key, or None when this source does not serve it."""
        key = self._key(path)
        if key is None:
            return None
        state = self._states.get(key)
        if state is None or not self._unchanged(state, path):
            self.reload([path])
        return key

    def accepts(self, path: Path) -> bool:
        """Whether a changed path may matter: a served notebook, or anything (a folder) inside a served folder."""
        return self._served.accepts(path)

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
        await Reloader(self).watch(stop_event=stop_event, ready=ready, poll=poll)

    def _moved(self) -> bool:
        """Whether a served path now resolves elsewhere than where it is served from (a swap not followed yet)."""
        try:
            return tuple(path.resolve(strict=True) for path in self._given) != self._resolution
        except (OSError, RuntimeError):
            return False

    def follow_swap(self) -> bool:
        """Whether a served path now resolves elsewhere (a symlink on the way was swapped); if so, serve there.

        Only the paths change here: `rescan` reads the new target once it is watched.
        A path that resolves to nothing (a link being replaced, a folder deleted) is no swap.
        A link that leads anywhere but beside its first target (`SwapBounds`) is not followed:
        one warning line says so, and what is served stays as it is, unchanged until the link
        leads back.
        """
        try:
            resolved = tuple(path.resolve(strict=True) for path in self._given)
        except (OSError, RuntimeError):
            return False
        if resolved == self._resolution:
            self._refused = None
            return False
        if refused := self._swaps.refused(resolved):
            if resolved != self._refused:
                self._refused = resolved
                for index in refused:
                    log.warning(
                        "%s now leads to %s, which is not beside %s: not followed (a link is followed only to a "
                        "folder beside its first target, as git-sync swaps it); the prompts of %s stay served",
                        self._given[index],
                        resolved[index],
                        self._swaps.first[index],
                        self._resolution[index],
                    )
            return False
        self._refused = None
        with self._lock:
            self._serve_at(resolved)
        for spelled, now in zip(self._given, resolved, strict=True):
            log.info("%s now leads to %s: serving the notebooks there", spelled, now)
        return True

    def rescan(self, seen: Seen | None = None) -> bool:
        """After a swap: read every notebook of the new target and publish them all as one registry change.

        Returns whether a served path was swapped again meanwhile (then followed, and nothing published).
        With `seen` (the new watch's first look at what it polls), what is there is what that look found.
        """
        with self._lock:
            if self._index is not None and self._index_folder is not None and self._index_root != self._root:
                self.wait_for_index()
                self._index.close()
                self._index = NotebookIndex(self._index_folder, self._root)
                self._index_root = self._root
            found = self._discover(seen=seen)
            gone = [key for key in self._states if key not in found]
            self._apply(found, gone, store=False, unless_moved=True, offload=True)
            if self.follow_swap():
                return True
            self._store_index(keep=set(found))
        return False

    # -- files and resources -----------------------------------------------------------------

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
        return self._resources.read_file(spec, path)

    def list_resources(self) -> ResourceListing:
        """Every published cell, then every existing file a prompt embeds by a fixed path.

        The cells are listed once per change of the served notebooks; the
        embedded files are looked at on every call (their sizes change
        without a notebook changing).
        """
        return self._resources.list_resources()

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        """A cell's published source and media, or a file that a served prompt embeds."""
        return self._resources.read_resource(uri)


if TYPE_CHECKING:  # the server takes a folder source as its ResourceProvider; keep them in step

    def _as_resource_provider(source: NotebookFolderSource) -> ResourceProvider:
        return source
