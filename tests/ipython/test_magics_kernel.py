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

import nbformat
import psutil
import pytest
from kernel_harness import RealKernel
from magics_harness import LEGACY_SERVER, running_url_process, wait_until
from trusted_files import trusted

pytestmark = pytest.mark.slow

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


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("magics-kernel")
    for sub in ("home", "project/prompts"):
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
    trusted(project / "mcp.json", base / "trust.json")  # the user's own project
    return base


def magics_kernel(workdir: Path) -> RealKernel:
    """A kernel in the project folder, with a home of its own and this environment's scripts on PATH."""
    env = {
        "HOME": str(workdir / "home"),  # the user's own MCP configuration stays out
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MCP_NOTEBOOK_CONFIG": None,
        "MCP_NOTEBOOK_TRUST_FILE": str(workdir / "trust.json"),
    }
    return RealKernel(workdir, cwd=workdir / "project", env=env)


@pytest.fixture(scope="module")
def kernel(workdir: Path) -> Iterator[RealKernel]:
    with magics_kernel(workdir) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        yield kernel


def test_the_kernel_runs_this_virtualenvs_python(kernel: RealKernel) -> None:
    assert kernel.execute("import sys; print(sys.executable)").text.strip() == sys.executable


def test_configured_servers_are_listed_and_prompts_come_from_mcp_notebook_serve_over_stdio(kernel: RealKernel) -> None:
    servers = kernel.execute("_r = %mcp servers\nprint(repr(_r))").text
    assert "notebooks" in servers and "legacy" in servers and "not connected" in servers

    table = kernel.execute("%mcp prompts notebooks").result
    assert "notebooks:greet" in table["text/plain"]
    assert '<code style="white-space: nowrap">notebooks:greet</code>' in table["text/html"]


def test_get_shows_a_conversation_and_keeps_the_result(kernel: RealKernel) -> None:
    shown = kernel.execute("who = 'Ada'\n%mcp get notebooks:greet name=@who lang=rust").result
    assert 'class="mcp-turn mcp-turn-user"' in shown["text/markdown"]
    assert "Say hello to **Ada** in rust." in shown["text/markdown"]
    assert shown["text/plain"].startswith("greet: 1 message")

    printed = kernel.execute("msgs = %mcp get notebooks:greet name=Bo\nprint(msgs.to_openai())").text
    assert "Say hello to **Bo** in English." in printed


def test_complete_asks_the_notebook_server(kernel: RealKernel) -> None:
    assert kernel.execute("%mcp complete notebooks:greet lang ru").text.split() == ["rust", "ruby"]


def test_a_saved_notebook_change_reaches_the_kernel_as_a_new_prompt(kernel: RealKernel, workdir: Path) -> None:
    kernel.execute("%mcp prompts notebooks")
    write_prompt_notebook(workdir / "project" / "prompts" / "greetings.ipynb", extra_prompt="farewell")

    wait_until(
        lambda: "notebooks:farewell" in kernel.execute("_r = %mcp prompts notebooks\nprint(repr(_r))").text,
        "the kernel lists the prompt added to the notebook",
    )


def test_mcp_notebook_serve_over_http(kernel: RealKernel, workdir: Path) -> None:
    with running_url_process([MCP_NOTEBOOK, "serve", str(workdir / "project" / "prompts"), "--http"]) as url:
        connected = kernel.execute(f"%mcp connect web {url}").text
        assert "Connected to web" in connected and "over http" in connected
        printed = kernel.execute("_r = %mcp get web:greet name=Web\nprint(repr(_r))").text
        assert "Say hello to **Web** in English." in printed
        kernel.execute("%mcp disconnect web")


def test_a_server_asking_for_input_is_answered_through_the_front_end(kernel: RealKernel) -> None:
    printed = kernel.execute("_r = %mcp get legacy:ask\nprint(repr(_r))", stdin=["crimson"]).text

    assert "Paint it crimson." in printed


def test_ctrl_c_cancels_a_slow_request_and_the_kernel_stays_usable(kernel: RealKernel, workdir: Path) -> None:
    log = workdir / "legacy.log"
    kernel.execute("%mcp prompts legacy")
    msg_id = kernel.submit("%mcp get legacy:slow")
    wait_until(lambda: "holding" in log.read_text(), "the server holds the slow request")

    kernel.interrupt()

    reply = kernel.finish(msg_id, check=False).reply
    assert (reply["content"]["status"], reply["content"].get("ename")) == ("error", "KeyboardInterrupt")
    wait_until(lambda: "cancelled" in log.read_text(), "the server saw the cancellation")
    assert "Say hello to after" in kernel.execute("_r = %mcp get legacy:greet name=after\nprint(repr(_r))").text


def test_unload_and_kernel_shutdown_leave_no_server_process(workdir: Path) -> None:
    with magics_kernel(workdir) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("%mcp prompts notebooks legacy")
        servers = kernel.child_processes()
        assert len(servers) >= 2

        kernel.execute("%unload_ext mcp_notebook")
        wait_until(lambda: not any(_alive(p) for p in servers), "every server process is gone after %unload_ext")

        kernel.execute("%load_ext mcp_notebook\n%mcp prompts notebooks legacy")
        servers = kernel.child_processes()
        assert len(servers) >= 2

    wait_until(lambda: not any(_alive(p) for p in servers), "every server process is gone after kernel shutdown")


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
