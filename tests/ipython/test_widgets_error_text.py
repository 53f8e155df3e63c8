"""A server's error made short for a form: one line, the rest as details."""

from __future__ import annotations

import pytest

from mcp_notebook.ipython.forms.error_text import mentioned_arguments, summarize_error

FASTMCP_ERROR = (
    "python: Could not convert argument 'days' with value 'five' to expected type <class 'int'>. "
    "Error: 1 validation error for int\n"
    "  Invalid JSON: expected ident at line 1 column 2 [type=json_invalid, input_value='five', input_type=str]\n"
    "    For further information visit https://errors.pydantic.dev/2.14/v/json_invalid"
)
MODEL_ERROR = (
    "2 validation errors for Arguments\n"
    "topic\n"
    "  Field required [type=missing, input_value={}, input_type=dict]\n"
    "    For further information visit https://errors.pydantic.dev/2.14/v/missing\n"
    "days\n"
    "  Input should be a valid integer [type=int_parsing, input_value='x', input_type=str]\n"
)


def test_a_pydantic_report_becomes_one_line_with_the_first_problem() -> None:
    text = summarize_error(FASTMCP_ERROR)

    assert text.summary == (
        "python: Could not convert argument 'days' with value 'five' to expected type <class 'int'>: "
        "Invalid JSON: expected ident at line 1 column 2"
    )
    assert text.details == FASTMCP_ERROR


def test_a_long_type_repr_is_left_to_the_details() -> None:
    message = (
        "typed: Could not convert argument 'topic' with value 'ab' to expected type typing.Annotated[str, "
        "FieldInfo(annotation=NoneType, required=True, metadata=[MinLen(min_length=3)])]. Error: 1 validation error "
        "for constrained-str\n  Invalid JSON: expected value at line 1 column 1 [type=json_invalid]"
    )
    text = summarize_error(message)

    assert text.summary == (
        "typed: Could not convert argument 'topic' with value 'ab' to the expected type: "
        "Invalid JSON: expected value at line 1 column 1"
    )
    assert text.details == message


def test_a_bare_validation_report_names_its_first_problem() -> None:
    text = summarize_error(MODEL_ERROR)

    assert text.summary == "Invalid value: Field required"
    assert text.details == MODEL_ERROR.strip()


@pytest.mark.parametrize(
    "message",
    ["Unknown prompt: vanished", "sdk: connection closed", "x" * 100],
)
def test_a_short_message_is_its_own_summary_with_no_details(message: str) -> None:
    assert summarize_error(message) == summarize_error(message).__class__(message, None)


@pytest.mark.parametrize(
    "message",
    ["x" * 10_000, "line one\n" + "more\n" * 500, "\n\n\n", "", "  [type=x]  ", "Error: 3 validation errors for X"],
)
def test_any_message_gives_a_short_summary_and_loses_nothing(message: str) -> None:
    text = summarize_error(message)

    assert 0 < len(text.summary) <= 240
    assert "\n" not in text.summary
    if message.strip() and message.strip() != text.summary:
        assert text.details == message.strip()


def test_the_arguments_a_message_names_are_found() -> None:
    assert mentioned_arguments(FASTMCP_ERROR, ["topic", "days", "day"]) == ["days"]
    assert mentioned_arguments("Missing arguments: topic", ["topic", "days"]) == ["topic"]
    assert mentioned_arguments("nothing here", ["topic"]) == []
