"""PromptPicker against two real servers: grouped listing, search, opening a form, following list_changed."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from widget_harness import wait_until

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.ipython.forms import PromptForm, PromptPicker
from mcp_notebook.models import PromptSpec, RenderedPrompt
from mcp_notebook.runtime import BackgroundRuntime, get_runtime

pytestmark = pytest.mark.slow

SERVERS = Path(__file__).resolve().parents[1] / "servers"


def no_display(rendered: RenderedPrompt) -> dict[str, str]:
    return {"text/plain": str(len(rendered.messages))}


@pytest.fixture(scope="module")
def clients() -> Iterator[dict[str, PromptClient]]:
    runtime = get_runtime()
    configs = [
        ServerConfig(name="modern", command=sys.executable, args=(str(SERVERS / "sdk_server.py"),)),
        ServerConfig(name="legacy", command=sys.executable, args=(str(SERVERS / "legacy_server.py"),)),
    ]
    clients = {config.name: PromptClient(config) for config in configs}
    for client in clients.values():
        runtime.call(client.connect, timeout=60)
    yield clients
    for client in clients.values():
        runtime.call(client.close, timeout=30)


def make_picker(clients: Mapping[str, PromptClient], runtime: BackgroundRuntime) -> PromptPicker:
    def create_form(server: str, spec: PromptSpec) -> PromptForm:
        return PromptForm(
            spec,
            clients[server],
            runtime,
            server=server,
            display=no_display,
            resolve_value=lambda name, value: value,
            write_code=lambda *_: "",
        )

    picker = PromptPicker(clients, runtime, create_form)
    picker.refresh().result(timeout=30)
    return picker


def listed(picker: PromptPicker, server: str) -> list[str]:
    return [name for _, name in picker.sections[server].options.options]


def test_the_picker_lists_every_servers_prompts_grouped_by_server(clients: dict[str, PromptClient]) -> None:
    picker = make_picker(clients, get_runtime())

    modern = listed(picker, "modern")
    assert modern[:4] == ["ask", "greet", "grow", "slow"]  # sorted; `grow` tests may have added more
    assert "greet" in listed(picker, "legacy")
    assert "<b>modern</b>" in picker.sections["modern"].header.value
    assert f"{len(modern)} prompts" in picker.sections["modern"].header.value


def test_searching_keeps_the_prompts_whose_name_title_or_description_match(clients: dict[str, PromptClient]) -> None:
    picker = make_picker(clients, get_runtime())

    picker.search.value = "colour"  # only in the descriptions of `ask`

    assert listed(picker, "modern") == ["ask"]
    assert listed(picker, "legacy") == ["ask"]
    picker.search.value = "greeting"  # the modern server's title of `greet`
    assert listed(picker, "modern") == ["greet"]
    assert listed(picker, "legacy") == []
    assert picker.sections["legacy"].options.layout.display == "none"
    assert picker.sections["legacy"].widget.layout.display == "none"  # no empty group: "legacy — 0 of 2"
    assert picker.sections["modern"].widget.layout.display == ""
    assert "1 of" in picker.status.value
    picker.search.value = ""
    assert picker.sections["legacy"].widget.layout.display == ""  # every group again


def test_choosing_a_prompt_opens_its_form_under_the_list(clients: dict[str, PromptClient]) -> None:
    picker = make_picker(clients, get_runtime())

    picker.sections["legacy"].options.value = "greet"

    assert picker.form is not None
    assert picker.form.server == "legacy"
    assert picker.form.spec.name == "greet"
    assert picker.form_area.children == (picker.form.widget,)
    first = picker.form
    picker.sections["modern"].options.value = "ask"
    assert picker.form is not first
    assert picker.form_area.children == (picker.form.widget,)


def test_the_picker_reloads_by_itself_when_a_server_announces_new_prompts(clients: dict[str, PromptClient]) -> None:
    runtime = get_runtime()
    picker = make_picker(clients, runtime)
    before = set(listed(picker, "modern"))

    async def grow() -> RenderedPrompt:
        return await clients["modern"].get_prompt("grow")

    runtime.call(grow, timeout=30)
    wait_until(lambda: len(listed(picker, "modern")) == len(before) + 1, "the new prompt is listed")

    (added,) = set(listed(picker, "modern")) - before
    assert added.startswith("grown_")


def test_a_closed_picker_no_longer_follows_changes(clients: dict[str, PromptClient]) -> None:
    runtime = get_runtime()
    closed = make_picker(clients, runtime)
    live = make_picker(clients, runtime)
    closed.close()
    closed_loads, live_loads = closed.loads, live.loads

    async def grow() -> RenderedPrompt:
        return await clients["modern"].get_prompt("grow")

    runtime.call(grow, timeout=30)
    # The closed picker subscribed first, so were it still subscribed it would have reloaded first.
    wait_until(lambda: live.loads > live_loads, "the live picker reloads")

    assert closed.loads == closed_loads


def test_enter_in_the_search_box_opens_the_only_match_and_nothing_when_several_match(
    clients: dict[str, PromptClient],
) -> None:
    picker = make_picker(clients, get_runtime())

    picker.search.value = "greeting"  # one prompt: the modern server's `greet`
    picker._on_search_key({"event": "submit"})  # what the Text widget sends on Enter
    assert picker.form is not None and (picker.form.server, picker.form.spec.name) == ("modern", "greet")
    assert picker.form_area.children == (picker.form.widget,)

    opened = picker.form
    picker.search.value = "colour"  # `ask` of both servers
    picker._on_search_key({"event": "submit"})
    assert picker.form is opened  # two matches: Enter waits for a choice
    assert "data-lm-suppress-shortcuts" in picker.scripts.outputs[0]["data"]["application/javascript"]
    picker.close()
