"""`%mcp form` and `%mcp picker` in a real kernel, driven through widget comm messages as a front end drives them."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import Message, RealKernel, widget_opens, widget_state_update

pytestmark = pytest.mark.slow

SDK_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("kernel")) as kernel:
        yield kernel


def comm_id_of(messages: Sequence[Message], model: str, **state: Any) -> str:
    """The comm id of the one widget of `model` whose state has the given values."""
    (found,) = [
        m["content"]["comm_id"]
        for m in widget_opens(messages, model)
        if all(m["content"]["data"]["state"].get(k) == v for k, v in state.items())
    ]
    return str(found)


def output_text(kernel: RealKernel, output: str, what: str, text: str) -> str:
    """Wait until the Output widget `output` shows `text`; return its Markdown."""

    def shows(message: Message) -> bool:
        outputs = (widget_state_update(message, output) or {}).get("outputs") or []
        return any(text in o["data"].get("text/markdown", "") for o in outputs)

    message = kernel.wait_for_message(what, shows)
    return str((widget_state_update(message, output) or {})["outputs"][0]["data"]["text/markdown"])


@pytest.fixture(scope="module")
def connected(kernel: RealKernel) -> RealKernel:
    kernel.execute("%load_ext mcp_notebook")
    kernel.execute(f"%mcp connect sdk -- {sys.executable} {SDK_SERVER}")
    return kernel


def test_mcp_form_in_a_kernel_suggests_what_the_front_end_types_and_renders_on_click(connected: RealKernel) -> None:
    kernel = connected
    messages = kernel.execute("%mcp form sdk:greet").outputs
    assert any(
        m["msg_type"] == "execute_result" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        for m in messages
    )
    name = comm_id_of(messages, "ComboboxModel", tooltip="who to greet")
    lang = comm_id_of(messages, "ComboboxModel", tooltip="a programming language")
    render = comm_id_of(messages, "ButtonModel", description="Render")
    (output,) = [
        m["content"]["comm_id"]
        for m in widget_opens(messages, "OutputModel")
        if "mcp-form-output" in m["content"]["data"]["state"]["_dom_classes"]
    ]

    kernel.set_widget_state(lang, value="r")
    suggested = kernel.wait_for_message(
        "suggestions for 'r'", lambda m: (widget_state_update(m, lang) or {}).get("options") == ["rust", "ruby"]
    )
    assert suggested["content"]["comm_id"] == lang

    kernel.set_widget_state(name, value="Ada")
    kernel.set_widget_state(lang, value="rust")
    kernel.click_widget(render)
    assert "Say hello to Ada in rust." in output_text(kernel, output, "the rendered prompt", "Say hello to Ada")


def test_the_servers_question_appears_in_the_form_and_the_answer_completes_the_render(connected: RealKernel) -> None:
    kernel = connected
    messages = kernel.execute("%mcp form sdk:ask").outputs
    render = comm_id_of(messages, "ButtonModel", description="Render")
    (output,) = [
        m["content"]["comm_id"]
        for m in widget_opens(messages, "OutputModel")
        if "mcp-form-output" in m["content"]["data"]["state"]["_dom_classes"]
    ]

    (status,) = [
        m["content"]["comm_id"]
        for m in messages
        if m["msg_type"] == "comm_msg"
        and (widget_state_update(m, m["content"]["comm_id"]) or {}).get("_dom_classes") == ["mcp-form-status"]
    ]

    kernel.click_widget(render)
    # The question's widgets are made while the render waits, outside any cell. A front end
    # shows them once the form is whole (its status says so last), and a person answers only
    # then: answering earlier could reach a button before its click handler is attached.
    kernel.wait_for_message(
        "the server's question, shown whole",
        lambda m: "needs more input" in str((widget_state_update(m, status) or {}).get("value", "")),
    )
    (submit,) = [
        m for m in widget_opens(kernel.seen, "ButtonModel") if m["content"]["data"]["state"]["description"] == "Submit"
    ]
    # The question's one text field was opened just before its buttons.
    before = kernel.seen[: kernel.seen.index(submit)]
    colour = widget_opens(before, "TextModel")[-1]["content"]["comm_id"]
    kernel.set_widget_state(colour, value="teal")
    kernel.click_widget(submit["content"]["comm_id"])

    assert "Paint it teal." in output_text(kernel, output, "the rendered prompt", "Paint it")


def test_mcp_picker_in_a_kernel_lists_searches_and_opens_a_form(connected: RealKernel) -> None:
    kernel = connected
    messages = kernel.execute("%mcp picker").outputs
    search = comm_id_of(messages, "TextModel", placeholder="Search prompts by name, title or description")
    (listing,) = [m["content"]["comm_id"] for m in widget_opens(messages, "SelectModel")]  # one server, one list

    def labels(message: Message) -> list[str] | None:
        return (widget_state_update(message, listing) or {}).get("_options_labels")

    kernel.wait_for_message("the listing", lambda m: "greet — Greeting" in (labels(m) or []))

    kernel.set_widget_state(search, value="colour")
    kernel.wait_for_message("the filtered listing", lambda m: labels(m) == ["ask — Asks the user for a colour first."])
    kernel.set_widget_state(listing, index=0)

    header = kernel.wait_for_message(
        "the chosen prompt's form",
        lambda m: m["msg_type"] == "comm_open" and "sdk:ask" in str(m["content"]["data"]["state"].get("value", "")),
    )
    assert header["content"]["data"]["state"]["_model_name"] == "HTMLModel"
