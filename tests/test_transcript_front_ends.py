"""The front ends write rendered prompts through one module, and so agree where they overlap.

The CLI, IPython (text and Jupyter Markdown), the editor bridge and the
notebook and magic sources take fences, role headings and escaping from
`mcp_notebook.transcript`; no other module builds them. Where two front ends
show the same thing (an embedded text resource as a fence), they show it alike,
and no MIME type, kernel language or argument breaks a fence in any of them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from IPython.core.magic import Magics, cell_magic, magics_class
from markdown_it import MarkdownIt
from markdown_it.token import Token
from transcript_cases import code_cell_text

from lsp_bridge.render import to_editor_text
from mcp_notebook.ipython.display import conversation_markdown
from mcp_notebook.models import EmbeddedResource, PromptMessage, RenderedPrompt, TextContent
from mcp_notebook.sources.magics import (
    CapturedOutput,
    MagicInvocation,
    describe_magics,
    render_magic_documentation,
    to_live_result,
    to_magic_prompts,
)

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "mcp_notebook" / "transcript.py"

# -- only the transcript builds fences and headings ---------------------------------------------

_HEADING = re.compile(r"(?:^|\n)#{2,6} ")


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _built_markup(source: str) -> list[str]:
    """Strings that build a fence or a Markdown heading: in f-strings, `+`, `*`, `%` or `.format`."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: list[str] = []

    def literal_parts(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            return [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        return []

    def check(node: ast.AST, parts: list[str], *, backtick_alone: bool = False) -> None:
        for part in parts:
            if "```" in part or _HEADING.search(part) or (backtick_alone and part.strip("`") == "" and part):
                found.append(f"line {getattr(node, 'lineno', '?')}: {part!r}")

    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            check(node, literal_parts(node))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult | ast.Mod):
            for side in (node.left, node.right):
                check(node, literal_parts(side), backtick_alone=isinstance(node.op, ast.Mult))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            check(node, literal_parts(node.func.value))
    return found


def _modules() -> list[Path]:
    return sorted(p for pkg in ("mcp_notebook", "lsp_bridge") for p in (ROOT / pkg).rglob("*.py") if p != WRITER)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_only_the_transcript_builds_fences_and_markdown_headings(path: Path) -> None:
    assert _built_markup(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "source",
    [
        'x = f"```python\\n{code}\\n```"',
        'fence = "`" * max(3, n)',
        'x = "```" + lang',
        'print(f"## {role}\\n\\n{text}")',
        'x = "\\n## %s" % role',
        'x = "### {}".format(role)',
        'x = f"{a}\\n## User"',
    ],
)
def test_the_check_finds_a_fence_or_heading_built_elsewhere(source: str) -> None:
    assert _built_markup(source) != []


@pytest.mark.parametrize(
    "source",
    [
        '"""A docstring that shows ```python\\n## headings```."""',
        'if line.startswith("```"):\n    pass',
        'print(f"# Claude Code\\n{command}")',
        "x = fence(text, language)",
    ],
)
def test_the_check_lets_parsing_docstrings_and_comments_be(source: str) -> None:
    assert _built_markup(source) == []


def test_the_writer_itself_is_seen_building_them() -> None:
    assert _built_markup(WRITER.read_text(encoding="utf-8")) != []


# -- where front ends overlap, they agree -------------------------------------------------------


def _fences(markdown: str) -> list[tuple[str, str]]:
    return [(t.info, t.content) for t in _tokens(markdown) if t.type == "fence"]


def _tokens(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").parse(markdown)


def _resource_prompt(mime: str | None, text: str, uri: str = "file:///a/app.py") -> RenderedPrompt:
    resource = EmbeddedResource(uri=uri, mime_type=mime, text=text)
    return RenderedPrompt(messages=(PromptMessage("user", resource), PromptMessage("user", TextContent("after"))))


_MIME_TYPES = [
    None,
    "text/plain",
    "text/x-python",
    "TEXT/X-PYTHON",
    "text/x-python; charset=utf-8",
    "text/markdown",
    "text/csv",
    "application/json",
    "application/vnd.api+json",
    "application/octet-stream",
    "application/yaml",
]
_TEXTS = ["x = 1\n", "x = 1", "```\ninner\n```\n", "", "\n\n"]


@pytest.mark.parametrize("mime", _MIME_TYPES)
@pytest.mark.parametrize("text", _TEXTS)
def test_jupyter_and_the_editor_fence_an_embedded_text_alike_and_exactly(mime: str | None, text: str) -> None:
    prompt = _resource_prompt(mime, text)
    jupyter, editor = _fences(conversation_markdown(prompt)), _fences(to_editor_text(prompt))
    assert jupyter == editor
    assert [content for _info, content in editor] == [text if text.endswith("\n") else text + "\n"]


_HOSTILE_TYPES = ["text/x-`evil", "text/`", "text/a\n# injected", "text/a\r\nb", "text/a\u2028b", "text/```"]


def _fence_then_paragraph(markdown: str) -> None:
    """The markdown's code block closes, and the text after it ("after") is a paragraph again."""
    tokens = _tokens(markdown)
    fences = [i for i, t in enumerate(tokens) if t.type == "fence"]
    assert len(fences) == 1, markdown
    after = [t for t in tokens[fences[0] :] if t.type == "inline"]
    assert after and after[0].content == "after", markdown
    assert not [t for t in tokens if t.type == "heading_open"], markdown


@pytest.mark.parametrize("mime", _HOSTILE_TYPES)
def test_no_mime_type_breaks_the_fence_or_makes_a_heading(mime: str) -> None:
    prompt = _resource_prompt(mime, "body\n")
    _fence_then_paragraph(to_editor_text(prompt))
    _fence_then_paragraph(conversation_markdown(prompt))


@pytest.mark.parametrize("language", ["py`x", "`", "```", "py\n# injected", "py\r\nx", "py\u2028x"])
def test_no_kernel_language_breaks_a_code_cell_fence(language: str) -> None:
    _fence_then_paragraph(code_cell_text("x = 1", language) + "\n\nafter")


_BODIES = ["echo ```", "```\nrm -rf /\n```", "a\n````\nb", "x\n", ""]


@magics_class
class _ShellMagics(Magics):
    @cell_magic
    def bash(self, line: str, cell: str) -> None:
        """Run a cell in bash."""


def _magic_texts(body: str) -> list[str]:
    """What a cell magic's documentation prompt and its live result say ran, with `body` as the cell."""
    table = {kind: dict(entries) for kind, entries in _ShellMagics(shell=None).magics.items()}
    [info] = describe_magics(table)
    [spec] = to_magic_prompts([info], ())
    documented = render_magic_documentation(info, spec, {"body": body})
    invocation = MagicInvocation(name="bash", kind="cell", line="", body=body)
    live = to_live_result(spec, invocation, CapturedOutput(stdout="done\n"))
    blocks = (documented.messages[-1].content, live.messages[0].content)
    return [b.text for b in blocks if isinstance(b, TextContent)]


@pytest.mark.parametrize("body", _BODIES)
def test_a_magic_body_stays_inside_its_fence(body: str) -> None:
    texts = _magic_texts(body)
    assert len(texts) == 2
    for text in texts:
        [(info, content)] = _fences(text)
        assert (info, content) == ("python", f"%%bash\n{body}\n")


def test_a_uri_with_backticks_is_one_code_span_in_jupyter() -> None:
    markdown = conversation_markdown(_resource_prompt("text/plain", "a\n", uri="file:///a`b``c.txt"))
    spans = [
        c.content for t in _tokens(markdown) if t.type == "inline" for c in t.children or () if c.type == "code_inline"
    ]
    assert "file:///a`b``c.txt" in spans


@pytest.mark.parametrize("description", ["one\n# Heading", "one\r\n## Heading", "one\n\n- item", "one\n===", "a\n> b"])
def test_a_description_over_lines_stays_the_title_line_in_jupyter(description: str) -> None:
    prompt = RenderedPrompt(name="p", description=description, messages=(PromptMessage("user", TextContent("x")),))
    title = conversation_markdown(prompt).split("\n\n<div", 1)[0]
    assert [t.type for t in _tokens(title)] == ["paragraph_open", "inline", "paragraph_close"]
