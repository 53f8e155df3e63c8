"""A text-only `prompts/get` result is written without the wire's models, in the very bytes the models give."""

from __future__ import annotations

import pytest

from mcp_notebook.models import Annotations, ImageContent, PromptMessage, RenderedPrompt, TextContent
from mcp_notebook.protocol.answers import Answers
from mcp_notebook.protocol.convert import to_mcp_get_prompt_result
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry

MODERN = "2026-07-28"
TEXTS = [
    "plain",
    "",
    'quotes " and \\ backslashes, / slashes',
    "lines\n\ttabs\r\n and control \x00\x01\x1f\x7f characters",
    "non-ASCII: é ü ß 漢字 😀 \u2028 \u2029",
    "{{ placeholder }} left as written, </script>, &amp;",
    "x" * 5000,
]


def _answers() -> Answers:
    return create_server(PromptRegistry()).answers


def _by_models(rendered: RenderedPrompt) -> bytes:
    return _answers()._stamped(to_mcp_get_prompt_result(rendered, MODERN))


@pytest.mark.parametrize("description", [None, "A description", 'with "quotes"\nand ünïcode 😀', ""])
@pytest.mark.parametrize("text", TEXTS)
def test_text_only_results_are_the_models_bytes(description: str | None, text: str) -> None:
    messages = (
        PromptMessage("user", TextContent(text)),
        PromptMessage("assistant", TextContent(text[::-1])),
        PromptMessage("user", TextContent("again: " + text)),
    )
    rendered = RenderedPrompt(messages=messages, description=description, name="p")
    made = _answers()._text_only(rendered)
    assert made is not None
    assert made == _by_models(rendered)


@pytest.mark.parametrize(
    "rendered",
    [
        RenderedPrompt((PromptMessage("user", TextContent("t", annotations=Annotations(priority=0.5))),)),
        RenderedPrompt((PromptMessage("user", TextContent("t", meta={"k": "v"})),)),
        RenderedPrompt((PromptMessage("user", ImageContent("aGk=", "image/png")),)),
        RenderedPrompt((PromptMessage("user", TextContent("t")),), meta={"k": "v"}),
    ],
    ids=["annotations", "block meta", "image", "result meta"],
)
def test_anything_else_is_left_to_the_models(rendered: RenderedPrompt) -> None:
    assert _answers()._text_only(rendered) is None
    assert _by_models(rendered)  # which still answer it


def test_no_messages_at_all() -> None:
    rendered = RenderedPrompt(messages=(), description="empty")
    assert _answers()._text_only(rendered) == _by_models(rendered)
