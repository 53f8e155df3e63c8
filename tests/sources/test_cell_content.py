"""How each kind of cell and output becomes content blocks (format section 3)."""

from __future__ import annotations

from typing import Any

import pytest
from notebook_dicts import PNG_1X1, WAV_SILENCE, code, display, error, markdown, notebook, raw, stream

from mcp_notebook.models import AudioContent, ContentBlock, ImageContent, TextContent
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources.cells import NotebookPrompts, prompts_from_notebook


def _load(*cells: dict[str, Any], language: str | None = "python", **options: Any) -> NotebookPrompts:
    return prompts_from_notebook(notebook(*cells, language=language), origin="nb.ipynb", **options)


def _blocks(*cells: dict[str, Any], **arguments: str) -> list[ContentBlock]:
    result = _load(*cells)
    return [m.content for m in render_prompt(result.prompts[0], arguments).messages]


def _output_blocks(*outputs: dict[str, Any]) -> list[ContentBlock]:
    return _blocks(code("run()", {"prompt": "p"}, outputs=list(outputs)))[1:]


# -- cells ----------------------------------------------------------------------------------------


def test_a_markdown_cell_is_one_text_block_with_its_source_substituted() -> None:
    assert _blocks(markdown("Hello **{{who}}**", {"prompt": "p"}), who="Ada") == [TextContent(text="Hello **Ada**")]


def test_a_source_stored_as_a_list_of_lines_is_joined() -> None:
    cell = markdown("", {"prompt": "p"})
    cell["source"] = ["line one\n", "line two"]
    assert _blocks(cell) == [TextContent(text="line one\nline two")]


def test_markdown_attachments_it_references_follow_the_text_as_images_or_audio() -> None:
    cell = markdown(
        "Look: ![chart](attachment:chart.png) and listen <audio src='attachment:beep.wav'>",
        {"prompt": "p"},
        attachments={
            "beep.wav": {"audio/wav": WAV_SILENCE},
            "chart.png": {"image/png": PNG_1X1},
            "unused.png": {"image/png": PNG_1X1},
        },
    )
    blocks = _blocks(cell)
    assert blocks[1:] == [
        ImageContent(data=PNG_1X1, mime_type="image/png"),
        AudioContent(data=WAV_SILENCE, mime_type="audio/wav"),
    ]


def test_an_attachment_reference_without_the_attachment_is_reported() -> None:
    result = _load(markdown("![x](attachment:missing.png)", {"prompt": "p"}))
    assert len(result.prompts[0].messages) == 1
    assert any("attachment:missing.png" in w for w in result.warnings)


def test_an_attachment_in_an_unsupported_format_is_reported() -> None:
    result = _load(
        markdown("![x](attachment:a.svg)", {"prompt": "p"}, attachments={"a.svg": {"image/svg+xml": "<svg/>"}})
    )
    assert len(result.prompts[0].messages) == 1
    assert any("no supported image or audio form" in w for w in result.warnings)


def test_a_code_cell_is_fenced_with_the_kernel_language() -> None:
    assert _blocks(code("x = {{n}}", {"prompt": "p"}), n="1") == [TextContent(text="```python\nx = 1\n```")]


def test_the_language_falls_back_to_language_info_then_to_no_tag() -> None:
    nb = notebook(code("1", {"prompt": "p"}), language=None)
    nb["metadata"]["language_info"] = {"name": "R"}
    spec = prompts_from_notebook(nb, origin="x").prompts[0]
    assert spec.messages[0].content == TextContent(text="```R\n1\n```")
    assert _load(code("1", {"prompt": "p"}), language=None).prompts[0].messages[0].content == TextContent(
        text="```\n1\n```"
    )


def test_a_language_given_by_the_caller_wins() -> None:
    result = _load(code("SELECT 1", {"prompt": "p"}), language="sql")
    assert result.prompts[0].messages[0].content == TextContent(text="```sql\nSELECT 1\n```")


def test_code_that_holds_a_fence_gets_a_longer_fence() -> None:
    blocks = _blocks(code('doc = """\n```python\nx\n```\n"""', {"prompt": "p"}))
    assert blocks == [TextContent(text='````python\ndoc = """\n```python\nx\n```\n"""\n````')]


def test_source_false_publishes_only_the_outputs() -> None:
    blocks = _blocks(code("secret()", {"prompt": "p", "source": False}, outputs=[stream("result\n")]))
    assert blocks == [TextContent(text="result\n")]


def test_outputs_false_publishes_only_the_source() -> None:
    blocks = _blocks(code("x", {"prompt": "p", "outputs": False}, outputs=[stream("result\n")]))
    assert blocks == [TextContent(text="```python\nx\n```")]


def test_a_raw_cell_is_verbatim_after_substitution() -> None:
    assert _blocks(raw("<system>{{x}}</system>\n  ", {"prompt": "p"}), x="1") == [
        TextContent(text="<system>1</system>\n  ")
    ]


def test_an_empty_cell_gives_no_text_block_but_keeps_its_resource() -> None:
    blocks = _blocks(markdown("  \n", {"prompt": "p", "resource": {"uri": "mem://a", "text": "A"}}))
    assert [b.type for b in blocks] == ["resource"]


def test_an_unknown_cell_type_is_reported() -> None:
    cell = {"id": "z", "cell_type": "mystery", "metadata": {"mcp": {"prompt": "p"}}, "source": "?"}
    result = _load(cell, markdown("ok", {"prompt": "p"}))
    assert [m.content for m in result.prompts[0].messages] == [TextContent(text="ok")]
    assert any("unknown cell type 'mystery'" in w for w in result.warnings)


# -- outputs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mime_type", ["image/png", "image/jpeg", "image/gif", "image/webp"])
def test_an_image_output_is_an_image_block_before_any_text_form(mime_type: str) -> None:
    blocks = _output_blocks(display({"text/plain": "<Figure>", "text/html": "<img>", mime_type: PNG_1X1 + "\n"}))
    assert blocks == [ImageContent(data=PNG_1X1, mime_type=mime_type)]


def test_png_is_preferred_over_jpeg() -> None:
    blocks = _output_blocks(display({"image/jpeg": PNG_1X1, "image/png": PNG_1X1}))
    assert [b.mime_type for b in blocks if isinstance(b, ImageContent)] == ["image/png"]


def test_an_audio_output_is_an_audio_block() -> None:
    assert _output_blocks(display({"audio/wav": WAV_SILENCE, "text/plain": "<Audio>"})) == [
        AudioContent(data=WAV_SILENCE, mime_type="audio/wav")
    ]


def test_markdown_is_preferred_over_plain_text() -> None:
    assert _output_blocks(display({"text/plain": "plain", "text/markdown": "**md**"}, "execute_result")) == [
        TextContent(text="**md**")
    ]


def test_json_output_is_dumped_as_json_text() -> None:
    blocks = _output_blocks(display({"application/json": {"a": [1, "é"]}, "text/plain": "{'a': ...}"}))
    assert blocks == [TextContent(text='{\n  "a": [\n    1,\n    "é"\n  ]\n}')]


def test_plain_text_output_is_text() -> None:
    assert _output_blocks(display({"text/plain": ["a\n", "b"]}, "execute_result")) == [TextContent(text="a\nb")]


def test_html_is_used_only_when_nothing_else_is_there() -> None:
    assert _output_blocks(display({"text/html": "<b>x</b>"})) == [TextContent(text="<b>x</b>")]
    assert _output_blocks(display({"text/html": "<b>x</b>", "text/plain": "x"})) == [TextContent(text="x")]


def test_an_output_with_no_supported_form_is_reported_and_skipped() -> None:
    result = _load(code("w", {"prompt": "p"}, outputs=[display({"application/vnd.custom": {}})]))
    assert len(result.prompts[0].messages) == 1
    assert any("no supported form among application/vnd.custom" in w for w in result.warnings)


def test_image_data_that_is_not_base64_is_reported_and_the_next_form_used() -> None:
    result = _load(code("w", {"prompt": "p"}, outputs=[display({"image/png": "%%%", "text/plain": "fallback"})]))
    assert result.prompts[0].messages[1].content == TextContent(text="fallback")
    assert any("not valid base64" in w for w in result.warnings)


def test_consecutive_stream_outputs_of_one_stream_are_joined() -> None:
    blocks = _output_blocks(stream("a\n"), stream("b\n"), stream("oops\n", "stderr"), stream("c\n"))
    assert blocks == [TextContent(text="a\nb\n"), TextContent(text="oops\n"), TextContent(text="c\n")]


def test_an_error_output_gives_name_value_and_traceback_without_colours() -> None:
    traceback = [
        "\x1b[0;31m---------\x1b[0m",
        "\x1b[1;32mValueError\x1b[0m: bad \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
    ]
    assert _output_blocks(error("ValueError", "bad", traceback)) == [
        TextContent(text="ValueError: bad\n---------\nValueError: bad link")
    ]


def test_outputs_are_never_substituted() -> None:
    spec = _load(code("print('{{x}}')", {"prompt": "p"}, outputs=[stream("{{x}}\n")])).prompts[0]
    assert [m.content for m in render_prompt(spec, {"x": "1"}).messages] == [
        TextContent(text="```python\nprint('1')\n```"),
        TextContent(text="{{x}}\n"),
    ]
    assert [a.name for a in spec.arguments] == ["x"]


def test_an_unknown_output_type_is_reported() -> None:
    result = _load(code("x", {"prompt": "p"}, outputs=[{"output_type": "telepathy"}]))
    assert any("unknown output type 'telepathy'" in w for w in result.warnings)
