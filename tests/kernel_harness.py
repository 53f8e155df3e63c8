"""A real ipykernel for tests, started by jupyter_client and driven as a notebook front end drives it.

`with RealKernel(folder) as kernel:` starts a kernel whose Jupyter and IPython
folders (runtime, data, config, IPython profile) live in `folder`, so the
user's own never leak in and the kernel's connection files can be read back.
`kernel.execute(code)` runs a cell and returns an `ExecutionResult`: its reply,
its iopub messages, what it printed and displayed, its error. Every wait has a
deadline.

Import it as `from kernel_harness import RealKernel` (the folders under tests/
have conftest.py files of their own, so never import helpers from conftest).
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil
from client_harness import live_children
from jupyter_client import KernelManager
from jupyter_client.blocking.client import BlockingKernelClient

from mcp_notebook.discovery import KernelConnection, list_kernel_connections

__all__ = [
    "KERNEL_DEADLINE",
    "ExecutionResult",
    "Message",
    "RealKernel",
    "jupyter_folders",
    "widget_opens",
    "widget_state_update",
]

KERNEL_DEADLINE = 60.0  # seconds; generous for a loaded CI machine, never reached when things work
# How often to look for a question on stdin while answers are waiting to be given.
_STDIN_POLL = 0.05

Message = dict[str, Any]

# Where Jupyter and IPython keep what they write: each variable names a folder of its own under the test's.
_JUPYTER_FOLDERS = (
    ("JUPYTER_RUNTIME_DIR", "runtime"),
    ("JUPYTER_DATA_DIR", "data"),
    ("JUPYTER_CONFIG_DIR", "config"),
    ("IPYTHONDIR", "ipython"),
    ("MCP_NOTEBOOK_STATE_DIR", "state"),  # where kernels in other runtime directories leave pointers
)


def widget_opens(messages: Sequence[Message], model: str) -> list[Message]:
    """The `comm_open` messages of the ipywidgets of `model` (e.g. "ButtonModel") among `messages`."""
    return [
        m
        for m in messages
        if m["msg_type"] == "comm_open"
        and m["content"]["target_name"] == "jupyter.widget"
        and m["content"]["data"]["state"]["_model_name"] == model
    ]


def widget_state_update(message: Message, comm_id: str) -> dict[str, Any] | None:
    """The state a kernel-side widget change sends to the front end, when `message` is one for `comm_id`."""
    if message["msg_type"] != "comm_msg" or message["content"]["comm_id"] != comm_id:
        return None
    data = message["content"]["data"]
    state: dict[str, Any] | None = data.get("state") if data.get("method") == "update" else None
    return state


def jupyter_folders(base: Path, more: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
    """Environment variables that give Jupyter and IPython fresh folders under `base` (made here).

    `more` adds `(variable, subfolder)` pairs. The user's own settings, kernels and profiles stay out.
    """
    variables: dict[str, str] = {}
    for var, sub in (*_JUPYTER_FOLDERS, *more):
        (base / sub).mkdir(parents=True, exist_ok=True)
        variables[var] = str(base / sub)
    return variables


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    """One cell's run: the execute reply and the iopub messages it caused, up to the kernel going idle."""

    code: str
    reply: Message
    outputs: tuple[Message, ...]

    @property
    def status(self) -> str:
        """`"ok"`, `"error"` or `"aborted"`."""
        return str(self.reply["content"]["status"])

    @property
    def text(self) -> str:
        """What the cell printed (stdout and stderr, in order)."""
        return "".join(m["content"]["text"] for m in self.outputs if m["msg_type"] == "stream")

    @property
    def displays(self) -> list[dict[str, Any]]:
        """The data (`text/plain`, `text/markdown`, …) of everything shown: display calls and the cell's value."""
        return [m["content"]["data"] for m in self.outputs if m["msg_type"] in ("display_data", "execute_result")]

    @property
    def result(self) -> dict[str, Any]:
        """The data of the cell's value (its last line); the cell must have exactly one."""
        [value] = [m for m in self.outputs if m["msg_type"] == "execute_result"]
        data: dict[str, Any] = value["content"]["data"]
        return data

    @property
    def error(self) -> dict[str, Any] | None:
        """What the cell raised (`ename`, `evalue`, `traceback`), or None when it did not."""
        return self.reply["content"] if self.status == "error" else None


class RealKernel:
    """A running ipykernel (`python3`) with its folders under `base`; a context manager that shuts it down.

    `env` adds to this process's environment (a None value removes a variable);
    `cwd` is the kernel's working folder (default `base`).
    """

    def __init__(self, base: Path, *, cwd: Path | None = None, env: Mapping[str, str | None] | None = None) -> None:
        self.base = base
        self.runtime_dir = base / "runtime"
        self.cwd = cwd or base
        self.manager = KernelManager(kernel_name="python3")
        self._client: BlockingKernelClient | None = None
        # Every iopub message read so far, whichever cell it belongs to (see `wait_for_message`).
        self.seen: list[Message] = []
        self._code: dict[str, str] = {}  # message id -> the cell sent with it, for failure messages
        self._env = self._environment(env or {})

    def _environment(self, extra: Mapping[str, str | None]) -> dict[str, str]:
        env = {**os.environ, **jupyter_folders(self.base)}
        for var, value in extra.items():
            if value is None:
                env.pop(var, None)
            else:
                env[var] = value
        return env

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> RealKernel:
        """Start the kernel and wait until it answers."""
        self.manager.start_kernel(cwd=str(self.cwd), env=self._env)
        self._client = self.manager.client()
        self._client.start_channels()
        self._client.wait_for_ready(timeout=KERNEL_DEADLINE)
        return self

    def shutdown(self) -> None:
        """Stop listening and shut the kernel down gracefully (as a front end does); safe to call twice."""
        if self._client is not None:
            self._client.stop_channels()
        if self.manager.has_kernel and self.manager.is_alive():
            self.manager.shutdown_kernel(now=False)

    def __enter__(self) -> RealKernel:
        try:
            return self.start()
        except BaseException:
            self.shutdown()
            raise

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.shutdown()

    @property
    def client(self) -> BlockingKernelClient:
        """The front end's connection to the kernel (started with the kernel)."""
        assert self._client is not None, "the kernel is not started"
        return self._client

    @property
    def pid(self) -> int:
        """The kernel's process id."""
        pid: int = self.manager.provisioner.pid  # type: ignore[union-attr]
        return pid

    def child_processes(self) -> list[psutil.Process]:
        """The kernel's descendants that still run (servers it started, for instance)."""
        return live_children(self.pid)

    def interrupt(self) -> None:
        """What the notebook's stop button (Ctrl-C) does: interrupt the running cell."""
        self.manager.interrupt_kernel()

    # -- cells -------------------------------------------------------------------------------------

    def execute(self, code: str, *, stdin: Sequence[str] | None = None, check: bool = True) -> ExecutionResult:
        """Run a cell to its end. `stdin` answers its `input()` calls in order; `check` fails the test if it raised."""
        return self.finish(self.submit(code, allow_stdin=stdin is not None), stdin=stdin or (), check=check)

    def submit(self, code: str, *, allow_stdin: bool = False) -> str:
        """Send a cell to run and return at once; its message id (for `finish`)."""
        msg_id: str = self.client.execute(code, allow_stdin=allow_stdin)
        self._code[msg_id] = code
        return msg_id

    def run_until_printed(self, code: str, *, until: str) -> str:
        """Start a cell and return once it has printed `until` (it is then still running); its message id."""
        msg_id = self.submit(code)
        while True:
            message = self._next_iopub(KERNEL_DEADLINE)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "stream" and until in message["content"]["text"]:
                return msg_id
            assert message["msg_type"] != "error", message["content"]

    def finish(self, msg_id: str, *, stdin: Iterable[str] = (), check: bool = True) -> ExecutionResult:
        """Wait for a submitted cell to end: its reply and its iopub messages from now on.

        `stdin` answers its `input()` calls in order; `check` fails the test when the cell did not succeed.
        """
        answers = list(stdin)
        outputs: list[Message] = []
        while True:
            if answers:
                self._answer_question(answers)
            try:
                message = self._next_iopub(_STDIN_POLL if answers else KERNEL_DEADLINE)
            except queue.Empty:
                if answers:
                    continue  # no output yet: the cell may be waiting for its answer
                raise AssertionError(f"the kernel sent nothing for {KERNEL_DEADLINE:g} s") from None
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            outputs.append(message)
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        result = ExecutionResult(self._code.pop(msg_id, ""), self._reply_to(msg_id), tuple(outputs))
        if check:
            assert result.status == "ok", f"the cell failed:\n{result.code}\n{result.reply['content']}"
        return result

    def _answer_question(self, answers: list[str]) -> None:
        try:
            request = self.client.get_stdin_msg(timeout=_STDIN_POLL)
        except queue.Empty:
            return
        if request["msg_type"] == "input_request":
            self.client.input(answers.pop(0))

    def _reply_to(self, msg_id: str) -> Message:
        """The execute reply of one request (replies to earlier requests are skipped)."""
        while True:
            reply: Message = self.client.get_shell_msg(timeout=KERNEL_DEADLINE)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    def _next_iopub(self, timeout: float) -> Message:
        message: Message = self.client.get_iopub_msg(timeout=timeout)
        self.seen.append(message)
        return message

    # -- front-end actions and what the kernel sends -----------------------------------------------

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        """What a front end sends when the user edits or clicks a widget."""
        message = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(message)

    def set_widget_state(self, comm_id: str, **state: Any) -> None:
        """What a front end sends when the user changes a widget (types into it, picks an option)."""
        self.send_comm(comm_id, {"method": "update", "state": state, "buffer_paths": []})

    def click_widget(self, comm_id: str) -> None:
        """What a front end sends when the user clicks a button."""
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}})

    def wait_for_message(self, what: str, matches: Callable[[Message], bool]) -> Message:
        """The first iopub message (one already seen, or the next ones) for which `matches(message)` is true."""
        for message in self.seen:
            if matches(message):
                return message
        while True:
            try:
                message = self._next_iopub(KERNEL_DEADLINE)
            except queue.Empty:
                raise AssertionError(f"no {what} within {KERNEL_DEADLINE:g} s") from None
            if matches(message):
                return message

    # -- what `%mcp serve` leaves behind -----------------------------------------------------------

    def connections(self) -> list[KernelConnection]:
        """The connection files of MCP servers in this kernel's runtime folder."""
        return list_kernel_connections(self.runtime_dir)

    def connection(self) -> KernelConnection:
        """The one connection file in the runtime folder (fails the test when there is none, or several)."""
        [found] = self.connections()
        return found
