"""JSON-RPC batches over stdio: served on a 2025-03-26 connection as one array line, refused in other revisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_processes import ALL_REVISIONS, MODERN, StdioServer, initialize_params, modern_meta, write_corpus

pytestmark = pytest.mark.slow


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "prompts")
    return tmp_path / "prompts"


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def next_line(server: StdioServer) -> Any:
    """The next line the server writes that is not a notification (a batch's answers are one array line)."""
    while True:
        line = server.stdout_lines.get(timeout=20)
        assert line is not None, "the server closed stdout"
        message = json.loads(line)
        if not (isinstance(message, dict) and "method" in message):
            return message


def test_a_batch_on_a_2025_03_26_connection_gets_one_array_of_answers(folder: Path) -> None:
    with StdioServer([str(folder)]) as server:
        server.initialize("2025-03-26")
        batch = [
            request(1, "prompts/get", {"name": "explain", "arguments": {"topic": "tides"}}),
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
            request(None, "prompts/list"),  # an id the schema does not allow
            request(2, "initialize", initialize_params("2025-03-26")),  # never batched
            request("three", "prompts/get", {"name": "nope"}),
            request(4, "ping"),
        ]
        server.send_line(json.dumps(batch))
        answers = next_line(server)
        server.send_line(
            json.dumps(
                [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 2}}]
            )
        )
        server.send_line("[]")  # an empty batch is one invalid request
        empty = next_line(server)
        after = server.request("ping")
    assert isinstance(answers, list)
    assert [answer.get("id") for answer in answers] == [
        1,
        None,
        2,
        "three",
        4,
    ]  # in order; no answer to the notification
    assert "Explain tides simply." in answers[0]["result"]["messages"][0]["content"]["text"]
    assert [answers[i]["error"]["code"] for i in (1, 2, 3)] == [-32600, -32600, -32602]
    assert "initialize" in answers[2]["error"]["message"]
    assert answers[4] == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert empty["error"]["code"] == -32600 and empty["id"] is None
    assert after["result"] == {}  # the notification-only batch got no answer line: the next line is this reply


@pytest.mark.parametrize("revision", [r for r in ALL_REVISIONS if r != "2025-03-26"])
def test_a_batch_is_refused_in_every_other_revision(folder: Path, revision: str) -> None:
    with StdioServer([str(folder)]) as server:
        if revision == MODERN:
            server.request("server/discover", modern=True)
            batch = [request(1, "prompts/list", {"_meta": modern_meta()})]
        else:
            server.initialize(revision)
            batch = [request(1, "prompts/list")]
        server.send_line(json.dumps(batch))
        reply = next_line(server)
    assert isinstance(reply, dict)
    assert reply["error"]["code"] == -32600
    assert "2025-03-26" in reply["error"]["message"]
