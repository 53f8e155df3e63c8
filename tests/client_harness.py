"""Test MCP servers as real processes: configurations for the stdio ones, a launcher for the HTTP one; and what
the clients of those tests plug in (an input handler that records its questions, a change watcher).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import psutil

from mcp_notebook.client import InputRequest
from mcp_notebook.config import ServerConfig

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.client.context import ClientRequestContext
    from mcp.client.session import IncomingMessage

SERVERS = Path(__file__).resolve().parent / "servers"
LEGACY_SERVER = SERVERS / "legacy_server.py"
SDK_SERVER = SERVERS / "sdk_server.py"
URL_LINE = re.compile(r"^MCP_NOTEBOOK_URL=(\S+)\s*$")
DEADLINE = 30.0  # seconds; generous for a loaded CI machine, never reached when things work


def legacy_config(*args: str, name: str = "legacy") -> ServerConfig:
    """The stdlib-only handshake server (`tests/servers/legacy_server.py`), started over stdio."""
    return ServerConfig(name=name, command=sys.executable, args=(str(LEGACY_SERVER), *args))


def sdk_config(name: str = "sdk") -> ServerConfig:
    """The SDK low-level server (`tests/servers/sdk_server.py`), started over stdio."""
    return ServerConfig(name=name, command=sys.executable, args=(str(SDK_SERVER),))


def running_http_server(*args: str) -> contextlib.AbstractContextManager[str]:
    """Start the SDK server on Streamable HTTP (127.0.0.1, a free port); yield its URL."""
    return running_url_process([sys.executable, str(SDK_SERVER), "--http", *args])


def stop_process(process: subprocess.Popen[Any], timeout: float = DEADLINE) -> int:
    """Terminate `process` if it still runs and wait for it; kill it if it has not stopped within `timeout`."""
    if process.poll() is None:
        process.terminate()
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout=timeout)


@contextlib.contextmanager
def running_url_process(
    argv: list[str], *, cwd: Path | None = None, startup_timeout: float = DEADLINE
) -> Iterator[str]:
    """Run a server that prints `MCP_NOTEBOOK_URL=…` on stderr (as `mcp-notebook serve --http` does); yield the URL.

    The server is stopped on exit. If it exits or stays silent for `startup_timeout` seconds first, the
    error says so with everything it printed.
    """
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr_lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def on_stderr() -> None:
        # Drain stderr for the server's whole life so a chatty server never blocks on a full pipe.
        assert process.stderr is not None
        for line in process.stderr:
            stderr_lines.append(line)
            match = URL_LINE.match(line.strip())
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()  # EOF: the server exited before (or after) announcing its URL

    reader = threading.Thread(target=on_stderr, name="server-stderr", daemon=True)
    reader.start()
    try:
        ready.wait(startup_timeout)
        if not found:
            raise RuntimeError(
                f"the server did not announce its URL within {startup_timeout:.0f}s "
                f"(exit code {process.poll()}):\n{''.join(stderr_lines)}"
            )
        yield found[0]
    finally:
        stop_process(process)
        reader.join(DEADLINE)  # the pipe ends with the process
        assert process.stderr is not None
        process.stderr.close()


def wait_until(condition: Callable[[], object], what: str, timeout: float = DEADLINE) -> None:
    """Wait until `condition()` is true (re-checked on a short interval), or fail saying `what` did not happen."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        tick.wait(0.02)


async def eventually(condition: Callable[[], object], what: str, within: float = DEADLINE) -> None:
    """`wait_until` for async tests: re-checks without blocking the event loop."""
    with anyio.move_on_after(within):
        # Polling, not an event: the condition is what another process wrote to a file.
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.02)
        return
    raise AssertionError(f"timed out after {within:g} s waiting until {what}")


def live_children(pid: int | None = None) -> list[psutil.Process]:
    """Descendants of a process (this one by default) that are still running (zombies excluded)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    alive = []
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
    return alive


class AnswerRecorder:
    """A `PromptClient` `on_input_required` handler: records each question and gives the same answer to all."""

    def __init__(self, answer: Mapping[str, Any] | None) -> None:
        self.answer = answer
        self.requests: list[InputRequest] = []

    async def __call__(self, request: InputRequest) -> Mapping[str, Any] | None:
        self.requests.append(request)
        return self.answer


class FormFiller:
    """An SDK elicitation callback: records each form it is shown and answers with the next prepared answer."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.forms: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        import mcp_types as types

        assert isinstance(params, types.ElicitRequestFormParams)
        self.forms.append(params)
        return self.answers.pop(0)


class ChangeWatcher:
    """An SDK `Client` message handler: `changed` is set once the server says its prompt list changed."""

    def __init__(self) -> None:
        self.changed = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        import mcp_types  # here: importing this module must not import the SDK

        if isinstance(message, mcp_types.PromptListChangedNotification):
            self.changed.set()


SKILLS_SERVER = SERVERS / "skills_fastmcp_server.py"
SKILL_FOLDERS = SERVERS / "skill_folders"


def skills_config(*args: str, name: str = "shop") -> ServerConfig:
    """FastMCP 4.2 serving skill folders (`tests/servers/skills_fastmcp_server.py`), started over stdio."""
    return ServerConfig(name=name, command=sys.executable, args=(str(SKILLS_SERVER), *args))


def running_skills_http_server(*args: str) -> contextlib.AbstractContextManager[str]:
    """FastMCP 4.2 serving skill folders on Streamable HTTP (127.0.0.1, a free port); yield its URL."""
    return running_url_process([sys.executable, str(SKILLS_SERVER), "--http", *args])
