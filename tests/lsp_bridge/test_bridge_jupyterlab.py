"""Completion as JupyterLab (jupyterlab-lsp 5) needs it, through a real LSP client, over a fixed catalog.

jupyterlab-lsp ignores `textEdit` and snippets: it writes an item's
`insertText` at the end of CodeMirror's token at the cursor (or over that
token, when some item starts with it) and filters by `filterText`. The bridge
started by jupyter-lsp (MCP_NOTEBOOK_LSP_CLIENT=jupyterlab) answers so: what
follows the cursor, or, on a slash line that is a paragraph of its own, the
whole new line, with "render here" and "render below". Editors started
otherwise get what they always got.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from bridge_harness import Bridge, start_bridge
from lsprotocol import types
from static_catalog_server import SLOW

from lsp_bridge.jupyter_host import CLIENT_ENV, started_by_jupyterlab
from mcp_notebook.jupyter import lsp_spec

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SERVER = Path(__file__).with_name("static_catalog_server.py")
CATALOG = {
    "servers": {
        "nb": {
            "prompts": [
                {
                    "name": "greet",
                    "title": "Greet someone",
                    "arguments": [
                        {"name": "name", "description": "who to greet"},
                        {"name": "lang", "required": False},
                    ],
                },
                {"name": "summarize_cell", "arguments": [{"name": "cell"}]},
                {"name": "slow"},
            ]
        },
        "kernel-1": {"prompts": [{"name": "greet"}]},
    },
    "values": ["python", "pytest", "Ada Lovelace"],
}
# What jupyterlab-lsp 5.3 announces for completion (its completion feature's capabilities).
JUPYTERLAB = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(
        completion=types.CompletionClientCapabilities(
            dynamic_registration=True,
            completion_item=types.ClientCompletionItemOptions(
                snippet_support=False,
                commit_characters_support=True,
                documentation_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText],
                deprecated_support=True,
                preselect_support=False,
            ),
            context_support=True,
        ),
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]),
    )
)


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.json"
    path.write_text(json.dumps(CATALOG))
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab(catalog_file: Path) -> AsyncIterator[Bridge]:
    """The bridge as jupyter-lsp starts it (its spec's environment), initialized with jupyterlab-lsp's capabilities."""
    env = lsp_spec.language_server_spec(None)["mcp-notebook"]["env"]
    command = [sys.executable, str(SERVER), str(catalog_file)]
    async with start_bridge(command, capabilities=JUPYTERLAB, env={CLIENT_ENV: env[CLIENT_ENV]}) as bridge:
        yield bridge


@pytest.fixture
def uri(request: pytest.FixtureRequest) -> str:
    return f"file:///work/{re.sub(r'[^A-Za-z0-9_]+', '_', request.node.name)}.md"


def _shown(result: types.CompletionList) -> list[tuple[str, str | None]]:
    """(label, insertText) of each item, ordered as JupyterLab orders ties: by sortText."""
    return [(i.label, i.insert_text) for i in sorted(result.items, key=lambda i: i.sort_text or i.label)]


async def test_the_spec_of_jupyter_lsp_says_the_editor_is_jupyterlab() -> None:
    env = lsp_spec.language_server_spec(None)["mcp-notebook"]["env"]
    assert started_by_jupyterlab(env)
    assert not started_by_jupyterlab({})
    assert not started_by_jupyterlab({CLIENT_ENV: "vscode"})


async def test_after_text_in_the_same_paragraph_items_say_what_follows_the_cursor(lab: Bridge, uri: str) -> None:
    lab.open(uri, "Some words first\n/nb:gr")
    result = await lab.complete(uri, 1, 6, trigger=None)
    assert _shown(result) == [("/nb:greet", "eet name=")]
    (item,) = result.items
    assert item.filter_text == "eet name="  # JupyterLab filters by what is typed after the request
    assert item.insert_text_format == types.InsertTextFormat.PlainText  # no snippets: it would write `${1:…}`


async def test_a_bare_prompt_name_continues_as_typed_and_fuzzy_matches_are_left_out(lab: Bridge, uri: str) -> None:
    lab.open(uri, "Notes\n/su")
    result = await lab.complete(uri, 1, 3)
    # `/summarize_cell` is nb's alone, so it continues `/su`; `/nb:summarize_cell` could not be written from here.
    assert _shown(result) == [("/nb:summarize_cell", "mmarize_cell cell=")]
    lab.open(uri + "2", "Notes\n/gre")
    result = await lab.complete(uri + "2", 1, 4)
    assert _shown(result) == []  # `greet` is on two servers: `/greet` is no command, `/nb:greet` does not continue it


async def test_a_slash_line_of_its_own_is_answered_with_whole_lines(lab: Bridge, uri: str) -> None:
    lab.open(uri, "# Title\n\n/nb:gr\n")
    result = await lab.complete(uri, 2, 6, trigger=None)
    assert _shown(result) == [("/nb:greet", "/nb:greet name=")]
    assert result.items[0].filter_text == "/nb:greet name="


async def test_no_items_where_the_paragraph_goes_on_after_the_cursor(lab: Bridge, uri: str) -> None:
    lab.open(uri, "/nb:gr\nmore of the paragraph\n")
    assert (await lab.complete(uri, 0, 6)).items == ()
    lab.open(uri + "2", "/nb:gr and more\n")
    assert (await lab.complete(uri + "2", 0, 6)).items == ()
    lab.open(uri + "3", "/nb:gr  \n")  # JupyterLab's token ends after the spaces: the text would land there
    assert (await lab.complete(uri + "3", 0, 6)).items == ()


async def test_a_complete_slash_line_offers_to_render_here_or_below(lab: Bridge, uri: str) -> None:
    lab.open(uri, "Intro.\n\n/nb:greet name=py\n")
    result = await lab.complete(uri, 2, 17)
    assert _shown(result) == [
        ("python", "/nb:greet name=python"),  # the values first
        ("pytest", "/nb:greet name=pytest"),
        ("/nb:greet — render here", "greet: name=py"),
        ("/nb:greet — render below", "/nb:greet name=py\n\ngreet: name=py"),
    ]
    here = next(i for i in result.items if i.label.endswith("render here"))
    assert isinstance(here.documentation, types.MarkupContent)
    assert here.documentation.value == "greet: name=py"  # the preview of what replaces the line


async def test_a_space_after_a_complete_command_offers_the_arguments_left_and_rendering(lab: Bridge, uri: str) -> None:
    lab.open(uri, "/nb:greet name=Ada ")
    result = await lab.complete(uri, 0, 19, trigger=" ")
    assert _shown(result) == [
        ("lang=", "/nb:greet name=Ada lang="),
        ("/nb:greet — render here", "greet: name=Ada"),
        ("/nb:greet — render below", "/nb:greet name=Ada\n\ngreet: name=Ada"),  # without the space typed
    ]


async def test_render_below_leaves_no_typed_space_and_the_answer_still_replaces_the_line(lab: Bridge, uri: str) -> None:
    lab.open(uri, "/nb:greet name=Ada lang=py ")  # every argument given: no argument name is left to offer
    result = await lab.complete(uri, 0, 27, trigger=" ")
    typed = "/nb:greet name=Ada lang=py "
    assert _shown(result) == [
        ("/nb:greet — render here", "greet: lang=py, name=Ada"),
        ("/nb:greet — render below", "/nb:greet name=Ada lang=py\n\ngreet: lang=py, name=Ada"),
        ("/nb:greet — as typed", typed),  # starts with the whole token: JupyterLab replaces the line
    ]
    as_typed = result.items[-1]
    assert as_typed.filter_text and not set(as_typed.filter_text) & set(typed)  # filtered out of the menu


async def test_a_slow_rendering_is_not_waited_for_and_is_offered_by_a_later_answer(lab: Bridge, uri: str) -> None:
    lab.open(uri, "/nb:slow\n")
    started = time.monotonic()
    first = await lab.complete(uri, 0, 8)
    assert time.monotonic() - started < SLOW - 0.3  # the answer did not wait for the prompt
    assert [label for label, _ in _shown(first)] == ["/nb:slow"]
    for _ in range(100):  # each answer waits up to 0.2 s for the rendering started by the first one
        labels = [label for label, _ in _shown(await lab.complete(uri, 0, 8))]
        if "/nb:slow — render here" in labels:
            break
    assert labels == ["/nb:slow", "/nb:slow — render here", "/nb:slow — render below"]


async def test_nothing_is_rendered_while_a_value_is_missing(lab: Bridge, uri: str) -> None:
    lab.open(uri, "/nb:greet\n")
    assert [label for label, _ in _shown(await lab.complete(uri, 0, 9))] == ["/nb:greet"]
    lab.open(uri + "2", "/nb:greet name=\n")
    labels = [label for label, _ in _shown(await lab.complete(uri + "2", 0, 15, trigger="="))]
    assert labels == ["python", "pytest", "Ada Lovelace"]


async def test_values_continue_what_is_typed_quoted_where_needed(lab: Bridge, uri: str) -> None:
    lab.open(uri, "Text before.\n/nb:greet name=Ad")
    result = await lab.complete(uri, 1, 17)
    assert _shown(result) == []  # `Ada Lovelace` needs a quote before `Ad`: it cannot continue the text
    lab.open(uri + "2", 'Text before.\n/nb:greet name="Ad')
    result = await lab.complete(uri + "2", 1, 18)
    assert _shown(result) == [("Ada Lovelace", 'a Lovelace"')]


async def test_an_editor_started_otherwise_gets_text_edits_as_before(catalog_file: Path) -> None:
    command = [sys.executable, str(SERVER), str(catalog_file)]
    async with start_bridge(command, capabilities=JUPYTERLAB) as bridge:
        uri = "file:///work/editor.md"
        bridge.open(uri, "/nb:gr\n")
        (item,) = (await bridge.complete(uri, 0, 6)).items
        assert item.insert_text is None
        assert item.filter_text == "/nb:gr"
        assert isinstance(item.text_edit, types.TextEdit) and item.text_edit.new_text == "/nb:greet name="
