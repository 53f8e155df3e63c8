"""No process outlives the editor: every way the bridge can be ended takes its whole process tree with it.

The bridge runs two stdio servers: one that starts a grandchild in its
process group (as `npx` starts `node`), one that ignores SIGTERM and the end
of its input (only SIGKILL ends it). Each way of ending is tried five times;
every time, the bridge, both servers and the grandchild must be gone within
2 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil
import pytest
from raw_lsp import RawBridge, gone, tree, wait_until, write_config

pytestmark = pytest.mark.slow

TINY = Path(__file__).with_name("tiny_mcp_server.py")
ROUNDS = 5
LIMIT = 2.0  # seconds from the end of the editor to the end of the last process

Ender = Callable[[RawBridge, asyncio.subprocess.Process], Awaitable[None]]


async def _shutdown_and_exit(bridge: RawBridge, editor: asyncio.subprocess.Process) -> None:
    answer = await bridge.request("shutdown", None, deadline=10.0)
    assert answer.get("error") is None
    bridge.notify("exit")


async def _close_input(bridge: RawBridge, editor: asyncio.subprocess.Process) -> None:
    assert bridge.process.stdin is not None
    bridge.process.stdin.close()


async def _sigterm(bridge: RawBridge, editor: asyncio.subprocess.Process) -> None:
    bridge.process.send_signal(signal.SIGTERM)


async def _sighup(bridge: RawBridge, editor: asyncio.subprocess.Process) -> None:
    bridge.process.send_signal(signal.SIGHUP)


async def _editor_dies(bridge: RawBridge, editor: asyncio.subprocess.Process) -> None:
    # The bridge's pipes stay open (this test holds them): only `processId` tells it the editor is gone.
    editor.kill()
    await editor.wait()


WAYS: dict[str, Ender] = {
    "shutdown+exit": _shutdown_and_exit,
    "stdin closed": _close_input,
    "SIGTERM": _sigterm,
    "SIGHUP": _sighup,
    "editor process died": _editor_dies,
}


def _kill_leftovers(pid_file: Path) -> None:
    """A failed round must not leave its servers running for the rounds and tests after it."""
    for pid in pid_file.read_text().split():
        with contextlib.suppress(psutil.NoSuchProcess):
            process = psutil.Process(int(pid))
            if "tiny_mcp_server.py" in " ".join(process.cmdline()):
                process.kill()


async def _start(tmp_path: Path, pid_file: Path, editor_pid: int) -> RawBridge:
    python = sys.executable
    config = write_config(
        tmp_path / "mcp.json",
        {
            "fork": [python, str(TINY), "forking", str(pid_file)],
            "stuck": [python, str(TINY), "stubborn", str(pid_file)],
        },
    )
    bridge = await RawBridge.start("--config", str(config), "--no-default-config", "--no-kernels")
    await bridge.initialize(process_id=editor_pid)
    await bridge.log_line(lambda line: "fork ready (1 prompts)" in line)
    # The server, its grandchild and the stubborn server have written their pids.
    await wait_until(lambda: len(pid_file.read_text().split()) == 3, 10.0, "three server processes started")
    return bridge


@pytest.mark.parametrize("way", list(WAYS))
async def test_every_process_of_the_tree_ends_within_two_seconds(tmp_path: Path, way: str) -> None:
    for round_number in range(ROUNDS):
        folder = tmp_path / f"round{round_number}"
        folder.mkdir()
        pid_file = folder / "pids"
        pid_file.touch()
        editor = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import sys; sys.stdin.read()", stdin=asyncio.subprocess.PIPE
        )
        bridge = await _start(folder, pid_file, editor.pid)
        try:
            processes = tree(bridge.pid)
            servers = {int(pid) for pid in pid_file.read_text().split()}
            assert servers <= {p.pid for p in processes}, "the servers run under the bridge"
            assert len(processes) >= 4
            await WAYS[way](bridge, editor)
            started = time.monotonic()
            ended = f"round {round_number}: every process ended"
            await wait_until(lambda processes=processes: all(gone(p) for p in processes), LIMIT, ended)
            elapsed = time.monotonic() - started
            assert elapsed < LIMIT
            assert all(not psutil.pid_exists(pid) or gone(psutil.Process(pid)) for pid in servers)
        finally:
            await bridge.kill()
            if editor.returncode is None:
                editor.kill()
            await editor.wait()
            _kill_leftovers(pid_file)


async def test_shutdown_is_answered_at_once_while_servers_hang(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    pid_file.touch()
    python = sys.executable
    config = write_config(
        tmp_path / "mcp.json",
        {
            name: [python, str(TINY), mode, str(pid_file)]
            for name, mode in [("h1", "hang"), ("h2", "stubborn"), ("h3", "stall")]
        },
    )
    bridge = await RawBridge.start("--config", str(config), "--no-default-config", "--no-kernels")
    try:
        await bridge.initialize()
        await bridge.log_line(lambda line: "h3 ready (1 prompts)" in line)
        # A request to the stalled server is under way when the editor shuts down.
        bridge.open("file:///work/a.md", "/h3:hello who=\n")
        pending = asyncio.ensure_future(bridge.complete("file:///work/a.md", 0, 14, trigger="="))
        await wait_until(lambda: len(pid_file.read_text().split()) == 3, 10.0, "three servers started")
        servers = [psutil.Process(int(pid)) for pid in pid_file.read_text().split()]
        started = time.monotonic()
        answer = await bridge.request("shutdown", None, deadline=10.0)
        assert answer.get("error") is None and time.monotonic() - started < 10.0
        # Shutting down already stopped the servers; exit then ends the bridge.
        assert all(gone(p) for p in servers)
        bridge.notify("exit")
        assert await asyncio.wait_for(bridge.process.wait(), LIMIT) == 0
        pending.cancel()
    finally:
        await bridge.kill()
        _kill_leftovers(pid_file)


BAD_SETTINGS: list[object] = [
    {"mcpNotebook": {"maxItems": "lots"}},
    {"mcpNotebook": {"maxItems": 10**12, "diagnosticsDelay": -5}},
    {"trigger": ""},
    {"trigger": "    "},
    {"fileTypes": 5},
    {"fileTypes": [None, 3]},
    {"images": {"nested": ["deep"]}},
    {"diagnostics": "yes"},
    {"mcpNotebook": ["not", "a", "mapping"]},
    ["not", "a", "mapping"],
    "a string",
    None,
    {"mcpNotebook": {"trigger": "/", "fileTypes": "*", "diagnosticsDelay": 10_000}},
]


@pytest.mark.parametrize("start_options", [BAD_SETTINGS[0], BAD_SETTINGS[9], BAD_SETTINGS[10]])
async def test_bad_settings_with_hung_servers_never_make_completion_wait(tmp_path: Path, start_options: object) -> None:
    python = sys.executable
    config = write_config(
        tmp_path / "mcp.json",
        {name: [python, str(TINY), "hang"] for name in ("h1", "h2")} | {"ok": [python, str(TINY), "ok"]},
    )
    bridge = await RawBridge.start("--config", str(config), "--no-default-config", "--no-kernels")
    try:
        await bridge.initialize(options=start_options)
        await bridge.log_line(lambda line: "ok ready (1 prompts)" in line)
        uri = "file:///work/notes.md"
        bridge.open(uri, "/\n/h1:x a=\n")
        for settings in BAD_SETTINGS:
            bridge.notify("workspace/didChangeConfiguration", {"settings": settings})
            started = time.monotonic()
            answer = await bridge.complete(uri, 0, 1, trigger="/")
            labels = [item["label"] for item in answer["result"]["items"]]
            assert labels == ["/ok:hello", "connecting to 2 servers…"], settings
            await bridge.complete(uri, 1, 8, trigger="=")  # a value on a server that never answers
            rendered = await bridge.request(
                "workspace/executeCommand", {"command": "mcpNotebook.renderPrompt", "arguments": [uri, 1]}
            )
            assert "not connected" in rendered["result"]["error"]
            assert time.monotonic() - started < 1.0, settings
    finally:
        await bridge.kill()
