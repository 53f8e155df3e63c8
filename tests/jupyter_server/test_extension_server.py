"""The extension in a real `jupyter server`: the same MCP as `mcp-notebook serve`, behind Jupyter's login."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import nbformat
import pytest
from client_harness import ChangeWatcher
from e2e_checks import EXPECTED_NAMES, check_a_client_of
from e2e_processes import (
    ACCEPT,
    ALL_REVISIONS,
    MODERN,
    RawHttpSession,
    initialize_params,
    write_corpus,
    write_notebook,
)
from jupyter_harness import DEADLINE, JupyterServer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from notebook_files import write_skill

from mcp_notebook.transports.gate import MAX_BODY_BYTES

pytestmark = pytest.mark.slow

SAVE_TO_PROMPT_SECONDS = 1.0  # a save through the contents API reaches every client within this


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    home = tmp_path_factory.mktemp("jupyter")
    root = home / "notebooks"
    write_corpus(root)
    with JupyterServer(root, home, args=["--MCPNotebook.page_size=2"]) as server:
        yield server


@asynccontextmanager
async def sdk_client(url: str, headers: dict[str, str], **options: Any) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), **options) as client,
    ):
        yield client


def initialize_body() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}


def notebook_json(prompt: str, text: str) -> dict[str, Any]:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["mcp"] = {"prompt": prompt}
    notebook.cells.append(cell)
    return json.loads(nbformat.writes(notebook))  # type: ignore[no-any-return]


def test_the_server_log_prints_the_mcp_url(jupyter: JupyterServer) -> None:
    assert jupyter.url.startswith("http://127.0.0.1:") and jupyter.url.endswith("/mcp")
    line = jupyter.wait_for_line("MCP prompts served at")
    assert "5 prompts from 3 notebooks in " in line
    assert jupyter.token not in line
    assert f"mcp-notebook config --jupyter {jupyter.url}" in jupyter.wait_for_line("mcp-notebook config --jupyter")


@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_a_client_of_each_revision_is_served_as_by_mcp_notebook_serve(
    jupyter: JupyterServer, revision: str
) -> None:
    async with httpx2.AsyncClient() as http:
        session = RawHttpSession(http, jupyter.url, revision, headers=jupyter.auth())
        opened = await session.open()
        if opened is not None:
            assert opened["result"]["protocolVersion"] == revision
            assert opened["result"]["capabilities"]["prompts"] == {"listChanged": True}

        async def request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            return await session.request(method, params)

        # list (paged), get, complete, resources and every prompt error, exactly as the standalone server
        await check_a_client_of(revision, request)


async def test_2026_lists_say_they_are_private_to_the_user(jupyter: JupyterServer) -> None:
    async with httpx2.AsyncClient() as http:
        listed = await RawHttpSession(http, jupyter.url, MODERN, headers=jupyter.auth()).request("prompts/list")
    assert listed["result"]["cacheScope"] == "private"


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_the_sdk_client_lists_gets_and_completes_with_the_token_header(jupyter: JupyterServer, mode: str) -> None:
    async with sdk_client(jupyter.url, jupyter.auth(), mode=mode) as client:
        names: list[str] = []
        cursor = None
        while True:
            page = await client.list_prompts(cursor=cursor)
            names += [p.name for p in page.prompts]
            if (cursor := page.next_cursor) is None:
                break
        assert names == EXPECTED_NAMES
        result = await client.get_prompt("greet", {"who": "Bo", "style": "formally"})
        content = result.messages[0].content
        assert isinstance(content, types.TextContent) and "Greet Bo formally." in content.text
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="greet"), {"name": "style", "value": "w"}
        )
        assert completion.completion.values == ["warmly", "wittily"]


@pytest.mark.parametrize(
    "credentials",
    [
        pytest.param({}, id="no-token"),
        pytest.param({"Authorization": "token wrong-token"}, id="wrong-token"),
        pytest.param({"Authorization": "Bearer wrong-token"}, id="wrong-bearer"),
        pytest.param({"Authorization": "token"}, id="scheme-only"),
        pytest.param({"Cookie": "username-127-0-0-1=forged"}, id="forged-cookie"),
    ],
)
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_without_jupyters_credentials_nothing_is_served(
    jupyter: JupyterServer, credentials: dict[str, str], method: str
) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, **credentials}
    body = json.dumps(initialize_body()) if method == "POST" else None
    async with httpx2.AsyncClient() as http:
        response = await http.request(method, jupyter.url, content=body, headers=headers, follow_redirects=False)
    assert response.status_code in (401, 403), response.text
    assert "jsonrpc" not in response.text  # refused by Jupyter, before MCP


@pytest.mark.parametrize(
    "credentials",
    [
        pytest.param(lambda token: ({"Authorization": f"token {token}"}, {}), id="token-header"),
        pytest.param(lambda token: ({"Authorization": f"Bearer {token}"}, {}), id="bearer-header"),
        pytest.param(lambda token: ({}, {"token": token}), id="token-parameter"),
    ],
)
async def test_the_token_works_as_for_jupyters_other_api_handlers(jupyter: JupyterServer, credentials: Any) -> None:
    headers, params = credentials(jupyter.token)
    async with httpx2.AsyncClient() as http:
        contents = await http.get(f"{jupyter.base}api/contents", headers=headers, params=params)
        mcp = await http.post(
            jupyter.url,
            json=initialize_body(),
            headers={"Content-Type": "application/json", "Accept": ACCEPT, **headers},
            params=params,
        )
    assert contents.status_code == 200
    assert mcp.status_code == 200
    assert mcp.headers["mcp-session-id"]


async def test_jupyters_host_rule_refuses_a_foreign_host(jupyter: JupyterServer) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, **jupyter.auth(), "Host": "evil.example"}
    async with httpx2.AsyncClient() as http:
        response = await http.post(jupyter.url, json=initialize_body(), headers=headers)
    assert response.status_code == 403


async def test_jupyters_origin_rule_refuses_a_cross_site_request_it_did_not_authenticate(
    jupyter: JupyterServer,
) -> None:
    # A browser page elsewhere holding no token: Jupyter's origin check (404) or its XSRF check (403) stops it.
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "Origin": "http://evil.example"}
    async with httpx2.AsyncClient() as http:
        response = await http.post(jupyter.url, json=initialize_body(), headers=headers)
    assert response.status_code in (403, 404)
    assert "jsonrpc" not in response.text


async def test_a_token_authenticated_client_may_send_an_origin_as_jupyter_allows(jupyter: JupyterServer) -> None:
    headers = {"Origin": "https://lab.example.org"}
    async with httpx2.AsyncClient() as http:
        listed = await RawHttpSession(http, jupyter.url, MODERN, headers={**jupyter.auth(), **headers}).request(
            "prompts/list"
        )
    assert [p["name"] for p in listed["result"]["prompts"]] == EXPECTED_NAMES[:2]


@pytest.mark.parametrize("era", ["handshake", MODERN])
async def test_malformed_json_is_a_parse_error_and_serving_goes_on(jupyter: JupyterServer, era: str) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, **jupyter.auth()}
    if era == MODERN:
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "prompts/list"}
    async with httpx2.AsyncClient() as http:
        response = await http.post(jupyter.url, content=b'{"jsonrpc": "2.0", "id": 1, "method"', headers=headers)
        session = RawHttpSession(http, jupyter.url, "2025-11-25" if era == "handshake" else MODERN, jupyter.auth())
        await session.open()
        after = await session.request("prompts/get", {"name": "note0"})
    assert response.status_code == 400
    assert response.json()["error"] == {"code": -32700, "message": "Parse error: the body is not valid JSON"}
    assert after["result"]["messages"]


async def test_a_body_over_the_limit_is_refused_as_by_mcp_notebook_serve(jupyter: JupyterServer) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, **jupyter.auth()}
    huge = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * (5 * 1024 * 1024)}})
    async with httpx2.AsyncClient() as http:
        response = await http.post(jupyter.url, content=huge, headers=headers)
        after = await RawHttpSession(http, jupyter.url, MODERN, headers=jupyter.auth()).request("prompts/list")
    assert response.status_code == 413
    assert response.json()["error"]["message"] == f"Request body over {MAX_BODY_BYTES} bytes"
    assert after["result"]["prompts"]


async def test_a_contents_api_save_reaches_clients_of_both_eras_within_a_second(tmp_path: Path) -> None:
    root = tmp_path / "notebooks"
    write_corpus(root)
    with JupyterServer(root, tmp_path) as jupyter:
        watcher = ChangeWatcher()
        async with (
            sdk_client(jupyter.url, jupyter.auth(), mode="legacy", message_handler=watcher) as old,
            sdk_client(jupyter.url, jupyter.auth(), mode="auto") as new,
            httpx2.AsyncClient(headers=jupyter.auth()) as contents,
        ):
            await old.list_prompts()
            async with new.listen(prompts_list_changed=True) as subscription:
                # JupyterLab's save: PUT the notebook model to the contents API.
                saved = await contents.put(
                    f"{jupyter.base}api/contents/fresh.ipynb",
                    json={"type": "notebook", "format": "json", "content": notebook_json("fresh", "Fresh {{x}}.")},
                )
                assert saved.status_code in (200, 201), saved.text
                started = time.monotonic()
                with anyio.fail_after(SAVE_TO_PROMPT_SECONDS):
                    await watcher.changed.wait()
                    await subscription.__anext__()
                elapsed = time.monotonic() - started
            assert elapsed < SAVE_TO_PROMPT_SECONDS
            assert "fresh" in [p.name for p in (await old.list_prompts(cache_mode="refresh")).prompts]
            assert "fresh" in [p.name for p in (await new.list_prompts(cache_mode="refresh")).prompts]

            async with new.listen(prompts_list_changed=True) as subscription:
                changed = await contents.put(
                    f"{jupyter.base}api/contents/fresh.ipynb",
                    json={"type": "notebook", "format": "json", "content": notebook_json("renewed", "New.")},
                )
                assert changed.status_code == 200
                with anyio.fail_after(SAVE_TO_PROMPT_SECONDS):
                    await subscription.__anext__()
            names = [p.name for p in (await new.list_prompts(cache_mode="refresh")).prompts]
            assert "renewed" in names and "fresh" not in names

            async with new.listen(prompts_list_changed=True) as subscription:
                deleted = await contents.delete(f"{jupyter.base}api/contents/fresh.ipynb")
                assert deleted.status_code == 204
                with anyio.fail_after(SAVE_TO_PROMPT_SECONDS):
                    await subscription.__anext__()
            assert "renewed" not in [p.name for p in (await new.list_prompts(cache_mode="refresh")).prompts]


async def test_configuration_chooses_the_folder_page_size_and_server_name(tmp_path: Path) -> None:
    root = tmp_path / "notebooks"
    write_corpus(root)
    # As a team would configure it: in a Jupyter config file, and on the command line.
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "jupyter_server_config.py").write_text(
        'c.MCPNotebook.server_name = "team-prompts"\nc.MCPNotebook.page_size = 1\n', encoding="utf-8"
    )
    write_notebook(root / "topics" / "more.ipynb", [("More on {{topic}}.", {"prompt": "more"})])
    args = ["--MCPNotebook.root=topics"]
    with JupyterServer(root, tmp_path, args=args) as jupyter:
        assert f"2 prompts from 2 notebooks in {root / 'topics'};" in jupyter.wait_for_line("MCP prompts served at")
        async with sdk_client(jupyter.url, jupyter.auth(), mode="legacy") as client:
            first = await client.list_prompts()
            assert [p.name for p in first.prompts] == ["explain"]
            assert first.next_cursor is not None
            second = await client.list_prompts(cursor=first.next_cursor)
            assert [p.name for p in second.prompts] == ["more"]
            assert second.next_cursor is None
            assert client.server_info is not None and client.server_info.name == "team-prompts"


async def test_the_printed_client_configuration_reaches_this_server(jupyter: JupyterServer) -> None:
    env = {key: value for key, value in os.environ.items() if key != "JUPYTER_TOKEN"}
    argv = [sys.executable, "-m", "mcp_notebook", "config", "--jupyter", f"{jupyter.base}lab?token={jupyter.token}"]
    with anyio.fail_after(60):
        done = await anyio.run_process(argv, env=env, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert jupyter.token not in out
    cursor = json.loads(out.split("# Cursor: .cursor/mcp.json\n", 1)[1])["mcpServers"]["jupyter"]
    assert cursor["url"] == jupyter.url
    # What Cursor does with the reference once JUPYTER_TOKEN is exported.
    header = cursor["headers"]["Authorization"].replace("${env:JUPYTER_TOKEN}", jupyter.token)
    async with httpx2.AsyncClient() as http:
        listed = await RawHttpSession(http, cursor["url"], MODERN, headers={"Authorization": header}).request(
            "prompts/list"
        )
    assert [p["name"] for p in listed["result"]["prompts"]] == EXPECTED_NAMES[:2]


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_stopping_the_server_after_a_client_came_says_nothing_but_its_log(tmp_path: Path, mode: str) -> None:
    """No "Task was destroyed but it is pending!" (the event streams' shutdown watcher) or any other stray line."""
    root = tmp_path / "notebooks"
    write_corpus(root)
    jupyter = JupyterServer(root, tmp_path)
    try:
        async with sdk_client(jupyter.url, jupyter.auth(), mode=mode) as client:
            assert (await client.list_prompts()).prompts
    finally:
        assert jupyter.close() == 0
    ended = jupyter.seen + list(iter(lambda: jupyter.lines.get(timeout=DEADLINE), None))
    stopping = next(i for i, line in enumerate(ended) if "received signal 15, stopping" in line)
    stray = [line for line in ended[stopping:] if not line.startswith("[")]
    assert stray == [], "\n".join(ended[stopping:])


def _lab_prompt_names(listing: dict[str, Any], server: str) -> list[str]:
    """The names JupyterLab's list (`mcp-notebook/api/prompts`) gives for `server`, once it is ready."""
    found = next((s for s in listing["servers"] if s["name"] == server and s["state"] == "ready"), None)
    return [prompt["name"] for prompt in found["prompts"]] if found is not None else []


@pytest.mark.usefixtures("sigint_raises_keyboard_interrupt")  # the server inherits SIGINT's default, not SIG_IGN
async def test_sigint_without_a_terminal_ends_the_server_after_reads_and_reloads(tmp_path: Path) -> None:
    """How JupyterHub stops a user's server: SIGINT, and no terminal. Jupyter then leaves its loop without
    stopping its extensions, so no thread of ours may keep the process from exiting (worker threads of the
    reloads and reads were left waiting for a task that never ended, until the hub killed the server)."""
    root = tmp_path / "notebooks"
    write_corpus(root)
    jupyter = JupyterServer(root, tmp_path)
    try:
        async with sdk_client(jupyter.url, jupyter.auth(), mode="auto") as client:
            assert (await client.list_resources()).resources  # read in a worker thread
            async with client.listen(prompts_list_changed=True) as subscription:
                write_notebook(root / "fresh.ipynb", [("Fresh.", {"prompt": "fresh"})])  # reloaded in one
                with anyio.fail_after(DEADLINE):
                    await subscription.__anext__()
        # JupyterLab's list of this server's prompts has the new one too: the server is idle again (SIGINT then
        # lands in the loop's wait, as when a hub stops an idle server, not in a task that is refreshing).
        async with httpx2.AsyncClient(headers=jupyter.auth(), base_url=f"{jupyter.base}mcp-notebook/api/") as lab:
            with anyio.fail_after(DEADLINE):
                listing = (await lab.get("prompts")).json()
                while "fresh" not in _lab_prompt_names(listing, "jupyter"):
                    listing = (await lab.get("prompts", params={"since": listing["version"]})).json()
        jupyter.process.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            jupyter.process.wait(timeout=DEADLINE)
        running = jupyter.process.poll() is None
    finally:
        jupyter.close()
    ended = jupyter.seen + list(iter(lambda: jupyter.lines.get(timeout=DEADLINE), None))
    assert not running, "the server still ran after SIGINT; its log:\n" + "\n".join(ended[-20:])
    assert any("Interrupted..." in line for line in ended)  # Jupyter's own exit on SIGINT, without its clean-up


def test_the_skills_served_are_logged_as_information_and_only_problems_as_warnings(tmp_path: Path) -> None:
    root = tmp_path / "notebooks"
    write_corpus(root)
    write_skill(root, "tidy-table")
    write_skill(root, "broken", "# No frontmatter\n")
    with JupyterServer(root, tmp_path) as jupyter:
        served = jupyter.wait_for_line(r"MCP prompts served at")
        skills = jupyter.wait_for_line(r"1 skill: skill://tidy-table/SKILL\.md")
        broken = jupyter.wait_for_line(r"skill broken/SKILL\.md is not served")
    assert served.startswith("[I ") and skills.startswith("[I ")
    assert broken.startswith("[W ") and "warning: skill broken/SKILL.md is not served" in broken
