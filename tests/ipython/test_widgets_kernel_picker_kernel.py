"""`%mcp picker` in a real kernel that serves: a live magic of this kernel, chosen and rendered through widget comms.

The click reaches the kernel outside any cell; the render goes to the kernel's
own server over HTTP, which hands the magic back to the kernel's main loop.
That only completes if nothing on the main thread waits for the render.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kernel_harness import Message, RealKernel, widget_opens, widget_state_update

pytestmark = pytest.mark.slow


@pytest.fixture
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("kernel")) as kernel:
        yield kernel


def test_a_live_magic_of_this_kernel_renders_from_the_picker_on_a_click(kernel: RealKernel) -> None:
    kernel.execute("%load_ext mcp_notebook")
    kernel.execute("ks_live_value = 1")
    kernel.execute("%mcp serve --live %who")
    messages = kernel.execute("%mcp picker").outputs
    (listing,) = [m["content"]["comm_id"] for m in widget_opens(messages, "SelectModel")]  # no server connected

    def labels(message: Message) -> list[str]:
        return list((widget_state_update(message, listing) or {}).get("_options_labels") or [])

    listed = kernel.wait_for_message("this kernel's prompts", lambda m: "magic.who — %who" in labels(m))
    kernel.set_widget_state(listing, index=labels(listed).index("magic.who — %who"))
    render = kernel.wait_for_message(
        "the chosen prompt's form",
        lambda m: (
            bool(widget_opens([m], "ButtonModel")) and m["content"]["data"]["state"].get("description") == "Render"
        ),
    )
    form = kernel.seen[kernel.seen.index(listed) : kernel.seen.index(render)]
    line = widget_opens(form, "ComboboxModel")[-1]["content"]["comm_id"]  # `%who` takes one argument, its line
    kernel.set_widget_state(line, value="int")
    output = kernel.wait_for_message(
        "the form's output",
        lambda m: any(
            "mcp-form-output" in o["content"]["data"]["state"]["_dom_classes"] for o in widget_opens([m], "OutputModel")
        ),
    )

    kernel.click_widget(render["content"]["comm_id"])

    def shows_the_variable(message: Message) -> bool:
        outputs = (widget_state_update(message, output["content"]["comm_id"]) or {}).get("outputs") or []
        return any("ks_live_value" in o["data"].get("text/markdown", "") for o in outputs)

    kernel.wait_for_message("the live magic's output in the form", shows_the_variable)
