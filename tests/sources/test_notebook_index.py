"""The persistent notebook index: a restart reads only what changed, and never serves a changed file's prompts."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from notebook_files import write_notebook

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources import index as index_module
from mcp_notebook.sources import loading as loading_module
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.index import FILE_NAME, NotebookIndex, default_cache_dir


def _prompt(path: Path, name: str, text: str) -> Path:
    return write_notebook(path, [{"source": text, "mcp": {"prompt": name}}])


@pytest.fixture
def notebooks(tmp_path: Path) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for i in range(5):
        _prompt(folder / f"n{i}.ipynb", f"p{i}", f"Text {i} about {{{{topic}}}}.")
    return folder


@pytest.fixture(autouse=True)
def files_are_never_too_recent(monkeypatch: pytest.MonkeyPatch) -> None:
    # Files a test has just written are "racy" (changed within the last two seconds) and would not be
    # stored; the rule itself has a test of its own below.
    monkeypatch.setattr(index_module, "RACY_SECONDS", -1.0)


class LoadCounter:
    """Counts the notebooks built from their files (not taken from the index)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.keys: list[str] = []
        real = loading_module.prompts_from_notebook

        def counting(data: object, *, origin: str, **kwargs: object) -> object:
            self.keys.append(origin)
            return real(data, origin=origin, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(loading_module, "prompts_from_notebook", counting)


def _serve(folder: Path, cache: Path | None) -> tuple[PromptRegistry, NotebookFolderSource]:
    registry = PromptRegistry()
    source = NotebookFolderSource([folder], registry, index_folder=cache)
    source.scan()
    source.wait_for_index(timeout=30)
    return registry, source


def _texts(registry: PromptRegistry) -> dict[str, str]:
    return {p.name: p.messages[0].content.text for p in registry.snapshot().prompts}  # type: ignore[union-attr]


def test_a_restart_takes_unchanged_notebooks_from_the_index(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first, _ = _serve(notebooks, cache)
    counter = LoadCounter(monkeypatch)

    second, _ = _serve(notebooks, cache)

    assert counter.keys == []
    assert second.snapshot().prompts == first.snapshot().prompts
    assert (cache / FILE_NAME).stat().st_mode & 0o777 == 0o600
    assert cache.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize(
    "change",
    [
        "rewrite",  # new text, new size
        "same size, same mtime",  # the same length of text written in place, the mtime put back
        "atomic save",  # written elsewhere and renamed over it, as Jupyter saves
        "touch",  # only the times change: it is read again all the same
    ],
)
def test_a_notebook_whose_file_changed_in_any_way_is_read_again(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    cache = tmp_path / "cache"
    _serve(notebooks, cache)
    target = notebooks / "n2.ipynb"
    before = target.stat()
    if change == "rewrite":
        _prompt(target, "p2", "Entirely new words for {{topic}}, longer than before.")
    elif change == "same size, same mtime":
        staged = _prompt(tmp_path / "staged.ipynb", "p2", "Text 9 about {{topic}}.")
        target.write_bytes(staged.read_bytes())  # in place: the same inode
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = target.stat()
        assert (after.st_size, after.st_ino, after.st_mtime_ns) == (before.st_size, before.st_ino, before.st_mtime_ns)
    elif change == "atomic save":
        staged = _prompt(tmp_path / "staged.ipynb", "p2", "Saved atomically about {{topic}}.")
        os.replace(staged, target)
    else:
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    counter = LoadCounter(monkeypatch)

    registry, _ = _serve(notebooks, cache)

    assert counter.keys == ["n2.ipynb"]
    expected = {
        "rewrite": "Entirely new words for {{topic}}, longer than before.",
        "same size, same mtime": "Text 9 about {{topic}}.",
        "atomic save": "Saved atomically about {{topic}}.",
        "touch": "Text 2 about {{topic}}.",
    }[change]
    assert _texts(registry)["p2"] == expected


def test_notebooks_gone_from_the_folder_are_forgotten_by_the_index(notebooks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _serve(notebooks, cache)
    (notebooks / "n0.ipynb").unlink()

    registry, _ = _serve(notebooks, cache)

    assert "p0" not in _texts(registry)
    with sqlite3.connect(cache / FILE_NAME) as db:
        keys = {key for (key,) in db.execute("SELECT key FROM notebooks")}
    assert keys == {"n1.ipynb", "n2.ipynb", "n3.ipynb", "n4.ipynb"}


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000],
    ids=["empty", "garbage", "broken header"],
)
def test_a_corrupt_index_is_rebuilt_and_everything_is_served(
    notebooks: Path, tmp_path: Path, damage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    first, source = _serve(notebooks, cache)
    source.close()  # the server that wrote it has ended: the file is damaged at rest
    expected = _texts(first)
    (cache / FILE_NAME).write_bytes(damage)
    for suffix in ("-wal", "-shm"):
        (cache / f"{FILE_NAME}{suffix}").unlink(missing_ok=True)

    with caplog.at_level(logging.WARNING):
        registry, _ = _serve(notebooks, cache)
        again, _ = _serve(notebooks, cache)

    assert _texts(registry) == _texts(again) == expected
    with sqlite3.connect(cache / FILE_NAME) as db:
        assert db.execute("SELECT count(*) FROM notebooks").fetchone() == (5,)


def test_an_index_another_server_holds_locked_is_left_as_it_is(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A busy index is not a broken one: the server goes without it this time, and the file others use stays.
    cache = tmp_path / "cache"
    first, source = _serve(notebooks, cache)
    source.close()
    expected = _texts(first)
    path = cache / FILE_NAME
    monkeypatch.setattr(index_module, "BUSY_SECONDS", 0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=DELETE")  # a lock in this mode keeps readers out too
        holder.execute("BEGIN EXCLUSIVE")
        inode = path.stat().st_ino
        counter = LoadCounter(monkeypatch)
        with caplog.at_level(logging.INFO, logger="mcp_notebook"):
            registry, source = _serve(notebooks, cache)
        source.close()
        assert _texts(registry) == expected  # every notebook built from its file, none lost
        assert sorted(counter.keys) == [f"n{i}.ipynb" for i in range(5)]
        assert path.stat().st_ino == inode  # the same file, never set aside
        assert "unreadable" not in caplog.text and "database is locked" in caplog.text
        holder.execute("COMMIT")
        assert holder.execute("SELECT count(*) FROM notebooks").fetchone() == (5,)
    finally:
        holder.close()
    counter.keys.clear()
    assert _texts(_serve(notebooks, cache)[0]) == expected
    assert counter.keys == []  # once free, the index serves the next start again


def test_opening_the_index_keeps_the_locks_this_process_holds_on_it(notebooks: Path, tmp_path: Path) -> None:
    # Closing any descriptor of a SQLite file drops every lock its process holds on it: another process closing
    # its connection would then believe itself the last one, and fold and delete the write-ahead log in use here.
    cache = tmp_path / "cache"
    _serve(notebooks, cache)[1].close()
    path = cache / FILE_NAME
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        assert holder.execute("SELECT count(*) FROM notebooks").fetchone() == (5,)
        registry, source = _serve(notebooks, cache)  # this process opens the index again, beside `holder`
        other = f"import sqlite3; c = sqlite3.connect({str(path)!r}); c.execute('SELECT 1 FROM notebooks'); c.close()"
        subprocess.run([sys.executable, "-c", other], check=True, timeout=60)
        assert Path(f"{path}-wal").exists()  # the other process knew it was not the last one
        assert holder.execute("SELECT count(*) FROM notebooks").fetchone() == (5,)
        assert len(registry.snapshot().prompts) == 5
        source.close()
    finally:
        holder.close()
    assert (path.stat().st_mode & 0o777) == 0o600


def test_damaged_entries_are_misses_not_errors(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    expected = _texts(_serve(notebooks, cache)[0])
    with sqlite3.connect(cache / FILE_NAME) as db:
        db.execute("UPDATE notebooks SET prompts = ? WHERE key = 'n3.ipynb'", (b"\x80\x05garbage",))
    counter = LoadCounter(monkeypatch)

    registry, _ = _serve(notebooks, cache)

    assert counter.keys == ["n3.ipynb"]
    assert _texts(registry) == expected


def test_entries_of_another_version_are_never_read(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    _serve(notebooks, cache)
    monkeypatch.setattr(index_module, "format_tag", lambda: "another version")
    counter = LoadCounter(monkeypatch)

    _serve(notebooks, cache)

    assert sorted(counter.keys) == [f"n{i}.ipynb" for i in range(5)]


def _package_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "mcp_notebook"
    shutil.copytree(Path(index_module.__file__).resolve().parents[1], copy, ignore=shutil.ignore_patterns("*.pyc"))
    return copy


def _tag_of(package: Path) -> str:
    """The format tag as the copy computes it, in a process of its own, as a server would at its start."""
    script = "from mcp_notebook.sources.index import format_tag; print(format_tag())"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=package.parent, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_editing_any_file_of_the_package_changes_the_format_tag(tmp_path: Path) -> None:
    package = _package_copy(tmp_path)
    modules = sorted(path.relative_to(package) for path in package.rglob("*.py"))
    assert Path("sources/cells.py") in modules and Path("ipython/magics.py") in modules
    before = _tag_of(package)
    assert index_module.format_tag(package) == before

    changed = []
    for name in modules:
        original = (package / name).read_bytes()
        (package / name).write_bytes(original + b"\n# another build\n")
        changed.append((name, index_module.format_tag(package)))
        (package / name).write_bytes(original)

    assert before == _tag_of(package)
    assert len({tag for _, tag in changed} | {before}) == len(modules) + 1, changed


def test_a_new_or_moved_file_changes_the_format_tag(tmp_path: Path) -> None:
    package = _package_copy(tmp_path)
    before = index_module.format_tag(package)
    (package / "sources" / "newly_added.py").write_text("RULE = 1\n")
    added = index_module.format_tag(package)
    (package / "sources" / "newly_added.py").rename(package / "newly_added.py")

    assert len({before, added, index_module.format_tag(package)}) == 3


@pytest.mark.parametrize("place", ["folder", "file"])
def test_an_index_others_may_write_to_is_not_used(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    _serve(notebooks, cache)
    (cache if place == "folder" else cache / FILE_NAME).chmod(0o777 if place == "folder" else 0o666)
    counter = LoadCounter(monkeypatch)

    with caplog.at_level(logging.WARNING):
        registry, _ = _serve(notebooks, cache)

    assert len(counter.keys) == 5  # nothing was unpickled from a file another user could have written
    assert len(_texts(registry)) == 5
    assert "belongs to another user or others may write to it" in caplog.text


def test_servers_sharing_one_index_at_once_all_serve_everything(notebooks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    results: list[dict[str, str]] = []
    failures: list[BaseException] = []

    def one() -> None:
        try:
            results.append(_texts(_serve(notebooks, cache)[0]))
        except BaseException as error:  # reported below, with the others' results
            failures.append(error)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert len(results) == 6 and all(r == results[0] for r in results) and len(results[0]) == 5


def test_a_file_changed_within_the_last_two_seconds_is_not_stored(
    notebooks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "RACY_SECONDS", 2.0)
    cache = tmp_path / "cache"
    old = 1_700_000_000_000_000_000
    for path in notebooks.iterdir():
        if path.name != "n4.ipynb":
            os.utime(path, ns=(old, old))
    # The status-change time cannot be put back, so every file here counts as just changed.
    _serve(notebooks, cache)

    with sqlite3.connect(cache / FILE_NAME) as db:
        assert db.execute("SELECT count(*) FROM notebooks").fetchone() == (0,)


def test_without_an_index_folder_nothing_is_written(notebooks: Path, tmp_path: Path) -> None:
    registry, _ = _serve(notebooks, None)
    assert len(_texts(registry)) == 5
    assert not (tmp_path / "cache").exists()


def test_the_index_lives_in_the_user_cache_folder_unless_told() -> None:
    assert default_cache_dir({"MCP_NOTEBOOK_CACHE_DIR": "/srv/idx", "XDG_CACHE_HOME": "/x"}) == Path("/srv/idx")
    assert default_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/mcp-notebook")
    assert default_cache_dir({}) == Path.home() / ".cache" / "mcp-notebook"


def test_an_index_that_cannot_be_created_is_done_without(notebooks: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    registry, _ = _serve(notebooks, blocker / "cache")
    assert len(_texts(registry)) == 5
    assert NotebookIndex(blocker / "cache", notebooks).get("n0.ipynb", (0, 0, 0, 0)) is None


def _file_size(cache: Path) -> int:
    return sum(
        os.path.getsize(cache / f"{FILE_NAME}{suffix}")
        for suffix in ("", "-wal")
        if (cache / f"{FILE_NAME}{suffix}").exists()
    )


def test_entries_of_served_folders_that_are_gone_are_forgotten_and_their_space_given_back(
    notebooks: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    big = b"x" * 200_000  # a large cell makes a large entry
    temporary = tmp_path / "temporary"
    for i in range(10):
        _prompt(temporary / f"t{i}.ipynb", f"t{i}", f"{big.decode()} {{{{topic}}}} {i}")
    kept = tmp_path / "kept"
    _prompt(kept / "k.ipynb", "k", "Kept {{topic}}.")
    for folder in (temporary, kept, notebooks):
        _, source = _serve(folder, cache)
        source.close()
    with contextlib.closing(sqlite3.connect(cache / FILE_NAME)) as db:
        assert {root for (root,) in db.execute("SELECT DISTINCT root FROM notebooks")} == {
            str(temporary),
            str(kept),
            str(notebooks),
        }
    full = _file_size(cache)
    for path in temporary.iterdir():
        path.unlink()
    temporary.rmdir()

    _, source = _serve(notebooks, cache)  # a whole scan of any folder forgets the folders that are gone
    source.close()

    with contextlib.closing(sqlite3.connect(cache / FILE_NAME)) as db:
        roots = {root for (root,) in db.execute("SELECT DISTINCT root FROM notebooks")}
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
    assert roots == {str(kept), str(notebooks)}
    assert _file_size(cache) < full - 1_000_000  # the two megabytes of the gone folder's entries are given back


def test_an_index_of_the_previous_layout_is_laid_out_anew_to_give_space_back(notebooks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    with contextlib.closing(sqlite3.connect(cache / FILE_NAME)) as db:  # version 2: the same table, no auto-vacuum
        db.execute(index_module._SCHEMA)
        db.execute("PRAGMA user_version = 2")
        db.execute(
            "INSERT INTO notebooks VALUES ('/gone', 'n.ipynb', 'f', 1, 2, 3, 4, x'00', ?, x'00')", (b"y" * 10**6,)
        )
    os.chmod(cache / FILE_NAME, 0o600)

    registry, source = _serve(notebooks, cache)
    source.close()

    assert len(registry.snapshot().prompts) == 5
    with contextlib.closing(sqlite3.connect(cache / FILE_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == index_module._SCHEMA_VERSION
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM notebooks").fetchone()[0] == 5
    assert _file_size(cache) < 500_000


def test_closing_the_index_folds_its_write_ahead_log_into_the_file(notebooks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _, source = _serve(notebooks, cache)
    _serve(notebooks, cache)[1].close()
    assert source._index is not None and source._index.entries()  # a reading connection is open
    source.close()
    assert not (cache / f"{FILE_NAME}-wal").exists()
    with contextlib.closing(sqlite3.connect(cache / FILE_NAME)) as db:
        assert db.execute("PRAGMA journal_size_limit").fetchone()[0] == -1  # a setting of each connection ...
    index = NotebookIndex(cache, notebooks)
    assert index.entries()
    assert index._connection is not None
    assert index._connection.execute("PRAGMA journal_size_limit").fetchone()[0] == index_module._WAL_LIMIT  # ... ours
    index.close()


class _Clocks:
    """Wall and CPU clocks a test moves by hand: `others` is CPU the rest of the process uses per window watched."""

    def __init__(self, others: list[float]) -> None:
        self.wall = self.process = self.thread = 0.0
        self.others = others  # per window watched, in turn; idle once they run out
        self.waits: list[float] = []

    def wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.wall += seconds
        if seconds:
            self.process += self.others.pop(0) if self.others else 0.0

    def work(self, seconds: float) -> None:
        """The job's own thread pickles for `seconds` (counted in the process's time and its own)."""
        self.wall += seconds
        self.process += seconds
        self.thread += seconds

    def turns(self, **options: float) -> index_module.IdleTurns:
        return index_module.IdleTurns(
            clock=lambda: self.wall,
            process_time=lambda: self.process,
            thread_time=lambda: self.thread,
            wait=self.wait,
            **options,
        )


def test_idle_turns_take_the_first_turn_at_once_then_look_before_each_turn() -> None:
    clocks = _Clocks(others=[])
    turns = clocks.turns(turn=0.02, window=0.01, busy=0.1)
    turns.take()
    assert clocks.waits == []  # the first turn at once: a small job is done before anything could come
    for _ in range(3):
        clocks.work(0.005)
        turns.take()
    assert clocks.waits == [0, 0, 0]  # within the turn: only a thread waiting for the lock goes first
    clocks.work(0.006)  # 0.021 s into the turn
    turns.take()
    assert clocks.waits == [0, 0, 0, 0.01]  # a new turn, after a look: nobody else worked
    clocks.work(0.005)  # its own pickling is not the rest of the process being busy
    turns.take()
    assert clocks.waits == [0, 0, 0, 0.01, 0]
    assert turns.waited == pytest.approx(0.01)


def test_idle_turns_wait_while_the_rest_of_the_process_works() -> None:
    # Another thread answering requests: 8 ms of every 10 ms window, three times, then 0.5 ms (idle enough).
    clocks = _Clocks(others=[0.008, 0.008, 0.008, 0.0005])
    turns = clocks.turns(turn=0.02, window=0.01, busy=0.1)
    turns.take()
    clocks.work(0.03)
    turns.take()
    assert clocks.waits == [0.01] * 4
    assert turns.waited == pytest.approx(0.04)


def test_idle_turns_go_on_after_their_patience_when_the_process_is_never_idle() -> None:
    clocks = _Clocks(others=[0.01] * 1000)
    turns = clocks.turns(turn=0.02, window=0.01, busy=0.1, patience=0.05)
    turns.take()
    clocks.work(0.03)
    turns.take()
    assert len(clocks.waits) == 5  # waited its patience out, then went on
    clocks.work(0.03)
    turns.take()
    assert len(clocks.waits) == 5  # and does not wait again


def test_the_writer_pickles_nothing_while_another_thread_is_busy_and_all_once_it_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a start the writer pickles thousands of notebooks beside a server answering requests: it
    waits while another thread of the process works (here a spinning one, with real threads and clocks)."""
    folder = tmp_path / "many"
    for i in range(40):
        _prompt(folder / f"n{i:02}.ipynb", f"p{i}", f"Text {i} about {{{{topic}}}}.")
    index = NotebookIndex(tmp_path / "cache", folder)
    for i in range(40):
        key = f"n{i:02}.ipynb"
        file, loaded = loading_module.build(folder, key)
        index.put(key, (*file.stamp, file.ctime_ns), loading_module.digest(file), loaded)
    pickled: list[str] = []
    real_dumps = index_module._dumps
    watched = threading.Event()
    stop = threading.Event()
    windows: list[float] = []

    def counted(value: object) -> bytes:
        pickled.append("one")
        return real_dumps(value)

    def wait(seconds: float) -> None:
        if seconds:
            windows.append(seconds)
            if len(windows) == 5:
                watched.set()
        time.sleep(seconds)  # the window itself: real time, in which the spinner runs or not

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    monkeypatch.setattr(index_module, "_dumps", counted)
    # Turns of no time: the first notebook is pickled at once (the first turn), each other one after a look.
    monkeypatch.setattr(
        index_module,
        "IdleTurns",
        functools.partial(index_module.IdleTurns, turn=0.0, window=0.05, patience=60.0, wait=wait),
    )
    spinner = threading.Thread(target=spin)
    spinner.start()
    writer = threading.Thread(target=index.flush)
    writer.start()
    try:
        assert watched.wait(30)  # five windows watched, the spinner busy in each
        assert pickled == ["one"]  # the first turn's notebook, and no other
    finally:
        stop.set()
        spinner.join()
        writer.join(30)
        index.close()
    assert len(pickled) == 40
    written = NotebookIndex(tmp_path / "cache", folder)
    try:
        assert written.entries().keys() == {f"n{i:02}.ipynb" for i in range(40)}
    finally:
        written.close()
