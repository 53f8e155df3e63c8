"""JupyterLab's REST API (`<base_url>mcp-notebook/api/`) in a real `jupyter server`, over HTTP.

The user's configuration names real stdio MCP servers: one that answers
(`tools`), one that exits at once (`dead`), one that never lists its prompts
(`slow`), one whose value completions never come (`slowvalues`); the served
folder holds a project file the user has not trusted. A real HTTP MCP server
stands in for a kernel serving its prompts, found through a connection file.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from client_harness import stop_process
from jupyter_harness import DEADLINE, JupyterServer
from notebook_files import write_notebook

from mcp_notebook.discovery import write_connection_file

pytestmark = pytest.mark.slow

SERVERS = Path(__file__).resolve().parents[1] / "servers"
SECRET = "s3cr3t-mcp-token-9f2c"  # in a server's environment and headers: never sent to the browser
BOUND = 0.2  # a slow or dead MCP server never delays an answer by more than this
API = "mcp-notebook/api/"


def _config(home: Path) -> Path:
    python = sys.executable
    stub = str(SERVERS / "stub_completion_server.py")
    servers = {
        "tools": {"command": python, "args": [str(SERVERS / "sdk_server.py")], "env": {"API_TOKEN": SECRET}},
        "dead": {"command": python, "args": ["-c", "import sys; sys.exit(3)"]},
        "slow": {"command": python, "args": [stub, "--list-delay", "3600"]},
        "slowvalues": {"command": python, "args": [stub, "--complete-delay", "3600"]},
    }
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {
        "MCP_NOTEBOOK_CONFIG": str(_config(home)),
        "MCP_NOTEBOOK_CACHE_DIR": str(home / "cache"),
        "MCP_NOTEBOOK_TRUST_FILE": str(home / "trust.json"),
        **extra,
    }


@pytest.fixture(scope="module")
def kernel_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A real MCP server over HTTP, as a kernel's `%mcp serve` runs one; its URL."""
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "sdk_server.py"), "--http", "--token", SECRET],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    url = ""
    deadline = time.monotonic() + DEADLINE
    while not url and time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if found := re.search(r"MCP_NOTEBOOK_URL=(\S+)", line):
            url = found.group(1)
    assert url, "the HTTP MCP server did not start"
    try:
        yield process, url
    finally:
        stop_process(process)
        process.stderr.close()


@pytest.fixture(scope="module")
def jupyter(
    tmp_path_factory: pytest.TempPathFactory, kernel_server: tuple[subprocess.Popen[str], str]
) -> Iterator[JupyterServer]:
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    write_notebook(root / "notes.ipynb", [{"source": "Summarize {{text}}", "tags": ["prompt:summarize"]}])
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": {"command": "rm", "args": ["-rf", "/"]}}}))
    process, url = kernel_server
    runtime = home / "runtime"
    runtime.mkdir()
    write_connection_file(
        url=url,
        token=SECRET,
        kernel_id="4c1d2e3f-aaaa",
        notebook_path=str(root / "analysis.ipynb"),
        pid=process.pid,
        directory=runtime,
    )
    # No folder watch: a notebook saved is seen because the notebook request reads it again, not by luck of timing.
    with JupyterServer(
        root, home, args=["--MCPNotebook.watch=False"], env=_env(home, JUPYTER_RUNTIME_DIR=str(runtime))
    ) as server:
        yield server


def _client(server: JupyterServer) -> httpx2.Client:
    return httpx2.Client(base_url=server.base + API, headers=server.auth(), timeout=DEADLINE)


def _warm(client: httpx2.Client, server: JupyterServer) -> None:
    """Have Jupyter's own `api/status` (nothing of ours) answer `client` first: on a busy machine a server's
    first answer to a login can take it a few tenths of a second, which is not what a bound on a listing
    is about."""
    response = client.get(server.base + "api/status")
    assert response.status_code == 200, response.text


def _timed(call: Callable[[], httpx2.Response]) -> tuple[httpx2.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def _servers(listing: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {server["name"]: server for server in listing["servers"]}


def _wait_for(client: httpx2.Client, ready: Callable[[dict[str, dict[str, Any]]], bool]) -> dict[str, Any]:
    """Long-poll `prompts?since=` until `ready(servers)`; each answer comes at once or when something changed."""
    deadline = time.monotonic() + DEADLINE
    listing = client.get("prompts").json()
    while not ready(_servers(listing)):
        assert time.monotonic() < deadline, f"the lists never got there: {listing}"
        listing = client.get("prompts", params={"since": listing["version"]}).json()
    return listing


def test_every_server_is_listed_with_its_state_and_a_slow_or_dead_one_delays_nothing(jupyter: JupyterServer) -> None:
    with _client(jupyter) as client:
        _warm(client, jupyter)
        first, took = _timed(lambda: client.get("prompts"))
        assert first.status_code == 200, first.text
        assert took < BOUND + 0.1, f"the first listing took {took:.3f} s"  # it may wait 0.1 s for the kept lists
        listing = _wait_for(
            client,
            lambda s: s["tools"]["state"] == "ready" and s["dead"]["state"] == "failed" and "analysis" in s,
        )
        servers = _servers(listing)
        assert servers["jupyter"]["kind"] == "notebooks"
        assert servers["jupyter"]["state"] == "ready"
        assert [p["name"] for p in servers["jupyter"]["prompts"]] == ["summarize"]
        assert servers["tools"]["kind"] == "config"
        greet = next(p for p in servers["tools"]["prompts"] if p["name"] == "greet")
        assert greet["arguments"][0] == {
            "name": "name",
            "description": "who to greet",
            "required": True,
            "default": None,
        }
        assert greet["magic"] is False
        assert servers["dead"]["detail"], servers["dead"]
        assert servers["slow"]["state"] == "connecting"
        project = servers["project"]
        assert project["state"] == "not-trusted"
        assert "mcp-notebook trust" in project["detail"] and ".mcp.json" in project["detail"]
        # A kernel is named by its notebook, as every client names it (naming.kernel_server_name).
        assert servers["analysis"]["kind"] == "kernel"
        assert servers["analysis"]["state"] == "ready"
        # The slow and the dead servers delay no listing.
        for _ in range(5):
            response, took = _timed(lambda: client.get("prompts"))
            assert response.status_code == 200
            assert took < BOUND, f"a listing took {took:.3f} s"
        body = client.get("prompts").text
        assert SECRET not in body
        assert "sys.exit" not in body  # a failed server's command line stays on the server


def test_the_loop_stays_responsive_while_servers_hang(jupyter: JupyterServer) -> None:
    with _client(jupyter) as client:
        _wait_for(client, lambda s: s["slowvalues"]["state"] == "ready")
        slowest: list[float] = []
        stop = threading.Event()

        def hammer() -> None:
            with httpx2.Client(base_url=jupyter.base, headers=jupyter.auth(), timeout=DEADLINE) as other:
                while not stop.is_set():
                    _, took = _timed(lambda: other.get("api/status"))
                    slowest.append(took)

        thread = threading.Thread(target=hammer)
        thread.start()
        try:
            # A long poll that waits (for a version that never comes) holds nothing up.
            since = client.get("prompts").json()["version"] + 1_000
            waiting = threading.Thread(target=lambda: client.get("prompts", params={"since": since}))
            waiting.start()
            body = {"server": "slowvalues", "prompt": "p", "argument": "slow", "value": "x", "context": {}}
            for value in ("x", "xy", "xyz"):
                response, took = _timed(lambda v=value: client.post("complete", json=body | {"value": v}))
                assert response.status_code == 200, response.text
                assert response.json() == {"values": [], "hasMore": False, "total": 0, "pending": True}
                assert took < BOUND + 0.3, f"a completion waited {took:.3f} s"  # 0.2 s held by the server
                response, took = _timed(lambda: client.get("prompts"))
                assert took < BOUND, f"a listing beside a long poll took {took:.3f} s"
            waiting.join()
        finally:
            stop.set()
            thread.join()
        # The servers hang for an hour: a loop they held would stall requests for that long. A busy machine
        # (2 cores, shared) may hold up the odd request on its own, so the bound holds for 95 in 100 of them.
        assert len(slowest) > 20
        ordered = sorted(slowest)
        assert ordered[-1] < 1.0, f"the Jupyter server's own API waited {ordered[-1]:.3f} s"
        assert ordered[len(ordered) * 95 // 100] < BOUND, f"slowest answers: {ordered[-10:]}"


def test_render_and_complete_answer_or_say_what_went_wrong(jupyter: JupyterServer) -> None:
    with _client(jupyter) as client:
        _wait_for(client, lambda s: s["tools"]["state"] == "ready" and s["dead"]["state"] == "failed")
        rendered = client.post("render", json={"server": "tools", "prompt": "greet", "arguments": {"name": "Ada"}})
        assert rendered.status_code == 200, rendered.text
        assert rendered.json() == {
            "messages": [{"role": "user", "text": "Say hello to Ada in plain words."}],
            "markdown": "Say hello to Ada in plain words.",
        }
        own = client.post("render", json={"server": "jupyter", "prompt": "summarize", "arguments": {"text": "it"}})
        assert own.json()["markdown"] == "Summarize it"
        values = client.post(
            "complete", json={"server": "tools", "prompt": "greet", "argument": "lang", "value": "r", "context": {}}
        )
        assert values.json() == {"values": ["rust", "ruby"], "hasMore": False, "total": 2}

        missing = client.post("render", json={"server": "tools", "prompt": "greet", "arguments": {}})
        assert missing.status_code == 400
        assert "name" in missing.json()["message"]
        dead = client.post("render", json={"server": "dead", "prompt": "x", "arguments": {}})
        assert dead.status_code == 503
        assert "dead" in dead.json()["message"] and "not connected" in dead.json()["message"]
        unknown = client.post("render", json={"server": "nowhere", "prompt": "x"})
        assert unknown.status_code == 503
        assert "no such MCP server" in unknown.json()["message"]
        for body, complaint in (
            (b"{not json", "not JSON"),
            (b"[1]", "JSON object"),
            (json.dumps({"server": "tools"}).encode(), "'prompt'"),
            (
                json.dumps({"server": "tools", "prompt": "greet", "arguments": {"name": 1}}).encode(),
                "object of strings",
            ),
        ):
            refused = client.post("render", content=body, headers={"Content-Type": "application/json"})
            assert refused.status_code == 400, refused.text
            assert complaint in refused.json()["message"]
        bad_since = client.get("prompts", params={"since": "soon"})
        assert bad_since.status_code == 400 and "version number" in bad_since.json()["message"]
        # The server goes on.
        assert client.get("prompts").status_code == 200


def test_a_saved_notebook_reports_its_published_cells_and_warnings(jupyter: JupyterServer) -> None:
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"id": "intro", "cell_type": "markdown", "metadata": {}, "source": "Just prose."},
            {"id": "ask", "cell_type": "markdown", "metadata": {"tags": ["prompt:fresh"]}, "source": "Ask {{q}}"},
            {"id": "odd", "cell_type": "markdown", "metadata": {"mcp": "yes"}, "source": "Odd metadata."},
        ],
    }
    with _client(jupyter) as client, httpx2.Client(base_url=jupyter.base, headers=jupyter.auth()) as contents:
        saved = contents.put(
            "api/contents/fresh.ipynb", json={"type": "notebook", "format": "json", "content": notebook}
        )
        assert saved.status_code in (200, 201), saved.text
        report = client.get("notebook", params={"path": "fresh.ipynb"})
        assert report.status_code == 200, report.text
        data = report.json()
        assert data["path"] == "fresh.ipynb" and data["served_as"] == "jupyter"
        assert data["prompts"] == [
            {"name": "fresh", "title": None, "cell_id": "ask", "cell_number": 2, "kind": "prompt"}
        ]
        # A cell that publishes nothing is known by its position (the source keeps the ids of published cells).
        assert [(w["cell_id"], w["cell_number"]) for w in data["warnings"]] == [(None, 3)]
        assert "metadata.mcp must be an object" in data["warnings"][0]["message"]

        missing = client.get("notebook", params={"path": "nowhere.ipynb"})
        assert missing.status_code == 404 and "save it first" in missing.json()["message"]
        outside = client.get("notebook", params={"path": "../secret.ipynb"})
        assert outside.status_code == 404 and "not the path of a notebook" in outside.json()["message"]


def test_check_name_follows_the_naming_rules(jupyter: JupyterServer) -> None:
    with _client(jupyter) as client:
        assert client.post("check-name", json={"name": "summarize.v2"}).json() == {
            "ok": True,
            "message": "",
            "suggestion": "summarize.v2",
        }
        refused = client.post("check-name", json={"name": "my prompt"}).json()
        assert refused["ok"] is False and refused["suggestion"] == "my_prompt"
        assert "1 to 64" in refused["message"]
        assert client.post("check-name", json={"name": 3}).status_code == 400


def test_no_credentials_no_answer_and_a_cookie_needs_xsrf(jupyter: JupyterServer) -> None:
    for method, path in (("GET", "prompts"), ("POST", "render"), ("POST", "check-name"), ("GET", "notebook")):
        refused = httpx2.request(method, jupyter.base + API + path, json={"name": "x"} if method == "POST" else None)
        assert refused.status_code == 403, (path, refused.status_code)
    wrong = httpx2.get(jupyter.base + API + "prompts", headers={"Authorization": "token wrong"})
    assert wrong.status_code == 403
    with httpx2.Client(base_url=jupyter.base) as browser:
        browser.get("login")
        xsrf = browser.cookies["_xsrf"]
        logged_in = browser.post("login", data={"password": jupyter.token, "_xsrf": xsrf})
        assert logged_in.status_code in (200, 302), logged_in.text
        assert browser.get(API + "prompts").status_code == 200  # a GET needs no XSRF
        no_xsrf = browser.post(API + "check-name", json={"name": "x"})
        assert no_xsrf.status_code == 403
        with_xsrf = browser.post(API + "check-name", json={"name": "x"}, headers={"X-XSRFToken": xsrf})
        assert with_xsrf.status_code == 200, with_xsrf.text


def test_the_first_listing_after_a_start_has_the_lists_kept_from_the_last(tmp_path: Path) -> None:
    root = tmp_path / "notebooks"
    root.mkdir()
    config = tmp_path / "mcp.json"

    def configure(delay: str) -> None:
        # The delay is in the server's environment, which is not what a kept list is known by.
        stub = {"command": sys.executable, "args": [str(SERVERS / "stub_completion_server.py")]}
        config.write_text(json.dumps({"mcpServers": {"stub": stub | {"env": {"STUB_LIST_DELAY": delay}}}}))

    env = {"MCP_NOTEBOOK_CONFIG": str(config), "MCP_NOTEBOOK_CACHE_DIR": str(tmp_path / "cache")}
    configure("0")
    with JupyterServer(root, tmp_path / "first", env=env) as first, _client(first) as client:
        _wait_for(client, lambda s: s["stub"]["state"] == "ready")
    # Started again, the same server now takes an hour to list its prompts: its list is there at once anyway.
    configure("3600")
    with JupyterServer(root, tmp_path / "second", env=env) as second, _client(second) as client:
        _warm(client, second)
        listing, took = _timed(lambda: client.get("prompts"))
    stub = _servers(listing.json())["stub"]
    assert stub["state"] == "ready", stub
    assert [p["name"] for p in stub["prompts"]] == ["p"]
    assert "last start" in stub["detail"]
    assert took < BOUND + 0.1


def test_a_server_without_a_token_lists_its_own_notebooks_and_still_wants_xsrf(tmp_path: Path) -> None:
    """Started with an empty token (no login), Jupyter still checks XSRF on a POST: the `jupyter` entry, this
    server's own notebooks reached over its own MCP endpoint, passes it as a browser does; a POST without it
    does not."""
    root = tmp_path / "notebooks"
    write_notebook(root / "notes.ipynb", [{"source": "Summarize {{text}}", "tags": ["prompt:summarize"]}])
    env = {"MCP_NOTEBOOK_CONFIG": str(tmp_path / "none.json"), "MCP_NOTEBOOK_CACHE_DIR": str(tmp_path / "cache")}
    # What JupyterLab sends without a token: its `_xsrf` cookie, and the same value in the X-XSRFToken header.
    browser = {"cookies": {"_xsrf": "f00d" * 8}, "headers": {"X-XSRFToken": "f00d" * 8}}
    with (
        JupyterServer(root, tmp_path / "home", token="", env=env) as server,
        httpx2.Client(base_url=server.base + API, timeout=DEADLINE, **browser) as client,
    ):
        listing = _wait_for(client, lambda s: s["jupyter"]["state"] != "connecting")
        jupyter = _servers(listing)["jupyter"]
        assert jupyter["state"] == "ready", jupyter["detail"]
        assert [p["name"] for p in jupyter["prompts"]] == ["summarize"]
        rendered = client.post("render", json={"server": "jupyter", "prompt": "summarize", "arguments": {"text": "x"}})
        assert rendered.status_code == 200 and "Summarize x" in rendered.json()["markdown"], rendered.text
        # XSRF is not off: a POST that sends no XSRF pair is refused, on the MCP endpoint and on the API.
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert httpx2.post(server.url, json=initialize).status_code == 403
        assert httpx2.post(server.base + API + "check-name", json={"name": "x"}).status_code == 403
