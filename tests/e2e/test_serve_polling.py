"""Polling forced (`serve --poll SECONDS`, `MCP_NOTEBOOK_POLL`): saves, renames and deletes reach clients in time.

A network volume's remote writes cannot be made here, so polling is forced;
that it is really polling shows in the server's descriptors (no inotify one).
Each change must be announced within the interval plus 1 s.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
import pytest
from e2e_processes import ACCEPT, DEADLINE, MODERN, StdioServer, add_prompt, modern_meta, write_corpus
from mcp import Client
from served_http import ServedHttp

pytestmark = pytest.mark.slow

INTERVAL = 0.5
WITHIN = INTERVAL + 1.0  # what a save may take to reach clients when polled


def _inotify_descriptors(pid: int) -> int:
    """How many inotify descriptors process `pid` and its children hold."""
    count = 0
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        folder = f"/proc/{process.pid}/fd"
        for name in os.listdir(folder):
            try:
                count += os.readlink(os.path.join(folder, name)) == "anon_inode:inotify"
            except OSError:
                continue
    return count


def _changes(folder: Path) -> list[tuple[str, Any, set[str]]]:
    """Each change made to the corpus, and the prompt names served after it."""
    base = {"greet", "explain", "note0", "note1", "note2"}
    return [
        ("a save", lambda: add_prompt(folder, "fresh"), base | {"fresh"}),
        ("a rename", lambda: (folder / "fresh.ipynb").rename(folder / "topics" / "moved.ipynb"), base | {"fresh"}),
        ("a delete", lambda: (folder / "notes.ipynb").unlink(), base - {"note0", "note1", "note2"} | {"fresh"}),
    ]


def _notification_within(server: StdioServer, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            line = server.stdout_lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no list_changed within {seconds} s; stderr: {server.stderr_seen}") from None
        assert line is not None, "the server closed stdout"
        if json.loads(line).get("method") == "notifications/prompts/list_changed":
            return


def test_a_polled_stdio_server_announces_saves_renames_and_deletes(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with StdioServer([str(folder), "--poll", str(INTERVAL), "--no-cache"]) as server:
        server.initialize("2025-11-25")
        server.request("prompts/list")  # answered once indexed; the first look is taken before serving starts
        assert _inotify_descriptors(server.process.pid) == 0
        for what, change, names in _changes(folder):
            change()
            _notification_within(server, WITHIN)
            listed = server.request("prompts/list")["result"]["prompts"]
            assert {p["name"] for p in listed} == names, what


def _rewrite_in_place_keeping_size_and_mtime(path: Path, old: bytes, new: bytes) -> None:
    """What a tool that restores times does: the same file (inode), the same size, the modification time set back."""
    assert len(old) == len(new)
    before = os.stat(path)
    with path.open("r+b") as file:
        data = file.read()
        assert data.count(old) == 1
        file.seek(0)
        file.write(data.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def test_polling_sees_a_rewrite_that_keeps_the_size_and_the_modification_time(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with StdioServer([str(folder), "--poll", str(INTERVAL)]) as server:
        server.initialize("2025-11-25")
        server.request("prompts/list")
        assert _inotify_descriptors(server.process.pid) == 0
        _rewrite_in_place_keeping_size_and_mtime(folder / "notes.ipynb", b'"note1"', b'"nota1"')
        _notification_within(server, WITHIN)
        listed = server.request("prompts/list")["result"]["prompts"]
        assert {p["name"] for p in listed} == {"greet", "explain", "note0", "nota1", "note2"}


async def _names(url: str) -> set[str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": modern_meta()}}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
    headers["Mcp-Method"] = "prompts/list"
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, content=json.dumps(body), headers=headers, timeout=DEADLINE)
    return {prompt["name"] for prompt in response.json()["result"]["prompts"]}


async def test_an_http_server_polls_when_the_environment_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--no-cache", env={"MCP_NOTEBOOK_POLL": str(INTERVAL)}) as server:
        assert _inotify_descriptors(server.process.pid) == 0
        async with Client(server.url, mode="auto") as client, client.listen(prompts_list_changed=True) as changes:
            for what, change, names in _changes(folder):
                change()
                with anyio.fail_after(WITHIN):
                    await changes.__anext__()
                assert await _names(server.url) == names, what


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"MCP_NOTEBOOK_POLL": "soon"}, "MCP_NOTEBOOK_POLL must be a number of seconds, got 'soon'"),
        (["--poll", "0"], {}, "mcp-notebook: --poll must be at least 0.1 seconds, got '0'"),
        (["--poll", "1", "--no-watch"], {}, "--poll says how to watch, --no-watch not to: give one of them"),
    ],
)
def test_a_bad_poll_interval_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    write_corpus(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "serve", str(tmp_path), *args],
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert out.returncode == 2
    assert len(out.stderr.splitlines()) == 1, out.stderr  # one line, whatever the source of the value
    assert out.stderr.splitlines()[-1].endswith(message)
