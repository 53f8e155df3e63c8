"""Reading the type a server describes for a prompt argument, and converting values to what it expects."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_notebook.argument_types import (
    ArgumentType,
    argument_type,
    from_wire,
    help_text,
    schema_from_description,
    schema_from_meta,
    to_wire,
)
from mcp_notebook.models import PromptArgument


def fastmcp(schema: dict[str, Any], description: str | None = None) -> str:
    """The description FastMCP 4 sends for a typed argument."""
    note = f"Provide a value matching the following JSON schema: {json.dumps(schema)}."
    note += " Encode non-string values as JSON."
    return f"{description}\n\n{note}" if description else note


def fastmcp2(schema: dict[str, Any], description: str | None = None) -> str:
    """The description FastMCP 2 sent for a typed argument."""
    note = f"Provide as a JSON string matching the following schema: {json.dumps(schema)}"
    return f"{description}\n\n{note}" if description else note


SCHEMAS: list[tuple[dict[str, Any], ArgumentType]] = [
    ({"type": "integer"}, ArgumentType("integer", schema={"type": "integer"})),
    ({"type": "number"}, ArgumentType("number", schema={"type": "number"})),
    ({"type": "boolean"}, ArgumentType("boolean", schema={"type": "boolean"})),
    (
        {"enum": ["formal", "casual"], "type": "string"},
        ArgumentType("enum", choices=("formal", "casual"), schema={"enum": ["formal", "casual"], "type": "string"}),
    ),
    (
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        ArgumentType("integer", nullable=True, schema={"type": "integer"}),
    ),
    ({"type": ["number", "null"]}, ArgumentType("number", nullable=True, schema={"type": "number"})),
    (
        {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}]},
        ArgumentType("json", nullable=True, schema={"items": {"type": "string"}, "type": "array"}),
    ),
    ({"type": "object"}, ArgumentType("json", schema={"type": "object"})),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, None),  # a union: JSON text
    ({"type": "string", "format": "date"}, ArgumentType("text", schema={"type": "string", "format": "date"})),
    ({"oneOf": [{"const": 1}, {"const": 2}]}, None),
    ({"type": "integer", "default": 3}, ArgumentType("integer", default=3, schema={"type": "integer", "default": 3})),
]


@pytest.mark.parametrize(("schema", "expected"), SCHEMAS, ids=lambda v: json.dumps(v) if isinstance(v, dict) else "")
@pytest.mark.parametrize("describe", [fastmcp, fastmcp2], ids=["fastmcp4", "fastmcp2"])
def test_a_schema_in_the_description_gives_the_arguments_type(
    schema: dict[str, Any], expected: ArgumentType | None, describe: Any
) -> None:
    found = argument_type(PromptArgument("x", description=describe(schema, "How many.")))

    if expected is None:
        kind = ArgumentType("enum", choices=(1, 2), schema=schema) if "oneOf" in schema else None
        expected = kind or ArgumentType("json", schema=schema)
    assert found == expected


@pytest.mark.parametrize("describe", [fastmcp, fastmcp2], ids=["fastmcp4", "fastmcp2"])
@pytest.mark.parametrize("description", [None, "How many days.", "Two lines\nof help."])
def test_the_schema_note_is_not_shown_to_people(describe: Any, description: str | None) -> None:
    argument = PromptArgument("days", description=describe({"type": "integer"}, description))

    assert help_text(argument) == description


HOSTILE_DESCRIPTIONS = [
    None,
    "",
    "Plain words, no schema.",
    "Provide a value matching the following JSON schema: not json at all",
    "Provide a value matching the following JSON schema: [1, 2]",  # not an object
    'Provide a value matching the following JSON schema: {"type": ',  # cut short
    "Provide as a JSON string matching the following schema: {{{{",
    "Provide a value matching the following JSON schema: " + "[" * 10_000,  # deep nesting
]


@pytest.mark.parametrize("description", HOSTILE_DESCRIPTIONS)
def test_a_description_without_a_readable_schema_is_plain_text_and_shown_as_it_is(description: str | None) -> None:
    argument = PromptArgument("x", description=description)

    assert argument_type(argument) == ArgumentType()
    assert help_text(argument) == description


def test_a_schema_in_meta_wins_over_the_description() -> None:
    assert schema_from_meta({"schema": {"type": "boolean"}}) == {"type": "boolean"}
    assert schema_from_meta({"io.example/jsonSchema": {"type": "integer"}}) == {"type": "integer"}
    assert schema_from_meta({"schema": "not a schema"}) is None
    assert schema_from_meta(None) is None

    class WithMeta:  # an argument model that carries its `_meta`
        def __init__(self) -> None:
            self.name = "x"
            self.description = fastmcp({"type": "integer"})
            self.meta = {"schema": {"type": "boolean"}}

    assert argument_type(WithMeta()).kind == "boolean"  # type: ignore[arg-type]


def test_the_rest_of_the_description_is_kept_around_the_note() -> None:
    schema, rest = schema_from_description(fastmcp({"type": "integer"}, "Days.") + "\n\nMore words.")

    assert schema == {"type": "integer"}
    assert rest == "Days.\n\nMore words."


WIRE = [
    ("integer", 5, "5"),
    ("number", 2.5, "2.5"),
    ("boolean", True, "true"),
    ("boolean", False, "false"),
    ("enum", "formal", "formal"),  # a string choice goes as it is, as FastMCP's Literal accepts it
    ("enum", 2, "2"),
    ("text", "hello", "hello"),
    ("json", '["a", "b"]', '["a", "b"]'),
]


@pytest.mark.parametrize(("kind", "value", "wire"), WIRE)
def test_values_are_sent_as_the_server_expects(kind: Any, value: Any, wire: str) -> None:
    assert to_wire(kind, value) == wire


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (ArgumentType("boolean"), "true", True),
        (ArgumentType("boolean"), "False", False),
        (ArgumentType("boolean"), "yes", True),
        (ArgumentType("integer"), "7", 7),
        (ArgumentType("integer"), "7.0", 7),
        (ArgumentType("number"), "1e3", 1000.0),
        (ArgumentType("enum", choices=("a", "b")), "b", "b"),
        (ArgumentType("enum", choices=(1, 2)), "2", 2),
        (ArgumentType("json"), "[1]", "[1]"),
    ],
)
def test_defaults_and_given_values_become_typed_values(kind: ArgumentType, text: str, value: Any) -> None:
    assert from_wire(kind, text) == value


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (ArgumentType("boolean"), "maybe"),
        (ArgumentType("integer"), "five"),
        (ArgumentType("integer"), "1.5"),
        (ArgumentType("integer"), "true"),
        (ArgumentType("number"), "many"),
        (ArgumentType("enum", choices=("a", "b")), "c"),
        (ArgumentType("json"), "[1,"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_clear_error(kind: ArgumentType, text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        from_wire(kind, text)


def test_a_magics_flag_is_a_yes_or_no_argument_whether_seen_locally_or_over_the_wire() -> None:
    described = "--no-raise-error: If given, don't re-raise exceptions (true to pass it)"
    local = PromptArgument(name="no_raise_error", description=described, required=False, completions=("true", "false"))
    listed = PromptArgument(name="no_raise_error", description=described, required=False)  # completions stay home

    assert argument_type(local) == ArgumentType("boolean")
    assert argument_type(listed) == ArgumentType("boolean")
    assert help_text(listed) == "--no-raise-error: If given, don't re-raise exceptions"
    assert to_wire("boolean", True) == "true"
    assert argument_type(PromptArgument(name="line", description="What follows %time on its line")).kind == "text"
