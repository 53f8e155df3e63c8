"""Where inotify is blind: file systems told by their type in the mount table, and watching by looking.

The mount tables here are written out (a test machine has no NFS mount), in
the format of /proc/self/mountinfo; the folders are real, and a folder the
table puts on NFS is watched by polling, with one log line saying so.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.settings import from_env
from mcp_notebook.sources import watch
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.inotify import Change
from mcp_notebook.sources.polling import (
    SETTLE_LOOKS,
    Look,
    blind_file_system,
    changes_between,
    file_system_type,
    look,
    poll_paths,
)

DEADLINE = 5.0
POLL_ENV = "MCP_NOTEBOOK_POLL"


def _mountinfo(*mounts: tuple[str, str]) -> str:
    """A mount table with these (mount point, type) lines, in /proc/self/mountinfo's format."""
    return "".join(
        f"{index + 20} 1 0:{index} / {point.replace(' ', chr(92) + '040')} rw,relatime shared:1 - {fs} src rw\n"
        for index, (point, fs) in enumerate(mounts)
    )


@pytest.mark.parametrize(
    ("fs_type", "blind"),
    [
        ("nfs", True),
        ("nfs4", True),
        ("cifs", True),
        ("smb3", True),
        ("fuse.sshfs", True),
        ("fuse.gcsfuse", True),
        ("fuse", True),
        ("9p", True),
        ("ceph", True),
        ("ext4", False),
        ("xfs", False),
        ("btrfs", False),
        ("tmpfs", False),
        ("overlay", False),
        ("fuseblk", False),
    ],
)
def test_a_file_system_is_blind_when_other_machines_write_it(fs_type: str, blind: bool) -> None:
    table = _mountinfo(("/", "ext4"), ("/srv/prompts", fs_type))
    assert blind_file_system(Path("/srv/prompts/team"), table) == (fs_type if blind else None)
    assert blind_file_system(Path("/srv/other"), table) is None


def test_the_longest_mount_point_and_the_later_of_two_on_one_point_win() -> None:
    table = _mountinfo(("/", "ext4"), ("/srv", "nfs4"), ("/srv/local", "xfs"), ("/srv/local", "cifs"))
    assert file_system_type(Path("/srv/local/a"), table) == "cifs"
    assert file_system_type(Path("/srv/localish"), table) == "nfs4"  # a prefix of the name is no parent
    assert file_system_type(Path("/home"), table) == "ext4"


def test_mount_points_with_spaces_are_read_unescaped() -> None:
    table = _mountinfo(("/", "ext4"), ("/mnt/team prompts", "nfs"))
    assert file_system_type(Path("/mnt/team prompts/x"), table) == "nfs"


def test_this_machines_temporary_folder_has_a_type(tmp_path: Path) -> None:
    assert file_system_type(tmp_path) is not None  # read from this process's own mount table


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "MCP_NOTEBOOK_POLL must be a number of seconds, got 'soon'"),
        ("0", "MCP_NOTEBOOK_POLL must be at least 0.1 seconds, got '0'"),
        ("-1", "MCP_NOTEBOOK_POLL must be at least 0.1 seconds, got '-1'"),
        ("1e-300", "MCP_NOTEBOOK_POLL must be at least 0.1 seconds, got '1e-300'"),
        ("nan", "MCP_NOTEBOOK_POLL must be a finite number of seconds, got 'nan'"),
    ],
)
def test_a_bad_poll_interval_in_the_environment_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        from_env(["poll"], {POLL_ENV: text})
    assert str(raised.value) == message


def test_the_poll_interval_comes_from_the_environment() -> None:
    assert from_env(["poll"], {POLL_ENV: "0.5"}) == {"poll": 0.5}
    assert from_env(["poll"], {POLL_ENV: " "}) == {}
    assert from_env(["poll"], {}) == {}


def test_a_look_finds_saves_renames_and_deletes_of_wanted_files_only(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text("1")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.ipynb").write_text("1")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.ipynb").write_text("1")
    (tmp_path / "data.csv").write_text("1")

    def looked() -> Look:
        return look([(tmp_path, True)], lambda name: name.endswith(".ipynb"), lambda name: not name.startswith("."))

    before = looked()
    assert sorted(before) == [str(tmp_path / "a.ipynb"), str(tmp_path / "sub" / "b.ipynb")]
    replacement = tmp_path / ".a.tmp"
    replacement.write_text("2")
    os.replace(replacement, tmp_path / "a.ipynb")  # a save: a new file renamed over the old one
    (tmp_path / "sub" / "b.ipynb").rename(tmp_path / "sub" / "renamed.ipynb")
    (tmp_path / "data.csv").write_text("2")
    after = looked()
    assert changes_between(before, after) == {
        (Change.modified, str(tmp_path / "a.ipynb")),
        (Change.deleted, str(tmp_path / "sub" / "b.ipynb")),
        (Change.added, str(tmp_path / "sub" / "renamed.ipynb")),
    }
    (tmp_path / "a.ipynb").unlink()
    assert changes_between(after, looked()) == {(Change.deleted, str(tmp_path / "a.ipynb"))}


def test_a_rewrite_in_place_keeping_the_size_and_the_modification_time_is_a_change(tmp_path: Path) -> None:
    notebook = tmp_path / "a.ipynb"
    notebook.write_bytes(b"one")
    os.symlink("a.ipynb", tmp_path / "b.ipynb")

    def looked() -> Look:
        return look([(tmp_path, False)], lambda name: name.endswith(".ipynb"), lambda _: False)

    before, status = looked(), os.stat(notebook)
    with notebook.open("r+b") as file:
        file.write(b"two")
    os.utime(notebook, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert changes_between(before, looked()) == {
        (Change.modified, str(notebook)),
        (Change.modified, str(tmp_path / "b.ipynb")),  # a link is stamped as its target
    }


def test_retargeting_a_symlink_is_a_change(tmp_path: Path) -> None:
    (tmp_path / "rev-1").mkdir()
    (tmp_path / "rev-2").mkdir()
    os.symlink("rev-1", tmp_path / "current")

    def looked() -> Look:
        return look([(tmp_path, False)], lambda name: name == "current", lambda _: False)

    before = looked()
    os.symlink("rev-2", tmp_path / ".current.tmp")
    os.replace(tmp_path / ".current.tmp", tmp_path / "current")
    assert changes_between(before, looked()) == {(Change.modified, str(tmp_path / "current"))}


async def _first_report(
    folders: list[tuple[Path, bool]], wanted: Callable[[str], bool], armed: list[bool]
) -> tuple[set[tuple[Change, str]], int]:
    """What the first report of `poll_paths` says once `armed[0]` is set after its first look, and the looks taken."""
    reports: list[set[tuple[Change, str]]] = []
    looks = [0]
    reported = anyio.Event()
    stop = anyio.Event()

    def counted(name: str) -> bool:
        looks[0] += name == "anchor.ipynb"
        return wanted(name)

    def on_changes(changes: set[tuple[Change, str]]) -> None:
        reports.append(changes)
        reported.set()

    def ready(_: Look) -> None:
        armed[0] = True
        looks[0] = 0

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(
            partial(
                poll_paths,
                folders,
                interval=0.02,
                on_changes=on_changes,
                wanted=counted,
                descend=lambda _: True,
                ready=ready,
                stop_event=stop,
            )
        )
        with anyio.fail_after(DEADLINE):
            await reported.wait()
        stop.set()
    return reports[0], looks[0]


async def test_a_rename_made_while_a_look_walks_is_reported_once_as_a_rename(tmp_path: Path) -> None:
    # The look walks `first`, then `second`, then `third`: a file moved from the first
    # to the third while `second` is walked is in both places for that look.
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    for folder in (first, second, third):
        folder.mkdir()
    (first / "fresh.ipynb").write_text("{}")
    (second / "anchor.ipynb").write_text("{}")
    armed = [False]

    def wanted(name: str) -> bool:
        if name == "anchor.ipynb" and armed[0]:
            armed[0] = False
            (first / "fresh.ipynb").rename(third / "moved.ipynb")
        return name.endswith(".ipynb")

    folders = [(first, False), (second, False), (third, False)]
    report, looks = await _first_report(folders, wanted, armed)
    assert report == {(Change.deleted, str(first / "fresh.ipynb")), (Change.added, str(third / "moved.ipynb"))}
    assert looks == 3  # the torn look, the one that disagreed with it, and the one that agreed


async def test_a_file_written_through_every_look_is_still_reported(tmp_path: Path) -> None:
    # `growing` is in the folder walked second, so every look sees it after it was written to.
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    (tmp_path / "first" / "anchor.ipynb").write_text("{}")
    growing = tmp_path / "second" / "growing.ipynb"
    growing.write_text("{")
    armed = [False]

    def wanted(name: str) -> bool:
        if name == "anchor.ipynb" and armed[0]:
            with growing.open("a") as file:
                file.write(" ")  # the file is a byte longer at every look
        return name.endswith(".ipynb")

    report, looks = await _first_report([(tmp_path / "first", False), (tmp_path / "second", False)], wanted, armed)
    assert report == {(Change.modified, str(growing))}
    assert looks == SETTLE_LOOKS  # no two looks agree, and the last is reported


def _prompts(path: Path, *names: str) -> None:
    write(path, notebook(*(markdown(f"text of {name}", {"prompt": name}) for name in names)))


@asynccontextmanager
async def _watching(source: NotebookFolderSource, poll: float | None = None) -> AsyncIterator[None]:
    ready = anyio.Event()
    stop = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set, poll=poll))
        with anyio.fail_after(DEADLINE):
            await ready.wait()
        yield
        stop.set()


class _Waiter:
    """Waits, with a deadline, until the registry holds what a condition wants (woken by its listener)."""

    def __init__(self, registry: PromptRegistry) -> None:
        self.registry = registry
        self.changed = anyio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        registry.add_listener(self._on_snapshot)

    def _on_snapshot(self, _: object) -> None:
        # Reloads publish from a worker thread: the waiting task is woken through its loop.
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        self.changed.set()

    async def until(self, condition: Callable[[PromptRegistry], bool]) -> None:
        self._loop = asyncio.get_running_loop()
        with anyio.fail_after(DEADLINE):
            while not condition(self.registry):
                self.changed = anyio.Event()
                await self.changed.wait()

    async def names(self, *names: str) -> None:
        await self.until(lambda registry: {p.name for p in registry.snapshot().prompts} == set(names))


async def test_a_folder_on_nfs_is_polled_and_one_line_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    table = _mountinfo(("/", "ext4"), (str(tmp_path), "nfs4"))
    monkeypatch.setattr(watch, "mount_table", lambda: table)
    monkeypatch.setattr(watch, "DEFAULT_POLL_SECONDS", 0.2)
    monkeypatch.setattr(watch, "inotify_changes", None)  # were inotify asked, the watch would fail
    _prompts(tmp_path / "a.ipynb", "alpha")
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    waiter = _Waiter(registry)
    with caplog.at_level(logging.WARNING, logger="mcp_notebook.sources.watch"):
        async with _watching(source):
            _prompts(tmp_path / "b.ipynb", "beta")
            await waiter.names("alpha", "beta")
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        f"{tmp_path} is on a network file system (nfs4), where changes made by other machines are not "
        "reported: looking for changes every 0.2 s instead (--poll SECONDS or MCP_NOTEBOOK_POLL sets how often)"
    ]


def _polled_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[NotebookFolderSource, _Waiter]:
    """`tmp_path` with one notebook (prompt `alpha`) served, scanned, and to be watched by polling only."""
    monkeypatch.setattr(watch, "inotify_changes", None)
    _prompts(tmp_path / "a.ipynb", "alpha")
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    return source, _Waiter(registry)


async def test_forced_polling_follows_saves_renames_and_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, waiter = _polled_folder(tmp_path, monkeypatch)
    async with _watching(source, poll=0.1):
        _prompts(tmp_path / "a.ipynb", "alpha", "alpha_two")
        await waiter.names("alpha", "alpha_two")
        (tmp_path / "a.ipynb").rename(tmp_path / "renamed.ipynb")
        await waiter.until(lambda registry: list(registry.groups()) == ["renamed.ipynb"])
        _prompts(tmp_path / "deeper" / "c.ipynb", "gamma")
        await waiter.names("alpha", "alpha_two", "gamma")
        (tmp_path / "renamed.ipynb").unlink()
        await waiter.names("gamma")


async def test_a_notebook_saved_and_gone_between_the_polls_first_look_and_the_first_reload_is_never_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The poll compares each look with the one before, the first taken as the watch begins. The first
    # reload used to walk the folder again: a notebook saved between the two was served, and once gone
    # before the poll's next look, no look ever said so, and it was served for ever.
    source, waiter = _polled_folder(tmp_path, monkeypatch)
    reload = NotebookFolderSource.reload
    saved: list[Path] = []

    def saved_just_before_the_first_reload(self: NotebookFolderSource, changed: Any, **options: Any) -> bool:
        if not saved:
            saved.append(tmp_path / "brief.ipynb")
            _prompts(saved[0], "brief")
        return reload(self, changed, **options)

    monkeypatch.setattr(NotebookFolderSource, "reload", saved_just_before_the_first_reload)
    async with _watching(source, poll=0.1):  # ready once the first reload is done
        saved[0].unlink()  # gone before the poll's next look
        _prompts(tmp_path / "b.ipynb", "beta")  # a later save, which the next look reports
        await waiter.names("alpha", "beta")
        assert "brief" not in {prompt.name for prompt in waiter.registry.snapshot().prompts}


def test_the_poll_interval_reaches_every_worker_through_the_environment() -> None:
    from mcp_notebook.asgi import ServeSettings
    from mcp_notebook.service import ServiceSettings

    settings = ServeSettings(service=ServiceSettings(paths=("/srv/prompts",), poll=1.5))
    assert settings.to_env()[POLL_ENV] == "1.5"
    assert ServeSettings.from_env(settings.to_env()) == settings
    assert ServeSettings.from_env({"MCP_NOTEBOOK_PATHS": "/srv/prompts"}).service.poll is None
    with pytest.raises(ValueError, match=r"MCP_NOTEBOOK_POLL must be at least 0\.1 seconds, got '0'"):
        ServeSettings.from_env({"MCP_NOTEBOOK_PATHS": "/srv/prompts", POLL_ENV: "0"})
