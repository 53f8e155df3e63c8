"""What type a prompt argument's value has, when its server describes one, and how to send it.

MCP prompt arguments are strings on the wire, with no type. Some servers
describe a type anyway: FastMCP appends a JSON schema to the description of
every non-string argument ("Provide a value matching the following JSON
schema: {…}. Encode non-string values as JSON."; FastMCP 2 wrote "Provide as
a JSON string matching the following schema: {…}"), and a server may put a
schema in the argument's `_meta`. `argument_type` reads either into an
`ArgumentType` (a magic's flag, described "… (true to pass it)", is a
boolean); `help_text` is the description without the schema note, for
people; `to_wire` and `from_wire` convert between a typed value and the
string the server expects (JSON for everything but plain strings).

Pure: no widgets, no SDK. A schema that cannot be read is no error: the
argument is then plain text, as it is for every server that says nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .models import PromptArgument

__all__ = [
    "ArgumentType",
    "TypeKind",
    "argument_type",
    "from_wire",
    "help_text",
    "is_flag",
    "schema_from_description",
    "schema_from_meta",
    "to_wire",
]

TypeKind = Literal["text", "boolean", "integer", "number", "enum", "json"]

# The note FastMCP appends to a description; the schema is the JSON object between the markers.
_SCHEMA_NOTES = (
    re.compile(r"Provide a value matching the following JSON schema:\s*"),
    re.compile(r"Provide as a JSON string matching the following schema:\s*"),
)
_NOTE_TAIL = re.compile(r"^\s*\.?\s*(?:Encode non-string values as JSON\.?)?\s*")
_MAX_CHOICES = 200  # an enum longer than this is offered as suggestions, not a drop-down
# How a magic prompt describes a flag (an option without a value); over the wire that is all a client sees of it.
_FLAG_NOTE = re.compile(r"\s*\(true to pass it\)\s*$")
_FLAG_COMPLETIONS = frozenset({"true", "false"})


@dataclass(frozen=True, slots=True)
class ArgumentType:
    """The type of an argument's value, as a form shows it.

    `kind` is "text" for anything untyped or of a type with no better editor
    (a plain string, a date); "json" for arrays, objects and unions, typed as
    JSON text. `choices` are an enum's values, `nullable` says the schema
    allows null (so leaving it blank is fine), `default` is the schema's own.
    """

    kind: TypeKind = "text"
    choices: tuple[Any, ...] = ()
    nullable: bool = False
    default: Any = None
    schema: Mapping[str, Any] | None = None

    @property
    def typed(self) -> bool:
        """Whether the server described a type other than a plain string."""
        return self.kind != "text"

    def describe(self) -> str:
        """A few words for people: "whole number", "yes or no", "JSON list"."""
        if self.kind == "json":
            kind = (self.schema or {}).get("type")
            return {"array": "JSON list", "object": "JSON object"}.get(str(kind), "JSON value")
        return {
            "boolean": "yes or no",
            "integer": "whole number",
            "number": "number",
            "enum": "one of the choices",
            "text": "text",
        }[self.kind]


def _schema_after(text: str, start: int) -> tuple[dict[str, Any], int] | None:
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser follows
        return None
    return (value, end) if isinstance(value, dict) else None


def schema_from_description(description: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The schema a description carries, and the description without its note (None when nothing is left)."""
    if not description:
        return None, description
    for note in _SCHEMA_NOTES:
        found = note.search(description)
        if found is None:
            continue
        parsed = _schema_after(description, found.end())
        if parsed is None:
            continue
        schema, end = parsed
        tail = description[end:]
        tail = tail[_NOTE_TAIL.match(tail).end() :]  # type: ignore[union-attr]  # the pattern matches ""
        rest = (description[: found.start()].rstrip() + ("\n\n" + tail if tail.strip() else "")).strip()
        return schema, rest or None
    return None, description


def schema_from_meta(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A JSON schema in an argument's `_meta`: under a key named `schema` or ending in `schema` (any case)."""
    if not isinstance(meta, Mapping):
        return None
    for key, value in meta.items():
        if isinstance(key, str) and key.lower().rsplit("/", 1)[-1].endswith("schema") and isinstance(value, dict):
            return value
    return None


def _non_null(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """The schema without a `null` alternative (`Optional[int]` → integer), and whether there was one."""
    types = schema.get("type")
    if isinstance(types, list):
        rest = [t for t in types if t != "null"]
        if len(rest) < len(types) and len(rest) == 1:
            return {**schema, "type": rest[0]}, True
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            rest = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
            if len(rest) < len(options) and len(rest) == 1 and isinstance(rest[0], Mapping):
                inner = {k: v for k, v in schema.items() if k != key}
                return {**inner, **rest[0]}, True
    return schema, False


def _choices(schema: Mapping[str, Any]) -> tuple[Any, ...]:
    if isinstance(schema.get("enum"), list):
        return tuple(schema["enum"])
    if "const" in schema:
        return (schema["const"],)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and all(isinstance(o, Mapping) and "const" in o for o in options):
            return tuple(o["const"] for o in options)
    return ()


def _from_schema(schema: Mapping[str, Any]) -> ArgumentType:
    inner, nullable = _non_null(schema)
    default = inner.get("default")
    choices = tuple(c for c in _choices(inner) if c is not None)
    if choices and len(choices) <= _MAX_CHOICES and all(isinstance(c, str | int | float | bool) for c in choices):
        return ArgumentType("enum", choices=choices, nullable=nullable, default=default, schema=inner)
    kind = inner.get("type")
    if kind in ("boolean", "integer", "number"):
        return ArgumentType(kind, nullable=nullable, default=default, schema=inner)
    if kind == "string" or (kind is None and not any(k in inner for k in ("anyOf", "oneOf", "allOf", "items"))):
        return ArgumentType("text", nullable=nullable, default=default, schema=inner)
    return ArgumentType("json", nullable=nullable, default=default, schema=inner)


def is_flag(argument: PromptArgument) -> bool:
    """Whether an argument is a switch: a magic's flag (`--no-raise-error`), sent as `true` to pass it."""
    if argument.completions and frozenset(argument.completions) == _FLAG_COMPLETIONS:
        return True
    return bool(argument.description and _FLAG_NOTE.search(argument.description))


def argument_type(argument: PromptArgument) -> ArgumentType:
    """The type `argument`'s server describes (in `_meta` first, then the description); text when none.

    A flag (`is_flag`) is a boolean: a checkbox in a form.
    """
    schema = schema_from_meta(getattr(argument, "meta", None))
    if schema is None:
        schema, _ = schema_from_description(argument.description)
    if schema is None:
        return ArgumentType("boolean") if is_flag(argument) else ArgumentType()
    return _from_schema(schema)


def help_text(argument: PromptArgument) -> str | None:
    """The description for people: without the schema note a server appended for machines, or a flag's note."""
    text = schema_from_description(argument.description)[1]
    if text and is_flag(argument):
        text = _FLAG_NOTE.sub("", text) or None
    return text


def to_wire(kind: TypeKind, value: Any) -> str:
    """The string to send for `value`: text as it is, anything else as JSON (`true`, `5`, `["a"]`)."""
    if kind == "text" or (kind == "enum" and isinstance(value, str)):
        return str(value)
    if kind == "json" and isinstance(value, str):
        return value  # typed by the user as JSON text already
    return json.dumps(value, ensure_ascii=False)


def from_wire(argument_kind: ArgumentType, text: str) -> Any:
    """The typed value a string stands for (a default, a value given on the line); raises ValueError if it can't.

    Lenient where people are: `True`, `yes` and `1` are true for a boolean.
    """
    kind = argument_kind.kind
    stripped = text.strip()
    if kind == "boolean":
        lowered = stripped.lower()
        if lowered in ("true", "yes", "1", "on"):
            return True
        if lowered in ("false", "no", "0", "off"):
            return False
        raise ValueError(f"expected true or false, got {text!r}")
    if kind == "integer":
        try:
            number = json.loads(stripped)
        except ValueError:
            raise ValueError(f"expected a whole number, got {text!r}") from None
        if isinstance(number, bool) or not isinstance(number, int | float) or int(number) != number:
            raise ValueError(f"expected a whole number, got {text!r}")
        return int(number)
    if kind == "number":
        try:
            number = float(stripped)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None
        return number
    if kind == "enum":
        for choice in argument_kind.choices:
            if text == choice or text == to_wire("json", choice) or text == str(choice):
                return choice
        raise ValueError(f"expected one of {', '.join(map(str, argument_kind.choices))}, got {text!r}")
    if kind == "json":
        json.loads(text)  # raises ValueError (JSONDecodeError) with where it went wrong
        return text
    return text
