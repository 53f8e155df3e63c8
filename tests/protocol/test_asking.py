"""Asking the user for missing arguments: the form built, and the server in both eras through the SDK client."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from client_harness import FormFiller
from mcp import Client, MCPError

from mcp_notebook.exceptions import DeclinedArgumentsError
from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
from mcp_notebook.protocol.asking import (
    ANSWERS_KEY,
    arguments_to_ask,
    can_ask,
    to_answers,
    to_elicitation,
    to_input_required_result,
    to_requested_schema,
)
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

CONTEXT = PromptArgument("context", ask="What context should the prompt use?")
CODE = PromptArgument("code", title="Code", description="The code to review", ask="Paste the code to review")
LANGUAGE = PromptArgument("language", required=False, default="Python")
PLAIN = PromptArgument("focus")  # required, never asked for

REVIEW = PromptSpec(
    name="review",
    title="Review code",
    arguments=(CODE, CONTEXT, LANGUAGE),
    messages=(MessageTemplate("user", TextContent("Review this {{language}} ({{context}}):\n{{code}}")),),
)
MIXED = PromptSpec(
    name="mixed",
    arguments=(CONTEXT, PLAIN),
    messages=(MessageTemplate("user", TextContent("{{context}} / {{focus}}")),),
)

# In process, "legacy" runs the initialize handshake (2025-11-25) and "auto" discovers the 2026-07-28 server.
MODES = ["legacy", "auto"]


@pytest.fixture(params=MODES, ids=["handshake", "2026-07-28"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server() -> PromptServer:
    registry = PromptRegistry()
    registry.set_group("review.ipynb", [REVIEW, MIXED])
    return create_server(registry, max_argument_bytes=100)


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def text_of(result: types.GetPromptResult) -> str:
    content = result.messages[0].content
    assert isinstance(content, types.TextContent)
    return content.text


async def error_of(call: object) -> types.ErrorData:
    with pytest.raises(MCPError) as caught:
        await call  # type: ignore[misc]
    return caught.value.error


# -- which arguments are asked for, and whom -------------------------------------------------------------------------


def test_the_missing_required_arguments_are_asked_for_in_declaration_order() -> None:
    assert arguments_to_ask(REVIEW, {}) == (CODE, CONTEXT)
    assert arguments_to_ask(REVIEW, {"code": "x = 1"}) == (CONTEXT,)


def test_nothing_is_asked_when_no_required_argument_is_missing() -> None:
    assert arguments_to_ask(REVIEW, {"code": "x", "context": "y"}) == ()


def test_nothing_is_asked_when_some_missing_argument_has_no_question() -> None:
    assert arguments_to_ask(MIXED, {}) == ()
    assert arguments_to_ask(MIXED, {"focus": "bugs"}) == (CONTEXT,)


def test_nothing_is_asked_when_an_argument_name_is_unknown() -> None:
    assert arguments_to_ask(REVIEW, {"cod": "x = 1"}) == ()


@pytest.mark.parametrize(
    ("capabilities", "revision", "expected"),
    [
        (None, "2025-11-25", False),
        ({}, "2025-11-25", False),
        ({"sampling": {}}, "2026-07-28", False),
        ({"elicitation": {}}, "2025-06-18", True),
        ({"elicitation": {}}, "2025-03-26", False),  # elicitation came with 2025-06-18
        ({"elicitation": {"form": {}}}, "2025-11-25", True),
        ({"elicitation": {"form": {}, "url": {}}}, "2026-07-28", True),
        ({"elicitation": {"url": {}}}, "2026-07-28", False),  # a URL-only client cannot fill in a form
        ({"elicitation": {}}, "2026-07-28", True),
    ],
)
def test_only_a_client_that_declared_form_elicitation_at_a_revision_that_has_it_is_asked(
    capabilities: dict[str, Any] | None, revision: str, expected: bool
) -> None:
    declared = types.ClientCapabilities.model_validate(capabilities) if capabilities is not None else None
    assert can_ask(declared, revision) is expected


# -- the form ----------------------------------------------------------------------------------------------------------


def test_the_form_has_one_required_string_per_missing_argument_explained_by_its_question() -> None:
    assert to_requested_schema((CODE, CONTEXT)) == {
        "type": "object",
        "properties": {
            "code": {"type": "string", "title": "Code", "description": "Paste the code to review"},
            "context": {"type": "string", "description": "What context should the prompt use?"},
        },
        "required": ["code", "context"],
    }


def test_static_completions_stay_suggestions_not_an_enum() -> None:
    suggested = PromptArgument("lang", completions=("Python", "Rust"), ask="Which language?")
    field = to_requested_schema((suggested,))["properties"]["lang"]
    assert field == {"type": "string", "description": "Which language?"}


def test_one_question_is_the_message_and_several_are_one_line_each() -> None:
    assert to_elicitation((CONTEXT,)).message == "What context should the prompt use?"
    assert to_elicitation((CODE, CONTEXT)).message == (
        "Code: Paste the code to review\ncontext: What context should the prompt use?"
    )


def test_the_input_required_result_holds_one_form_request_and_no_state() -> None:
    wire = to_input_required_result((CONTEXT,)).model_dump(by_alias=True, mode="json", exclude_none=True)
    assert wire == {
        "resultType": "input_required",
        "inputRequests": {
            ANSWERS_KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What context should the prompt use?",
                    "requestedSchema": to_requested_schema((CONTEXT,)),
                },
            }
        },
    }


def test_answers_keep_only_string_values_of_the_arguments_asked_for() -> None:
    response = accept(code="x = 1", context=3, language="Rust", other="y")
    assert to_answers(REVIEW, (CODE, CONTEXT), response) == {"code": "x = 1"}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_question_raises_naming_the_arguments(action: str) -> None:
    with pytest.raises(DeclinedArgumentsError) as caught:
        to_answers(REVIEW, (CODE, CONTEXT), types.ElicitResult.model_validate({"action": action}))
    assert caught.value.data() == {"prompt": "review", "missing": ["code", "context"], "action": action}


# -- the server, through the SDK client, in both eras ----------------------------------------------------------------


async def test_a_missing_askable_argument_is_asked_for_and_the_prompt_rendered_with_the_answer(
    server: PromptServer, mode: str
) -> None:
    filler = FormFiller(accept(context="a unit test"))
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        result = await client.get_prompt("review", {"code": "x = 1"})
    assert text_of(result) == "Review this Python (a unit test):\nx = 1"
    assert [(form.message, form.requested_schema) for form in filler.forms] == [
        ("What context should the prompt use?", to_requested_schema((CONTEXT,)))
    ]


async def test_several_missing_arguments_are_asked_for_in_one_form(server: PromptServer, mode: str) -> None:
    filler = FormFiller(accept(code="print(1)", context="CI"))
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        result = await client.get_prompt("review", {"language": "Rust"})
    assert text_of(result) == "Review this Rust (CI):\nprint(1)"
    assert filler.forms[0].requested_schema["required"] == ["code", "context"]


async def test_a_client_given_every_argument_is_not_asked(server: PromptServer, mode: str) -> None:
    filler = FormFiller()
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        result = await client.get_prompt("review", {"code": "c", "context": "k"})
    assert text_of(result) == "Review this Python (k):\nc"
    assert filler.forms == []


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_question_is_invalid_params_saying_so(server: PromptServer, mode: str, action: str) -> None:
    filler = FormFiller(types.ElicitResult.model_validate({"action": action}))
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        error = await error_of(client.get_prompt("review", {"code": "x"}))
    assert error.code == -32602
    assert error.message.startswith("Missing required arguments for prompt 'review': context (the user was asked and ")
    assert error.data == {"prompt": "review", "missing": ["context"], "action": action}


async def test_a_client_without_elicitation_gets_the_missing_arguments_error(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.get_prompt("review", {"code": "x"}))
    assert (error.code, error.data) == (-32602, {"prompt": "review", "missing": ["context"]})


async def test_a_prompt_with_a_missing_argument_that_cannot_be_asked_for_is_not_asked(
    server: PromptServer, mode: str
) -> None:
    filler = FormFiller()
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        error = await error_of(client.get_prompt("mixed", {}))
    assert (error.code, error.data) == (-32602, {"prompt": "mixed", "missing": ["context", "focus"]})
    assert filler.forms == []


async def test_an_answer_over_the_size_limit_is_refused_like_any_argument(server: PromptServer, mode: str) -> None:
    filler = FormFiller(accept(context="x" * 101))
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        error = await error_of(client.get_prompt("review", {"code": "c"}))
    assert error.code == -32602
    assert error.data == {"prompt": "review", "argument": "context", "size": 101, "limit": 100}


async def test_an_answer_never_overrides_an_argument_the_client_gave(server: PromptServer, mode: str) -> None:
    filler = FormFiller(accept(context="asked", code="injected"))
    async with Client(server, mode=mode, elicitation_callback=filler) as client:
        result = await client.get_prompt("review", {"code": "given"})
    assert text_of(result) == "Review this Python (asked):\ngiven"


async def test_a_handshake_answer_without_the_value_is_the_missing_arguments_error(server: PromptServer) -> None:
    filler = FormFiller(accept(other="x"))
    async with Client(server, mode="legacy", elicitation_callback=filler) as client:
        error = await error_of(client.get_prompt("review", {"code": "c"}))
    assert (error.code, error.data) == (-32602, {"prompt": "review", "missing": ["context"]})


async def test_a_2026_answer_without_the_value_is_asked_for_again(server: PromptServer) -> None:
    filler = FormFiller(accept(other="x"), accept(context="second time"))
    async with Client(server, mode="auto", elicitation_callback=filler) as client:
        result = await client.get_prompt("review", {"code": "c"})
    assert text_of(result) == "Review this Python (second time):\nc"
    assert len(filler.forms) == 2
