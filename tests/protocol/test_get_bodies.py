"""`GetBodies`: a prompt's get result joined from pieces is, byte for byte, the result rendered for those values."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_core import to_json

from mcp_notebook.models import (
    Annotations,
    AudioContent,
    EmbeddedResource,
    ImageContent,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    ResourceLink,
    TextContent,
)
from mcp_notebook.protocol import get_bodies
from mcp_notebook.protocol.convert import to_mcp_get_prompt_result
from mcp_notebook.protocol.get_bodies import GetBodies
from mcp_notebook.rendering import argument_values, render_prompt

MODERN = "2026-07-28"


def _finish(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "t"}}}


def _rendered(spec: PromptSpec, arguments: dict[str, str], revision: str = MODERN) -> bytes:
    """What rendering, converting and dumping the prompt for `arguments` gives: what the pieces must give."""
    model = to_mcp_get_prompt_result(render_prompt(spec, arguments), revision)
    return to_json(_finish(model.model_dump(by_alias=True, mode="json", exclude_none=True)))


def _joined(bodies: GetBodies, spec: PromptSpec, arguments: dict[str, str], revision: str = MODERN) -> bytes | None:
    return bodies.body(spec, argument_values(spec, arguments, 1 << 30), revision)


EVERY_FIELD = PromptSpec(
    name="every",
    description="Every field a value may go into",
    meta={"org.example/notebook": "a.ipynb"},
    arguments=(
        PromptArgument("who"),
        PromptArgument("style", required=False, default="brief"),
        PromptArgument("note", required=False),
    ),
    messages=(
        MessageTemplate(
            "user",
            TextContent(
                "Hi {{who}}, {{ who }} again; {{style}} {{note}} {{unknown}} \\{{who}}", Annotations(("user",))
            ),
        ),
        MessageTemplate("user", EmbeddedResource("file:///{{who}}.txt", mime_type="text/plain", text="about {{who}}")),
        MessageTemplate(
            "assistant",
            ResourceLink("file:///{{who}}.ipynb", "{{who}}", title="T {{style}}", description="D {{note}}", size=3),
        ),
        MessageTemplate("user", ImageContent("iVBORw0KGgo=", "image/png")),
        MessageTemplate("user", AudioContent("UklGRg==", "audio/wav")),
        MessageTemplate("user", TextContent("left as written: {{who}}"), substitute=False),
        MessageTemplate("user", TextContent("\ue0000\ue001 and \ue000abc1\ue001 are a notebook's own text")),
    ),
)

HOSTILE = [
    "Ada",
    "",
    'quote " and backslash \\ and slash /',
    "new\nline\ttab\rreturn \x00 \x01 \x1f \x7f",
    "unicode é ü 漢字 🙂 \u2028 \u2029",
    "{{who}} {{style}} \\{{x}}",
    "\ue000" + "0" * 16 + "0\ue001",  # shaped like a marker, without this process's token
    "</script><script>alert(1)</script>",
    "x" * 100_000,
]


@pytest.mark.parametrize("value", HOSTILE, ids=[f"value{i}" for i in range(len(HOSTILE))])
def test_pieces_joined_around_any_value_are_the_rendered_result(value: str) -> None:
    bodies = GetBodies(_finish)
    for arguments in ({"who": value}, {"who": value, "style": value, "note": value}, {"who": "a", "note": value}):
        assert _joined(bodies, EVERY_FIELD, arguments) == _rendered(EVERY_FIELD, arguments)


def test_a_prompt_without_arguments_is_one_piece() -> None:
    spec = PromptSpec(name="plain", messages=(MessageTemplate("user", TextContent("No {{placeholders}} here")),))
    bodies = GetBodies(_finish)
    assert _joined(bodies, spec, {}) == _rendered(spec, {})


def test_a_revision_before_2026_is_left_to_the_renderer() -> None:
    # Older revisions turn links and audio into text made from the values: no pieces for them.
    assert _joined(GetBodies(_finish), EVERY_FIELD, {"who": "x"}, "2025-06-18") is None
    assert _joined(GetBodies(_finish), EVERY_FIELD, {"who": "x"}, "2024-11-05") is None


def test_another_version_of_a_prompt_is_cut_anew() -> None:
    bodies = GetBodies(_finish)
    first = PromptSpec(
        name="p", arguments=(PromptArgument("x"),), messages=(MessageTemplate("user", TextContent("A {{x}}")),)
    )
    second = PromptSpec(
        name="p", arguments=(PromptArgument("x"),), messages=(MessageTemplate("user", TextContent("B {{x}}")),)
    )
    assert b"A 1" in (_joined(bodies, first, {"x": "1"}) or b"")
    assert _joined(bodies, second, {"x": "1"}) == _rendered(second, {"x": "1"})
    assert b"B 1" in (_joined(bodies, second, {"x": "1"}) or b"")


def test_at_most_max_prompts_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_bodies, "MAX_PROMPTS", 3)
    bodies = GetBodies(_finish)
    specs = [
        PromptSpec(
            name=f"p{i}",
            arguments=(PromptArgument("x"),),
            messages=(MessageTemplate("user", TextContent(f"{i} {{{{x}}}}")),),
        )
        for i in range(5)
    ]
    for spec in specs:
        assert _joined(bodies, spec, {"x": "v"}) == _rendered(spec, {"x": "v"})
    assert len(bodies._made) == 3
    assert {name for name, _ in bodies._made} == {"p2", "p3", "p4"}


def test_each_process_draws_its_own_markers() -> None:
    assert GetBodies(_finish)._token != GetBodies(_finish)._token
