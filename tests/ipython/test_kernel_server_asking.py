"""`%%prompt --ask`: the kernel's server asks the user for a missing argument, over real HTTP, in both eras."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from client_harness import FormFiller
from kernel_server_harness import Kernel, connect, isolate_runtime_dir, running_kernel
from mcp import MCPError

pytestmark = pytest.mark.slow  # real HTTP servers (in this process)

MODES = ["legacy", "2026-07-28"]


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    isolate_runtime_dir(tmp_path, monkeypatch)
    with running_kernel() as kernel:
        yield kernel


def text_of(result: types.GetPromptResult) -> str:
    content = result.messages[0].content
    assert isinstance(content, types.TextContent)
    return content.text


def test_the_cell_says_which_arguments_will_be_asked_for(kernel: Kernel) -> None:
    printed = kernel.cell('%%prompt ks_ask --ask code="Paste the code" --optional tone=kind\n{{code}} {{tone}}')
    assert printed == (
        "Published prompt 'ks_ask' (code, [tone]); asks the user for code when a client leaves it out"
        " (not served yet: run %mcp serve)\n"
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_missing_ask_argument_is_asked_for_and_the_prompt_rendered_with_the_answer(
    kernel: Kernel, mode: str
) -> None:
    kernel.cell('%%prompt ks_review --arg code="the code to review" --ask code="Paste the code"\nReview {{code}}')
    server = kernel.serve()
    filler = FormFiller(types.ElicitResult(action="accept", content={"code": "x = 1"}))
    async with connect(server.url or "", server.token, mode=mode, elicitation_callback=filler) as client:
        [listed] = [p for p in (await client.list_prompts()).prompts if p.name == "ks_review"]
        result = await client.get_prompt("ks_review", {})
    assert [(a.name, a.description, a.required) for a in listed.arguments or []] == [
        ("code", "the code to review", True)
    ]
    assert text_of(result) == "Review x = 1"
    [form] = filler.forms
    assert form.message == "Paste the code"
    assert form.requested_schema["required"] == ["code"]


@pytest.mark.parametrize("mode", MODES)
async def test_declining_the_question_is_invalid_params_naming_the_argument(kernel: Kernel, mode: str) -> None:
    kernel.cell("%%prompt ks_declined --ask code\n{{code}}")
    server = kernel.serve()
    filler = FormFiller(types.ElicitResult(action="decline"))
    async with connect(server.url or "", server.token, mode=mode, elicitation_callback=filler) as client:
        with pytest.raises(MCPError) as declined:
            await client.get_prompt("ks_declined", {})
    assert declined.value.error.code == -32602
    assert "code" in declined.value.error.message
    assert [form.message for form in filler.forms] == ["Value for code"]


async def test_a_client_that_cannot_show_forms_gets_the_missing_arguments_error(kernel: Kernel) -> None:
    kernel.cell("%%prompt ks_unasked --ask code\n{{code}}")
    server = kernel.serve()
    async with connect(server.url or "", server.token) as client:
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("ks_unasked", {})
        given = await client.get_prompt("ks_unasked", {"code": "y = 2"})
    assert missing.value.error.code == -32602
    assert text_of(given) == "y = 2"
