"""The extension's first hour, as a user sees it: refusals in every front end, the stream's head, the menu text.

A real `jupyter server`: a request with no token or a wrong one is a 401 whose
body says which token to send and where it is (not Jupyter's "'_xsrf' argument
missing"); `%mcp connect` and the Python API turn that refusal into one
sentence naming the URL, the status and the server's words. A browser's
cookie login keeps Jupyter's XSRF rule. A GET event stream sends its head at
once, before any event. A cell tagged in JupyterLab is listed with a title and
a description that name its argument, never its raw `{{…}}` template.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import nbformat
import pytest
from e2e_checks import EXPECTED_NAMES
from e2e_processes import ACCEPT, MODERN, RawHttpSession, initialize_params, write_corpus
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from jupyter_harness import DEADLINE, JupyterServer

import mcp_notebook
from mcp_notebook.exceptions import ServerConnectionError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ipython"))
from magics_harness import isolated_shell

__all__ = ["isolated_shell"]

pytestmark = pytest.mark.slow

HANDSHAKE = "2025-11-25"


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    home = tmp_path_factory.mktemp("jupyter")
    root = home / "notebooks"
    write_corpus(root)
    with JupyterServer(root, home) as server:
        yield server


def jupyter_advice(url: str, problem: str) -> str:
    return (
        f"This Jupyter server needs a token, and {problem}. Send the header 'Authorization: token <token>' "
        "with the server's token: the one after ?token= in the URL that 'jupyter server list' prints, "
        f"also in the server's log when it starts. 'mcp-notebook config --jupyter {url}' prints the "
        "configuration for Claude Code, VS Code and Cursor."
    )


def initialize_body() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(HANDSHAKE)}


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_a_request_without_a_token_is_401_saying_which_token_to_send(jupyter: JupyterServer, method: str) -> None:
    body = json.dumps(initialize_body()) if method == "POST" else None
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    async with httpx2.AsyncClient() as http:
        response = await http.request(method, jupyter.url, content=body, headers=headers)
    assert (response.status_code, response.headers["www-authenticate"]) == (401, 'token realm="Jupyter Server"')
    assert response.json() == {"message": jupyter_advice(jupyter.url, "no token was sent"), "reason": None}


@pytest.mark.parametrize(
    ("headers", "params"),
    [
        pytest.param({"Authorization": "token wrong"}, {}, id="token-header"),
        pytest.param({"Authorization": "Bearer wrong"}, {}, id="bearer-header"),
        pytest.param({}, {"token": "wrong"}, id="token-parameter"),
    ],
)
async def test_a_wrong_token_is_401_saying_it_is_not_accepted(
    jupyter: JupyterServer, headers: dict[str, str], params: dict[str, str]
) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            jupyter.url, json=initialize_body(), headers={"Accept": ACCEPT, **headers}, params=params
        )
    assert response.status_code == 401
    assert response.json()["message"] == jupyter_advice(jupyter.url, "the token sent is not accepted here")


async def test_a_browser_login_keeps_jupyters_xsrf_rule(jupyter: JupyterServer) -> None:
    async with httpx2.AsyncClient(base_url=jupyter.base, timeout=DEADLINE) as browser:
        await browser.get("login")  # sets the _xsrf cookie, as the login page does
        xsrf = browser.cookies["_xsrf"]
        logged_in = await browser.post("login", data={"password": jupyter.token, "_xsrf": xsrf})
        assert logged_in.status_code == 302, logged_in.text  # the login cookie is set; no token is sent after this
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        without_xsrf = await browser.post("mcp", json=initialize_body(), headers=headers)
        with_xsrf = await browser.post("mcp", json=initialize_body(), headers={**headers, "X-XSRFToken": xsrf})
    assert without_xsrf.status_code == 403
    assert without_xsrf.json()["message"] == "'_xsrf' argument missing from POST"
    assert with_xsrf.status_code == 200
    assert with_xsrf.headers["mcp-session-id"]


async def test_percent_connect_with_a_wrong_token_says_which_token_to_send(
    jupyter: JupyterServer, isolated_shell: InteractiveShell
) -> None:
    line = f'connect jw {jupyter.url} --header "Authorization: token wrong"'
    with pytest.raises(UsageError) as refused:
        await anyio.to_thread.run_sync(isolated_shell.run_line_magic, "mcp", line)
    assert str(refused.value) == (
        f"jw: {jupyter.url} refused the connection (HTTP 401 Unauthorized): "
        + jupyter_advice(jupyter.url, "the token sent is not accepted here")
        + " The Authorization header was given in %mcp connect."
    )


def test_the_python_api_says_it_is_lazy_and_its_first_call_names_the_url_and_the_refusal(
    jupyter: JupyterServer,
) -> None:
    with mcp_notebook.connect(jupyter.url, headers={"Authorization": "token wrong"}) as connection:
        assert repr(connection) == (
            f"<Connection '127.0.0.1' to {jupyter.url} (not connected yet: connects on first use)>"
        )
        with pytest.raises(ServerConnectionError) as refused:
            connection.prompts()
    assert str(refused.value) == (
        f"127.0.0.1: {jupyter.url} refused the connection (HTTP 401 Unauthorized): "
        + jupyter_advice(jupyter.url, "the token sent is not accepted here")
    )
    with mcp_notebook.connect(jupyter.url) as anonymous, pytest.raises(ServerConnectionError) as missing:
        anonymous.prompts()
    assert str(missing.value) == (
        f"127.0.0.1: {jupyter.url} refused the connection (HTTP 401 Unauthorized): "
        + jupyter_advice(jupyter.url, "no token was sent")
        + " No Authorization header was sent."
    )
    with mcp_notebook.connect(jupyter.url, headers=jupyter.auth()) as allowed:
        assert [spec.name for spec in allowed.prompts()] == EXPECTED_NAMES


async def test_a_get_stream_sends_its_head_before_any_event(jupyter: JupyterServer) -> None:
    auth = {"Content-Type": "application/json", "Accept": ACCEPT, **jupyter.auth()}
    async with httpx2.AsyncClient(timeout=DEADLINE) as http:
        opened = await http.post(jupyter.url, json=initialize_body(), headers=auth)
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(jupyter.url, json=initialized, headers={**auth, **session})).status_code == 202
        stream_headers = {**jupyter.auth(), **session, "Accept": "text/event-stream"}
        async with http.stream("GET", jupyter.url, headers=stream_headers) as response:
            # The head is here. Only now does anything happen that makes an event: a notebook saved through
            # Jupyter's contents API. A head held back until the first event came with the stream's
            # keep-alive ping instead (15 s in), which would then be the first thing read.
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            await save_prompt_notebook(http, jupyter, "after_head.ipynb", "hello_after_head")
            lines = response.aiter_lines()
            with anyio.fail_after(DEADLINE):
                first = await anext(line async for line in lines if line.strip())
                assert not first.startswith(":"), f"the first thing on the stream was {first!r}, not the change"
                data = (
                    first
                    if first.startswith("data:")
                    else await anext(each async for each in lines if each.startswith("data:"))
                )
            assert json.loads(data.removeprefix("data:"))["method"] == "notifications/prompts/list_changed"


async def test_a_cell_tagged_in_jupyterlab_is_listed_without_its_raw_template(jupyter: JupyterServer) -> None:
    async with httpx2.AsyncClient(timeout=DEADLINE) as http:
        await save_prompt_notebook(
            http, jupyter, "goodbye.ipynb", "goodbye", text="# Goodbye {{name}}\nSay goodbye to {{name}}.", tag=True
        )
        session = RawHttpSession(http, jupyter.url, MODERN, headers=jupyter.auth())
        with anyio.fail_after(DEADLINE):
            while True:  # the save reaches the listing within a second; the deadline only bounds a lost one
                listed = await session.request("prompts/list")
                found = [p for p in listed["result"]["prompts"] if p["name"] == "goodbye"]
                if found:
                    break
                await anyio.sleep(0.05)
    (goodbye,) = found
    assert (goodbye["title"], goodbye["description"]) == ("Goodbye [name]", "Say goodbye to [name].")
    assert [a["name"] for a in goodbye["arguments"]] == ["name"]


async def save_prompt_notebook(
    http: httpx2.AsyncClient,
    jupyter: JupyterServer,
    path: str,
    prompt: str,
    *,
    text: str = "Say hello.",
    tag: bool = False,
) -> None:
    """Save a notebook with one prompt through Jupyter's contents API, as JupyterLab does (a tag, or metadata)."""
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell(text)
    if tag:
        cell.metadata["tags"] = [f"prompt:{prompt}"]
    else:
        cell.metadata["mcp"] = {"prompt": prompt}
    notebook.cells.append(cell)
    saved = await http.put(
        f"{jupyter.base}api/contents/{path}",
        json={"type": "notebook", "content": json.loads(nbformat.writes(notebook))},
        headers=jupyter.auth(),
    )
    assert saved.status_code in (200, 201), saved.text
