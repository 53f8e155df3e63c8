"""The example notebooks: valid, warning-free, renderable, and together using every feature of the format."""

from __future__ import annotations

import base64
import importlib.util
import io
import struct
import wave
import zlib
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

from mcp_notebook.models import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptSpec,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources.cells import NOTEBOOK_META_KEY
from mcp_notebook.sources.folder import NotebookFolderSource

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def registry() -> PromptRegistry:
    return PromptRegistry()


@pytest.fixture(scope="module")
def source(registry: PromptRegistry) -> NotebookFolderSource:
    source = NotebookFolderSource([EXAMPLES], registry)
    source.scan()
    return source


def _spec(registry: PromptRegistry, name: str) -> PromptSpec:
    spec = registry.snapshot().get(name)
    assert spec is not None, name
    return spec


def _render(source: NotebookFolderSource, spec: PromptSpec, **arguments: str) -> RenderedPrompt:
    return render_prompt(spec, arguments, read_file=source.read_file)


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _is_valid_png(data: bytes) -> bool:
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    position, kinds = 8, []
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind, body = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        if zlib.crc32(kind + body) != crc:
            return False
        kinds.append(kind)
        position += 12 + length
    return kinds[0] == b"IHDR" and kinds[-1] == b"IEND"


def test_every_example_loads_without_warnings_or_errors(source: NotebookFolderSource, registry: PromptRegistry) -> None:
    assert source.errors == {}
    assert source.warnings == ()
    assert registry.snapshot().warnings == ()
    assert sorted(p.name for p in registry.snapshot().prompts) == [
        "classify_sentiment",
        "code_review",
        "debug_traceback",
        "describe_chart",
        "describe_sound",
        "follow_style_guide",
        "summarize_table",
    ]


def test_every_example_is_a_valid_notebook() -> None:
    for path in sorted(EXAMPLES.glob("*.ipynb")):
        nbformat.validate(nbformat.read(str(path), as_version=4))


def test_the_committed_examples_are_what_the_generator_writes() -> None:
    generator = _generator()
    for name, build in generator.NOTEBOOKS.items():
        assert nbformat.writes(build()) + "\n" == (EXAMPLES / name).read_text(encoding="utf-8"), name


def test_the_examples_stay_small() -> None:
    assert sum(p.stat().st_size for p in EXAMPLES.rglob("*") if p.is_file()) < 200_000


def test_code_review_declares_arguments_with_descriptions_defaults_and_completions(registry: PromptRegistry) -> None:
    spec = _spec(registry, "code_review")
    assert (spec.title, spec.description) == (
        "Review code",
        "Review a piece of code for bugs, style, performance or security.",
    )
    assert spec.icons and spec.icons[0].src.startswith("data:image/png;base64,")
    code, language, focus = spec.arguments
    assert (code.required, code.description, code.ask) == (True, "The code to review", "Paste the code to review")
    assert (language.required, language.default) == (False, "Python")
    assert "security" in focus.completions


def test_code_review_renders_with_defaults(source: NotebookFolderSource, registry: PromptRegistry) -> None:
    rendered = _render(source, _spec(registry, "code_review"), code="x = 1/0")
    first = rendered.messages[0].content
    assert isinstance(first, TextContent)
    assert "reviewer of Python code" in first.text and "focusing on bugs" in first.text and "x = 1/0" in first.text


def test_few_shot_alternates_user_and_assistant_turns_from_tags(
    source: NotebookFolderSource, registry: PromptRegistry
) -> None:
    rendered = _render(source, _spec(registry, "classify_sentiment"), review="Too loud.")
    assert [m.role for m in rendered.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert rendered.messages[-1].content == TextContent(text="Review: Too loud.")


def test_plot_prompt_sends_the_printed_text_and_a_valid_png_chart(
    source: NotebookFolderSource, registry: PromptRegistry
) -> None:
    blocks = [m.content for m in _render(source, _spec(registry, "describe_chart")).messages]
    assert [b.type for b in blocks] == ["text", "text", "image", "text"]
    assert blocks[1] == TextContent(text="total: 600\n")
    image = blocks[2]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert _is_valid_png(base64.b64decode(image.data))
    assert isinstance(blocks[3], TextContent) and "for a general audience" in blocks[3].text


def test_embedded_file_embeds_the_style_guide_and_links_to_pep8(
    source: NotebookFolderSource, registry: PromptRegistry
) -> None:
    blocks = [m.content for m in _render(source, _spec(registry, "follow_style_guide"), text="Utilize it.").messages]
    resource, link = blocks[1], blocks[2]
    assert isinstance(resource, EmbeddedResource)
    assert (resource.uri, resource.mime_type) == ("notebook:///data/style_guide.md", "text/markdown")
    assert resource.text == (EXAMPLES / "data" / "style_guide.md").read_text(encoding="utf-8")
    assert isinstance(link, ResourceLink) and link.uri == "https://peps.python.org/pep-0008/"


def test_summarize_table_reads_the_table_named_by_its_argument(
    source: NotebookFolderSource, registry: PromptRegistry
) -> None:
    spec = _spec(registry, "summarize_table")
    for table in spec.arguments[0].completions:
        resource = _render(source, spec, table=table).messages[1].content
        assert isinstance(resource, EmbeddedResource)
        assert resource.text == (EXAMPLES / "data" / f"{table}.csv").read_text(encoding="utf-8")
        assert source.read_resource(resource.uri)[0].text == resource.text


def test_rich_content_has_a_raw_cell_an_attachment_annotations_meta_and_an_error(
    source: NotebookFolderSource, registry: PromptRegistry
) -> None:
    spec = _spec(registry, "debug_traceback")
    assert spec.meta is not None and spec.meta["org.example.notebooks/team"] == "data-platform"
    assert spec.meta[NOTEBOOK_META_KEY] == "rich_content.ipynb"
    blocks = [m.content for m in _render(source, spec).messages]
    assert [b.type for b in blocks] == ["text", "text", "image", "text", "text"]
    assert isinstance(blocks[0], TextContent) and blocks[0].text.startswith("You are a patient Python tutor.")
    assert isinstance(blocks[2], ImageContent) and _is_valid_png(base64.b64decode(blocks[2].data))
    error = blocks[4]
    assert isinstance(error, TextContent)
    assert error.text.startswith("ZeroDivisionError: division by zero\n") and "\x1b" not in error.text
    assert error.annotations is not None
    assert (error.annotations.audience, error.annotations.priority) == (("assistant",), 0.9)
    assert error.annotations.last_modified is not None


def test_rich_content_sends_a_valid_wav_without_the_code(
    source: NotebookFolderSource, registry: PromptRegistry
) -> None:
    blocks = [m.content for m in _render(source, _spec(registry, "describe_sound")).messages]
    audio = blocks[0]
    assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(audio.data))) as sound:
        assert (sound.getnchannels(), sound.getframerate(), sound.getnframes()) == (1, 8000, 2000)


def test_every_published_example_cell_reads_back_as_a_resource(source: NotebookFolderSource) -> None:
    infos = source.list_resources()
    assert {i.uri for i in infos} >= {
        "notebook:///code_review.ipynb#cell=review-ask",
        "notebook:///plot_prompt.ipynb#cell=chart",
        "notebook:///data/style_guide.md",
    }
    for info in infos:
        assert source.read_resource(info.uri), info.uri
