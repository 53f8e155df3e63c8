"""`%mcp form` and `%mcp picker` glue: code lines, display, and the terminal flow in a shell without widgets."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from widget_harness import render_and_keep

from mcp_notebook.ipython import servers
from mcp_notebook.ipython.arguments import parse_arguments, split_line
from mcp_notebook.ipython.display import PromptConversation
from mcp_notebook.ipython.extension import loaded_pool
from mcp_notebook.ipython.forms import PromptForm
from mcp_notebook.ipython.widgets import (
    create_prompt_form,
    form_command,
    has_widget_frontend,
    install_form_input_handler,
    picker_command,
    to_display_bundle,
    to_get_code,
    uninstall_form_input_handler,
)
from mcp_notebook.models import ImageContent, PromptMessage, RenderedPrompt, TextContent

SDK_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_copied_code_quotes_values_so_the_magic_reads_them_back() -> None:
    arguments = {"text": "two words", "quote": "it's", "data": "@df", "literal": "@@home"}

    code = to_get_code("docs", "summarize", arguments)

    reference, *tokens = split_line(code.removeprefix("%mcp get "))
    assert reference == "docs:summarize"
    assert parse_arguments(tokens, {"df": "the frame"}) == {
        "text": "two words",
        "quote": "it's",
        "data": "the frame",
        "literal": "@home",
    }


def test_a_value_on_several_lines_is_copied_through_a_variable() -> None:
    code = to_get_code("docs", "review", {"code": "def f():\n    return 1\n", "language": "python"})

    assignment, line = code.splitlines()
    assert line == "%mcp get docs:review code=@code_text language=python"
    namespace: dict[str, object] = {}
    exec(assignment, namespace)
    assert namespace["code_text"] == "def f():\n    return 1\n"


def test_the_form_shows_a_rendered_prompt_as_the_magics_do() -> None:
    rendered = RenderedPrompt(
        messages=(
            PromptMessage(role="user", content=TextContent(text="Look at this chart.")),
            PromptMessage(role="user", content=ImageContent(data=PNG, mime_type="image/png")),
        ),
        name="chart",
    )

    bundle = to_display_bundle(rendered)

    assert bundle["text/markdown"] == PromptConversation.of(rendered)._repr_markdown_()
    assert bundle["text/plain"] == repr(PromptConversation.of(rendered))
    assert f'<img src="data:image/png;base64,{PNG}"' in bundle["text/markdown"]


def test_the_form_input_handler_wraps_the_sessions_handler_once_and_unwraps_it() -> None:
    original = servers.input_handler
    try:
        install_form_input_handler()
        installed = servers.input_handler
        install_form_input_handler()

        assert installed is not original
        assert servers.input_handler is installed
        uninstall_form_input_handler()
        assert servers.input_handler is original
    finally:
        servers.input_handler = original


@pytest.fixture(scope="module")
def shell() -> Iterator[InteractiveShell]:
    """A plain IPython shell (no kernel, so no widgets) with %mcp loaded and the SDK test server connected."""
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    try:
        shell.run_line_magic("mcp", f"connect sdk -- {sys.executable} {SDK_SERVER}")
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "mcp_notebook")


class Answers:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    def __call__(self, question: str) -> str:
        self.questions.append(question)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


def test_without_a_widget_front_end_the_shell_is_asked_in_text(shell: InteractiveShell) -> None:
    assert not has_widget_frontend(shell)
    assert not has_widget_frontend(None)


@pytest.mark.slow
def test_in_a_terminal_form_asks_each_argument_and_renders_with_the_at_variable_rule(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.user_ns["favourite"] = "rust"
    answers = Answers("Ada", "@favourite")

    result = form_command(shell, ["sdk:greet"], ask=answers)

    assert isinstance(result, PromptConversation)
    assert result.messages[0].content == TextContent(text="Say hello to Ada in rust.")
    assert answers.questions == ["name (required): ", "lang (optional, Enter to skip): "]
    assert "suggestions: python, rust, ruby" in capsys.readouterr().out


@pytest.mark.slow
def test_in_a_terminal_arguments_given_on_the_line_are_not_asked_again(shell: InteractiveShell) -> None:
    answers = Answers("")

    result = form_command(shell, ["sdk:greet", "name=Grace"], ask=answers)

    assert isinstance(result, PromptConversation)
    assert result.messages[0].content == TextContent(text="Say hello to Grace in plain words.")
    assert answers.questions == ["lang (optional, Enter to skip): "]


@pytest.mark.slow
def test_in_a_terminal_giving_up_renders_nothing(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    assert form_command(shell, ["sdk:greet"], ask=Answers()) is None
    assert "Cancelled." in capsys.readouterr().out


@pytest.mark.slow
def test_an_unknown_prompt_is_a_usage_error_with_close_names(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"Unknown prompt 'sdk:gret'\. Did you mean sdk:greet\?"):
        form_command(shell, ["sdk:gret"], ask=Answers())


@pytest.mark.slow
def test_an_unknown_argument_on_the_line_is_a_usage_error_naming_the_known_ones(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"has no argument 'colour' \(its arguments: name, lang\)"):
        form_command(shell, ["sdk:greet", "colour=red"], ask=Answers())


@pytest.mark.slow
def test_in_a_terminal_the_picker_prints_the_prompts_grouped_by_server(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert picker_command(shell, []) is None

    out = capsys.readouterr().out
    assert "sdk (" in out
    assert "  sdk:greet — Greeting" in out
    assert "%mcp form SERVER:PROMPT" in out


def test_form_help_is_written_for_the_user(capsys: pytest.CaptureFixture[str]) -> None:
    shell = InteractiveShell.instance()
    assert form_command(shell, ["--help"]) is None
    assert "%mcp form docs:code_review" in capsys.readouterr().out


@pytest.fixture
def greet_form(shell: InteractiveShell) -> Iterator[PromptForm]:
    pool = loaded_pool(shell)
    assert pool is not None
    connection, spec = pool.resolve("sdk:greet")
    form = create_prompt_form(shell, connection.client, spec, server="sdk", runtime=pool.runtime)
    yield form
    form.close()


@pytest.mark.slow
def test_after_an_at_sign_the_suggestions_are_the_sessions_variables(
    shell: InteractiveShell, greet_form: PromptForm
) -> None:
    shell.user_ns.update(favourite="rust", fallback="ruby")
    lang = greet_form.fields["lang"]

    lang.combobox.value = "@fa"

    assert lang.combobox.options == ("@fallback", "@favourite")


@pytest.mark.slow
def test_a_field_holding_an_at_variable_renders_with_its_value(shell: InteractiveShell, greet_form: PromptForm) -> None:
    shell.user_ns["favourite"] = "rust"
    greet_form.fields["name"].combobox.value = "Ada"
    greet_form.fields["lang"].combobox.value = "@favourite"

    result = render_and_keep(greet_form)

    assert result.messages[0].content == TextContent(text="Say hello to Ada in rust.")
    assert "Say hello to Ada in rust." in greet_form.output.outputs[0]["data"]["text/markdown"]
    greet_form.copy_button.click()
    assert greet_form.code.value == "%mcp get sdk:greet name=Ada lang=@favourite"


@pytest.mark.slow
def test_an_unknown_variable_is_an_error_beside_its_field(greet_form: PromptForm) -> None:
    greet_form.fields["name"].combobox.value = "@nobody_has_this"

    assert greet_form.render() is None
    assert "no variable named 'nobody_has_this'" in (greet_form.fields["name"].error_message or "")
