"""What a new editor user meets first, through a real LSP client over a fixed catalog.

The menu opens by itself on the trigger characters (and only on slash lines),
says when servers are still connecting, renders text that reads like a
prompt, refuses bad render requests with clear errors, and answers within a
second whatever the size of the line or the document.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from bridge_harness import Bridge, document_edit, start_bridge
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SERVER = Path(__file__).with_name("static_catalog_server.py")
GREET = {
    "name": "greet",
    "title": "Greet someone",
    "arguments": [{"name": "name", "description": "who"}, {"name": "lang", "required": False}],
}
CATALOG = {
    "servers": {
        "nb": {"prompts": [GREET, {"name": "monologue"}, {"name": "dialogue"}, {"name": "summarize"}]},
        "slow": {"state": "connecting"},
        "later": {"state": "connecting"},
    },
    "values": ["python", "pytest", "Ada Lovelace"],
}
PATIENCE = 1.0  # seconds: the editor's patience for any answer

StartBridge = Callable[..., AbstractAsyncContextManager[Bridge]]


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory) -> StartBridge:
    folder = tmp_path_factory.mktemp("first-hour")

    def begin(catalog: dict[str, Any] = CATALOG, options: Any = None) -> AbstractAsyncContextManager[Bridge]:
        path = folder / f"catalog-{len(list(folder.iterdir()))}.json"
        path.write_text(json.dumps(catalog))
        return start_bridge([sys.executable, str(SERVER), str(path)], options=options)

    return begin


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bridge(start: StartBridge) -> AsyncIterator[Bridge]:
    async with start() as bridge:
        yield bridge


_OPENED = iter(range(1_000_000))


@pytest.fixture
def uri(request: pytest.FixtureRequest) -> str:
    """A document of its own for each test (parameters that differ only in spaces included)."""
    return f"file:///work/{next(_OPENED)}-{re.sub(r'[^A-Za-z0-9_]+', '_', request.node.name)[:80]}.md"


def _labels(result: types.CompletionList) -> list[str]:
    return [item.label for item in result.items]


def _apply(line: str, edits: list[types.TextEdit]) -> str:
    """The line after the edits (one line, ASCII: editor columns are Python columns)."""
    for edit in sorted(edits, key=lambda e: e.range.start.character, reverse=True):
        line = line[: edit.range.start.character] + edit.new_text + line[edit.range.end.character :]
    return line


# -- the menu opens by itself --------------------------------------------------------------------


async def test_the_server_asks_for_the_menu_after_slash_space_and_equals(bridge: Bridge) -> None:
    assert bridge.initialize_result is not None
    provider = bridge.initialize_result.capabilities.completion_provider
    assert provider is not None and provider.trigger_characters is not None
    assert set(provider.trigger_characters) == {"/", " ", "="}


@pytest.mark.parametrize(
    ("text", "trigger", "expected"),
    [
        ("/", "/", ["/nb:dialogue", "/nb:greet", "/nb:monologue", "/nb:summarize"]),
        ("Ask /", "/", ["/nb:dialogue", "/nb:greet", "/nb:monologue", "/nb:summarize"]),
        ("/nb:greet ", " ", ["name=", "lang="]),
        ("/nb:greet name=Ada ", " ", ["lang="]),
        ("/greet ", " ", ["name=", "lang="]),
        ("/nb:greet name=", "=", ["python", "pytest", "Ada Lovelace"]),
        ("/nb:greet name=Ada lang=", "=", ["python", "pytest", "Ada Lovelace", "context:name=Ada"]),
    ],
)
async def test_trigger_characters_open_the_menu_on_slash_lines(
    bridge: Bridge, uri: str, text: str, trigger: str, expected: list[str]
) -> None:
    bridge.open(uri, text + "\n")
    result = await bridge.complete(uri, 0, len(text), trigger=trigger)
    labels = [label for label in _labels(result) if not label.startswith("connecting")]
    assert labels == expected


NOT_SLASH_LINES = [
    ("Some prose, then a space ", " "),
    ("key = ", "="),
    ("a=", "="),
    ("path/", "/"),
    ("http://", "/"),
    ("see http://example.org/", "/"),
    ("a/b/c ", " "),
    ("x=1 y=", "="),
    # Text after a command is prose: a space there asks for nothing.
    ("/nb:greet name=Ada and then ", " "),
    ("/nb:greet name=Ada and ", " "),
    # A command no server has, and a server no one configured.
    ("/usr/bin ", " "),
    ("/nope:thing ", " "),
    ("/usr/bin x=", "="),
]


@pytest.mark.parametrize(("text", "trigger"), NOT_SLASH_LINES)
async def test_trigger_characters_elsewhere_return_nothing_fast(
    bridge: Bridge, uri: str, text: str, trigger: str
) -> None:
    bridge.open(uri, text + "\n")
    started = time.monotonic()
    result = await bridge.complete(uri, 0, len(text), trigger=trigger)
    assert result.items == ()
    assert time.monotonic() - started < PATIENCE


async def test_typing_prose_costs_next_to_nothing(bridge: Bridge, uri: str) -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 40
    bridge.open(uri, text + "\n")
    spaces = [i + 1 for i, ch in enumerate(text) if ch == " "]
    started = time.monotonic()
    for column in spaces:
        assert (await bridge.complete(uri, 0, column, trigger=" ")).items == ()
    assert (time.monotonic() - started) / len(spaces) < 0.05


# -- while servers connect -----------------------------------------------------------------------


async def test_connecting_servers_are_one_item_and_the_list_is_incomplete(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/\n")
    result = await bridge.complete(uri, 0, 1, trigger="/")
    assert result.is_incomplete is True
    *prompts, last = result.items
    assert [item.label for item in prompts] == ["/nb:dialogue", "/nb:greet", "/nb:monologue", "/nb:summarize"]
    assert last.label == "connecting to 2 servers…"
    assert last.detail == "later, slow"
    # Choosing it leaves the line as it is.
    assert isinstance(last.text_edit, types.TextEdit)
    assert _apply("/", [last.text_edit]) == "/"


async def test_the_connecting_item_shows_even_when_nothing_matches_yet(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/later:something\n")
    result = await bridge.complete(uri, 0, 7)
    assert result.is_incomplete is True
    assert _labels(result) == ["connecting to 2 servers…"]
    assert isinstance(result.items[0].text_edit, types.TextEdit)
    assert _apply("/later:something", [result.items[0].text_edit]) == "/later:something"


async def test_no_connecting_item_once_every_server_is_up(start: StartBridge, uri: str) -> None:
    catalog = {"servers": {"nb": CATALOG["servers"]["nb"]}}  # type: ignore[index]
    async with start(catalog) as bridge:
        bridge.open(uri, "/\n")
        assert _labels(await bridge.complete(uri, 0, 1)) == [
            "/nb:dialogue",
            "/nb:greet",
            "/nb:monologue",
            "/nb:summarize",
        ]


# -- rendered text -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "rendered"),
    [
        # One speaker, two messages: no heading, a blank line between the blocks.
        ("/nb:monologue", "First thought.\n\nSecond."),
        # The speaker changes: a heading for each.
        ("/nb:dialogue", "## User\n\nQuestion?\n\n## Assistant\n\nAnswer."),
        # Text after the command stays, on a line of its own.
        ("/nb:greet name=Ada and more", "greet: name=Ada\n\nand more"),
        ("/nb:greet name=Ada    and more  ", "greet: name=Ada\n\nand more  "),
        ("/nb:monologue then this.", "First thought.\n\nSecond.\n\nthen this."),
        ("Before: /nb:greet name=Ada", "Before: greet: name=Ada"),
        ("/nb:greet name=Ada /nb:monologue", "greet: name=Ada\n\nFirst thought.\n\nSecond."),
        ("/nb:greet name=Ada   ", "greet: name=Ada   "),
    ],
)
async def test_rendered_text_reads_like_a_prompt(bridge: Bridge, uri: str, line: str, rendered: str) -> None:
    bridge.edits.clear()
    bridge.open(uri, line + "\n")
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
    assert result["applied"] is True, result
    (params,) = bridge.edits
    edits = [e for e in document_edit(params.edit).edits if isinstance(e, types.TextEdit)]
    assert _apply(line, edits) == rendered


# -- bad render requests -------------------------------------------------------------------------

BAD_RENDER_ARGUMENTS: list[tuple[list[Any], str]] = [
    ([], "takes (uri, line)"),
    (["file:///work/open.md"], "takes (uri, line)"),
    ([None, 0], "takes (uri, line)"),
    ([3, 0], "takes (uri, line)"),
    (["file:///work/open.md", "0"], "takes (uri, line)"),
    (["file:///work/open.md", True], "takes (uri, line)"),
    (["file:///work/open.md", 1.5], "takes (uri, line)"),
    (["file:///work/open.md", None], "takes (uri, line)"),
    (["file:///work/never-opened.md", 0], "is not a document open in the editor"),
    (["", 0], "is not a document open in the editor"),
    (["not a uri at all", 0], "is not a document open in the editor"),
    (["file:///etc/passwd", 0], "is not a document open in the editor"),
    (["file:///work/" + "x" * 1_000_000, 0], "is not a document open in the editor"),
    (["file:///work/open.md", -1], "line -1 is not in"),
    (["file:///work/open.md", 2], "line 2 is not in"),
    (["file:///work/open.md", 10**12], "is not in"),
]


@pytest.mark.parametrize(("arguments", "message"), BAD_RENDER_ARGUMENTS)
async def test_a_bad_render_request_is_a_clear_invalid_params_error(
    bridge: Bridge, arguments: list[Any], message: str
) -> None:
    bridge.edits.clear()
    bridge.open("file:///work/open.md", "/nb:greet name=Ada\n")
    with pytest.raises(JsonRpcException) as raised:
        await bridge.execute("mcpNotebook.renderPrompt", arguments)
    error = raised.value
    assert error.code == -32602
    assert message in error.message
    assert len(error.message) < 400
    assert "Traceback" not in error.message and "Error(" not in error.message
    # Nothing was edited, and the server goes on serving.
    assert bridge.edits == []
    assert _labels(await bridge.complete("file:///work/open.md", 0, 1))[:1] == ["/nb:dialogue"]


# -- bounded work per request --------------------------------------------------------------------


def _timed(started: float) -> float:
    return time.monotonic() - started


@pytest.mark.parametrize("count", [100, 1_000, 10_000])
async def test_a_line_with_thousands_of_arguments_answers_within_a_second(bridge: Bridge, uri: str, count: int) -> None:
    line = "/nb:greet " + " ".join(f"a{i}=v{i}" for i in range(count))
    bridge.open(uri, line + "\n")
    started = time.monotonic()
    await bridge.complete(uri, 0, len(line))
    await bridge.complete(uri, 0, len(line) // 2, trigger=" ")
    await bridge.hover(uri, 0, len(line) // 2)
    await bridge.hover(uri, 0, 3)
    assert _timed(started) < 4 * PATIENCE
    await bridge.diagnostics(uri, lambda found: True)
    started = time.monotonic()
    await bridge.complete(uri, 0, len(line) - 1)
    assert _timed(started) < PATIENCE


def _big_documents() -> dict[str, str]:
    """Ten-megabyte documents of several shapes, each with a `/` at its very end."""
    size = 10_000_000
    prose = "Words and more words, nothing to see here.\n"
    slash_lines = "/nb:greet name=Ada lang=en and some words /usr/bin:/bin\n"
    unknown = "/nope:thing a=1 b=2 c=3\n"
    return {
        "prose": prose * (size // len(prose)) + "/",
        "slash lines": slash_lines * (size // len(slash_lines)) + "/",
        "unknown commands": unknown * (size // len(unknown)) + "/",
        "one long line": ("/x a=1 " * (size // 7)) + "\n/",
    }


@pytest.mark.parametrize("shape", list(_big_documents()))
async def test_completion_in_a_ten_megabyte_document_answers_within_a_second(
    bridge: Bridge, uri: str, shape: str
) -> None:
    text = _big_documents()[shape]
    last = text.count("\n")
    bridge.open(uri, text)
    started = time.monotonic()
    result = await bridge.complete(uri, last, 1, trigger="/")
    assert _timed(started) < PATIENCE
    assert "/nb:greet" in _labels(result)
    # Hover and a second completion too, while the document is still being checked.
    started = time.monotonic()
    await bridge.hover(uri, 0, 2)
    await bridge.complete(uri, last, 1)
    assert _timed(started) < PATIENCE
    found = await bridge.diagnostics(uri, lambda found: True, deadline=60.0)
    assert len(found) <= 500
