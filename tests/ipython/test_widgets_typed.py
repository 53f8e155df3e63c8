"""Typed arguments in a PromptForm, in-process against a real FastMCP server over stdio."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import ipywidgets as widgets
import pytest
from IPython.core.error import UsageError
from widget_harness import render_and_keep

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.ipython.forms import PromptForm
from mcp_notebook.ipython.widgets import create_prompt_form, uninstall_form_input_handler
from mcp_notebook.models import PromptSpec, TextContent
from mcp_notebook.runtime import BackgroundRuntime, get_runtime

pytest.importorskip("fastmcp", reason="the typed server is a FastMCP server (pip install -e '.[test]')")

pytestmark = pytest.mark.slow

TYPED_SERVER = Path(__file__).resolve().parents[1] / "servers" / "typed_fastmcp_server.py"


@pytest.fixture(scope="module")
def runtime() -> BackgroundRuntime:
    return get_runtime()


@pytest.fixture(scope="module")
def client(runtime: BackgroundRuntime) -> Iterator[PromptClient]:
    client = PromptClient(ServerConfig(name="typed", command=sys.executable, args=(str(TYPED_SERVER),)))
    runtime.call(client.connect, timeout=60)
    yield client
    runtime.call(client.close, timeout=30)


@pytest.fixture
def form(client: PromptClient, runtime: BackgroundRuntime) -> Iterator[PromptForm]:
    (spec,) = [s for s in runtime.call(client.list_prompts, timeout=30) if s.name == "plan_trip"]
    assert isinstance(spec, PromptSpec)
    form = PromptForm(
        spec,
        client,
        runtime,
        server="typed",
        display=lambda rendered: {"text/plain": str(rendered.messages[0].content)},
        resolve_value=lambda name, value: value,
        write_code=lambda server, prompt, arguments: " ".join(f"{k}={v}" for k, v in arguments.items()),
        debounce=0.01,
    )
    yield form
    form.close()


def test_each_type_gets_its_widget(form: PromptForm) -> None:
    kinds = {name: type(field.editor) for name, field in form.fields.items()}

    assert kinds == {
        "topic": widgets.Combobox,
        "days": widgets.IntText,
        "budget": widgets.FloatText,
        "detailed": widgets.Checkbox,
        "tone": widgets.Dropdown,
        "tags": widgets.Combobox,
    }
    assert [label for label, _ in form.fields["tone"].editor.options] == ["—", "formal", "casual"]
    assert "JSON schema" not in form.fields["days"].help.value
    assert set(form.fetchers) == {"topic", "tags"}  # a number, checkbox or drop-down needs no suggestions


def test_untouched_optional_values_are_left_to_the_server(form: PromptForm) -> None:
    form.fields["topic"].value = "Porto"

    assert form.validate() == {"topic": "Porto"}


def test_values_go_out_as_the_json_text_the_server_parses_and_render(form: PromptForm) -> None:
    form.fields["topic"].value = "Lisbon"
    form.fields["days"].editor.value = 5  # what the front end sends as the user changes the fields
    form.fields["budget"].editor.value = 12.5
    form.fields["detailed"].editor.value = True
    form.fields["tone"].editor.value = "formal"
    form.fields["tags"].value = '["food"]'

    assert form.validate() == {
        "topic": "Lisbon",
        "days": "5",
        "budget": "12.5",
        "detailed": "true",
        "tone": "formal",
        "tags": '["food"]',
    }
    result = render_and_keep(form)
    assert result.messages[0].content == TextContent(
        text="Plan Lisbon for 5 days on 12.5 euros, detailed=True, tone=formal, tags=['food']."
    )


def test_values_given_as_text_fill_the_typed_widgets(form: PromptForm) -> None:
    for name, text in {"days": "7", "detailed": "true", "tone": "casual", "budget": "3"}.items():
        form.fields[name].value = text

    assert form.fields["days"].editor.value == 7
    assert form.fields["detailed"].editor.value is True
    assert form.fields["tone"].editor.value == "casual"
    assert form.fields["budget"].value == "3.0"


@pytest.mark.parametrize(("name", "text"), [("days", "five"), ("days", "1.5"), ("detailed", "maybe"), ("tone", "rude")])
def test_a_value_of_the_wrong_type_is_refused_with_a_clear_message(form: PromptForm, name: str, text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        form.fields[name].value = text


@pytest.mark.parametrize("text", ["[food", "{", "['single quotes']", "1 2"])
def test_json_that_does_not_parse_is_an_error_beside_its_field(form: PromptForm, text: str) -> None:
    form.fields["topic"].value = "Lisbon"
    form.fields["tags"].value = text

    assert form.validate() is None
    assert (form.fields["tags"].error_message or "").startswith("Not valid JSON")


def test_a_value_of_the_wrong_type_on_the_form_line_is_a_usage_error(
    client: PromptClient, runtime: BackgroundRuntime
) -> None:
    (spec,) = [s for s in runtime.call(client.list_prompts, timeout=30) if s.name == "plan_trip"]
    try:
        with pytest.raises(UsageError, match=r"argument 'days': expected a whole number, got 'five'"):
            create_prompt_form(None, client, spec, server="typed", runtime=runtime, values={"days": "five"})
    finally:
        uninstall_form_input_handler()
