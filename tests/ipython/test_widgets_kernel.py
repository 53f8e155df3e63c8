"""The form in a real kernel, driven through widget comm messages as a front end drives it."""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import KernelManager
from jupyter_client.blocking.client import BlockingKernelClient

pytestmark = pytest.mark.slow

SDK_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py"
DEADLINE = 60.0

Message = dict[str, Any]


class Kernel:
    """A running ipykernel and the iopub messages it sent, kept for inspection."""

    def __init__(self, client: BlockingKernelClient) -> None:
        self.client = client
        self.seen: list[Message] = []

    def execute(self, code: str) -> list[Message]:
        """Run `code`; the iopub messages of that execution, up to the kernel going idle."""
        msg_id = self.client.execute(code)
        own: list[Message] = []
        while True:
            message = self.client.get_iopub_msg(timeout=DEADLINE)
            self.seen.append(message)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            own.append(message)
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        reply = self.client.get_shell_msg(timeout=DEADLINE)
        assert reply["content"]["status"] == "ok", reply["content"]
        return own

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        """What a front end sends when the user edits or clicks a widget."""
        message = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(message)

    def wait_for(self, what: str, matches: Any) -> Message:
        """The next iopub message (or one already seen) for which `matches(message)` is true."""
        for message in self.seen:
            if matches(message):
                return message
        while True:
            try:
                message = self.client.get_iopub_msg(timeout=DEADLINE)
            except queue.Empty:
                raise AssertionError(f"no {what} within {DEADLINE:g} s") from None
            self.seen.append(message)
            if matches(message):
                return message


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    base = tmp_path_factory.mktemp("kernel")
    env = {}
    for var, sub in (
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("IPYTHONDIR", "ipython"),
    ):
        (base / sub).mkdir()
        env[var] = str(base / sub)
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(base), env={**os.environ, **env})
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=DEADLINE)
        yield Kernel(client)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def comm_opens(messages: list[Message], model: str) -> list[Message]:
    return [
        m
        for m in messages
        if m["msg_type"] == "comm_open"
        and m["content"]["target_name"] == "jupyter.widget"
        and m["content"]["data"]["state"]["_model_name"] == model
    ]


def state_update(message: Message, comm_id: str) -> dict[str, Any] | None:
    if message["msg_type"] != "comm_msg" or message["content"]["comm_id"] != comm_id:
        return None
    data = message["content"]["data"]
    return data.get("state") if data.get("method") == "update" else None


SETUP = f"""
import sys
from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.ipython.forms import PromptForm, create_form_input_handler
from mcp_notebook.runtime import get_runtime

runtime = get_runtime()
client = PromptClient(
    ServerConfig(name="sdk", command=sys.executable, args=({str(SDK_SERVER)!r},)),
    on_input_required=create_form_input_handler(),
)
specs = {{spec.name: spec for spec in runtime.call(client.list_prompts, timeout=60)}}
def show(rendered):
    return {{"text/plain": " ".join(m.content.text for m in rendered.messages)}}
"""


def test_typing_in_the_front_end_brings_suggestions_back_and_render_fills_the_output(kernel: Kernel) -> None:
    kernel.execute(SETUP)
    messages = kernel.execute(
        'form = PromptForm(specs["greet"], client, runtime, server="sdk", display=show, '
        "resolve_value=lambda n, v: v, write_code=lambda *a: '')\nform"
    )
    assert any(
        m["msg_type"] == "execute_result" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        for m in messages
    )
    comboboxes = {
        m["content"]["data"]["state"]["tooltip"]: m["content"]["comm_id"] for m in comm_opens(messages, "ComboboxModel")
    }
    (button,) = [
        m["content"]["comm_id"]
        for m in comm_opens(messages, "ButtonModel")
        if m["content"]["data"]["state"]["description"] == "Render"
    ]
    (output,) = [m["content"]["comm_id"] for m in comm_opens(messages, "OutputModel")]

    kernel.send_comm(
        comboboxes["a programming language"], {"method": "update", "state": {"value": "r"}, "buffer_paths": []}
    )
    suggested = kernel.wait_for(
        "suggestions for 'r'",
        lambda m: (
            m["msg_type"] == "comm_msg" and (m["content"]["data"].get("state") or {}).get("options") == ["rust", "ruby"]
        ),
    )
    assert suggested["content"]["comm_id"] == comboboxes["a programming language"]

    kernel.send_comm(comboboxes["who to greet"], {"method": "update", "state": {"value": "Ada"}, "buffer_paths": []})
    kernel.send_comm(button, {"method": "custom", "content": {"event": "click"}})
    rendered = kernel.wait_for(
        "the rendered prompt in the form's output", lambda m: (state_update(m, output) or {}).get("outputs")
    )
    (shown,) = (state_update(rendered, output) or {})["outputs"]
    assert shown["data"]["text/plain"] == "Say hello to Ada in r."
