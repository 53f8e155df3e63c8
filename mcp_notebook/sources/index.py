"""A persistent index of loaded notebooks and skills, so that a server started again reads only what changed.

Each notebook's prompts are stored as they were built (`stored.py`: a compact
listing, and the messages and cells apart, read when first used), keyed by the
served folder, the notebook's path in it, and the identity of the file they were
built from: modification time, size, inode and status-change time. A start asks
for every entry of its folder in one query. A notebook
is taken from the index only when its file still has exactly that identity;
anything else (an edit, a save that replaced the file, a touch) loads it anew.
Files changed in the last two seconds are not stored, since a second write
within one timestamp tick could keep the same identity.

Skills (`skills.py`) keep what reading a file found in the same index, by the
same identity: each file of a skill folder with its SHA-256 digest (and a
`SKILL.md` with its frontmatter). A restart neither reads nor digests a
skill's file that is exactly as it was. The skills a notebook declares are
part of its own entry (`stored.py`).

The store is SQLite (in the standard library; its locking makes one index safe
to share between servers and workers). Entries are pickles of the prompt
model, so the index only ever reads a file in a folder that belongs to the
user and that nobody else can write to; any other folder is not used. A
corrupt file is set aside and rebuilt; one that is busy (another server holds
it locked for long) is left as it is, and this server goes without it until
it is free. Entries written by another version
of mcp-notebook (or of the code that builds prompts) are never read: the
format tag changes with the code. The index is an optimisation: when it cannot
be read or written, notebooks are loaded from disk as without it. A server
writes it from a thread of its own, pickling in its idle time (`IdleTurns`):
the first answers after a start are not slowed by the write it leaves behind.

Where it lives: `$MCP_NOTEBOOK_CACHE_DIR`, else `$XDG_CACHE_HOME/mcp-notebook`,
else `~/.cache/mcp-notebook`. Deleting the folder clears it.

It stays the size of what is served: after a whole scan of its folder, a
server also forgets the entries of served folders that no longer exist
(temporary ones, say), and the file gives the space back (incremental
vacuum); the write-ahead log is cut back after each checkpoint, and each
server closes the index when it stops, which folds the log into the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import io
import logging
import operator
import os
import pickle
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..discovery import CACHE_DIR_ENV, default_cache_dir
from ..version import __version__
from .cells import NotebookPrompts
from .stored import Body, body_of, listing_of

__all__ = [
    "CACHE_DIR_ENV",
    "FILE_NAME",
    "Entry",
    "IdleTurns",
    "NotebookIndex",
    "SkillEntry",
    "Stamp",
    "body_bytes",
    "default_cache_dir",
    "format_tag",
    "settled",
    "stored_value",
]

log = logging.getLogger(__name__)

FILE_NAME = "notebook-index.sqlite3"
RACY_SECONDS = 2.0  # a file changed more recently than this is not stored
Stamp = tuple[int, int, int, int]  # (mtime_ns, size, inode, ctime_ns) of the file the prompts were built from
Entry = tuple[Stamp, bytes, bytes]  # a stored notebook: its file's stamp, its file's digest, its listing
# What a file of a skill folder read for skills found: its stamp, its digest, what it held (pickled; b"": nothing).
SkillEntry = tuple[Stamp, str, bytes]

# The layout of the table; a file with another one (an older release's) is emptied and laid out anew.
# Since 3 the file gives freed space back (incremental auto-vacuum); since 4 it holds the skills' files too.
_SCHEMA_VERSION = 4
_WAL_LIMIT = 16 << 20  # bytes the write-ahead log is cut back to after a checkpoint
BUSY_SECONDS = 5.0  # how long a connection waits for another server's lock before it goes without the index
_TABLES = ("notebooks", "skill_files")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS notebooks (
    root TEXT NOT NULL,
    key TEXT NOT NULL,
    format TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    digest BLOB NOT NULL,
    prompts BLOB NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (root, key)
)
"""
# kind "file": a file of a skill folder (key: its resolved path), its digest, a SKILL.md's frontmatter in `found`.
_SKILL_SCHEMA = """
CREATE TABLE IF NOT EXISTS skill_files (
    root TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    format TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL,
    found BLOB NOT NULL,
    PRIMARY KEY (root, kind, key)
)
"""


def format_tag(package: Path | None = None) -> str:
    """Names the code that built the stored prompts: mcp-notebook's version, Python's, and every source file
    of the package (this one unless told), so that no change to the code is ever read back by older code."""
    package = package or Path(__file__).resolve().parents[1]
    digest = hashlib.blake2b(digest_size=12)
    digest.update(f"{__version__}\0{sys.version}\0{pickle.HIGHEST_PROTOCOL}\0".encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        with contextlib.suppress(OSError):  # gone since it was listed: its name alone still sets the tag apart
            digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


class _ModelReducers(dict[type, Callable[[Any], tuple[type, tuple[Any, ...]]]]):
    """The pickler's dispatch table: for each frozen value class of the prompt model, a reducer made the first
    time one is pickled; every other class is left to pickle's usual ways (a miss)."""

    def __init__(self) -> None:
        super().__init__()
        self._others: set[type] = set()

    def __missing__(self, cls: type) -> Callable[[Any], tuple[type, tuple[Any, ...]]]:
        if cls not in self._others:
            fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
            if cls.__module__.startswith("mcp_notebook.") and fields and all(f.init for f in fields):
                values = operator.attrgetter(*(f.name for f in fields))
                if len(fields) == 1:
                    reducer = functools.partial(_one_field, cls, values)
                else:
                    reducer = functools.partial(_fields, cls, values)
                self[cls] = reducer
                return reducer
            self._others.add(cls)
        raise KeyError(cls)


def _fields(cls: type, values: Callable[[Any], tuple[Any, ...]], obj: Any) -> tuple[type, tuple[Any, ...]]:
    return cls, values(obj)


def _one_field(cls: type, value: Callable[[Any], Any], obj: Any) -> tuple[type, tuple[Any, ...]]:
    return cls, (value(obj),)


class _ModelPickler(pickle.Pickler):
    """Pickles the frozen value objects of the prompt model as constructor calls.

    The default for slotted dataclasses restores each field through Python-level
    `__setstate__`; calling the constructor with the field values reads back
    about 40% faster, and reading back is what a warm start waits for. Each
    class's reducer sits in the dispatch table, which pickle consults only
    for objects of classes it has no way of its own for (a hook that sees
    every object cost twice as much, and this pickling competes with the
    answers of a server that has just started).
    """

    dispatch_table = _ModelReducers()


def _dumps(value: object) -> bytes:
    buffer = io.BytesIO()
    _ModelPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def body_bytes(loaded: NotebookPrompts) -> bytes:
    """The stored form of `loaded`'s messages and cells, as the index keeps them (`pickle.loads` reads it back)."""
    return _dumps(body_of(loaded))


class IdleTurns:
    """Turns for a background job that shares the interpreter with a server: taken while the rest is idle.

    The index is written right after a start, when a client's first listing
    comes. Pickling holds the interpreter lock, and each time answering waits
    (for the client, for a pipe, for another thread), the writer takes the
    lock and the answer waits for it again: at 100,000 prompts, a listing
    right after a cold start took 1.1 to 1.5 s beside the write, against
    0.5 s without it. So the job works in turns of `turn` seconds of wall
    time; before each but the first, it watches the rest of the process for
    `window` seconds and goes on only when that used less than `busy` of one
    core meanwhile (its own thread's time is not counted). The first turn is
    taken at once: a small job (the notebook a save reloaded) is done in it,
    before the next save can come, as it was before. Once it has waited
    `patience` seconds in all it goes on without looking (a server that is
    never idle still keeps its index). Within a turn, each `take` lets any
    thread waiting for the interpreter lock have it first.
    """

    def __init__(
        self,
        *,
        turn: float = 0.02,
        window: float = 0.01,
        busy: float = 0.1,
        patience: float = 5.0,
        clock: Callable[[], float] = time.perf_counter,
        process_time: Callable[[], float] = time.process_time,
        thread_time: Callable[[], float] = time.thread_time,
        wait: Callable[[float], object] = time.sleep,
    ) -> None:
        self._turn, self._window, self._busy, self._patience = turn, window, busy, patience
        self._clock, self._process_time, self._thread_time, self._wait = clock, process_time, thread_time, wait
        self._began: float | None = None  # when the current turn began; None before the first (taken at once)
        self.waited = 0.0  # seconds spent watching the rest of the process

    def take(self) -> None:
        """Return when the job may do its next piece of work (the class docstring says when)."""
        if self._began is None:  # the first turn at once: a small job (a saved notebook) is done within it
            self._began = self._clock()
            return
        if self._clock() - self._began < self._turn:
            self._wait(0)  # within the turn: a thread waiting for the interpreter lock goes first
            return
        while self.waited < self._patience:
            wall, process, own = self._clock(), self._process_time(), self._thread_time()
            self._wait(self._window)
            elapsed = self._clock() - wall
            others = (self._process_time() - process) - (self._thread_time() - own)
            self.waited += elapsed
            if others <= self._busy * elapsed:
                break
        self._began = self._clock()


def settled(stamp: Stamp) -> bool:
    """Whether a file of `stamp` last changed long enough ago (`RACY_SECONDS`) that any later write changes
    its stamp: what was read from it may be kept by its stamp (a second write within the same timestamp tick
    could keep this identity)."""
    return time.time_ns() - max(stamp[0], stamp[3]) >= RACY_SECONDS * 1e9


def stored_value(found: bytes) -> tuple[bool, Any]:
    """(True, the value) of what `put_skill` stored as `found`, (False, None) when it is damaged (a miss)."""
    if not found:
        return True, None
    try:
        return True, pickle.loads(found)
    except Exception:
        log.debug("a skill entry of the notebook index is unreadable", exc_info=True)
        return False, None


def _private(path: Path, *, folder: bool) -> bool:
    """Whether `path` belongs to this user and nobody else may write to it (where ownership exists)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not (stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)):
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _give_space_back(connection: sqlite3.Connection) -> None:
    """Switch a file laid out anew to incremental auto-vacuum (needs a `VACUUM`: cheap, the table is empty)."""
    if connection.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
        return
    try:
        connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        connection.execute("VACUUM")
    except sqlite3.OperationalError as error:  # another server is reading it: the next layout does it
        log.info("notebook index keeps its freed space for now: %s", error)


def _roots(connection: sqlite3.Connection, table: str) -> list[str]:
    """The served folders `table` holds entries of (one step down the primary key's index per folder)."""
    roots: list[str] = []
    row = connection.execute(f"SELECT min(root) FROM {table}").fetchone()
    while row is not None and row[0] is not None:
        roots.append(row[0])
        row = connection.execute(f"SELECT min(root) FROM {table} WHERE root > ?", (row[0],)).fetchone()
    return roots


def _gone(root: str) -> bool:
    """Whether the served folder `root` no longer exists (a folder that cannot be looked at is not gone)."""
    try:
        os.stat(root)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


class NotebookIndex:
    """The prompts of notebooks loaded before, by folder, path and file identity; thread-safe.

    `get` answers from the file; `put` keeps the entry in memory and `flush`
    writes everything kept in one transaction (from any thread).
    """

    def __init__(self, folder: Path, root: Path) -> None:
        self._folder = folder
        self._root = str(root)
        self._format = format_tag()
        self._lock = threading.Lock()  # the reading connection and what is pending
        self._writing = threading.Lock()  # one write at a time from this process
        # Immutable; pickled by `flush` (or already in stored form: a listing and a body).
        self._pending: dict[str, tuple[Stamp, bytes, NotebookPrompts | tuple[bytes, bytes]]] = {}
        self._pending_skills: dict[tuple[str, str], tuple[Stamp, str, object]] = {}  # (kind, key): what was found
        self._connection: sqlite3.Connection | None = None
        self._disabled = False

    @property
    def path(self) -> Path:
        return self._folder / FILE_NAME

    @property
    def root(self) -> str:
        """The served folder whose entries this reads and writes."""
        return self._root

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self._disabled:
            return self._connection
        try:
            self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            for place, folder in ((self._folder, True), (self.path, False)):
                if (folder or place.exists()) and not _private(place, folder=folder):
                    self._disable(f"{place} belongs to another user or others may write to it")
                    return None
            self._connection = self._open()
        except sqlite3.OperationalError as error:  # busy or out of reach for now: the file is not broken
            log.info("notebook index not used this time: %s", error)
        except sqlite3.DatabaseError as error:
            self._set_aside(error)
        except OSError as error:
            self._disable(str(error))
        return self._connection

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=BUSY_SECONDS, check_same_thread=False, isolation_level=None)
        try:
            # Private: only this user may read or write what other processes of theirs will unpickle (its folder is
            # private already). Never by opening and closing the file: closing any descriptor of it drops every
            # lock this process's connections hold on it, and another process could then take the write-ahead log
            # for its own and delete it from under them.
            os.chmod(self.path, 0o600)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT}")
            if connection.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                laid_out = False
                with connection:
                    connection.execute("BEGIN IMMEDIATE")  # one server lays it out; the others see it done
                    if connection.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                        for table in _TABLES:
                            connection.execute(f"DROP TABLE IF EXISTS {table}")
                        connection.execute(_SCHEMA)
                        connection.execute(_SKILL_SCHEMA)
                        connection.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                        laid_out = True
                if laid_out:
                    _give_space_back(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _set_aside(self, error: BaseException) -> None:
        """A corrupt index file: move it away and start an empty one (or go without, if that fails too)."""
        log.warning("the notebook index %s is unreadable (%s); it is rebuilt", self.path, error)
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{self.path}{suffix}")
        try:
            self._connection = self._open()
        except (OSError, sqlite3.Error) as again:
            self._disable(str(again))

    def _disable(self, reason: str) -> None:
        log.warning("the notebook index is not used: %s", reason)
        self._disabled = True
        self._connection = None

    def _query(self, sql: str, parameters: tuple[Any, ...]) -> list[Any] | None:
        with self._lock:
            connection = self._connect()
            if connection is None:
                return None
            try:
                return connection.execute(sql, parameters).fetchall()
            except sqlite3.OperationalError as error:  # busy: this look goes without the index, the file stays
                log.info("notebook index not read this time: %s", error)
                return None
            except sqlite3.DatabaseError as error:
                self._set_aside(error)
                return None

    def entries(self) -> dict[str, Entry]:
        """Every notebook of this folder stored by this version, in one query: what a start looks up."""
        rows = self._query(
            "SELECT key, mtime_ns, size, inode, ctime_ns, digest, prompts FROM notebooks WHERE root = ? AND format = ?",
            (self._root, self._format),
        )
        return {row[0]: ((row[1], row[2], row[3], row[4]), row[5], row[6]) for row in rows or ()}

    def get(self, key: str, stamp: Stamp) -> Entry | None:
        """The stored entry of notebook `key` if it was built from a file with exactly `stamp`, else None."""
        rows = self._query(
            "SELECT mtime_ns, size, inode, ctime_ns, digest, prompts FROM notebooks"
            " WHERE root = ? AND key = ? AND format = ?",
            (self._root, key, self._format),
        )
        if not rows or tuple(rows[0][:4]) != stamp:
            return None
        return stamp, rows[0][4], rows[0][5]

    def body(self, key: str, stamp: Stamp) -> Body | None:
        """The messages and cells stored for notebook `key` if built from a file with exactly `stamp`, else None."""
        rows = self._query(
            "SELECT mtime_ns, size, inode, ctime_ns, body FROM notebooks WHERE root = ? AND key = ? AND format = ?",
            (self._root, key, self._format),
        )
        if not rows or tuple(rows[0][:4]) != stamp:
            return None
        try:
            body: Body = pickle.loads(rows[0][4])
        except Exception:  # a damaged entry is a miss; the notebook is read from its file
            log.debug("notebook index body for %s is unreadable", key, exc_info=True)
            return None
        return body

    def put(self, key: str, stamp: Stamp, digest: bytes, loaded: NotebookPrompts) -> None:
        """Keep what notebook `key` loaded to, from a file of `stamp` and `digest`, for the next `flush`."""
        self._keep(key, stamp, digest, loaded)

    def put_stored(self, key: str, stamp: Stamp, digest: bytes, listing: bytes, body: bytes) -> None:
        """`put` for a notebook already in stored form (`stored.listing_of`, `body_bytes`)."""
        self._keep(key, stamp, digest, (listing, body))

    def _keep(self, key: str, stamp: Stamp, digest: bytes, loaded: NotebookPrompts | tuple[bytes, bytes]) -> None:
        if not settled(stamp):
            return
        with self._lock:
            self._pending[key] = (stamp, digest, loaded)

    def skill_entries(self) -> dict[tuple[str, str], SkillEntry]:
        """What files of this folder read for skills found, by (kind, key), in one query: what a start looks up."""
        rows = self._query(
            "SELECT kind, key, mtime_ns, size, inode, ctime_ns, digest, found FROM skill_files"
            " WHERE root = ? AND format = ?",
            (self._root, self._format),
        )
        return {(row[0], row[1]): ((row[2], row[3], row[4], row[5]), row[6], row[7]) for row in rows or ()}

    def put_skill(self, kind: str, key: str, stamp: Stamp, digest: str, found: object) -> None:
        """Keep what reading file `key` of `stamp` for skills found (`kind` "file": a skill's file, its digest and a
        SKILL.md's frontmatter or None) for the next `flush`."""
        if not settled(stamp):
            return
        with self._lock:
            self._pending_skills[(kind, key)] = (stamp, digest, found)

    def flush(self, *, keep: set[str] | None = None, keep_skills: set[tuple[str, str]] | None = None) -> None:
        """Write what was kept; with `keep`, also forget this folder's entries for every other notebook, with
        `keep_skills` for every other file read for skills (by kind and key).

        Pickling and writing happen outside the lock `get` takes, on a connection of their own
        (SQLite's write-ahead log lets readers go on meanwhile), so a reload is never kept waiting.
        Run in a thread beside a server that answers requests, it pickles in the server's idle time
        (`IdleTurns`).
        """
        with self._lock:
            pending, self._pending = self._pending, {}
            pending_skills, self._pending_skills = self._pending_skills, {}
            if self._connect() is None:
                return
        rows = []
        turns = IdleTurns()
        for key, (stamp, digest, loaded) in pending.items():
            try:
                if isinstance(loaded, tuple):
                    rows.append((self._root, key, self._format, *stamp, digest, *loaded))
                    continue
                turns.take()
                listing = listing_of(loaded, origin=key, root=self._root)
                if listing is not None:
                    rows.append((self._root, key, self._format, *stamp, digest, listing, _dumps(body_of(loaded))))
            except Exception:  # something that does not pickle is simply not stored
                log.debug("notebook %s cannot be stored in the index", key, exc_info=True)
        skill_rows = []
        for (kind, key), (stamp, file_digest, found) in pending_skills.items():
            try:
                blob = _dumps(found) if found is not None else b""
                skill_rows.append((self._root, kind, key, self._format, *stamp, file_digest, blob))
            except Exception:
                log.debug("%s %s cannot be stored in the index", kind, key, exc_info=True)
        with self._writing:
            try:
                connection = self._open()
            except (OSError, sqlite3.Error) as error:
                log.info("notebook index not written this time: %s", error)
                return
            try:
                with connection:
                    connection.execute("BEGIN IMMEDIATE")
                    connection.executemany(
                        "INSERT OR REPLACE INTO notebooks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
                    )
                    connection.executemany(
                        "INSERT OR REPLACE INTO skill_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", skill_rows
                    )
                    if keep is not None:
                        stored = connection.execute("SELECT key FROM notebooks WHERE root = ?", (self._root,))
                        stale = [(self._root, key) for (key,) in stored.fetchall() if key not in keep]
                        connection.executemany("DELETE FROM notebooks WHERE root = ? AND key = ?", stale)
                    if keep_skills is not None:
                        stored = connection.execute("SELECT kind, key FROM skill_files WHERE root = ?", (self._root,))
                        dropped = [(self._root, *row) for row in stored.fetchall() if row not in keep_skills]
                        connection.executemany(
                            "DELETE FROM skill_files WHERE root = ? AND kind = ? AND key = ?", dropped
                        )
                    if keep is not None or keep_skills is not None:
                        for table in _TABLES:
                            gone = [(root,) for root in _roots(connection, table) if root != self._root and _gone(root)]
                            connection.executemany(f"DELETE FROM {table} WHERE root = ?", gone)
                if keep is not None or keep_skills is not None:
                    connection.executescript("PRAGMA incremental_vacuum;")  # run to the end (`execute` frees one page)
            except sqlite3.OperationalError as error:  # another server holds the lock for long: skip this write
                log.info("notebook index not written this time: %s", error)
            except sqlite3.DatabaseError as error:
                with self._lock:
                    self._set_aside(error)
            finally:
                connection.close()

    def close(self) -> None:
        """Close the reading connection (the last one to close folds the write-ahead log into the file)."""
        with self._lock:
            if self._connection is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._connection.close()
                self._connection = None
