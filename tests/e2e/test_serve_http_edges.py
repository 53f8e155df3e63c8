"""The protocol's last edges over real HTTP: batches, the version header, stateless initialize, listen, SSE ids."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from e2e_processes import (
    ACCEPT,
    DEADLINE,
    HANDSHAKE_REVISIONS,
    MODERN,
    HttpServer,
    RawHttpSession,
    initialize_params,
    modern_meta,
    write_corpus,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    folder = tmp_path_factory.mktemp("edges") / "prompts"
    write_corpus(folder)
    with HttpServer([str(folder)]) as server:
        yield server


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def open_session(http: httpx2.AsyncClient, url: str, revision: str) -> dict[str, str]:
    """A handshake session at `revision`; returns the headers its later requests carry."""
    session = RawHttpSession(http, url, revision)
    await session.open()
    assert session.session_id is not None
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "Mcp-Session-Id": session.session_id}
    if revision >= "2025-06-18":
        headers["MCP-Protocol-Version"] = revision
    return headers


# --- batches ------------------------------------------------------------------------------------------------------


async def test_a_batch_is_served_at_2025_03_26_with_one_answer_per_request(served: HttpServer) -> None:
    async with httpx2.AsyncClient() as http:
        headers = await open_session(http, served.url, "2025-03-26")
        batch = [
            request(1, "prompts/list"),
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
            request("two", "prompts/get", {"name": "explain", "arguments": {"topic": "tides"}}),
            request(None, "prompts/list"),  # an id the schema does not allow
            request(3, "initialize", initialize_params("2025-03-26")),  # never batched
            request(4, "prompts/get", {"name": "nope"}),
        ]
        response = await http.post(served.url, content=json.dumps(batch), headers=headers, timeout=DEADLINE)
        only_notifications = await http.post(
            served.url,
            content=json.dumps(
                [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 2}}]
            ),
            headers=headers,
            timeout=DEADLINE,
        )
    assert response.status_code == 200
    answers = response.json()
    assert isinstance(answers, list) and len(answers) == 5  # the notification gets none
    by_id = {answer.get("id"): answer for answer in answers}
    assert [p["name"] for p in by_id[1]["result"]["prompts"]][:2] == ["greet", "note0"]
    assert "Explain tides simply." in by_id["two"]["result"]["messages"][0]["content"]["text"]
    assert by_id[None]["error"]["code"] == -32600
    assert by_id[3]["error"]["code"] == -32600 and "initialize" in by_id[3]["error"]["message"]
    assert by_id[4]["error"]["code"] == -32602
    assert only_notifications.status_code == 202 and not only_notifications.content


@pytest.mark.parametrize("revision", [r for r in (*HANDSHAKE_REVISIONS, MODERN) if r >= "2025-06-18"])
async def test_a_batch_is_refused_after_2025_03_26(served: HttpServer, revision: str) -> None:
    async with httpx2.AsyncClient() as http:
        if revision == MODERN:
            headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
            batch = [request(1, "prompts/list", {"_meta": modern_meta()})]
        else:
            headers = await open_session(http, served.url, revision)
            batch = [request(1, "prompts/list")]
        response = await http.post(served.url, content=json.dumps(batch), headers=headers, timeout=DEADLINE)
    assert response.status_code == 400
    reply = response.json()
    assert reply["error"]["code"] == -32600
    assert "2025-03-26" in reply["error"]["message"]
    if revision >= "2025-11-25":
        assert "id" not in reply  # the schema makes it optional and never null
    else:
        assert reply["id"] is None


# --- the 2026-07-28 header and the stateless path ------------------------------------------------------------------


@pytest.mark.parametrize("header", ["2025-11-25", "2025-03-26", None], ids=["handshake-version", "old", "missing"])
async def test_a_version_header_that_disagrees_with_the_body_is_a_header_mismatch(
    served: HttpServer, header: str | None
) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "Mcp-Method": "prompts/list"}
    if header is not None:
        headers["MCP-Protocol-Version"] = header
    body = request("m", "prompts/list", {"_meta": modern_meta()})
    async with httpx2.AsyncClient() as http:
        response = await http.post(served.url, content=json.dumps(body), headers=headers, timeout=DEADLINE)
    assert response.status_code == 400
    reply = response.json()
    assert reply["id"] == "m"
    assert reply["error"]["code"] == -32020
    assert "MCP-Protocol-Version" in reply["error"]["message"]


@pytest.mark.parametrize("with_meta", [True, False], ids=["enveloped", "bare"])
async def test_initialize_on_the_stateless_path_names_the_supported_versions(
    served: HttpServer, with_meta: bool
) -> None:
    params = initialize_params("2025-11-25")
    if with_meta:
        params["_meta"] = modern_meta()
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
    headers["Mcp-Method"] = "initialize"
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            served.url, content=json.dumps(request(9, "initialize", params)), headers=headers, timeout=DEADLINE
        )
    assert response.status_code == 404
    reply = response.json()
    assert (reply["id"], reply["error"]["code"]) == (9, -32601)
    for revision in (*HANDSHAKE_REVISIONS, MODERN):
        assert revision in reply["error"]["message"]
    assert "server/discover" in reply["error"]["message"]


# --- what the server announces ------------------------------------------------------------------------------------


async def test_the_listen_acknowledgement_lists_only_the_changes_the_server_sends(served: HttpServer) -> None:
    asked = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourcesListChanged": True,
        "resourceSubscriptions": ["notebook:///greet.ipynb"],
    }
    body = request(7, "subscriptions/listen", {"notifications": asked, "_meta": modern_meta()})
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
    headers["Mcp-Method"] = "subscriptions/listen"
    ack: dict[str, Any] | None = None
    async with httpx2.AsyncClient() as http:
        with anyio.fail_after(DEADLINE):
            async with http.stream("POST", served.url, content=json.dumps(body), headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        ack = json.loads(line[5:])
                        break
    assert ack is not None and ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"promptsListChanged": True, "resourcesListChanged": True}
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}


@pytest.mark.parametrize("revision", [*HANDSHAKE_REVISIONS, MODERN])
async def test_resource_subscriptions_are_not_advertised_since_no_resource_updates_are_sent(
    served: HttpServer, revision: str
) -> None:
    async with httpx2.AsyncClient() as http:
        session = RawHttpSession(http, served.url, revision)
        if revision == MODERN:
            capabilities = (await session.request("server/discover"))["result"]["capabilities"]
        else:
            opened = await session.open()
            assert opened is not None
            capabilities = opened["result"]["capabilities"]
    assert capabilities["resources"].get("subscribe") in (None, False)
    assert capabilities["resources"]["listChanged"] is True


# --- SSE event ids ------------------------------------------------------------------------------------------------


async def test_sse_streams_of_a_2025_11_25_session_carry_event_ids(served: HttpServer) -> None:
    async with httpx2.AsyncClient() as http:
        headers = await open_session(http, served.url, "2025-11-25")
        response = await http.post(
            served.url, content=json.dumps(request(5, "prompts/list")), headers=headers, timeout=DEADLINE
        )
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [block for block in response.text.replace("\r\n", "\n").split("\n\n") if block.strip()]
    fields = [dict(line.split(":", 1) for line in block.splitlines() if ":" in line) for block in events]
    assert fields, response.text
    assert all(field.get("id", "").strip() for field in fields), response.text  # the priming event and the reply
    replies = [json.loads(field["data"]) for field in fields if field.get("data", "").strip()]
    assert [reply["id"] for reply in replies] == [5]
