"""The server processes the bridge started, found and stopped without help from the connections.

Stdio MCP servers run in sessions of their own (so a terminal's signals do
not reach them), which also means nothing stops them when the bridge ends.
Closing the connections politely is tried first; whatever is still running
after that is found here, as the bridge's child processes, and its process
group (a server and everything it started, such as `npx` and its `node`) is
sent SIGTERM and then SIGKILL. Linux's `/proc` tells who our children are;
elsewhere nothing is found and the polite close is all there is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

__all__ = ["child_pids", "is_running", "stop_children"]

_PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses)."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def child_pids(parent: int | None = None) -> list[int]:
    """The processes whose parent is `parent` (this process by default), zombies left out."""
    parent = os.getpid() if parent is None else parent
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in _PROC.iterdir():
            if not entry.name.isdigit():
                continue
            fields = _stat_fields(int(entry.name))
            # fields[0] is the state, fields[1] the parent's pid.
            if fields is not None and len(fields) > 1 and fields[1] == str(parent) and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a dead process nobody has reaped yet)."""
    fields = _stat_fields(pid)
    if fields is not None:
        return bool(fields) and fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _PROC.is_dir()


def _signal_tree(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to `pid`'s process group when it leads one, else to `pid` alone."""
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid and pid != os.getpgrp():
            os.killpg(pid, sig)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


async def stop_children(grace: float = 0.5) -> list[int]:
    """SIGTERM every child process (and its group), SIGKILL what is left after `grace` seconds.

    Returns the pids that were signalled.
    """
    pids = child_pids()
    if not pids:
        return []
    for pid in pids:
        _signal_tree(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(is_running(pid) for pid in pids):  # noqa: ASYNC110
        await asyncio.sleep(0.02)  # another process's end sends no event to wait on
    for pid in pids:
        # The group, even when its leader is gone: a grandchild may still be in it.
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        if is_running(pid):
            _signal_tree(pid, signal.SIGKILL)
    return pids
