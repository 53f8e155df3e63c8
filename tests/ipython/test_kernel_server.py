"""The kernel's MCP server in-process: a shell on a stand-in main thread, real HTTP on 127.0.0.1, SDK clients."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import socket
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from IPython.core.error import UsageError
from kernel_server_harness import Kernel, Notifications, connect, isolate_runtime_dir, running_kernel
from mcp import MCPError

from mcp_notebook.discovery import list_kernel_connections
from mcp_notebook.ipython.client_config import connect_command
from mcp_notebook.ipython.kernel_server import (
    ServeOptions,
    kernel_prompt_state,
    parse_serve_options,
    serve_command,
    unload_kernel_server,
    unpublish_command,
)
from mcp_notebook.sources.magics import MAGICS_GROUP

pytestmark = pytest.mark.slow  # real HTTP servers (in this process)


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_runtime_dir(tmp_path, monkeypatch)


@pytest.fixture
def kernel(runtime_dir: Path) -> Iterator[Kernel]:
    with running_kernel() as kernel:
        yield kernel


def test_serve_options_read_port_token_live_list_notebook_and_proxy_flag() -> None:
    options = parse_serve_options(["--port", "8123", "--no-token", "--live", "%who, %%bash", "--live", "who_ls"])
    assert options == ServeOptions(port=8123, token=False, live=("%who", "%%bash", "who_ls"))
    assert parse_serve_options(["--notebook", "a.ipynb", "--stdio-proxy"]).stdio_proxy is True
    with pytest.raises(UsageError, match="--port 70000 is not a port number"):
        parse_serve_options(["--port", "70000"])
    with pytest.raises(UsageError, match="unrecognized arguments: --bogus"):
        parse_serve_options(["--bogus"])


def test_serving_writes_an_owner_only_connection_file_and_stop_removes_it_and_closes_the_port(
    kernel: Kernel, runtime_dir: Path
) -> None:
    server = kernel.serve()
    [connection] = list_kernel_connections(runtime_dir)
    assert (connection.url, connection.token, connection.kernel_id) == (server.url, server.token, server.kernel_id)
    assert connection.pid == os.getpid()
    assert stat.S_IMODE(os.stat(connection.path).st_mode) == 0o600
    assert server.url is not None and server.url.startswith("http://127.0.0.1:")
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    kernel.stop()
    assert not Path(connection.path).exists()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_serve_prints_client_configuration_that_refers_to_the_token_and_never_holds_it(kernel: Kernel) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        kernel.main.run(lambda: serve_command(kernel.shell, [], scheduler=kernel.scheduler))
    printed = out.getvalue()
    server = kernel_prompt_state(kernel.shell).server
    assert server is not None and server.token and server.url and server.connection_file
    assert server.token not in printed
    name = f"kernel-{server.kernel_id[:8]}"
    token_command = connect_command(server.kernel_id, str(server.connection_file.parent), "--print-token")
    claude_line = (
        f"token=$({shlex.join(token_command)}) && claude mcp add --transport http {name} {server.url} "
        '--header "Authorization: Bearer $token"'
    )
    assert f"Claude Code:\n  {claude_line}\n" in printed
    vscode = json.loads(printed.split("VS Code (.vscode/mcp.json):\n", 1)[1].split("\n\n", 1)[0])
    assert vscode["servers"][name] == {
        "type": "http",
        "url": server.url,
        "headers": {"Authorization": f"Bearer ${{input:{name}-token}}"},
    }
    assert vscode["inputs"][0]["id"] == f"{name}-token" and vscode["inputs"][0]["password"] is True
    cursor_text = printed.split("Cursor (", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]
    cursor = json.loads(cursor_text)
    assert cursor["mcpServers"][name] == {
        "url": server.url,
        "headers": {"Authorization": "Bearer ${env:MCP_NOTEBOOK_KERNEL_TOKEN}"},
    }
    connect_line = shlex.join(connect_command(server.kernel_id, str(server.connection_file.parent)))
    assert f"Clients that only speak stdio: {connect_line}" in printed
    # The command the configuration runs gives the token, from a shell that knows nothing of this kernel.
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_RUNTIME_DIR"}
    shown = subprocess.run(token_command, capture_output=True, text=True, env=env, timeout=60, check=True)
    assert shown.stdout == f"{server.token}\n"


def test_serve_warns_about_live_names_that_match_no_magic(kernel: Kernel) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        kernel.main.run(lambda: serve_command(kernel.shell, ["--live", "%who,%no_such_magic"], scheduler=None))
    assert "warning: --live names no magic of this kernel (yet): %no_such_magic" in out.getvalue()


def test_a_port_in_use_is_a_usage_error_that_leaves_nothing_behind(kernel: Kernel, runtime_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=r"%mcp serve: .*in use"):
            kernel.serve("--port", str(port))
    state = kernel_prompt_state(kernel.shell)
    assert state.server is None
    assert list_kernel_connections(runtime_dir) == []
    assert MAGICS_GROUP not in state.registry.groups()


def test_serving_twice_is_refused(kernel: Kernel) -> None:
    server = kernel.serve()
    with pytest.raises(UsageError, match=f"already serving at {server.url}"):
        kernel.serve()


async def test_requests_without_the_token_or_from_a_foreign_origin_are_refused(kernel: Kernel) -> None:
    server = kernel.serve()
    assert server.url is not None
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as http:
        missing = await http.post(server.url, json=body, headers=accept)
        wrong = await http.post(server.url, json=body, headers={**accept, "Authorization": "Bearer wrong"})
        foreign = await http.post(
            server.url,
            json=body,
            headers={**accept, "Authorization": f"Bearer {server.token}", "Origin": "http://evil.example.com"},
        )
    assert (missing.status_code, wrong.status_code, foreign.status_code) == (401, 401, 403)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_prompt_cell_is_listed_and_rendered_with_its_arguments_and_the_body_never_runs(
    kernel: Kernel, mode: str
) -> None:
    printed = kernel.cell(
        '%%prompt ks_review --arg code="the code" --optional tone=kind\nks_ran = True\n{{code}} {{tone}}'
    )
    assert printed == "Published prompt 'ks_review' (code, [tone]) (not served yet: run %mcp serve)\n"
    assert "ks_ran" not in kernel.shell.user_ns
    server = kernel.serve()
    async with connect(server.url or "", server.token, mode=mode) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        prompt = listed["ks_review"]
        assert [(a.name, a.required) for a in prompt.arguments or []] == [("code", True), ("tone", False)]
        result = await client.get_prompt("ks_review", {"code": "x = {{tone}}"})
        assert [m.content.text for m in result.messages] == ["ks_ran = True\nx = {{tone}} kind"]
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("ks_review", {})
        assert missing.value.error.code == -32602
    assert "ks_ran" not in kernel.shell.user_ns


async def test_a_new_prompt_cell_and_unpublish_send_list_changed_at_once(kernel: Kernel) -> None:
    server = kernel.serve()
    notifications = Notifications()
    async with connect(server.url or "", server.token, message_handler=notifications) as client:
        await client.list_prompts()  # the server now knows this connection
        kernel.cell("%%prompt ks_later\nAdded later.")
        await notifications.wait_for("notifications/prompts/list_changed")
        assert "ks_later" in {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}
        count = len(notifications.seen)
        kernel.main.run(lambda: unpublish_command(kernel.shell, ["ks_later"]))
        await notifications.wait_for("notifications/prompts/list_changed", after=count)
        assert "ks_later" not in {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}


async def test_a_listen_stream_hears_of_a_new_prompt_cell(kernel: Kernel) -> None:
    server = kernel.serve()
    async with (
        connect(server.url or "", server.token, mode="2026-07-28") as client,
        client.listen(prompts_list_changed=True) as subscription,
    ):
        kernel.cell("%%prompt ks_modern\nFor modern clients.")
        async for _ in subscription:
            break
        assert "ks_modern" in {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}


def test_unpublishing_an_unknown_prompt_is_a_usage_error(kernel: Kernel) -> None:
    kernel.cell("%%prompt ks_known\nx")
    with pytest.raises(UsageError, match=r"no %%prompt prompt named ks_nope \(defined: ks_known\)"):
        kernel.main.run(lambda: unpublish_command(kernel.shell, ["ks_nope"]))


async def test_a_variable_argument_completes_from_the_kernel_namespace_filtered_by_type(kernel: Kernel) -> None:
    kernel.cell("ks_count = 3\nks_total = 4\nks_name = 'x'")
    kernel.cell("%%prompt ks_stats --arg n:var[int] --arg anything:var\n{{n}} {{anything}}")
    server = kernel.serve()
    async with connect(server.url or "", server.token) as client:
        ref = {"type": "ref/prompt", "name": "ks_stats"}
        typed = await client.complete(ref, {"name": "n", "value": "ks_"})
        assert typed.completion.values == ["ks_count", "ks_total"]
        kernel.cell("ks_third = 5")
        again = await client.complete(ref, {"name": "n", "value": "KS_T"})
        assert again.completion.values == ["ks_third", "ks_total"]
        untyped = await client.complete(ref, {"name": "anything", "value": "ks_n"})
        assert untyped.completion.values == ["ks_name"]


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        ([], set()),
        (["--live", "%who"], {"magic.who"}),
        (["--magics"], {"magic", "magic.who", "magic.timeit"}),
        (["--all-magics"], {"magic.who", "magic.timeit", "magic.alias"}),
    ],
    ids=["default", "live", "magics", "all-magics"],
)
async def test_the_magics_are_listed_only_when_asked_for(kernel: Kernel, argv: list[str], listed: set[str]) -> None:
    """Menus are not crowded with a kernel's magics: `%mcp serve` lists them with --magics (as the bridge shows
    them with --magics); the live magics a user allowed are listed in any case."""
    kernel.cell("%%prompt ks_own_only\nMine.")
    server = kernel.serve(*argv)
    async with connect(server.url or "", server.token) as client:
        names = {p.name for p in (await client.list_prompts()).prompts}
    assert "ks_own_only" in names
    magics = {name for name in names if name == "magic" or name.startswith("magic.")}
    assert listed <= magics and (magics == listed or argv[:1] in (["--magics"], ["--all-magics"]))


async def test_a_magic_renders_its_documentation_and_nothing_runs(kernel: Kernel) -> None:
    server = kernel.serve("--all-magics")
    async with connect(server.url or "", server.token) as client:
        listed = await client.list_prompts()
        result = await client.get_prompt("magic.who", {"line": "int"})
    assert "magic.alias" in {p.name for p in listed.prompts}
    [message] = result.messages
    text = message.content.text
    assert text.startswith("The IPython magic `%who`.")
    assert text.endswith("```python\n%who int\n```")


async def test_an_allowed_magic_runs_live_on_the_main_thread_and_others_stay_documentation(kernel: Kernel) -> None:
    kernel.cell("ks_live_value = 1")
    server = kernel.serve("--live", "%who", "--magics")
    async with connect(server.url or "", server.token) as client:
        live = await client.get_prompt("magic.who", {"line": "int"})
        refused = await client.get_prompt("magic", {"name": "who_ls", "line": "int"})
    texts = [m.content.text for m in live.messages]
    assert texts[0] == "Ran in the kernel:\n\n```python\n%who int\n```"
    assert "ks_live_value" in texts[1]
    assert refused.messages[0].content.text.startswith("The IPython magic `%who_ls`.")


async def test_a_failing_live_magic_is_an_internal_error_with_its_message(kernel: Kernel) -> None:
    server = kernel.serve("--live", "env")
    async with connect(server.url or "", server.token) as client:
        with pytest.raises(MCPError) as failed:
            await client.get_prompt("magic.env", {"line": "KS_NO_SUCH_VARIABLE"})
    assert failed.value.error.code == -32603
    assert failed.value.error.message == "%env failed: Environment does not have key: KS_NO_SUCH_VARIABLE"
    assert failed.value.error.data == {"prompt": "magic.env"}


async def test_a_value_a_live_magic_does_not_accept_is_invalid_params_and_nothing_runs(kernel: Kernel) -> None:
    server = kernel.serve("--live", "history")
    async with connect(server.url or "", server.token) as client:
        with pytest.raises(MCPError) as failed:
            await client.get_prompt("magic.history", {"pattern": "x", "limit": "not-a-number"})
    assert failed.value.error.code == -32602
    assert failed.value.error.message == (
        "magic.history: argument 'limit' has 'not-a-number', which is not a number of lines"
    )
    assert failed.value.error.data == {"prompt": "magic.history", "argument": "limit"}


async def test_the_kernels_notebook_is_served_and_reloaded_on_save(
    kernel: Kernel, notebook_factory: Callable[..., Path]
) -> None:
    make = notebook_factory
    path = make("analysis.ipynb", [{"source": "Summarise {{topic}}.", "mcp": {"prompt": "ks_from_file"}}])
    server = kernel.serve("--notebook", str(path))
    assert server.notebook == path.resolve()
    notifications = Notifications()
    async with connect(server.url or "", server.token, message_handler=notifications) as client:
        result = await client.get_prompt("ks_from_file", {"topic": "sales"})
        assert result.messages[0].content.text == "Summarise sales."
        make("analysis.ipynb", [{"source": "Saved again.", "mcp": {"prompt": "ks_after_save"}}])
        await notifications.wait_for("notifications/prompts/list_changed")
        names = {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}
    assert "ks_after_save" in names and "ks_from_file" not in names


def test_the_notebook_named_by_jupyter_server_is_found_through_the_session_name(
    kernel: Kernel, notebook_factory: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = notebook_factory("session.ipynb", [{"source": "Hi", "mcp": {"prompt": "ks_session"}}])
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    server = kernel.serve()
    assert server.notebook == path.resolve()
    assert kernel_prompt_state(kernel.shell).registry.snapshot().get("ks_session") is not None


def test_unloading_stops_the_server_and_withdraws_every_prompt(kernel: Kernel, runtime_dir: Path) -> None:
    kernel.cell("%%prompt ks_gone\nx")
    kernel.serve()
    assert list_kernel_connections(runtime_dir)
    registry = kernel_prompt_state(kernel.shell).registry
    kernel.main.run(lambda: unload_kernel_server(kernel.shell))
    assert list_kernel_connections(runtime_dir) == []
    assert registry.snapshot().prompts == ()


def test_the_public_surfaces_are_pinned() -> None:
    import mcp_notebook.ipython.client_config as client_config
    import mcp_notebook.ipython.kernel_endpoint as kernel_endpoint
    import mcp_notebook.ipython.kernel_host as kernel_host
    import mcp_notebook.ipython.kernel_server as kernel_server

    assert sorted(kernel_host.__all__) == ["KernelPromptState", "KernelServer", "LIVE_MAGIC_TIMEOUT", "ServeOptions"]
    assert sorted(kernel_server.__all__) == [
        "KernelPromptState",
        "KernelServer",
        "PromptMagics",
        "ServeOptions",
        "kernel_prompt_state",
        "parse_serve_options",
        "published_cell_names",
        "register_kernel_server",
        "serve_command",
        "stop_command",
        "unload_kernel_server",
        "unpublish_command",
    ]
    assert client_config.__all__ == [
        "STDIO_HEADING",
        "TOKEN_VARIABLE",
        "ClientConfig",
        "client_config",
        "connect_command",
        "format_client_config",
    ]
    assert sorted(kernel_endpoint.__all__) == ["HttpEndpoint", "start_endpoint", "start_repeating", "start_watch"]


async def test_a_live_magic_that_waits_past_its_limit_for_a_running_cell_never_runs_and_says_why(
    kernel: Kernel,
) -> None:
    kernel.cell("ks_waited = 1")
    server = kernel.serve("--live", "who", "--live-timeout", "0.5")
    kernel.main.run(lambda: kernel.shell.events.trigger("pre_execute"))  # a cell is running
    try:
        async with connect(server.url or "", server.token) as client:
            with pytest.raises(MCPError) as failed:
                await client.get_prompt("magic.who", {"line": "int"})
    finally:
        kernel.main.run(lambda: kernel.shell.events.trigger("post_execute"))
    assert failed.value.error.code == -32603
    assert failed.value.error.message == (
        "%who failed: it never ran: the kernel was busy with a cell for 0.5 s; try again between cells"
    )


@pytest.mark.parametrize("typed", ["timit", "x" * 10_000, "%%nope", "magic.cell.nope", ""])
async def test_the_magic_prompt_names_an_unknown_magic_briefly(kernel: Kernel, typed: str) -> None:
    server = kernel.serve()
    async with connect(server.url or "", server.token) as client:
        with pytest.raises(MCPError) as failed:
            await client.get_prompt("magic", {"name": typed})
    assert failed.value.error.code == -32602
    assert len(failed.value.error.message) < 200


def test_a_cell_reaches_its_own_kernels_prompts_the_way_the_error_says(kernel: Kernel, runtime_dir: Path) -> None:
    kernel.cell("%load_ext mcp_notebook")
    try:
        reach_own_prompts(kernel, runtime_dir)
    finally:  # the shell is shared: the next test loads the extension afresh, with servers of its own
        kernel.cell("%unload_ext mcp_notebook")


def reach_own_prompts(kernel: Kernel, runtime_dir: Path) -> None:
    kernel.cell("%%prompt ks_own_note\nA note about {{topic}}.")
    server = kernel.serve()
    shell = kernel.shell
    with pytest.raises(UsageError) as raised:
        kernel.main.run(lambda: shell.run_line_magic("mcp", "get this_kernel:ks_own_note topic=tea"))
    connect_line = (
        f"%mcp connect this_kernel -- mcp-notebook connect --kernel {server.kernel_id} --runtime-dir {runtime_dir}"
    )
    assert "no MCP server named 'this_kernel'" in str(raised.value)
    assert f"connecting to it first: {connect_line}, then %mcp get this_kernel:NAME" in str(raised.value)
    # Doing what it says works.
    kernel.main.run(lambda: shell.run_line_magic("mcp", connect_line.removeprefix("%mcp ")))
    rendered = kernel.main.run(lambda: shell.run_line_magic("mcp", "get this_kernel:ks_own_note topic=tea"))
    assert "A note about tea." in str(rendered.markdown() if hasattr(rendered, "markdown") else rendered)
    kernel.main.run(lambda: shell.run_line_magic("mcp", "disconnect this_kernel"))


def test_the_kernels_name_stays_the_same_across_serve_restarts(kernel: Kernel, tmp_path: Path) -> None:
    notebook = tmp_path / "renamed_kernel.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    first = kernel.serve("--notebook", str(notebook)).describe().config.name
    kernel.stop()
    second = kernel.serve("--notebook", str(notebook)).describe().config.name
    kernel.stop()
    assert first == second == "renamed_kernel"  # as the editor bridge names it (naming.kernel_server_name)
