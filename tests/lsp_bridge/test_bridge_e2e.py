"""mcp-notebook-lsp end to end: real `mcp-notebook serve` processes behind it, a real LSP client in front."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from bridge_harness import BRIDGE, DEADLINE, Bridge, single_text_edit, start_bridge
from lsprotocol import types
from notebook_files import write_notebook

from mcp_notebook.discovery import write_connection_file

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

PID_EXEC = Path(__file__).with_name("pid_exec.py")
GREET = {
    "prompt": "greet",
    "title": "Greet someone",
    "description": "Say hello to a person.",
    "arguments": [
        {"name": "name", "description": "who to greet", "completions": ["Ada", "Alan", "Grace Hopper"]},
        {"name": "lang", "required": False, "default": "en"},
    ],
}
CELLS: list[dict[str, Any]] = [
    {"source": "Hello {{name}} in {{lang}}", "mcp": GREET},
    {"source": "Summarize the notebook.", "mcp": {"prompt": "summarize", "description": "Sum it up."}},
]

StartBridge = Callable[..., AbstractAsyncContextManager[Bridge]]


def _labels(result: types.CompletionList) -> list[str]:
    return [item.label for item in result.items]


def _ready(server: str, prompts: int | None = None) -> Callable[[str], bool]:
    """A log line saying `server` is ready (with that many prompts)."""
    wanted = f"{server} ready" + (f" ({prompts} prompts)" if prompts is not None else "")
    return lambda line: wanted in line


class Workspace:
    """Notebooks, an mcp.json naming `mcp-notebook serve` for them, and a runtime directory for kernels."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.notebooks = root / "notebooks"
        self.runtime = root / "runtime"
        self.runtime.mkdir(parents=True)
        self.pid_file = root / "server.pid"
        self.notebook = write_notebook(self.notebooks / "analysis.ipynb", CELLS)
        self.config = root / "mcp.json"
        serve = [str(PID_EXEC), str(self.pid_file), sys.executable, "-m", "mcp_notebook", "serve", str(self.notebooks)]
        self.config.write_text(json.dumps({"mcpServers": {"nb": {"command": sys.executable, "args": serve}}}))

    def command(self, *extra: str, configured: bool = True) -> list[str]:
        log = ["--log-file", os.environ["BRIDGE_LOG"], "--log-level", "DEBUG"] if os.environ.get("BRIDGE_LOG") else []
        return [
            *BRIDGE,
            *log,
            *(["--config", str(self.config)] if configured else []),
            "--no-default-config",
            "--runtime-dir",
            str(self.runtime),
            "--kernel-poll",
            "0.2",
            "--health-interval",
            "0.5",
            *extra,
        ]


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("shared"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(shared_workspace: Workspace) -> AsyncIterator[Bridge]:
    async with start_bridge(shared_workspace.command()) as bridge:
        await bridge.log_line(_ready("nb", 2))
        yield bridge


@pytest.fixture
def bridge(shared: Bridge) -> Bridge:
    shared.edits.clear()
    return shared


@pytest.fixture
def uri(request: pytest.FixtureRequest) -> str:
    return f"file:///work/{request.node.name.replace('[', '_').replace(']', '_')}.md"


async def test_initialize_is_answered_before_servers_are_up(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    async with start_bridge(workspace.command()) as bridge:
        # The server process was only just started: nothing to offer yet, but an answer at once.
        assert not any(_ready("nb")(m.message) for m in bridge.client.log_messages)
        bridge.open("file:///w/a.md", "/\n")
        early = await bridge.complete("file:///w/a.md", 0, 1)
        assert early.is_incomplete
        await bridge.log_line(_ready("nb", 2))
        assert _labels(await bridge.complete("file:///w/a.md", 0, 1)) == ["/nb:greet", "/nb:summarize"]


async def test_slash_completion_lists_the_notebook_prompts(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/\n/sum\n")
    result = await bridge.complete(uri, 0, 1)
    assert _labels(result) == ["/nb:greet", "/nb:summarize"]
    assert isinstance(result.items[0].text_edit, types.TextEdit)
    assert result.items[0].text_edit.new_text == "/nb:greet name=${1:name}"
    assert _labels(await bridge.complete(uri, 1, 4)) == ["/nb:summarize"]


async def test_argument_names_and_values_come_from_the_notebook(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, '/nb:greet \n/nb:greet name=A\n/nb:greet lang=en name="Grace H\n')
    assert _labels(await bridge.complete(uri, 0, 10)) == ["name=", "lang="]
    assert _labels(await bridge.complete(uri, 1, 16)) == ["Ada", "Alan"]
    (grace,) = (await bridge.complete(uri, 2, 31)).items
    assert grace.label == "Grace Hopper"
    assert isinstance(grace.text_edit, types.TextEdit)
    assert grace.text_edit.new_text == '"Grace Hopper"'


async def test_hover_describes_the_prompt(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet name=Ada\n")
    hover = await bridge.hover(uri, 0, 4)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "**Greet someone**" in hover.contents.value
    assert "who to greet" in hover.contents.value
    assert "- `lang` *(default: `en`)*" in hover.contents.value  # as `mcp-notebook list` shows it


async def test_an_empty_value_gets_a_diagnostic_and_its_completion_says_when_there_is_nothing(
    bridge: Bridge, uri: str
) -> None:
    bridge.open(uri, "/nb:greet name=\n/nb:greet name=Ada lang=\n")
    found = await bridge.diagnostics(uri, lambda d: len(d) == 1)
    assert [(d.range.start.line, d.code) for d in found] == [(0, "empty-value")]
    assert found[0].message == "name= is empty: /nb:greet needs a value for it"
    assert _labels(await bridge.complete(uri, 0, 15)) == ["Ada", "Alan", "Grace Hopper"]
    (none,) = (await bridge.complete(uri, 1, 24)).items  # `lang` has no suggestions
    assert none.label == "no suggestions for lang="
    assert isinstance(none.text_edit, types.TextEdit) and none.text_edit.new_text == ""


async def test_diagnostics_flag_unknown_prompts_and_missing_arguments(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet\n/nb:great name=Ada\n/nb:greet name=Ada\n")
    found = await bridge.diagnostics(uri, lambda d: len(d) == 2)
    assert [(d.range.start.line, d.code) for d in found] == [(0, "missing-argument"), (1, "unknown-prompt")]
    assert "did you mean /nb:greet" in found[1].message
    # The editor offers the fix: the misspelled name replaced by the one meant.
    fixes = [a for a in await bridge.code_actions(uri, 1, [found[1]]) if a.kind == types.CodeActionKind.QuickFix]
    assert [fix.title for fix in fixes] == ["Change to /nb:greet"]
    assert fixes[0].is_preferred is True and list(fixes[0].diagnostics or ()) == [found[1]]
    assert fixes[0].edit is not None and fixes[0].edit.changes is not None
    assert list(fixes[0].edit.changes[uri]) == [types.TextEdit(range=found[1].range, new_text="/nb:greet")]
    assert found[1].range == types.Range(types.Position(1, 0), types.Position(1, 9))  # `/nb:great`


async def test_render_command_replaces_the_line_with_the_rendered_prompt(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, '# Notes\n/nb:greet name="Ada Lovelace" lang=fr\n')
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 1])
    assert result == {"applied": True, "text": "Hello Ada Lovelace in fr", "error": None}
    (params,) = bridge.edits
    edit = single_text_edit(params.edit)
    assert edit.range == types.Range(types.Position(1, 0), types.Position(1, 37))
    assert edit.new_text == "Hello Ada Lovelace in fr"


async def test_code_action_gives_the_edit_in_neovim(tmp_path: Path, uri: str) -> None:
    workspace = Workspace(tmp_path)
    async with start_bridge(workspace.command(), profile="neovim") as bridge:
        await bridge.log_line(_ready("nb", 2))
        bridge.open(uri, "/nb:summarize\n")
        (action,) = await bridge.code_actions(uri, 0)
        assert action.title == "Render prompt /nb:summarize"
        resolved = await bridge.client.code_action_resolve_async(action)
        assert resolved.edit is not None and resolved.edit.changes is not None
        (edit,) = resolved.edit.changes[uri]
        assert edit.new_text == "Summarize the notebook."


async def test_server_errors_are_shown_and_nothing_is_edited(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet name=Ada colour=red\n")
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
    assert result["applied"] is False
    assert result["error"].startswith("Cannot render /nb:greet: ")
    assert "colour" in result["error"]
    assert bridge.edits == []
    assert bridge.client.messages[-1].message == result["error"]


async def test_saving_the_notebook_refreshes_the_prompts(tmp_path: Path, uri: str) -> None:
    workspace = Workspace(tmp_path)
    async with start_bridge(workspace.command()) as bridge:
        await bridge.log_line(_ready("nb", 2))
        cells = [*CELLS, {"source": "Goodbye {{name}}", "mcp": {"prompt": "farewell"}}]
        write_notebook(workspace.notebook, cells)
        await bridge.log_line(_ready("nb", 3))
        bridge.open(uri, "/\n")
        assert _labels(await bridge.complete(uri, 0, 1)) == ["/nb:farewell", "/nb:greet", "/nb:summarize"]


async def test_a_killed_server_drops_its_prompts_without_hanging_and_comes_back(tmp_path: Path, uri: str) -> None:
    workspace = Workspace(tmp_path)
    async with start_bridge(workspace.command()) as bridge:
        await bridge.log_line(_ready("nb", 2))
        first_pid = int(workspace.pid_file.read_text())
        bridge.open(uri, "/\n/nb:greet name=Ada\n")
        os.kill(first_pid, signal.SIGKILL)
        await bridge.log_line(lambda line: "nb down" in line)
        assert (await asyncio.wait_for(bridge.complete(uri, 0, 1), 2)).items == ()
        result = await asyncio.wait_for(bridge.execute("mcpNotebook.renderPrompt", [uri, 1]), 2)
        assert result["applied"] is False and "not connected" in result["error"]
        bridge.client.log_messages.clear()
        await bridge.log_line(_ready("nb", 2), deadline=DEADLINE)
        assert int(workspace.pid_file.read_text()) != first_pid
        assert _labels(await bridge.complete(uri, 0, 1)) == ["/nb:greet", "/nb:summarize"]


async def _serve_http(notebooks: Path, token: str) -> tuple[asyncio.subprocess.Process, str]:
    """`mcp-notebook serve --http` standing in for a kernel's server; returns it and its URL."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_notebook",
        "serve",
        str(notebooks),
        "--http",
        "--port",
        "0",
        "--token",
        token,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), DEADLINE)).decode()
        assert line, "the server stopped before printing its URL"
        if line.startswith("MCP_NOTEBOOK_URL="):
            return proc, line.split("=", 1)[1].strip()


async def test_kernels_are_found_through_connection_files_and_dropped_when_they_die(tmp_path: Path, uri: str) -> None:
    workspace = Workspace(tmp_path)
    kernel_notebooks = tmp_path / "kernel"
    write_notebook(kernel_notebooks / "scratch.ipynb", [{"source": "Plot {{x}}", "mcp": {"prompt": "plot"}}])
    proc, url = await _serve_http(kernel_notebooks, "s3cret")
    try:
        async with start_bridge(workspace.command()) as bridge:
            await bridge.log_line(_ready("nb", 2))
            write_connection_file(
                url=url,
                token="s3cret",
                kernel_id="c0ffee00-1234",
                notebook_path=str(tmp_path / "Lab Book.ipynb"),
                pid=proc.pid,
                directory=workspace.runtime,
            )
            await bridge.log_line(_ready("Lab_Book", 1))
            bridge.open(uri, "/\n")
            # The configured server's prompts come before the kernel's.
            assert _labels(await bridge.complete(uri, 0, 1)) == ["/nb:greet", "/nb:summarize", "/Lab_Book:plot"]
            proc.kill()
            await proc.wait()
            bridge.client.log_messages.clear()
            await bridge.log_line(lambda line: line == "MCP servers: nb ready (2 prompts)")
            assert _labels(await bridge.complete(uri, 0, 1)) == ["/nb:greet", "/nb:summarize"]
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_wrong_token_leaves_the_kernel_down(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    kernel_notebooks = tmp_path / "kernel"
    write_notebook(kernel_notebooks / "scratch.ipynb", [{"source": "Plot", "mcp": {"prompt": "plot"}}])
    proc, url = await _serve_http(kernel_notebooks, "right")
    try:
        async with start_bridge(workspace.command(configured=False)) as bridge:
            write_connection_file(url=url, token="wrong", kernel_id="bad0", pid=proc.pid, directory=workspace.runtime)
            line = await bridge.log_line(lambda line: "kernel-bad0 down" in line)
            assert "bearer token" in line
    finally:
        proc.kill()
        await proc.wait()


async def test_the_bridge_and_its_servers_exit_when_the_editor_goes_away(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    async with start_bridge(workspace.command()) as bridge:
        await bridge.log_line(_ready("nb", 2))
        server_pid = int(workspace.pid_file.read_text())
        process = bridge.client._server
        assert process is not None and process.stdin is not None
        # An editor that crashes sends no shutdown: its end of the pipe just closes.
        process.stdin.close()
        await asyncio.wait_for(process.wait(), DEADLINE)
    with pytest.raises(ProcessLookupError):
        os.kill(server_pid, 0)
