"""%mcp in a real ipykernel driven through jupyter_client, as a notebook front end drives it.

The servers are real processes: `mcp-notebook serve` over stdio (from the
project's `mcp.json`) and over HTTP (`%mcp connect`), and the stdlib test
server for the slow and input-asking prompts.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
from jupyter_client import KernelManager
from jupyter_client.blocking.client import BlockingKernelClient
from magics_harness import LEGACY_SERVER, live_children, running_url_process, wait_until

pytestmark = pytest.mark.slow

DEADLINE = 60.0
MCP_NOTEBOOK = str(Path(sys.executable).with_name("mcp-notebook"))


def write_prompt_notebook(path: Path, extra_prompt: str | None = None) -> None:
    """A notebook publishing `greet` (name, optional lang with completions), and optionally one more prompt."""
    notebook = nbformat.v4.new_notebook()
    greet = nbformat.v4.new_markdown_cell("Say hello to **{{name}}** in {{lang}}.")
    greet.metadata["mcp"] = {
        "prompt": "greet",
        "description": "Say hello.",
        "arguments": [
            {"name": "name", "description": "who to greet"},
            {"name": "lang", "required": False, "default": "English", "completions": ["python", "rust", "ruby"]},
        ],
    }
    notebook.cells.append(greet)
    if extra_prompt is not None:
        extra = nbformat.v4.new_markdown_cell("Another prompt.")
        extra.metadata["mcp"] = {"prompt": extra_prompt, "description": "Added later."}
        notebook.cells.append(extra)
    tmp = path.with_name(f".{path.name}.tmp")
    nbformat.write(notebook, str(tmp))
    tmp.replace(path)


class Kernel:
    """A running ipykernel and the messages of the cells it ran."""

    def __init__(self, manager: KernelManager, client: BlockingKernelClient) -> None:
        self.manager = manager
        self.client = client

    def run(self, code: str, *, stdin: list[str] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Run a cell; its execute reply and iopub messages. `stdin` answers `input()` calls in order."""
        msg_id = self.client.execute(code, allow_stdin=stdin is not None)
        answers = list(stdin or [])
        messages: list[dict[str, Any]] = []
        while True:
            if answers:
                try:
                    request = self.client.get_stdin_msg(timeout=0.05)
                except Exception:  # queue.Empty: no question yet
                    request = None
                if request is not None and request["msg_type"] == "input_request":
                    self.client.input(answers.pop(0))
            try:
                message = self.client.get_iopub_msg(timeout=0.05 if answers else DEADLINE)
            except Exception:  # queue.Empty while waiting for a question
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            messages.append(message)
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        return self.reply_to(msg_id), messages

    def reply_to(self, msg_id: str) -> dict[str, Any]:
        """The execute reply of one request (replies to earlier requests are skipped)."""
        while True:
            reply: dict[str, Any] = self.client.get_shell_msg(timeout=DEADLINE)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    def ok(self, code: str, **options: Any) -> str:
        """Run a cell that must succeed; what it printed."""
        reply, messages = self.run(code, **options)
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")

    def result(self, code: str) -> dict[str, Any]:
        """Run a cell whose last line has a value; its display data (`text/plain`, `text/markdown`, …)."""
        reply, messages = self.run(code)
        assert reply["content"]["status"] == "ok", reply["content"]
        [result] = [m for m in messages if m["msg_type"] == "execute_result"]
        data: dict[str, Any] = result["content"]["data"]
        return data


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("magics-kernel")
    for sub in ("runtime", "data", "config", "ipython", "home", "project/prompts"):
        (base / sub).mkdir(parents=True)
    project = base / "project"
    write_prompt_notebook(project / "prompts" / "greetings.ipynb")
    servers = {
        "notebooks": {"command": MCP_NOTEBOOK, "args": ["serve", "prompts"]},
        "legacy": {
            "command": sys.executable,
            "args": [str(LEGACY_SERVER), "--version", "2025-06-18", "--log", str(base / "legacy.log")],
        },
    }
    (project / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return base


def start_kernel(workdir: Path) -> Kernel:
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
        "JUPYTER_DATA_DIR": str(workdir / "data"),
        "JUPYTER_CONFIG_DIR": str(workdir / "config"),
        "IPYTHONDIR": str(workdir / "ipython"),
        "HOME": str(workdir / "home"),  # the user's own MCP configuration stays out
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("MCP_NOTEBOOK_CONFIG", None)
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(workdir / "project"), env=env)
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=DEADLINE)
    kernel = Kernel(manager, client)
    kernel.ok("%load_ext mcp_notebook")
    return kernel


def stop_kernel(kernel: Kernel) -> None:
    kernel.client.stop_channels()
    if kernel.manager.is_alive():
        kernel.manager.shutdown_kernel(now=False)


@pytest.fixture(scope="module")
def kernel(workdir: Path) -> Iterator[Kernel]:
    kernel = start_kernel(workdir)
    try:
        yield kernel
    finally:
        stop_kernel(kernel)


def test_the_kernel_runs_this_virtualenvs_python(kernel: Kernel) -> None:
    assert kernel.ok("import sys; print(sys.executable)").strip() == sys.executable


def test_configured_servers_are_listed_and_prompts_come_from_mcp_notebook_serve_over_stdio(kernel: Kernel) -> None:
    servers = kernel.ok("_r = %mcp servers\nprint(repr(_r))")
    assert "notebooks" in servers and "legacy" in servers and "not connected" in servers

    table = kernel.result("%mcp prompts notebooks")
    assert "notebooks:greet" in table["text/plain"]
    assert "<code>notebooks:greet</code>" in table["text/html"]


def test_get_shows_a_conversation_and_keeps_the_result(kernel: Kernel) -> None:
    shown = kernel.result("who = 'Ada'\n%mcp get notebooks:greet name=@who lang=rust")
    assert "> **USER**" in shown["text/markdown"]
    assert "Say hello to **Ada** in rust." in shown["text/markdown"]
    assert shown["text/plain"].startswith("greet: 1 message")

    printed = kernel.ok("msgs = %mcp get notebooks:greet name=Bo\nprint(msgs.to_openai())")
    assert "Say hello to **Bo** in English." in printed


def test_complete_asks_the_notebook_server(kernel: Kernel) -> None:
    assert kernel.ok("%mcp complete notebooks:greet lang ru").split() == ["rust", "ruby"]


def test_a_saved_notebook_change_reaches_the_kernel_as_a_new_prompt(kernel: Kernel, workdir: Path) -> None:
    kernel.ok("%mcp prompts notebooks")
    write_prompt_notebook(workdir / "project" / "prompts" / "greetings.ipynb", extra_prompt="farewell")

    wait_until(
        lambda: "notebooks:farewell" in kernel.ok("_r = %mcp prompts notebooks\nprint(repr(_r))"),
        "the kernel lists the prompt added to the notebook",
    )


def test_mcp_notebook_serve_over_http(kernel: Kernel, workdir: Path) -> None:
    with running_url_process([MCP_NOTEBOOK, "serve", str(workdir / "project" / "prompts"), "--http"]) as url:
        connected = kernel.ok(f"%mcp connect web {url}")
        assert "Connected to web" in connected and "over http" in connected
        printed = kernel.ok("_r = %mcp get web:greet name=Web\nprint(repr(_r))")
        assert "Say hello to **Web** in English." in printed
        kernel.ok("%mcp disconnect web")


def test_a_server_asking_for_input_is_answered_through_the_front_end(kernel: Kernel) -> None:
    printed = kernel.ok("_r = %mcp get legacy:ask\nprint(repr(_r))", stdin=["crimson"])

    assert "Paint it crimson." in printed


def test_ctrl_c_cancels_a_slow_request_and_the_kernel_stays_usable(kernel: Kernel, workdir: Path) -> None:
    log = workdir / "legacy.log"
    kernel.ok("%mcp prompts legacy")
    msg_id = kernel.client.execute("%mcp get legacy:slow")
    wait_until(lambda: "holding" in log.read_text(), "the server holds the slow request")

    kernel.manager.interrupt_kernel()

    reply = kernel.reply_to(msg_id)
    assert (reply["content"]["status"], reply["content"].get("ename")) == ("error", "KeyboardInterrupt")
    wait_until(lambda: "cancelled" in log.read_text(), "the server saw the cancellation")
    assert "Say hello to after" in kernel.ok("_r = %mcp get legacy:greet name=after\nprint(repr(_r))")


def test_unload_and_kernel_shutdown_leave_no_server_process(workdir: Path) -> None:
    kernel = start_kernel(workdir)
    try:
        kernel_pid = kernel.manager.provisioner.pid  # type: ignore[union-attr]
        kernel.ok("%mcp prompts notebooks legacy")
        servers = live_children(kernel_pid)
        assert len(servers) >= 2

        kernel.ok("%unload_ext mcp_notebook")
        wait_until(lambda: not any(_alive(p) for p in servers), "every server process is gone after %unload_ext")

        kernel.ok("%load_ext mcp_notebook\n%mcp prompts notebooks legacy")
        servers = live_children(kernel_pid)
        assert len(servers) >= 2
    finally:
        stop_kernel(kernel)

    wait_until(lambda: not any(_alive(p) for p in servers), "every server process is gone after kernel shutdown")


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
