"""Prompt tests written as cells (docs/notebook-format.md, "Prompt tests"): what a test cell asks of a prompt.

A cell is a test cell when it carries a tag `test:NAME` or `metadata.mcp.test`.
It names the prompt it tests (the tag's NAME, or `prompt` inside the test), the
arguments to render it with, and what the rendered result must hold. Test cells
are never part of a prompt. Parsing only reads the cell: what is malformed is
kept as the test's `problem`, so that running the test fails and says why
(a test that cannot run must not pass quietly).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .outputs import text_of

__all__ = ["TEST_FIELDS", "TEST_TAG", "PromptTest", "is_test_cell", "read_test_cell"]

TEST_TAG = "test:"
# What a test may say; anything else is a mistake worth failing on (a misspelt `contain` would test nothing).
TEST_FIELDS = frozenset({"prompt", "name", "arguments", "contains", "regex", "messages", "roles", "snapshot"})
_ROLES = frozenset({"user", "assistant"})


@dataclass(frozen=True, slots=True)
class PromptTest:
    """One prompt test: render `prompt` of the same notebook with `arguments`; check the result.

    Every field is a plain value (strings, numbers, tuples), so that the index stores it as it
    stores a listing. `snapshot` is None (no snapshot), "" (the default file) or a file name
    relative to the notebook's folder. `problem` says what is wrong with the cell itself.
    """

    prompt: str
    cell: int  # position counting from 1
    name: str  # what reports call it: the test's `name`, else "PROMPT (cell N)"
    arguments: tuple[tuple[str, str], ...] = ()
    contains: tuple[str, ...] = ()
    regex: tuple[str, ...] = ()
    messages: int | None = None
    roles: tuple[str, ...] | None = None
    snapshot: str | None = None
    problem: str | None = None


def is_test_cell(metadata: Mapping[str, Any]) -> bool:
    """Whether a cell's metadata makes it a test cell (cheap: most cells are not)."""
    mcp = metadata.get("mcp")
    if isinstance(mcp, Mapping) and "test" in mcp:
        return True
    tags = metadata.get("tags")
    return isinstance(tags, list) and any(isinstance(tag, str) and tag.startswith(TEST_TAG) for tag in tags)


def _strings(value: Any, field: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError(f"{field} must be a string or a list of strings")


def _declared(cell: Mapping[str, Any], metadata: Mapping[str, Any]) -> tuple[list[str], Any]:
    """The prompt names the tags give, and the test's fields: `metadata.mcp.test`, else the cell's JSON source."""
    tags = metadata.get("tags")
    named = [
        tag.removeprefix(TEST_TAG).strip()
        for tag in (tags if isinstance(tags, list) else [])
        if isinstance(tag, str) and tag.startswith(TEST_TAG)
    ]
    mcp = metadata.get("mcp")
    if isinstance(mcp, Mapping) and "test" in mcp:
        return named, mcp["test"]
    source = text_of(cell.get("source")).strip()
    if not source:
        return named, {}
    try:
        return named, json.loads(source)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"its source must be a JSON object of the test's fields ({error})") from None


def _fields(value: Any) -> dict[str, Any]:
    if value is True:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("the test must be a JSON object (metadata.mcp.test, or the cell's source)")
    unknown = sorted(str(key) for key in value if key not in TEST_FIELDS)
    if unknown:
        raise ValueError(f"unknown test fields {', '.join(unknown)} (known: {', '.join(sorted(TEST_FIELDS))})")
    return dict(value)


def _arguments(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise ValueError("arguments must be an object of NAME: VALUE")
    if not all(isinstance(key, str) and isinstance(item, str) for key, item in value.items()):
        raise ValueError("argument values must be strings, as clients send them")
    return tuple(value.items())


def read_test_cell(cell: Mapping[str, Any], metadata: Mapping[str, Any], number: int) -> PromptTest:
    """The test a test cell (`is_test_cell`) declares; what is wrong with it is its `problem`."""
    prompt = ""
    try:
        named, value = _declared(cell, metadata)
        fields = _fields(value)
        if isinstance(fields.get("prompt"), str) and fields["prompt"].strip():
            named.insert(0, fields["prompt"].strip())
        elif "prompt" in fields:
            raise ValueError("prompt must be the name of a prompt of this notebook")
        names = list(dict.fromkeys(name for name in named if name))
        if not names:
            raise ValueError("it names no prompt: tag it test:NAME or give the test a prompt")
        prompt = names[0]
        if len(names) > 1:
            raise ValueError(f"it names several prompts ({', '.join(names)}): one test cell tests one prompt")
        label = fields.get("name")
        if label is not None and not (isinstance(label, str) and label.strip()):
            raise ValueError("name must be a non-empty string")
        messages = fields.get("messages")
        if messages is not None and (type(messages) is not int or messages < 0):
            raise ValueError("messages must be a count (a whole number, 0 or more)")
        roles = _strings(fields["roles"], "roles") if "roles" in fields else None
        if roles is not None and not _ROLES.issuperset(roles):
            raise ValueError("roles must each be 'user' or 'assistant'")
        snapshot = fields.get("snapshot", False)
        if snapshot is True:
            snapshot = ""
        elif snapshot is False:
            snapshot = None
        elif not (isinstance(snapshot, str) and snapshot.strip()):
            raise ValueError("snapshot must be true or a file name beside the notebook")
        return PromptTest(
            prompt=prompt,
            cell=number,
            name=label.strip() if label else f"{prompt} (cell {number})",
            arguments=_arguments(fields.get("arguments", {})),
            contains=_strings(fields["contains"], "contains") if "contains" in fields else (),
            regex=_strings(fields["regex"], "regex") if "regex" in fields else (),
            messages=messages,
            roles=roles,
            snapshot=snapshot,
        )
    except ValueError as error:
        return PromptTest(
            prompt=prompt, cell=number, name=f"{prompt or 'test'} (cell {number})", problem=f"cell {number}: {error}"
        )
