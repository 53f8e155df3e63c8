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
