"""The form's Enter key and "Copy as code" in a real kernel, driven by the messages a front end sends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import Message, RealKernel, widget_opens, widget_state_update

pytestmark = pytest.mark.slow

SDK_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("kernel")) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute(f"%mcp connect sdk -- {sys.executable} {SDK_SERVER}")
        yield kernel


def combobox(messages: tuple[Message, ...], tooltip: str) -> str:
    (found,) = [
        m["content"]["comm_id"]
        for m in widget_opens(messages, "ComboboxModel")
        if m["content"]["data"]["state"].get("tooltip") == tooltip
    ]
    return str(found)


def with_class(messages: tuple[Message, ...], css: str) -> str:
    """The comm id of the one widget given the CSS class `css`."""
    (found,) = {
        m["content"]["comm_id"]
        for m in messages
        if m["msg_type"] in ("comm_open", "comm_msg")
        and css in ((m["content"].get("data") or {}).get("state") or {}).get("_dom_classes", ())
    }
    return str(found)


def press_enter(kernel: RealKernel, comm_id: str) -> None:
    """What a text widget's view sends when the user presses Enter in it."""
    kernel.send_comm(comm_id, {"method": "custom", "content": {"event": "submit"}})


def test_enter_moves_to_the_next_field_and_renders_from_the_last(kernel: RealKernel) -> None:
    messages = kernel.execute("%mcp form sdk:greet").outputs
    name, lang = combobox(messages, "who to greet"), combobox(messages, "a programming language")
    output = with_class(messages, "mcp-form-output")

    kernel.set_widget_state(name, value="Ada")
    press_enter(kernel, name)
    kernel.wait_for_message(
        "the focus moving to the language",
        lambda m: (
            m["msg_type"] == "comm_msg"
            and m["content"]["comm_id"] == lang
            and m["content"]["data"] == {"method": "custom", "content": {"do": "focus"}}
        ),
    )
    kernel.set_widget_state(lang, value="ruby")
    press_enter(kernel, lang)

    def rendered(message: Message) -> bool:
        outputs = (widget_state_update(message, output) or {}).get("outputs") or []
        return any("Say hello to Ada in ruby." in o["data"].get("text/markdown", "") for o in outputs)

    kernel.wait_for_message("the rendered prompt", rendered)


def test_copy_as_code_from_a_cell_makes_a_new_cell_with_the_code(kernel: RealKernel) -> None:
    kernel.execute("form = %mcp form sdk:greet name=Ada lang=rust")

    reply = kernel.execute("code = form.copy_as_code()").reply

    payloads = reply["content"].get("payload") or []
    assert {"source": "set_next_input", "text": "%mcp get sdk:greet name=Ada lang=rust", "replace": False} in payloads


def test_copy_as_code_from_a_click_copies_through_the_page_and_makes_no_cell(kernel: RealKernel) -> None:
    messages = kernel.execute("form = %mcp form sdk:greet name=Grace").outputs
    (copy,) = [
        m["content"]["comm_id"]
        for m in widget_opens(messages, "ButtonModel")
        if m["content"]["data"]["state"]["description"] == "Copy as code"
    ]
    note = with_class(messages, "mcp-code-note")

    kernel.click_widget(copy)

    def copies(message: Message) -> bool:
        outputs = (widget_state_update(message, note) or {}).get("outputs") or []
        return any("navigator.clipboard.writeText" in o["data"].get("application/javascript", "") for o in outputs)

    script = kernel.wait_for_message("the clipboard script", copies)
    (shown,) = (widget_state_update(script, note) or {})["outputs"]
    assert '"%mcp get sdk:greet name=Grace"' in shown["data"]["application/javascript"]  # the code as a JSON string
    later = kernel.execute("1 + 1").reply
    assert not later["content"].get("payload")  # no new cell turns up at some later run
