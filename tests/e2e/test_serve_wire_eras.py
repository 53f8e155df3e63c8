"""Each revision's wire, byte for byte where it differs: `elicitation/create` params and echoed request ids.

A strict audit against each revision's schema found `mode` in `elicitation/create` at 2025-06-18 (the field
came with 2025-11-25) and `"id": null` in the HTTP refusal "Missing session ID" although the request's id was
readable. Real server processes, raw JSON-RPC over stdio and HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from e2e_processes import ACCEPT, ALL_REVISIONS, DEADLINE, MODERN, StdioServer, initialize_params, write_notebook
from served_http import ServedHttp

pytestmark = pytest.mark.slow

QUESTION = "Paste the code to review"
ARGUMENTS = [{"name": "code", "ask": QUESTION}]
SCHEMA = {"type": "object", "properties": {"code": {"type": "string", "description": QUESTION}}, "required": ["code"]}
# The client capability that asks for forms, as each revision spells it.
FORMS = {"2025-06-18": {"elicitation": {}}, "2025-11-25": {"elicitation": {"form": {}}}}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prompts = tmp_path_factory.mktemp("eras") / "prompts"
    write_notebook(prompts / "review.ipynb", [("Review:\n{{code}}", {"prompt": "review", "arguments": ARGUMENTS})])
    return prompts


@pytest.mark.parametrize("revision", sorted(FORMS))
def test_the_servers_elicitation_request_has_exactly_the_fields_of_its_revision(folder: Path, revision: str) -> None:
    with StdioServer([str(folder), "--no-cache"]) as server:
        params = {**initialize_params(revision), "capabilities": FORMS[revision]}
        assert server.request("initialize", params)["result"]["protocolVersion"] == revision
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": "get-1", "method": "prompts/get", "params": {"name": "review"}})
        asked = server.receive()
        assert asked["method"] == "elicitation/create"
        expected: dict[str, Any] = {"message": QUESTION, "requestedSchema": SCHEMA}
        if revision >= "2025-11-25":
            expected = {"mode": "form", **expected}
        assert asked["params"] == expected
        answer = {"action": "accept", "content": {"code": "x = 1"}}
        server.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
        reply = server.receive()
        assert reply["id"] == "get-1"
        assert reply["result"]["messages"][0]["content"]["text"] == "Review:\nx = 1"


def test_the_2026_07_28_input_request_says_form_mode(folder: Path) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "0"},
    }
    with StdioServer([str(folder), "--no-cache"]) as server:
        reply = server.request("prompts/get", {"name": "review", "_meta": meta})
    requested = reply["result"]["inputRequests"]["arguments"]
    assert requested == {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": QUESTION, "requestedSchema": SCHEMA},
    }


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_revisions_without_elicitation_are_never_asked(folder: Path, revision: str) -> None:
    with StdioServer([str(folder), "--no-cache"]) as server:
        server.initialize(revision)
        reply = server.request("prompts/get", {"name": "review"})
    assert reply["error"]["code"] == -32602
    assert server.notifications == []  # no elicitation/create came before the answer


# --- HTTP: the request's id in every refusal that can read it ------------------------------------------------------


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[ServedHttp]:
    with ServedHttp([folder], "--no-cache") as server:
        yield server


def _post(url: str, message: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    sent = {"Content-Type": "application/json", "Accept": ACCEPT, **headers}
    return httpx2.post(url, content=json.dumps(message), headers=sent, timeout=DEADLINE)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_a_request_without_its_session_is_refused_with_its_own_id(served: ServedHttp, revision: str) -> None:
    # A handshake-era request sent without the session it needs; at 2026-07-28 the revision's own
    # method sent without the header that selects it (so it reaches the handshake transport).
    method = "server/discover" if revision == MODERN else "prompts/list"
    headers = {"MCP-Protocol-Version": revision} if "2025-06-18" <= revision < MODERN else {}
    response = _post(served.url, {"jsonrpc": "2.0", "id": f"r-{revision}", "method": method, "params": {}}, headers)
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": f"r-{revision}",
        "error": {"code": -32600, "message": "Bad Request: Missing session ID"},
    }


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_request_for_an_unknown_session_is_refused_with_its_own_id(served: ServedHttp, revision: str) -> None:
    headers = {"Mcp-Session-Id": "0" * 32, **({"MCP-Protocol-Version": revision} if revision >= "2025-06-18" else {})}
    response = _post(served.url, {"jsonrpc": "2.0", "id": 41, "method": "prompts/list"}, headers)
    assert response.status_code == 404
    assert response.json()["id"] == 41
