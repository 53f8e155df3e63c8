"""PromptForm driven in-process, as a front end would (values set, buttons clicked), against a real server."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import nbformat
import pytest
from widget_harness import render_and_keep, wait_until

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerConnectionError
from mcp_notebook.ipython.forms import PromptForm, PromptService, create_form_input_handler
from mcp_notebook.models import CompletionResult, PromptArgument, PromptSpec, RenderedPrompt, TextContent
from mcp_notebook.runtime import BackgroundRuntime, get_runtime

pytestmark = pytest.mark.slow

SDK_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py"


def plain_text(rendered: RenderedPrompt) -> dict[str, str]:
    lines = [f"{m.role}: {m.content.text}" for m in rendered.messages if isinstance(m.content, TextContent)]
    return {"text/plain": "\n".join(lines)}


def get_line(server: str, prompt: str, arguments: Mapping[str, str]) -> str:
    return " ".join([f"%mcp get {server}:{prompt}", *(f"{k}={v}" for k, v in arguments.items())])


class RecordingService:
    """The real client, with every completion request written down."""

    def __init__(self, client: PromptClient) -> None:
        self.client = client
        self.completions: list[tuple[str, str, dict[str, str]]] = []

    async def list_prompts(self) -> tuple[PromptSpec, ...]:
        return await self.client.list_prompts()

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        return await self.client.get_prompt(name, arguments)

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        self.completions.append((argument, value, dict(context or {})))
        return await self.client.complete(prompt, argument, value, context)


@pytest.fixture(scope="module")
def runtime() -> BackgroundRuntime:
    return get_runtime()


@pytest.fixture(scope="module")
def service(runtime: BackgroundRuntime) -> Iterator[RecordingService]:
    config = ServerConfig(name="sdk", command=sys.executable, args=(str(SDK_SERVER),))
    client = PromptClient(config, on_input_required=create_form_input_handler())
    runtime.call(client.connect, timeout=60)
    yield RecordingService(client)
    runtime.call(client.close, timeout=30)


@pytest.fixture(scope="module")
def prompts(service: RecordingService, runtime: BackgroundRuntime) -> dict[str, PromptSpec]:
    return {spec.name: spec for spec in runtime.call(service.list_prompts, timeout=30)}


def make_form(spec: PromptSpec, service: PromptService, runtime: BackgroundRuntime, server: str = "sdk") -> PromptForm:
    return PromptForm(
        spec,
        service,
        runtime,
        server=server,
        display=plain_text,
        resolve_value=lambda name, value: value,
        write_code=get_line,
        debounce=0.05,
    )


def test_each_argument_gets_a_field_with_its_help_and_required_mark(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)

    assert list(form.fields) == ["name", "lang"]
    assert "*" in form.fields["name"].label.value
    assert "*" not in form.fields["lang"].label.value
    assert "who to greet" in form.fields["name"].help.value
    assert form.fields["lang"].label.value.startswith("<b>Lang</b>")  # a title, as a titled argument's label is
    assert form.fields["name"].combobox.placeholder == "required"


def test_suggestions_are_asked_for_before_the_user_types_so_they_show_on_focus(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    lang = form.fields["lang"]

    wait_until(lambda: lang.combobox.options == ("python", "rust", "ruby"), "every suggestion is offered")
    assert ("lang", "", {}) in service.completions


def test_typing_shows_the_servers_suggestions_in_the_combobox_and_nothing_under_it(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    lang = form.fields["lang"]
    wait_until(lambda: len(lang.combobox.options) == 3, "the first suggestions arrive")
    column = list(lang.column.children)

    lang.combobox.value = "r"  # what the front end sends as the user types

    wait_until(lambda: lang.combobox.options == ("rust", "ruby"), "suggestions for 'r' appear")
    assert list(lang.column.children) == column  # no list appears under the field: the layout stays put
    assert [c.layout.display for c in column] == ["", "none", "none", None]  # editor, textarea, error, notes


def test_taking_a_suggestion_fills_the_field_and_empties_the_drop_down(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    lang = form.fields["lang"]
    lang.combobox.value = "ru"
    wait_until(lambda: lang.combobox.options == ("rust", "ruby"), "suggestions appear")

    lang.combobox.value = "ruby"  # what the browser's drop-down sends when the user takes "ruby"

    # "ruby" is complete: the drop-down holds the whole list again, for the next time the field gets focus.
    wait_until(lambda: ("lang", "ruby", {}) in service.completions, "the server is asked about 'ruby'")
    wait_until(lambda: service.completions[-1] == ("lang", "", {}), "the whole list is asked for again")
    wait_until(lambda: lang.combobox.options == ("python", "rust", "ruby"), "the whole list is offered")
    assert lang.value == "ruby"


def test_suggestion_requests_carry_the_other_filled_in_arguments(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    form.fields["name"].combobox.value = "Ada"
    form.fields["lang"].combobox.value = "py"

    wait_until(lambda: form.fields["lang"].combobox.options == ("python",), "suggestions appear")
    assert ("lang", "py", {"name": "Ada"}) in service.completions


def test_a_missing_required_argument_is_shown_beside_its_field_and_nothing_is_rendered(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)

    form.render_button.click()

    assert form.pending is None
    assert form.fields["name"].error_message == "Required: fill this in."
    assert form.fields["name"].error.layout.display == ""
    assert form.fields["lang"].error_message is None
    assert "need attention" in form.status.value


def test_render_shows_the_conversation_in_the_form_and_keeps_the_result(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    form.fields["name"].combobox.value = "Ada"
    form.fields["lang"].combobox.value = "rust"

    form.render_button.click()
    wait_until(lambda: form.result is not None, "the prompt is rendered")

    assert form.result is not None
    assert form.result.messages[0].content == TextContent(text="Say hello to Ada in rust.")
    (shown,) = form.output.outputs
    assert shown["data"]["text/plain"] == "user: Say hello to Ada in rust."
    assert form.status.value == ""
    assert not form.render_button.disabled


def test_filling_a_field_clears_its_error(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    form.render_button.click()
    assert form.fields["name"].error_message

    form.fields["name"].combobox.value = "Grace"

    assert form.fields["name"].error_message is None


def test_a_server_error_is_shown_in_the_form_not_raised(service: RecordingService, runtime: BackgroundRuntime) -> None:
    gone = PromptSpec(name="vanished", description="Listed once, since removed.")
    form = make_form(gone, service, runtime)

    form.render_button.click()
    wait_until(lambda: form.error is not None, "the error comes back")

    assert "Unknown prompt: vanished" in form.status.value
    assert form.result is None
    assert form.output.outputs == ()


def test_copy_as_code_shows_the_equivalent_mcp_get_line(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["greet"], service, runtime)
    form.fields["name"].combobox.value = "Ada"

    form.copy_button.click()

    assert form.code.value == "%mcp get sdk:greet name=Ada"
    assert form.code.layout.display == ""


def test_an_input_request_opens_a_form_and_the_render_retries_with_the_answer(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["ask"], service, runtime)

    form.render_button.click()
    wait_until(lambda: form.input_request is not None, "the server's question appears in the form")
    request = form.input_request
    assert request is not None
    assert "Which colour?" in request.widget.children[0].value
    request.submit_button.click()  # the required field is still blank
    assert request.errors["colour"].value
    request.editors["colour"].value = "teal"
    request.submit_button.click()
    wait_until(lambda: form.result is not None, "the prompt is rendered")

    assert form.result is not None
    assert form.result.messages[0].content == TextContent(text="Paint it teal.")
    assert form.input_area.children == ()


def test_declining_an_input_request_still_renders_what_the_server_answers(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    form = make_form(prompts["ask"], service, runtime)

    form.render_button.click()
    wait_until(lambda: form.input_request is not None, "the server's question appears in the form")
    assert form.input_request is not None
    form.input_request.decline_button.click()
    wait_until(lambda: form.result is not None, "the prompt is rendered")

    assert form.result is not None
    assert form.result.messages[0].content == TextContent(text="Paint it (declined).")


def test_a_handshake_servers_elicitation_request_opens_the_same_form(runtime: BackgroundRuntime) -> None:
    legacy = SDK_SERVER.parent / "legacy_server.py"
    config = ServerConfig(name="legacy", command=sys.executable, args=(str(legacy), "--version", "2025-06-18"))
    client = PromptClient(config, on_input_required=create_form_input_handler())
    try:
        (ask,) = [s for s in runtime.call(client.list_prompts, timeout=60) if s.name == "ask"]
        form = make_form(ask, RecordingService(client), runtime)

        form.render_button.click()
        wait_until(lambda: form.input_request is not None, "the server's question appears in the form")
        assert form.input_request is not None
        form.input_request.editors["colour"].value = "ochre"
        form.input_request.submit_button.click()
        wait_until(lambda: form.result is not None or form.error is not None, "the render ends")

        assert form.error is None
        assert form.result is not None
        assert form.result.messages[0].content == TextContent(text="Paint it ochre.")
    finally:
        runtime.call(client.close, timeout=30)


def test_defaults_are_prefilled_and_long_values_open_in_a_text_area(
    service: RecordingService, runtime: BackgroundRuntime
) -> None:
    long_default = "def f():\n    return 1\n"
    spec = PromptSpec(
        name="review",
        arguments=(
            PromptArgument(name="style", required=False, default="short"),
            PromptArgument(name="code", required=False, default=long_default),
        ),
    )
    form = make_form(spec, service, runtime)

    assert form.fields["style"].value == "short"
    assert form.fields["style"].combobox.layout.display == ""
    assert form.fields["code"].value == long_default
    assert form.fields["code"].textarea.layout.display == ""
    assert form.fields["code"].combobox.layout.display == "none"


def test_the_text_area_toggle_keeps_the_value(service: RecordingService, runtime: BackgroundRuntime) -> None:
    spec = PromptSpec(name="note", arguments=(PromptArgument(name="text"),))
    form = make_form(spec, service, runtime)
    field = form.fields["text"]
    field.combobox.value = "one line"

    field.multiline.value = True
    field.textarea.value = "one line\nand another"
    field.multiline.value = False
    field.multiline.value = True

    assert field.value == "one line\nand another"


# -- against `mcp-notebook serve` ------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COLOURS = tuple(f"colour-{i:03d}" for i in range(150))


@pytest.fixture(scope="module")
def notebook_server(runtime: BackgroundRuntime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromptClient]:
    """`mcp-notebook serve` over stdio: two of the examples, and a notebook with many completions."""
    folder = tmp_path_factory.mktemp("served")
    for example in ("code_review.ipynb", "plot_prompt.ipynb"):
        (folder / example).write_bytes((EXAMPLES / example).read_bytes())
    palette = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("Use {{colour}}.")
    cell.metadata["mcp"] = {"prompt": "palette", "arguments": [{"name": "colour", "completions": list(COLOURS)}]}
    palette.cells.append(cell)
    nbformat.write(palette, str(folder / "palette.ipynb"))
    config = ServerConfig(name="notebooks", command=sys.executable, args=("-m", "mcp_notebook", "serve", str(folder)))
    client = PromptClient(config)
    runtime.call(client.connect, timeout=60)
    yield client
    runtime.call(client.close, timeout=30)


def served_form(client: PromptClient, runtime: BackgroundRuntime, name: str) -> PromptForm:
    (spec,) = [s for s in runtime.call(client.list_prompts, timeout=30) if s.name == name]
    return make_form(spec, client, runtime, server="notebooks")


def test_a_cut_suggestion_list_says_how_many_matches_there_are(
    notebook_server: PromptClient, runtime: BackgroundRuntime
) -> None:
    form = served_form(notebook_server, runtime, "palette")
    colour = form.fields["colour"]

    colour.combobox.value = "colour-"

    wait_until(lambda: "Showing 100 of 150" in colour.suggestions_status.value, "suggestions appear")
    assert colour.combobox.options == COLOURS[:100]
    assert "Showing 100 of 150 matches" in colour.suggestions_status.value
    colour.combobox.value = "colour-14"
    wait_until(lambda: len(colour.combobox.options) == 10, "the narrower list appears")
    assert colour.suggestions_status.value == ""


def test_a_served_notebooks_titles_and_static_suggestions_reach_the_form(
    notebook_server: PromptClient, runtime: BackgroundRuntime
) -> None:
    form = served_form(notebook_server, runtime, "code_review")
    code, language = form.fields["code"], form.fields["language"]

    assert "Review code" in form.header.value
    assert "Code" in code.label.value and "*" in code.label.value
    # The note under the field is its description, as for every field (not "· argument code").
    assert code.help.value == '<small style="color: var(--jp-ui-font-color2, #666)">The code to review</small>'
    language.combobox.value = "t"
    wait_until(lambda: language.combobox.options == ("TypeScript",), "suggestions for 't' appear")


def test_rendering_a_served_notebook_keeps_its_chart_image(
    notebook_server: PromptClient, runtime: BackgroundRuntime
) -> None:
    form = served_form(notebook_server, runtime, "describe_chart")
    form.fields["audience"].combobox.value = "engineers"

    result = render_and_keep(form)

    kinds = [m.content.type for m in result.messages]
    assert "image" in kinds
    texts = [m.content.text for m in result.messages if isinstance(m.content, TextContent)]
    assert any("Describe this chart for engineers" in text for text in texts)


class FlakyService(RecordingService):
    """The real client, behind a switch that makes the server unreachable for suggestions (a server going down)."""

    def __init__(self, client: PromptClient) -> None:
        super().__init__(client)
        self.down = True

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        if self.down:
            raise ServerConnectionError("web", "cannot reach http://127.0.0.1:9/mcp (connection refused)")
        return await super().complete(prompt, argument, value, context)


def test_a_server_that_cannot_be_reached_is_said_in_the_forms_message_line_and_cleared_when_it_answers(
    prompts: dict[str, PromptSpec], service: RecordingService, runtime: BackgroundRuntime
) -> None:
    flaky = FlakyService(service.client)
    form = make_form(prompts["greet"], flaky, runtime)
    lang = form.fields["lang"]
    wait_until(lambda: "No suggestions" in form.notice.value, "the failure is shown")

    assert "No suggestions for lang: web: cannot reach http://127.0.0.1:9/mcp" in form.notice.value
    assert form.notice.layout.display == ""
    assert lang.suggestions_status.value == ""  # the field's own note line keeps only its description
    assert "who to greet" in form.fields["name"].help.value
    flaky.down = False
    lang.combobox.value = "r"
    wait_until(lambda: lang.combobox.options == ("rust", "ruby"), "suggestions come back")
    wait_until(lambda: form.notice.value == "", "the message goes")
    assert form.notice.layout.display == "none"


def test_a_magics_flag_is_a_checkbox_that_sends_true(runtime: BackgroundRuntime) -> None:
    described = "--no-raise-error: If given, don't re-raise exceptions (true to pass it)"
    spec = PromptSpec(
        name="magic.time", arguments=(PromptArgument(name="no_raise_error", description=described, required=False),)
    )
    form = make_form(spec, RecordingService(None), runtime)  # type: ignore[arg-type]  # nothing is asked
    flag = form.fields["no_raise_error"]

    assert type(flag.typed_editor).__name__ == "Checkbox"
    assert "--no-raise-error: If given, don&#x27;t re-raise exceptions" in flag.help.value
    assert "true to pass it" not in flag.help.value
    assert form.arguments() == {}  # left out until ticked
    flag.typed_editor.value = True
    assert form.arguments() == {"no_raise_error": "true"}
    form.close()


def test_a_label_without_a_title_reads_as_one(service: RecordingService, runtime: BackgroundRuntime) -> None:
    spec = PromptSpec("p", arguments=(PromptArgument("focus_area"), PromptArgument("code", title="Code")))
    form = make_form(spec, service, runtime)
    assert form.fields["focus_area"].label.value.startswith("<b>Focus area</b>")
    assert form.fields["code"].label.value.startswith("<b>Code</b>")
