"""A table of rendered prompts every text and markdown form is checked on, and what each front end makes of them.

`CASES` covers every content block type, one speaker and alternating
speakers, text holding backtick runs, empty text, unicode, hostile MIME types
and names, and blobs large enough to be clipped or refused. `front_end_outputs`
collects what each front end shows for one case: the CLI's `render`, the
IPython text form (`repr`, what `%mcp get` shows in a terminal), the IPython
Markdown form, and the editor bridge's text with either image setting.
`CODE_CELLS` are code cell sources and kernel languages, published as fenced
text blocks.

`python tests/transcript_cases.py` writes `tests/golden/transcripts.json`
from the code as it is; the golden tests compare against that file.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_bridge.render import to_editor_text
from mcp_notebook.cli import main
from mcp_notebook.ipython.display import PromptConversation, conversation_markdown
from mcp_notebook.models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    RenderedPrompt,
    ResourceLink,
    Role,
    TextContent,
)
from mcp_notebook.sources.cells import prompts_from_notebook

__all__ = ["CASES", "CODE_CELLS", "GOLDEN", "code_cell_text", "front_end_outputs", "recorded"]

GOLDEN = Path(__file__).parent / "golden" / "transcripts.json"
_LONG = 4096  # outputs longer than this are recorded by digest, length and head


def _b64(size: int) -> str:
    return base64.b64encode((bytes(range(251)) * (size // 251 + 1))[:size]).decode()


PNG = "iVBORw0KGgo="
HUGE = _b64(9 * 1024 * 1024)  # past the Jupyter display's download limit, and into KiB sizes


def _user(*blocks: ContentBlock) -> RenderedPrompt:
    return RenderedPrompt(messages=tuple(PromptMessage("user", b) for b in blocks))


def _turns(*roles: Role) -> RenderedPrompt:
    return RenderedPrompt(messages=tuple(PromptMessage(r, TextContent(f"message {i}")) for i, r in enumerate(roles)))


def _resource(mime: str | None, text: str = "x = 1\n", uri: str = "file:///a/app.py") -> RenderedPrompt:
    return _user(EmbeddedResource(uri=uri, mime_type=mime, text=text))


CASES: dict[str, RenderedPrompt] = {
    "one text": _user(TextContent("Hello Ada")),
    "named and described": RenderedPrompt(
        name="review", description="Review *some* code_here", messages=(PromptMessage("user", TextContent("Hi")),)
    ),
    "name only": RenderedPrompt(name="greet", messages=(PromptMessage("user", TextContent("Hi")),)),
    "described over lines": RenderedPrompt(
        name="p", description="line one\nline two", messages=(PromptMessage("user", TextContent("Hi")),)
    ),
    "no messages": RenderedPrompt(name="empty", description="nothing", messages=()),
    "empty text": _user(TextContent("")),
    "empty texts between": _user(TextContent("a"), TextContent(""), TextContent("b")),
    "newlines around text": _user(TextContent("\n\npart\n\n")),
    "only newlines": _user(TextContent("\n\n")),
    "unicode": _user(TextContent("Grüße, 東京 🐍 — עברית\u200f ‘q’ e\u0301 \u2028sep")),
    "backtick runs in text": _user(TextContent("a `b` ``c``\n```python\nx\n```\n`````\nend")),
    "markdown headings in text": _user(TextContent("# Title\n## user\n[assistant]\n")),
    "text over the preview": _user(TextContent("y" * 4100)),
    "one speaker, several": _user(TextContent("one"), TextContent("two"), TextContent("three")),
    "assistant alone": RenderedPrompt(messages=(PromptMessage("assistant", TextContent("Sure.")),)),
    "alternating": _turns("user", "assistant", "user", "assistant"),
    "runs of speakers": _turns("user", "user", "assistant", "assistant", "user"),
    "assistant first": _turns("assistant", "user"),
    "image": _user(ImageContent(data=PNG, mime_type="image/png")),
    "audio": _user(AudioContent(data="UklGRg==", mime_type="audio/wav")),
    "huge image": _user(ImageContent(data=HUGE, mime_type="image/jpeg")),
    "text resource python": _resource("text/x-python"),
    "text resource without newline": _resource("text/x-python", "x = 1"),
    "text resource plain": _resource("text/plain", "notes\n"),
    "text resource without type": _resource(None, "notes\n"),
    "text resource json": _resource("application/json", '{"a": 1}\n'),
    "text resource markdown": _resource("text/markdown", "# Doc\n"),
    "text resource csv": _resource("text/csv", "a,b\n1,2\n"),
    "text resource yaml": _resource("application/yaml", "a: 1\n"),
    "text resource octet": _resource("application/octet-stream", "raw\n"),
    "text resource vendor json": _resource("application/vnd.api+json", "{}\n"),
    "text resource with parameters": _resource("text/x-python; charset=utf-8"),
    "text resource upper case": _resource("TEXT/X-PYTHON"),
    "text resource javascript module": _resource("text/javascript", "let a\n"),
    "text resource backtick mime": _resource("text/x-`evil", "a\n"),
    "text resource newline mime": _resource("text/a\n# injected", "a\n"),
    "text resource space mime": _resource("text/a b", "a\n"),
    "text resource holding fences": _resource("text/markdown", "```python\nx\n```\n````\n"),
    "text resource empty": _resource("text/plain", ""),
    "text resource clipped": _resource("text/plain", "z" * 4100),
    "text resource unicode uri": _resource("text/plain", "é\n", uri="file:///données/été.txt"),
    "text resource backtick uri": _resource("text/plain", "a\n", uri="file:///a`b.txt"),
    "blob image": _user(EmbeddedResource(uri="file:///chart.png", mime_type="image/png", blob=PNG)),
    "blob audio": _user(EmbeddedResource(uri="file:///beep.wav", mime_type="audio/wav", blob="UklGRg==")),
    "blob zip": _user(EmbeddedResource(uri="file:///a.zip", mime_type="application/zip", blob="UEsDBA==")),
    "blob without type": _user(EmbeddedResource(uri="file:///a.bin", blob="AAAA")),
    "blob huge": _user(EmbeddedResource(uri="file:///big.bin", mime_type="application/octet-stream", blob=HUGE)),
    "blob hostile name": _user(EmbeddedResource(uri='file:///a"><b>.bin', mime_type='text/x"y', blob="AAAA")),
    "link with title": _user(ResourceLink(uri="https://example.com/style", name="style", title="Style guide")),
    "link without title": _user(ResourceLink(uri="file:///nb/a.ipynb", name="a.ipynb")),
    "link described": _user(
        ResourceLink(uri="file:///r.csv", name="r.csv", mime_type="text/csv", description="the *raw* data")
    ),
    "link hostile label": _user(ResourceLink(uri="https://e.com/x y", name="a]b[c", title=None)),
    "every block, two speakers": RenderedPrompt(
        name="all",
        description="Everything at once",
        messages=(
            PromptMessage("user", TextContent("# Please review\nthis *code*:")),
            PromptMessage("user", EmbeddedResource(uri="file:///app.py", mime_type="text/x-python", text="x = '```'")),
            PromptMessage("user", ImageContent(data=PNG, mime_type="image/png")),
            PromptMessage("assistant", AudioContent(data="UklGRg==", mime_type="audio/wav")),
            PromptMessage("assistant", ResourceLink(uri="https://example.com/style", name="style", title="Style")),
            PromptMessage("user", EmbeddedResource(uri="file:///b.bin", mime_type="application/zip", blob="AAAA")),
        ),
    ),
}

# (source, kernel language) of a code cell published as a prompt.
CODE_CELLS: dict[str, tuple[str, str | None]] = {
    "plain": ("x = 1", "python"),
    "no language": ("x = 1", None),
    "trailing newlines and spaces": ("x = 1\n\n  \n", "python"),
    "leading blank lines": ("\n\nx = 1", "python"),
    "holds a fence": ('doc = """\n```python\nx\n```\n"""', "python"),
    "holds a long fence": ("s = '``````'", "python"),
    "short backtick runs": ("s = '`' + '``'", "python"),
    "unicode": ("print('東京 🐍')", "python"),
    "language with a space": ("Print[1]", "Wolfram Language"),
    "language R": ("1 + 1", "R"),
    "language with a backtick": ("1", "py`x"),
    "language with a newline": ("1", "py\n# injected"),
}


def code_cell_text(source: str, language: str | None) -> str:
    """The text block a code cell holding `source` publishes, in a notebook of kernel `language`."""
    cell = {"cell_type": "code", "source": source, "metadata": {"mcp": {"prompt": "p"}}, "outputs": []}
    cell |= {"execution_count": None}
    metadata: dict[str, Any] = {"kernelspec": {"name": "k", "language": language}} if language is not None else {}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": [cell]}
    content = prompts_from_notebook(nb, origin="nb.ipynb").prompts[0].messages[0].content
    assert isinstance(content, TextContent)
    return content.text


def cli_render_output(rendered: RenderedPrompt, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `mcp-notebook render FOLDER p` prints when prompt `p` renders to `rendered`."""
    import contextlib
    import io

    import mcp_notebook.rendering

    # As the real rendering does, the result carries the prompt's own name.
    named = dataclasses.replace(rendered, name="p")
    monkeypatch.setattr(mcp_notebook.rendering, "render_prompt", lambda *_args, **_kw: named)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["render", str(folder), "p"]) == 0
    return out.getvalue()


def write_prompt_folder(folder: Path) -> Path:
    """A folder with one notebook serving a prompt `p` (whose rendering the CLI tests replace)."""
    folder.mkdir(parents=True, exist_ok=True)
    cell = {"cell_type": "markdown", "source": "stand-in", "metadata": {"mcp": {"prompt": "p"}}}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}
    (folder / "p.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return folder


def front_end_outputs(rendered: RenderedPrompt, cli: str) -> dict[str, str]:
    """Every front end's form of `rendered`; `cli` is what the CLI printed for it."""
    return {
        "cli render": cli,
        "ipython text": repr(PromptConversation.of(rendered)),
        "ipython markdown": conversation_markdown(rendered),
        "editor placeholders": to_editor_text(rendered),
        "editor data URIs": to_editor_text(rendered, images="data-uri"),
    }


def recorded(text: str) -> str | dict[str, Any]:
    """How an output is kept in the golden file: whole, or by digest when it is long."""
    if len(text) <= _LONG:
        return text
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "length": len(text), "head": text[:200]}


def _write_golden() -> None:
    import tempfile

    monkeypatch = pytest.MonkeyPatch()
    for variable in ("MCP_NOTEBOOK_STATE_DIR", "MCP_NOTEBOOK_CACHE_DIR"):  # as the suite's conftest does
        monkeypatch.setenv(variable, tempfile.mkdtemp())
    try:
        folder = write_prompt_folder(Path(tempfile.mkdtemp()) / "prompts")
        prompts = {
            name: {k: recorded(v) for k, v in front_end_outputs(r, cli_render_output(r, folder, monkeypatch)).items()}
            for name, r in CASES.items()
        }
    finally:
        monkeypatch.undo()
    cells = {name: code_cell_text(source, language) for name, (source, language) in CODE_CELLS.items()}
    GOLDEN.parent.mkdir(exist_ok=True)
    document = {"prompts": prompts, "code cells": cells}
    GOLDEN.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(_write_golden())
