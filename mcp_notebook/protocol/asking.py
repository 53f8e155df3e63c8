"""Asking the user for a prompt's missing arguments (the notebook format's `ask`), in both protocol eras.

When `prompts/get` leaves out required arguments, every one of them declares
`ask`, and the client can show a form (it declared the `elicitation`
capability in form mode, at a revision that has it), the server asks the
user instead of answering -32602:

* 2026-07-28: the answer is an `InputRequiredResult` holding one
  `elicitation/create` request under the key `"arguments"`. The client
  re-sends the original request with `inputResponses["arguments"]`, and the
  accepted values fill in the missing arguments. The retry carries the
  original arguments itself, so no `requestState` is minted (nothing the
  client could tamper with).
* 2025-06-18 and 2025-11-25: the server sends its own `elicitation/create`
  request while it serves `prompts/get` and renders with the answer. Its
  params say `"mode": "form"` from 2025-11-25 on, where the field was
  introduced; 2025-06-18's schema has no modes, so there it is left out.

The form is flat: one string property per missing argument (values are
strings on the wire; static completions are suggestions, not a closed set,
so they are not turned into an `enum`), all of them required. Declining or
cancelling is -32602 (`DeclinedArgumentsError`). Only string answers to the
questions asked count; other keys are ignored, and an answer still missing
is asked for again (2026-07-28) or reported as missing (handshake era).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import mcp_types as types

from ..exceptions import DeclinedArgumentsError
from ..models import PromptArgument, PromptSpec
from .revisions import supports

__all__ = [
    "ANSWERS_KEY",
    "arguments_to_ask",
    "can_ask",
    "to_answers",
    "to_elicitation",
    "to_elicitation_request",
    "to_input_required_result",
    "to_requested_schema",
]

ANSWERS_KEY: Final = "arguments"
"""The key of our one input request in `inputRequests`, and of its answer in `inputResponses`."""


def arguments_to_ask(spec: PromptSpec, arguments: Mapping[str, str]) -> tuple[PromptArgument, ...]:
    """The required arguments missing from `arguments` when every one of them may be asked for; else ().

    Nothing is asked when an argument name is unknown (that error comes
    first) or when some missing argument has no `ask`: a question could not
    complete the request, so the client gets the missing-arguments error.
    """
    declared = {argument.name for argument in spec.arguments}
    if any(name not in declared for name in arguments):
        return ()
    missing = tuple(argument for argument in spec.arguments if argument.required and argument.name not in arguments)
    if not missing or any(argument.ask is None for argument in missing):
        return ()
    return missing


def can_ask(capabilities: types.ClientCapabilities | None, revision: str) -> bool:
    """Whether the client can fill in a form: it speaks a revision with elicitation and declared form mode."""
    if not supports(revision, "elicitation") or capabilities is None or capabilities.elicitation is None:
        return False
    elicitation = capabilities.elicitation
    # `"elicitation": {}` means form mode (2025-06-18 had no modes); a client that lists only `url` has no forms.
    return elicitation.form is not None or elicitation.url is None


def _label(argument: PromptArgument) -> str:
    return argument.title or argument.name


def to_requested_schema(questions: Sequence[PromptArgument]) -> dict[str, Any]:
    """The form: a flat object with one required string property per argument, titled and explained by its question."""
    properties: dict[str, Any] = {}
    for argument in questions:
        field: dict[str, Any] = {"type": "string"}
        if argument.title:
            field["title"] = argument.title
        if argument.ask:
            field["description"] = argument.ask
        properties[argument.name] = field
    return {"type": "object", "properties": properties, "required": [argument.name for argument in questions]}


def _message(questions: Sequence[PromptArgument]) -> str:
    if len(questions) == 1:
        return questions[0].ask or _label(questions[0])
    return "\n".join(f"{_label(argument)}: {argument.ask}" for argument in questions)


def to_elicitation(questions: Sequence[PromptArgument]) -> types.ElicitRequestFormParams:
    """The `elicitation/create` params that ask the user for `questions`."""
    return types.ElicitRequestFormParams(message=_message(questions), requested_schema=to_requested_schema(questions))


def to_elicitation_request(questions: Sequence[PromptArgument], revision: str) -> types.ElicitRequest:
    """The `elicitation/create` request asking for `questions`, with the fields `revision` defines."""
    params = to_elicitation(questions)
    if not supports(revision, "elicitation_modes"):
        # No `mode` before 2025-11-25: a None field is left out when the request is put on the wire.
        params = types.ElicitRequestFormParams.model_construct(**{**dict(params), "mode": None})
    return types.ElicitRequest(params=params)


def to_input_required_result(questions: Sequence[PromptArgument]) -> types.InputRequiredResult:
    """The 2026-07-28 `prompts/get` answer that asks the user for `questions` before the prompt is rendered."""
    request = types.ElicitRequest(params=to_elicitation(questions))
    return types.InputRequiredResult(input_requests={ANSWERS_KEY: request})


def to_answers(spec: PromptSpec, questions: Sequence[PromptArgument], response: types.ElicitResult) -> dict[str, str]:
    """The string values the user gave for `questions`, as prompt arguments (perhaps not all of them).

    Raises `DeclinedArgumentsError` when the user declined or cancelled.
    Keys that were not asked for are ignored, so an answer never overrides
    an argument the client gave.
    """
    if response.action != "accept":
        raise DeclinedArgumentsError(spec.name, [argument.name for argument in questions], response.action)
    content = response.content or {}
    return {argument.name: value for argument in questions if isinstance(value := content.get(argument.name), str)}
