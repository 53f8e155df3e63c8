"""The text flow used instead of the forms in a terminal: one question per argument."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from mcp_notebook.ipython.forms.terminal import ask_arguments, describe_prompts, describe_suggestions
from mcp_notebook.models import CompletionResult, PromptArgument, PromptSpec

SPEC = PromptSpec(
    name="review",
    title="Code review",
    description="Review a change.",
    arguments=(
        PromptArgument(name="language", title="Language", description="what the code is written in"),
        PromptArgument(name="style", required=False, default="short"),
    ),
)


class Terminal:
    """Scripted answers in, printed lines out."""

    def __init__(self, *answers: str) -> None:
        self._answers: Iterator[str] = iter(answers)
        self.lines: list[str] = []
        self.questions: list[str] = []

    def ask(self, question: str) -> str:
        self.questions.append(question)
        try:
            return next(self._answers)
        except StopIteration:
            raise EOFError from None

    def write(self, line: str) -> None:
        self.lines.append(line)


def test_each_argument_is_asked_in_turn_with_its_help_and_default() -> None:
    terminal = Terminal("python", "long")

    values = ask_arguments(SPEC, ask=terminal.ask, write=terminal.write)

    assert values == {"language": "python", "style": "long"}
    assert terminal.questions == ["Language [language] (required): ", "style (optional, Enter for 'short'): "]
    assert "Code review: Review a change." in terminal.lines
    assert "  what the code is written in" in terminal.lines


def test_an_empty_answer_leaves_an_optional_argument_to_the_server() -> None:
    terminal = Terminal("python", "")

    assert ask_arguments(SPEC, ask=terminal.ask, write=terminal.write) == {"language": "python"}


def test_a_required_argument_is_asked_again_until_answered() -> None:
    terminal = Terminal("", "rust", "")

    assert ask_arguments(SPEC, ask=terminal.ask, write=terminal.write) == {"language": "rust"}
    assert "  Language is required." in terminal.lines


def test_end_of_input_gives_up() -> None:
    terminal = Terminal()

    assert ask_arguments(SPEC, ask=terminal.ask, write=terminal.write) is None


def test_the_servers_first_suggestions_are_printed_before_the_question() -> None:
    terminal = Terminal("python", "")
    seen: list[tuple[str, dict[str, str]]] = []

    def suggest(argument: PromptArgument, context: Mapping[str, str]) -> CompletionResult:
        seen.append((argument.name, dict(context)))
        return CompletionResult(values=("python", "rust"), total=12, has_more=True)

    ask_arguments(SPEC, ask=terminal.ask, write=terminal.write, suggest=suggest)

    assert "  suggestions: python, rust (+10 more)" in terminal.lines
    assert seen == [("language", {}), ("style", {"language": "python"})]


@pytest.mark.parametrize(
    ("result", "text"),
    [
        (None, ""),
        (CompletionResult(values=()), ""),
        (CompletionResult(values=("a", "b")), "suggestions: a, b"),
        (CompletionResult(values=("a",), has_more=True), "suggestions: a (and more)"),
        (CompletionResult(values=tuple("abcdefghij")), "suggestions: a, b, c, d, e, f, g, h (+2 more)"),
    ],
)
def test_suggestions_fit_on_one_line(result: CompletionResult | None, text: str) -> None:
    assert describe_suggestions(result) == text


def test_the_terminal_picker_lists_prompts_grouped_by_server_with_failures_said() -> None:
    text = describe_prompts({"notes": [SPEC, PromptSpec(name="alpha")], "down": ConnectionError("refused")})

    assert text.splitlines() == [
        "notes (2 prompts)",
        "  notes:alpha",
        "  notes:review — Code review",
        "down: cannot list prompts: refused",
        "Fill one in with: %mcp form SERVER:PROMPT",
    ]


def test_the_terminal_picker_says_how_to_connect_when_nothing_is() -> None:
    assert "%mcp connect" in describe_prompts({})
