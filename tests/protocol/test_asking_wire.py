"""Asking for missing arguments as it is on the wire: the 2026-07-28 InputRequiredResult and the handshake request."""

from __future__ import annotations

from typing import Any

import pytest
from wire_harness import MODERN, RawWire

from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

QUESTION = "What context should the prompt use?"
ELICITATION: dict[str, Any] = {"elicitation": {}}
FORM = {
    "mode": "form",
    "message": QUESTION,
    "requestedSchema": {
        "type": "object",
        "properties": {"context": {"type": "string", "description": QUESTION}},
        "required": ["context"],
    },
}
RENDERED = [{"role": "user", "content": {"type": "text", "text": "Use this context: from the wire"}}]


@pytest.fixture
def server() -> PromptServer:
    spec = PromptSpec(
        name="test_input_required_result_prompt",
        arguments=(PromptArgument("context", ask=QUESTION),),
        messages=(MessageTemplate("user", TextContent("Use this context: {{context}}")),),
    )
    registry = PromptRegistry()
    registry.set_group("conformance.ipynb", [spec])
    return create_server(registry)


def get(**params: Any) -> dict[str, Any]:
    return {"name": "test_input_required_result_prompt", **params}


def answer(action: str = "accept", **content: str) -> dict[str, Any]:
    return {"arguments": {"action": action, "content": content} if content else {"action": action}}


def without_meta(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "_meta"}


async def test_2026_answers_input_required_with_one_elicitation_and_no_request_state(server: PromptServer) -> None:
    async with RawWire(server, MODERN, ELICITATION) as wire:
        result = (await wire.request("prompts/get", get()))["result"]
    assert without_meta(result) == {
        "resultType": "input_required",
        "inputRequests": {"arguments": {"method": "elicitation/create", "params": FORM}},
    }


async def test_2026_retry_with_the_answer_is_a_complete_result(server: PromptServer) -> None:
    async with RawWire(server, MODERN, ELICITATION) as wire:
        retry = get(inputResponses=answer(context="from the wire"))
        result = (await wire.request("prompts/get", retry))["result"]
    assert without_meta(result) == {"resultType": "complete", "messages": RENDERED}


async def test_2026_retry_under_another_key_is_asked_again(server: PromptServer) -> None:
    async with RawWire(server, MODERN, ELICITATION) as wire:
        retry = get(inputResponses={"wrong_key": {"action": "accept", "content": {"context": "x"}}})
        result = (await wire.request("prompts/get", retry))["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["arguments"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_2026_retry_declining_is_invalid_params(server: PromptServer, action: str) -> None:
    async with RawWire(server, MODERN, ELICITATION) as wire:
        error = (await wire.request("prompts/get", get(inputResponses=answer(action))))["error"]
    assert error["code"] == -32602
    assert error["data"] == {"prompt": "test_input_required_result_prompt", "missing": ["context"], "action": action}


@pytest.mark.parametrize("capabilities", [{}, {"elicitation": {"url": {}}}, {"sampling": {}}])
async def test_2026_never_asks_a_client_that_cannot_fill_in_a_form(
    server: PromptServer, capabilities: dict[str, Any]
) -> None:
    async with RawWire(server, MODERN, capabilities) as wire:
        error = (await wire.request("prompts/get", get()))["error"]
    assert error["code"] == -32602
    assert error["data"] == {"prompt": "test_input_required_result_prompt", "missing": ["context"]}


async def test_2026_arguments_given_in_the_request_need_no_question(server: PromptServer) -> None:
    async with RawWire(server, MODERN, ELICITATION) as wire:
        result = (await wire.request("prompts/get", get(arguments={"context": "from the wire"})))["result"]
    assert without_meta(result) == {"resultType": "complete", "messages": RENDERED}


async def test_2026_listing_is_complete_for_a_client_that_could_be_asked(server: PromptServer) -> None:
    async with RawWire(server, MODERN, ELICITATION) as wire:
        result = (await wire.request("prompts/list"))["result"]
    assert result["resultType"] == "complete"
    assert result["prompts"][0]["arguments"] == [{"name": "context", "required": True}]


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
async def test_a_handshake_server_sends_its_own_elicitation_request_while_serving_the_get(
    server: PromptServer, revision: str
) -> None:
    async with RawWire(server, revision, ELICITATION) as wire:
        await wire.send({"jsonrpc": "2.0", "id": "get-1", "method": "prompts/get", "params": get()})
        request = await wire.receive()
        # `mode` came with 2025-11-25; 2025-06-18's schema has no such field.
        params = FORM if revision >= "2025-11-25" else {k: v for k, v in FORM.items() if k != "mode"}
        assert (request["method"], request["params"]) == ("elicitation/create", params)
        reply = {"action": "accept", "content": {"context": "from the wire"}}
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": reply})
        response = await wire.receive()
    assert response == {"jsonrpc": "2.0", "id": "get-1", "result": {"messages": RENDERED}}


async def test_a_2025_03_26_client_is_never_asked_even_when_it_claims_elicitation(server: PromptServer) -> None:
    async with RawWire(server, "2025-03-26", ELICITATION) as wire:
        error = (await wire.request("prompts/get", get()))["error"]
    assert error["code"] == -32602


async def test_a_handshake_client_answering_with_an_error_gets_the_missing_arguments_error(
    server: PromptServer,
) -> None:
    async with RawWire(server, "2025-11-25", ELICITATION) as wire:
        await wire.send({"jsonrpc": "2.0", "id": "get-1", "method": "prompts/get", "params": get()})
        request = await wire.receive()
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no forms"}})
        response = await wire.receive()
    assert response["error"]["code"] == -32602
    assert response["error"]["data"] == {"prompt": "test_input_required_result_prompt", "missing": ["context"]}
