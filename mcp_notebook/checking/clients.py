"""What goes wrong with a prompt in each known MCP client: the table in `clients.json`, and its rule kinds.

The table is data, one row per known limit of one client with the issue or
document it comes from, so that keeping it current is editing a JSON file. Each
row has a `kind`, one of `KINDS` below, and the kind's parameters; `says` is
what the report tells the user, with `{name}`, `{count}` and `{detail}` filled in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..models import PromptSpec

__all__ = ["KINDS", "ClientRule", "ProblemFinder", "client_names", "client_rules", "problems_of"]

TABLE = "clients.json"


@dataclass(frozen=True, slots=True, eq=False)  # one object per row: told apart by identity
class ClientRule:
    """One known limit of one client (a row of `clients.json`)."""

    client: str
    kind: str
    says: str
    source: str
    parameters: Mapping[str, Any]

    def detail(self, spec: PromptSpec, media: Collection[str] | None = None) -> str | None:
        """What in `spec` breaks this rule, said for a person; None when it does not break it.

        `media`: the kinds of content other than text in `spec`'s messages, when known without reading them."""
        return KINDS[self.kind](spec, self.parameters, media_of(spec) if media is None else media)

    def message(self, spec: PromptSpec, detail: str) -> str:
        return self.says.format(name=spec.name, count=len(spec.arguments), detail=detail)


def _max_arguments(spec: PromptSpec, parameters: Mapping[str, Any], media: Collection[str]) -> str | None:
    count = len(spec.arguments)
    return f"{count} arguments" if count > int(parameters["limit"]) else None


def _min_arguments(spec: PromptSpec, parameters: Mapping[str, Any], media: Collection[str]) -> str | None:
    count = len(spec.arguments)
    return f"{count} arguments" if count < int(parameters["limit"]) else None


def _split_on_spaces(spec: PromptSpec, parameters: Mapping[str, Any], media: Collection[str]) -> str | None:
    del parameters
    for argument in spec.arguments:
        spaced = [
            value for value in (argument.default, *argument.completions) if value and any(map(str.isspace, value))
        ]
        if spaced:
            return f"{argument.name}'s value {spaced[0]!r} cannot be typed as one value"
    if len(spec.arguments) > 1:
        names = ", ".join(argument.name for argument in spec.arguments)
        return f"arguments {names}: a value with a space shifts the ones after it"
    return None


def _name_prefix(spec: PromptSpec, parameters: Mapping[str, Any], media: Collection[str]) -> str | None:
    del parameters
    return f"{spec.name!r}" if "." in spec.name else None


def _content_types(spec: PromptSpec, parameters: Mapping[str, Any], media: Collection[str]) -> str | None:
    refused = frozenset(parameters["types"])
    found = [kind for kind in media if kind in refused]
    if not found:
        return None
    return "its " + ", ".join(f"{kind.replace('_', ' ')} content" for kind in found)


def media_of(spec: PromptSpec) -> tuple[str, ...]:
    """The kinds of content other than text in `spec`'s messages, in order of first use."""
    return tuple(dict.fromkeys(t.content.type for t in spec.messages if t.content.type != "text"))


KINDS: Mapping[str, Callable[[PromptSpec, Mapping[str, Any], Collection[str]], str | None]] = {
    "max_arguments": _max_arguments,
    "min_arguments": _min_arguments,
    "split_on_spaces": _split_on_spaces,
    "name_prefix": _name_prefix,
    "content_types": _content_types,
}


@cache
def _table() -> tuple[Mapping[str, str], tuple[ClientRule, ...]]:
    document = json.loads(resources.files(__package__).joinpath(TABLE).read_text(encoding="utf-8"))
    names: dict[str, str] = document["clients"]
    rules = []
    for row in document["rules"]:
        parameters = {key: value for key, value in row.items() if key not in ("client", "kind", "says", "source")}
        rule = ClientRule(row["client"], row["kind"], row["says"], row["source"], parameters)
        if rule.kind not in KINDS or rule.client not in names or not rule.source:
            raise ValueError(f"{TABLE}: a row needs a known client, a known kind and a source: {row}")
        rules.append(rule)
    return names, tuple(rules)


def client_names() -> Mapping[str, str]:
    """Every client the table knows: its id (what `--clients` takes) and its name."""
    return _table()[0]


def client_rules(clients: Collection[str] | None = None) -> tuple[ClientRule, ...]:
    """The rows of the table, only those of `clients` when given; raises `ValueError` for an unknown id."""
    names, rules = _table()
    if clients is None:
        return rules
    unknown = sorted(set(clients) - set(names))
    if unknown:
        raise ValueError(f"unknown client {', '.join(unknown)}: the known ones are {', '.join(sorted(names))}")
    return tuple(rule for rule in rules if rule.client in clients)


def problems_of(
    spec: PromptSpec, rules: Sequence[ClientRule], media: Collection[str] | None = None
) -> list[tuple[ClientRule, str]]:
    """Each rule `spec` breaks, with what the report says about it (`media`: see `ClientRule.detail`)."""
    found = []
    for rule in rules:
        detail = rule.detail(spec, media)
        if detail is not None:
            found.append((rule, rule.message(spec, detail)))
    return found


class ProblemFinder:
    """`problems_of` for many prompts: prompts alike in what the rules look at are judged once.

    The rules look at a prompt's arguments, whether its name has a dot, and the kinds of content of its
    messages. Prompts of a notebook usually share one arguments tuple (declarations are shared), so the
    answer is kept by that tuple's identity (the tuple itself is kept too, so the identity stays its own).
    """

    def __init__(self, rules: Sequence[ClientRule]) -> None:
        self.rules = tuple(rules)
        self._looks_at_content = any(rule.kind == "content_types" for rule in self.rules)
        self._known: dict[tuple[int, bool, tuple[str, ...]], tuple[object, list[tuple[ClientRule, str]]]] = {}

    def __call__(self, spec: PromptSpec, media: tuple[str, ...] | None = None) -> list[tuple[ClientRule, str]]:
        if media is None:
            media = media_of(spec) if self._looks_at_content else ()
        key = (id(spec.arguments), "." in spec.name, media)
        known = self._known.get(key)
        if known is not None and known[0] is spec.arguments:
            found = known[1]
            if not any("{name" in rule.says for rule, _ in found):
                return found
        found = problems_of(spec, self.rules, media)
        self._known[key] = (spec.arguments, found)
        return found
