"""The server processes the bridge started, found and stopped without help from the connections.

Stdio MCP servers run in sessions of their own (so a terminal's signals do
not reach them), which also means nothing stops them when the bridge ends.
Closing the connections politely is tried first; whatever is still running
after that is found here, as the bridge's child processes, and its process
group (a server and everything it started, such as `npx` and its `node`,
which can outlive a server that exits) is sent SIGTERM and then SIGKILL.
Linux's `/proc` tells who our children are; elsewhere nothing is found and
the polite close is all there is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Collection
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


def _members(groups: set[int]) -> list[int]:
    """The running processes in any of the process groups `groups`."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in _PROC.iterdir():
            if entry.name.isdigit():
                fields = _stat_fields(int(entry.name))
                # fields[0] is the state, fields[2] the process group.
                if fields is not None and len(fields) > 2 and fields[0] not in ("Z", "X") and int(fields[2]) in groups:
                    found.append(int(entry.name))
    return found


def _signal(pid: int, groups: set[int], sig: signal.Signals) -> None:
    """Send `sig` to `pid`'s process group when it is one of `groups`, and to `pid` itself."""
    if pid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pid, sig)
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


async def stop_children(grace: float = 0.5, known: Collection[int] = ()) -> list[int]:
    """SIGTERM every child process and its process group, SIGKILL what is left after `grace` seconds,
    and wait (at most `grace` again) until the killed are gone.

    `known` are children seen earlier, such as servers that have exited since
    but whose group may still hold what they started. Returns the pids that
    were signalled.
    """
    own_group = os.getpgrp()
    pids = sorted(set(child_pids()) | set(known))
    # A server started in a session of its own leads a group of the same number.
    groups = {pid for pid in pids if pid != own_group and _leads_group(pid)}
    targets = sorted(set(pids) | set(_members(groups)))
    if not targets:
        return []
    for pid in targets:
        _signal(pid, groups, signal.SIGTERM)
    deadline = time.monotonic() + grace

    def left() -> list[int]:
        return [pid for pid in targets if is_running(pid)] + _members(groups)

    async def until_gone(deadline: float) -> None:
        while time.monotonic() < deadline and left():  # noqa: ASYNC110
            await asyncio.sleep(0.02)  # another process's end sends no event to wait on

    await until_gone(deadline)
    for pid in set(left()) | groups:
        _signal(pid, groups, signal.SIGKILL)
    # SIGKILL is delivered, not awaited: on a busy machine a killed process can run on for a moment,
    # and the caller (shutdown) promises they are gone. Bounded: a process in uninterruptible sleep
    # ends only when its I/O does.
    await until_gone(time.monotonic() + grace)
    return targets


def _leads_group(pid: int) -> bool:
    """True when `pid` is (or, having exited, was) the leader of a process group that still exists."""
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return bool(_members({pid}))
