"""`%mcp picker` while this kernel serves: its own prompts as a group, rendered and completed through its own server.

A shell on a stand-in main thread serves over real HTTP on 127.0.0.1; the
picker runs on that main thread, as in a kernel, and its forms reach the
kernel's server through a client of their own, on the background runtime.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_server_harness import Kernel, isolate_runtime_dir, running_kernel
from widget_harness import DEADLINE, render_and_keep, wait_until

from mcp_notebook.ipython import widgets
from mcp_notebook.ipython.forms import PromptForm, PromptPicker
from mcp_notebook.ipython.widgets import picker_command
from mcp_notebook.models import TextContent

pytestmark = pytest.mark.slow  # real HTTP servers (in this process)

OWN = "this kernel"
SDK_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py"


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    """A served-from shell with `%mcp` loaded, whose `%mcp picker` believes a widget front end is there."""
    isolate_runtime_dir(tmp_path, monkeypatch)
    monkeypatch.setattr(widgets, "has_widget_frontend", lambda shell: True)
    with running_kernel() as kernel:
        kernel.main.run(lambda: kernel.shell.run_line_magic("load_ext", "mcp_notebook"))
        try:
            yield kernel
        finally:
            kernel.main.run(lambda: kernel.shell.run_line_magic("unload_ext", "mcp_notebook"))


def open_picker(kernel: Kernel, *argv: str) -> PromptPicker:
    """`%mcp picker` run on the main thread, once it has listed every group."""
    picker = kernel.main.run(lambda: picker_command(kernel.shell, list(argv)))
    assert isinstance(picker, PromptPicker)
    wait_until(lambda: picker.loads >= 1, "the picker has listed the prompts")
    return picker


def listed(picker: PromptPicker, server: str = OWN) -> list[str]:
    return [name for _, name in picker.sections[server].options.options]


def choose(kernel: Kernel, picker: PromptPicker, name: str) -> PromptForm:
    """Pick a prompt of this kernel as the user does: a selection arriving on the main thread."""

    def select() -> None:
        picker.sections[OWN].options.value = name

    kernel.main.run(select)
    assert picker.form is not None and picker.form.spec.name == name
    return picker.form


def test_without_serve_the_picker_shows_no_group_of_this_kernel(kernel: Kernel) -> None:
    kernel.cell("%%prompt ks_unserved\nNot served yet.")

    picker = open_picker(kernel)

    assert OWN not in picker.sections
    assert picker.sections == {}


def test_while_serving_the_picker_lists_this_kernels_prompt_cells_and_magics_before_the_servers(
    kernel: Kernel,
) -> None:
    kernel.cell('%%prompt ks_explain --title "Explain a table" --arg df="the table"\nExplain {{df}}.')
    kernel.serve("--magics")
    kernel.cell(f"%mcp connect sdk -- {sys.executable} {SDK_SERVER}")

    picker = open_picker(kernel)

    assert list(picker.sections) == [OWN, "sdk"]
    assert {"ks_explain", "magic.who"} <= set(listed(picker))
    assert "greet" in listed(picker, "sdk")
    assert "<b>this kernel</b>" in picker.sections[OWN].header.value
    picker.search.value = "explain a table"
    assert listed(picker) == ["ks_explain"]
    assert listed(picker, "sdk") == []


def test_a_prompt_chosen_in_the_picker_renders_through_the_kernels_own_server(kernel: Kernel) -> None:
    kernel.cell("%%prompt ks_greet --arg who\nHello {{who}}, never run: ks_ran = 1")
    kernel.serve()
    picker = open_picker(kernel)

    form = choose(kernel, picker, "ks_greet")
    kernel.main.run(lambda: setattr(form.fields["who"].combobox, "value", "Ada"))
    result = render_and_keep(form)

    assert result.messages[0].content == TextContent(text="Hello Ada, never run: ks_ran = 1")
    assert "ks_ran" not in kernel.shell.user_ns


def test_a_variable_argument_suggests_the_kernels_variables_of_its_type(kernel: Kernel) -> None:
    kernel.cell("ks_count = 3\nks_total = 4\nks_label = 'x'")
    kernel.cell("%%prompt ks_stats --arg n:var[int]\nStatistics of {{n}}")
    kernel.serve()
    form = choose(kernel, open_picker(kernel), "ks_stats")
    field = form.fields["n"]

    kernel.main.run(lambda: setattr(field.combobox, "value", "ks_"))

    wait_until(lambda: field.combobox.options == ("ks_count", "ks_total"), "the int variables are suggested")


def test_a_live_magic_chosen_in_the_picker_runs_on_the_main_thread_which_the_picker_leaves_free(
    kernel: Kernel,
) -> None:
    kernel.cell("ks_live_value = 1")
    kernel.serve("--live", "%who")
    form = choose(kernel, open_picker(kernel), "magic.who")
    kernel.main.run(lambda: setattr(form.fields["line"].combobox, "value", "int"))

    # Clicked on the main thread, as the front end's click arrives; the render must not wait there, because
    # the magic it asks for is scheduled onto that same thread.
    future = kernel.main.run(form.render)
    assert future is not None
    rendered = future.result(timeout=DEADLINE)

    texts = [m.content.text for m in rendered.messages if isinstance(m.content, TextContent)]
    assert texts[0] == "Ran in the kernel:\n\n```python\n%who int\n```"
    assert "ks_live_value" in texts[1]


def test_the_picker_reloads_this_kernels_group_when_a_prompt_cell_runs(kernel: Kernel) -> None:
    kernel.serve()
    picker = open_picker(kernel)
    assert "ks_later" not in listed(picker)

    kernel.cell("%%prompt ks_later\nAdded after the picker opened.")

    wait_until(lambda: "ks_later" in listed(picker), "the new prompt is listed")


def test_copy_as_code_connects_to_this_kernel_by_id_without_its_token(kernel: Kernel) -> None:
    kernel.cell("%%prompt ks_code --arg topic\nAbout {{topic}}")
    server = kernel.serve()
    form = choose(kernel, open_picker(kernel), "ks_code")
    kernel.main.run(lambda: setattr(form.fields["topic"].combobox, "value", "two words"))

    code = kernel.main.run(form.copy_as_code)

    # The connection file is in a runtime folder of the test's, where `mcp-notebook connect` must be told to look.
    assert server.connection_file is not None
    folder = server.connection_file.parent
    assert code == (
        f"%mcp connect this_kernel -- mcp-notebook connect --kernel {server.kernel_id} --runtime-dir {folder}\n"
        "%mcp get this_kernel:ks_code topic='two words'"
    )
    assert server.token is not None and server.token not in code


def test_stopping_the_server_closes_its_own_client_and_the_next_picker_has_no_group(kernel: Kernel) -> None:
    server = kernel.serve()
    open_picker(kernel)
    client = server.own_client()
    assert client.connected

    kernel.stop()

    assert not client.connected
    assert OWN not in open_picker(kernel).sections
