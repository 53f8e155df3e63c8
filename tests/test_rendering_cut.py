"""`substitute` fills a template from its cut (kept per text), as the single regex pass it replaced did."""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping

import pytest

from mcp_notebook import rendering
from mcp_notebook.rendering import PLACEHOLDER_PATTERN, substitute


def _by_one_regex_pass(text: str, values: Mapping[str, str], names: Collection[str] | None) -> str:
    """The substitution as it was written before: `re.sub` with a function, each match filled once."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "{{"
        if (names is None or name in names) and name in values:
            return values[name]
        return match.group(0)

    return PLACEHOLDER_PATTERN.sub(fill, text)


PIECES = ["{{", "}}", "\\{{", "\\", "{", "}", "a", "who", " ", "\t", "\n", "é😀", "{{who}}", "{{ who }}", "{{\twho }}"]
PIECES += ["{{a.b-c}}", "{{ 1bad }}", "{{who}", "{{ unknown }}", "{{x}}", "\\{{who}}", "{{{{who}}}}", "{{ a }}{{a}}"]
VALUES = [{}, {"who": "Ada"}, {"who": "{{x}}", "x": "\\{{"}, {"a": "", "a.b-c": "dotted", "who": "\\"}]


def test_filled_as_by_one_regex_pass_on_many_texts() -> None:
    chooser = random.Random(43)
    for _ in range(3000):
        text = "".join(chooser.choice(PIECES) for _ in range(chooser.randrange(0, 12)))
        values = chooser.choice(VALUES)
        names = chooser.choice([None, values.keys(), {"who"}, set()])
        assert substitute(text, values, names) == _by_one_regex_pass(text, values, names), (text, values, names)


@pytest.mark.parametrize("size", [10, rendering._KEPT_CUT_CHARS + 1])
def test_short_and_long_texts_alike(size: int) -> None:
    text = "x" * size + " {{ who }} \\{{who}} {{other}}"
    assert substitute(text, {"who": "Ada"}) == "x" * size + " Ada {{who}} {{other}}"
    assert substitute(text, {"who": "Ada"}) == _by_one_regex_pass(text, {"who": "Ada"}, None)


def test_a_value_is_never_filled_again() -> None:
    assert substitute("{{a}}{{b}}", {"a": "{{b}}", "b": "B"}) == "{{b}}B"


def test_argument_values_as_the_checks_in_their_order_give_them() -> None:
    from mcp_notebook.exceptions import ArgumentTooLargeError, MissingArgumentsError, UnknownArgumentsError
    from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
    from mcp_notebook.rendering import argument_values

    def spec(*arguments: PromptArgument) -> PromptSpec:
        return PromptSpec(name="p", arguments=arguments, messages=(MessageTemplate("user", TextContent("t")),))

    two = spec(
        PromptArgument("a", required=True),
        PromptArgument("b", required=False, default="B"),
        PromptArgument("c", required=False),
    )
    assert argument_values(two, {"a": "1"}, 100) == {"a": "1", "b": "B", "c": ""}
    assert argument_values(two, {"a": "1", "c": "3"}, 100) == {"a": "1", "b": "B", "c": "3"}
    with pytest.raises(UnknownArgumentsError):  # unknown first, before missing and too large
        argument_values(two, {"x": "1", "c": "é" * 100}, 100)
    with pytest.raises(MissingArgumentsError):  # missing before too large
        argument_values(two, {"c": "é" * 100}, 100)
    with pytest.raises(ArgumentTooLargeError):
        argument_values(two, {"a": "é" * 51}, 100)  # 102 bytes
    assert argument_values(two, {"a": "é" * 50}, 100)["a"] == "é" * 50  # 100 bytes: long enough to be measured
    assert argument_values(two, {"a": "\ud800" * 33}, 100)["a"] == "\ud800" * 33  # 99 bytes
    twice = spec(
        PromptArgument("a", required=False), PromptArgument("a", required=False)
    )  # a name declared twice still refuses an unknown one
    with pytest.raises(UnknownArgumentsError):
        argument_values(twice, {"a": "1", "x": "2"}, 100)
