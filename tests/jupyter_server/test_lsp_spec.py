"""The bridge as JupyterLab gets it: listed by jupyter-lsp on a real `jupyter server`, nothing configured by hand.

jupyter-lsp is a dependency of JupyterLab 4 and of the `test` extra. These
tests start `jupyter server` with its `jupyter_lsp` extension on (the harness
turns it off elsewhere), read `<base_url>lsp/status` as jupyterlab-lsp does,
and speak LSP over `<base_url>lsp/ws/mcp-notebook`, the websocket the
frontend uses: the bridge jupyter-lsp starts serves the Jupyter server's own
notebooks (with its token, read from the server's info file), only in
Markdown and plain-text documents.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e_processes import write_corpus
from jupyter_harness import JupyterServer

pytestmark = pytest.mark.slow

jupyter_lsp = pytest.importorskip("jupyter_lsp", reason="jupyter-lsp is not installed (pip install jupyter-lsp)")

DEADLINE = 90.0
URL_LINE = re.compile(r"(http://127\.0\.0\.1:\d+/)\?token=")
_OTHERS_OFF = {"jupyterlab": False, "notebook": False, "notebook_shim": False, "nbclassic": False}
# A user's own Markdown language server, configured by hand: it must still be listed beside the bridge.
USER_SERVER = {"my-markdown": {"argv": [sys.executable, "-c", "pass"], "languages": ["markdown"], "version": 2}}


def _start(home: Path, *, args: tuple[str, ...] = (), extensions: dict[str, bool] | None = None) -> JupyterServer:
    """`jupyter server` with jupyter-lsp (and mcp_notebook, unless `extensions` says otherwise) enabled."""
    root = home / "notebooks"
    write_corpus(root)
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    enabled = {**_OTHERS_OFF, "jupyter_lsp": True, **(extensions or {})}
    settings = {
        "ServerApp": {"jpserver_extensions": enabled},
        "LanguageServerManager": {"language_servers": USER_SERVER},
    }
    (config / "jupyter_server_config.json").write_text(json.dumps(settings), encoding="utf-8")
    wait = (extensions or {}).get("mcp_notebook", True)
    return JupyterServer(root, home, args=args, wait_for_mcp=wait)


def _base(server: JupyterServer) -> str:
    """The server's URL: from its MCP endpoint, or (without the extension) from the line saying where it runs."""
    if server.url:
        return server.base
    match = URL_LINE.search(server.wait_for_line(URL_LINE))
    assert match is not None
    return match.group(1)


def lsp_status(server: JupyterServer) -> dict[str, Any]:
    """`GET <base_url>lsp/status`, as jupyterlab-lsp asks it (the server logs its URL just before it listens)."""
    request = urllib.request.Request(_base(server) + "lsp/status", headers=server.auth())
    deadline, tick = time.monotonic() + DEADLINE, threading.Event()
    while True:
        try:
            with urllib.request.urlopen(request, timeout=DEADLINE) as answer:
                status: dict[str, Any] = json.load(answer)
                return status
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
        tick.wait(0.1)


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with _start(tmp_path_factory.mktemp("lsp")) as server:
        yield server


def test_jupyter_lsp_lists_the_bridge_for_markdown_beside_the_users_own_server(jupyter: JupyterServer) -> None:
    specs = lsp_status(jupyter)["specs"]
    assert "my-markdown" in specs  # configured by hand: still there
    ours = specs["mcp-notebook"]
    assert ours["languages"] == ["markdown", "ipythongfm", "gfm", "plaintext", "text"]
    assert "python" not in ours["languages"]
    assert ours["display_name"] == "mcp-notebook (MCP prompts as / commands)"
    assert ours["requires_documents_on_disk"] is False
    assert ours["env"] == {}  # jupyter-lsp hides the environment; no token is in it anyway
    assert "mcp-notebook" in lsp_status(jupyter)["sessions"]


@pytest.mark.parametrize(
    ("args", "extensions"),
    [
        (("--MCPNotebook.language_server=False",), None),
        ((), {"mcp_notebook": False}),
    ],
    ids=["MCPNotebook.language_server=False", "extension disabled"],
)
def test_server_extension_settings_turn_the_bridge_off(
    tmp_path: Path, args: tuple[str, ...], extensions: dict[str, bool] | None
) -> None:
    with _start(tmp_path, args=args, extensions=extensions) as server:
        specs = lsp_status(server)["specs"]
        assert "my-markdown" in specs
        assert "mcp-notebook" not in specs


# -- LSP through jupyter-lsp's websocket, as jupyterlab-lsp speaks it ----------------------------------------------


class Socket:
    """One LSP conversation over `<base_url>lsp/ws/<server>`: JSON-RPC messages as text frames."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []  # answered with null: JupyterLab's dialog closed

    def notify(self, method: str, params: Any) -> None:
        self.connection.write_message(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.connection.write_message(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}))
        async with asyncio.timeout(DEADLINE):
            while True:
                raw = await self.connection.read_message()
                assert raw is not None, "jupyter-lsp closed the websocket"
                message = json.loads(raw)
                if message.get("id") == ident and "method" not in message:
                    assert "error" not in message, message
                    return message["result"]
                if "method" in message and "id" in message:  # a request of the server's (configuration, …)
                    self.server_requests.append(message)
                    self.connection.write_message(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": None}))
                else:
                    self.notifications.append(message)


@asynccontextmanager
async def lsp_socket(server: JupyterServer) -> AsyncIterator[Socket]:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = _base(server).replace("http://", "ws://") + "lsp/ws/mcp-notebook"
    request = HTTPRequest(url, headers=server.auth(), connect_timeout=DEADLINE, request_timeout=DEADLINE)
    connection = await websocket_connect(request)
    socket = Socket(connection)
    try:
        root = Path(server.wait_for_line(r"Serving notebooks from local directory").split(": ", 1)[1].strip())
        await socket.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": {"textDocument": {"completion": {}}}},
        )
        socket.notify("initialized", {})
        yield socket
    finally:
        connection.close()


def _open(socket: Socket, uri: str, language: str, text: str) -> None:
    document = {"uri": uri, "languageId": language, "version": 1, "text": text}
    socket.notify("textDocument/didOpen", {"textDocument": document})


async def _labels(socket: Socket, uri: str, line: int, character: int) -> list[str]:
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
    result = await socket.request("textDocument/completion", params)
    items = result["items"] if isinstance(result, dict) else result
    return [item["label"] for item in items]


async def _wait_for_labels(socket: Socket, uri: str, line: int, character: int, wanted: str) -> list[str]:
    """The completion labels once `wanted` is among them (the servers connect in the background)."""
    async with asyncio.timeout(DEADLINE):
        while True:
            labels = await _labels(socket, uri, line, character)
            if wanted in labels:
                return labels
            await asyncio.sleep(0.2)  # polling the bridge, as a user typing again would


async def test_the_bridge_serves_the_jupyter_servers_notebooks_in_markdown_and_never_in_code(
    jupyter: JupyterServer,
) -> None:
    async with lsp_socket(jupyter) as socket:
        # What jupyterlab-lsp sends for a notebook's Markdown cells: one document of them all, language markdown.
        markdown = "file:///virtual/notebook.ipynb.python-markdown.md"
        # Each slash line a paragraph of its own: only there can JupyterLab's completer put an answer (jupyterlab.py).
        _open(socket, markdown, "markdown", "/\n\n/jupyter:greet style=\n")
        labels = await _wait_for_labels(socket, markdown, 0, 1, "/jupyter:greet")
        assert {"/jupyter:greet", "/jupyter:explain", "/jupyter:note0"} <= set(labels)
        values = await _labels(socket, markdown, 2, len("/jupyter:greet style="))
        assert values == ["warmly", "wittily", "formally"], values
        hover = await socket.request(
            "textDocument/hover", {"textDocument": {"uri": markdown}, "position": {"line": 2, "character": 5}}
        )
        assert "Greet" in hover["contents"]["value"]

        # A Markdown file: JupyterLab names its language after its CodeMirror mode.
        notes = "file:///virtual/notes.md"
        _open(socket, notes, "ipythongfm", "# Notes\n\n/jupyter:ex\n")
        assert await _labels(socket, notes, 2, len("/jupyter:ex")) == ["/jupyter:explain"]

        code = "file:///virtual/notebook.ipynb.py"
        _open(socket, code, "python", "/\n/jupyter:greet style=\n")
        assert await _labels(socket, code, 0, 1) == []
        assert await _labels(socket, code, 1, len("/jupyter:greet style=")) == []


def test_a_jupyter_roots_mcp_json_and_look_alike_modules_run_nothing_through_jupyter_lsp(tmp_path: Path) -> None:
    """A cloned folder served by Jupyter: its `.mcp.json` command, and an `lsp_bridge.py` or `mcp_notebook/` in
    the root or the server's working folder, must not run when a Markdown cell asks for the bridge."""
    marker = tmp_path / "PWNED"
    plant = f"open({str(marker)!r}, 'a').write(__name__ + chr(10))\n"
    root = tmp_path / "notebooks"
    root.mkdir()
    command = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'a').write('mcp.json')"]}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": command}}), encoding="utf-8")
    for folder in (root, tmp_path):  # the Jupyter root, and the folder the server runs in
        (folder / "lsp_bridge.py").write_text(plant, encoding="utf-8")
        (folder / "mcp_notebook").mkdir()
        (folder / "mcp_notebook" / "__init__.py").write_text(plant, encoding="utf-8")

    async def use_the_bridge(server: JupyterServer) -> list[dict[str, Any]]:
        async with lsp_socket(server) as socket:
            markdown = "file:///virtual/notebook.ipynb.python-markdown.md"
            _open(socket, markdown, "markdown", "/\n")
            labels = await _wait_for_labels(socket, markdown, 0, 1, "/jupyter:greet")
            assert "1 server not trusted: evil" in labels, labels
            return socket.server_requests

    with _start(tmp_path) as server:
        asked = asyncio.run(use_the_bridge(server))

    questions = [r for r in asked if r["method"] == "window/showMessageRequest"]
    assert len(questions) == 1, asked
    assert str(root / ".mcp.json") in questions[0]["params"]["message"]
    assert str(marker) in questions[0]["params"]["message"]
    assert not marker.exists(), marker.read_text()
