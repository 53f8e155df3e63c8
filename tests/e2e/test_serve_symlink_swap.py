"""git-sync's swap, for real: `serve ROOT/current`, then `current` renamed to each new checkout in turn.

git-sync keeps `root/current -> rev-A`; on a commit it checks out `rev-B`,
renames a new symlink over `current` and deletes `rev-A`. A server started on
`root/current` must follow: within 5 s of each swap the new checkout's prompts
are served and `list_changed` is sent, as many times as it happens. Over stdio
(one process) and over HTTP with two workers (every worker follows).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from e2e_processes import ACCEPT, DEADLINE, MODERN, StdioServer, modern_meta, write_notebook
from mcp import Client
from served_http import ServedHttp

pytestmark = pytest.mark.slow

SWAP_DEADLINE = 5.0  # seconds from a swap to the new prompts and the notification
SWAPS = 3


def _checkout(root: Path, revision: int) -> Path:
    """A checkout of revision `revision`: two notebooks whose prompts name the revision."""
    folder = root / f"rev-{revision}"
    write_notebook(folder / "greet.ipynb", [(f"Hello from revision {revision}.", {"prompt": f"greet_r{revision}"})])
    write_notebook(folder / "deep/notes.ipynb", [(f"Notes of {revision}.", {"prompt": f"notes_r{revision}"})])
    return folder


def _names(revision: int) -> list[str]:
    return sorted([f"greet_r{revision}", f"notes_r{revision}"])


def _swap(root: Path, revision: int) -> None:
    """What git-sync does: check out the new revision, rename a new link over `current`, delete the old one."""
    old = Path(os.path.realpath(root / "current"))
    new = _checkout(root, revision)
    temporary = root / f".current-{revision}.tmp"
    os.symlink(new.name, temporary)  # relative, as git-sync makes it
    os.replace(temporary, root / "current")
    shutil.rmtree(old)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "git"
    _checkout(root, 0)
    os.symlink("rev-0", root / "current")
    return root


def _notification_within(server: StdioServer, method: str, seconds: float) -> dict[str, Any]:
    """The next notification `method` from a stdio server, failing unless it comes within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            line = server.stdout_lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no {method} within {seconds} s of the swap; stderr: {server.stderr_seen}") from None
        assert line is not None, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        if message.get("method") == method:
            return message


def test_a_stdio_server_follows_every_swap_of_current(root: Path, tmp_path: Path) -> None:
    with StdioServer([str(root / "current"), "--cache-dir", str(tmp_path / "cache")]) as server:
        server.initialize("2025-11-25")
        listed = server.request("prompts/list")["result"]["prompts"]
        assert sorted(p["name"] for p in listed) == _names(0)
        for revision in range(1, SWAPS + 1):
            _swap(root, revision)
            _notification_within(server, "notifications/prompts/list_changed", SWAP_DEADLINE)
            listed = server.request("prompts/list")["result"]["prompts"]
            assert sorted(p["name"] for p in listed) == _names(revision)
            reply = server.request("prompts/get", {"name": f"greet_r{revision}"})
            assert reply["result"]["messages"][0]["content"]["text"] == f"Hello from revision {revision}."
        assert not (root / "rev-0").exists()


def test_a_served_folder_below_the_link_is_followed(root: Path) -> None:
    with StdioServer([str(root / "current" / "deep")]) as server:
        server.initialize("2025-11-25")
        for revision in range(1, SWAPS + 1):
            _swap(root, revision)
            _notification_within(server, "notifications/prompts/list_changed", SWAP_DEADLINE)
            listed = server.request("prompts/list")["result"]["prompts"]
            assert [p["name"] for p in listed] == [f"notes_r{revision}"]


async def _fresh_names(url: str) -> list[str]:
    """The prompt names, asked over a new connection (so either worker may answer)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": modern_meta()}}
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "prompts/list",
        "Connection": "close",
    }
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, content=json.dumps(body), headers=headers, timeout=DEADLINE)
    return sorted(prompt["name"] for prompt in response.json()["result"]["prompts"])


async def test_every_http_worker_follows_every_swap_of_current(root: Path, tmp_path: Path) -> None:
    with ServedHttp([root / "current"], "--workers", "2", "--cache-dir", str(tmp_path / "cache")) as server:
        async with AsyncExitStack() as stack:
            subscriptions = []
            for _ in range(6):  # each its own connection: the streams spread over both workers
                client = await stack.enter_async_context(Client(server.url, mode="auto"))
                subscriptions.append(await stack.enter_async_context(client.listen(prompts_list_changed=True)))
            for revision in range(1, SWAPS + 1):
                _swap(root, revision)
                with anyio.fail_after(SWAP_DEADLINE):
                    for subscription in subscriptions:
                        await subscription.__anext__()
                for _ in range(6):  # over new connections: whichever worker answers serves the new checkout
                    assert await _fresh_names(server.url) == _names(revision)


def _stderr_line_with(server: StdioServer, text: str) -> str:
    """The next stderr line (not one seen before) containing `text`, within the deadline."""
    while True:
        try:
            line = server.stderr_lines.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"no stderr line with {text!r}; saw {server.stderr_seen}") from None
        if line is None:
            raise AssertionError(f"the server exited; its stderr: {server.stderr_seen}")
        server.stderr_seen.append(line)
        if text in line:
            return line


def _relink(root: Path, target: Path | str) -> None:
    """Rename a new `current`, leading to `target`, over the old one (and delete nothing)."""
    temporary = root / ".current.tmp"
    os.symlink(target, temporary)
    os.replace(temporary, root / "current")


def test_a_link_swapped_to_an_ancestor_or_to_usr_is_refused_and_the_old_prompts_stay_served(root: Path) -> None:
    # Beside the checkouts, a notebook that is no part of them (another user's, say): never served.
    write_notebook(root / "private" / "secret.ipynb", [("Not yours.", {"prompt": "secret"})])
    current, first = root / "current", root / "rev-0"
    with StdioServer([str(current)]) as server:
        server.initialize("2025-11-25")
        for target in (root.parent, root, Path("/usr")):
            _relink(root, target)
            assert _stderr_line_with(server, "not followed") == (
                f"mcp-notebook: {current} now leads to {target}, which is not beside {first}: not followed"
                " (a link is followed only to a folder beside its first target, as git-sync swaps it);"
                f" the prompts of {first} stay served"
            )
            listed = server.request("prompts/list")["result"]["prompts"]
            assert sorted(p["name"] for p in listed) == _names(0)
            reply = server.request("prompts/get", {"name": "greet_r0"})
            assert reply["result"]["messages"][0]["content"]["text"] == "Hello from revision 0."
        # A swap among siblings, git-sync's, is still followed afterwards.
        _checkout(root, 1)
        _relink(root, "rev-1")
        _notification_within(server, "notifications/prompts/list_changed", SWAP_DEADLINE)
        listed = server.request("prompts/list")["result"]["prompts"]
        assert sorted(p["name"] for p in listed) == _names(1)
        assert server.process.stdin is not None
        server.process.stdin.close()  # the end of its input: it stops, and its stderr ends
        while (line := server.stderr_lines.get(timeout=DEADLINE)) is not None:
            server.stderr_seen.append(line)
    # One line for each swap refused, however many looks found the link there.
    assert len([line for line in server.stderr_seen if "not followed" in line]) == 3, server.stderr_seen
