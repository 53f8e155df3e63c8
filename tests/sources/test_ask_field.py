"""The `ask` key of a declared argument: the question a server may put to the user for a missing argument."""

from __future__ import annotations

from typing import Any

import pytest
from notebook_dicts import markdown, notebook

from mcp_notebook.models import PromptArgument
from mcp_notebook.sources.cells import NotebookPrompts, prompts_from_notebook


def _declare(*arguments: dict[str, Any]) -> NotebookPrompts:
    source = " ".join(f"{{{{{a['name']}}}}}" for a in arguments if isinstance(a.get("name"), str))
    cell = markdown(source, {"prompt": "p", "arguments": list(arguments)})
    return prompts_from_notebook(notebook(cell), origin="nb.ipynb")


def _argument(declared: dict[str, Any]) -> PromptArgument:
    result = _declare(declared)
    (argument,) = result.prompts[0].arguments
    return argument


def test_an_ask_string_is_the_question_put_to_the_user() -> None:
    argument = _argument({"name": "context", "ask": "What context should the prompt use?"})
    assert argument == PromptArgument(name="context", ask="What context should the prompt use?")


def test_an_ask_string_is_trimmed() -> None:
    assert _argument({"name": "code", "ask": "  Paste the code to review\n"}).ask == "Paste the code to review"


def test_ask_true_asks_with_the_description() -> None:
    argument = _argument({"name": "code", "title": "Code", "description": "The code to review", "ask": True})
    assert argument.ask == "The code to review"


def test_ask_true_without_a_description_asks_with_the_title() -> None:
    assert _argument({"name": "code", "title": "Code", "ask": True}).ask == "Code"


def test_ask_true_without_description_or_title_names_the_argument() -> None:
    assert _argument({"name": "code", "ask": True}).ask == "Value for code"


@pytest.mark.parametrize("declared", [{"name": "code"}, {"name": "code", "ask": False}])
def test_an_argument_without_ask_is_never_asked_for(declared: dict[str, Any]) -> None:
    result = _declare(declared)
    assert result.prompts[0].arguments[0].ask is None
    assert result.warnings == ()


@pytest.mark.parametrize("ask", ["", "   ", 3, ["Why?"], {"text": "Why?"}])
def test_an_ask_that_is_no_question_is_reported_and_ignored(ask: Any) -> None:
    result = _declare({"name": "code", "ask": ask})
    assert result.prompts[0].arguments[0].ask is None
    assert result.warnings == (
        "nb.ipynb: prompt 'p': argument 'code': ask must be a question (a non-empty string) or true/false, ignored",
    )


@pytest.mark.parametrize(
    "declared",
    [
        {"name": "focus", "default": "bugs", "ask": "What should the review focus on?"},
        {"name": "focus", "required": False, "ask": True},
    ],
)
def test_ask_on_an_optional_argument_is_reported_and_ignored(declared: dict[str, Any]) -> None:
    result = _declare(declared)
    assert result.prompts[0].arguments[0].ask is None
    assert result.warnings == (
        "nb.ipynb: prompt 'p': argument 'focus': ask only applies to a required argument "
        "(an optional one falls back to its default), ignored",
    )


def test_a_required_argument_with_a_default_may_be_asked_for() -> None:
    argument = _argument({"name": "code", "required": True, "default": "", "ask": "Paste the code"})
    assert (argument.required, argument.ask) == (True, "Paste the code")
