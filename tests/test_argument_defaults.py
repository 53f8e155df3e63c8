"""Argument defaults travel: in the prompt's `_meta` for clients that read it, in words for every client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

import mcp_notebook
from mcp_notebook.ipython.display import PromptTable
from mcp_notebook.ipython.forms.terminal import ask_arguments
from mcp_notebook.ipython.magics import _how_to_call
from mcp_notebook.models import PromptArgument, PromptSpec
from mcp_notebook.protocol.convert import ARGUMENT_DEFAULTS_META_KEY, from_mcp_prompt, to_mcp_prompt

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

SPEC = PromptSpec(
    name="review",
    description="Review code",
    arguments=(
        PromptArgument("code", description="The code"),
        PromptArgument("language", description="Its language", required=False, default="Python"),
        PromptArgument("focus", required=False, default="bugs"),
        PromptArgument("style", description="How", required=False),
    ),
    meta={"org.example/notebook": "review.ipynb"},
)


def wire(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def test_defaults_are_in_the_prompt_meta_and_in_words_in_each_description() -> None:
    prompt = wire(to_mcp_prompt(SPEC, "2025-06-18"))
    assert prompt["_meta"] == {
        "org.example/notebook": "review.ipynb",
        ARGUMENT_DEFAULTS_META_KEY: {"language": "Python", "focus": "bugs"},
    }
    assert [a.get("description") for a in prompt["arguments"]] == [
        "The code",
        "Its language (default: Python)",
        "Default: bugs",
        "How",
    ]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_revisions_without_meta_still_get_the_default_in_words(revision: str) -> None:
    prompt = wire(to_mcp_prompt(SPEC, revision))
    assert "_meta" not in prompt
    assert prompt["arguments"][1]["description"] == "Its language (default: Python)"


DEFAULTS = {
    "plain": ("short", "(default: short)"),
    "two words": ("two words", "(default: two words)"),
    "empty": ("", '(default: "")'),
    "spaces at the ends": (" padded ", '(default: " padded ")'),
    "several lines": ("a\nb", '(default: "a\\nb")'),
    "long": ("x" * 100, '(default: "' + "x" * 59 + '…")'),
    "parenthesis": ("(none)", "(default: (none))"),
    "quotes": ('say "hi"', '(default: say "hi")'),
    "unicode": ("Grüße", "(default: Grüße)"),
}


@pytest.mark.parametrize(("default", "words"), DEFAULTS.values(), ids=DEFAULTS.keys())
def test_every_default_reads_in_words_and_comes_back_exactly(default: str, words: str) -> None:
    spec = PromptSpec(name="p", arguments=(PromptArgument("a", description="An a", required=False, default=default),))
    sent = to_mcp_prompt(spec)
    assert sent.arguments is not None and sent.arguments[0].description == f"An a {words}"
    back = from_mcp_prompt(sent)
    assert back.arguments == spec.arguments
    assert back.meta is None  # the defaults moved onto the arguments


META = {
    "not a mapping": "Python",
    "a list": ["Python"],
    "a number value": {"language": 3},
    "a null value": {"language": None},
    "a nested value": {"language": {"x": 1}},
}


@pytest.mark.parametrize("declared", META.values(), ids=META.keys())
def test_malformed_default_meta_is_ignored(declared: Any) -> None:
    prompt = types.Prompt(
        name="p",
        arguments=[types.PromptArgument(name="language", description="Lang (default: Python)")],
        _meta={ARGUMENT_DEFAULTS_META_KEY: declared},
    )
    argument = from_mcp_prompt(prompt).arguments[0]
    assert argument.default is None
    assert argument.description == "Lang (default: Python)"  # nothing to take off without a declared default


def test_a_third_party_description_is_kept_as_it_is() -> None:
    prompt = types.Prompt(name="p", arguments=[types.PromptArgument(name="a", description="Text (default: x)")])
    assert from_mcp_prompt(prompt).arguments[0] == PromptArgument("a", description="Text (default: x)", required=False)


def test_the_call_hint_and_the_prompt_table_show_defaults() -> None:
    hint = _how_to_call("docs", SPEC)
    assert "  language (optional, default: 'Python'): Its language" in hint
    assert "  focus (optional, default: 'bugs')" in hint
    assert "  style (optional): How" in hint
    table = PromptTable(listings={"docs": [SPEC]})
    assert "code [language=Python] [focus=bugs] [style]" in repr(table)
    assert "[language=Python]" in table._repr_html_()


def test_the_terminal_form_offers_the_default() -> None:
    questions: list[str] = []

    def ask(question: str) -> str:
        questions.append(question)
        return "x = 1" if len(questions) == 1 else ""

    values = ask_arguments(SPEC, ask=ask, write=lambda _: None)
    assert values == {"code": "x = 1"}  # Enter keeps the defaults: the server fills them in
    assert questions[1] == "language (optional, Enter for 'Python'): "
    assert questions[2] == "focus (optional, Enter for 'bugs'): "
    assert questions[3] == "style (optional, Enter to skip): "


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_notebook_default_reaches_the_client_of_a_served_folder(mode: str) -> None:
    serve = [str(Path(sys.executable).parent / "mcp-notebook"), "serve", str(EXAMPLES)]
    with mcp_notebook.connect(command=serve[0], args=serve[1:], mode=mode) as docs:
        spec = docs.prompt("code_review")
        rendered = docs.get("code_review", code="x = 1")
    language = spec.argument("language")
    assert language is not None
    assert (language.default, language.description, language.required) == ("Python", "Its programming language", False)
    focus = spec.argument("focus")
    assert focus is not None and focus.default == "bugs"
    assert "Python" in "".join(getattr(m.content, "text", "") or "" for m in rendered.messages)
