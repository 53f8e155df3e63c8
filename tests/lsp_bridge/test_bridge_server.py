"""The language server through a real LSP client, over a fixed catalog: every editor feature and its edge cases."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from bridge_harness import Bridge, document_edit, single_text_edit, start_bridge
from lsprotocol import types

# One server process serves the tests that need the default setup (each on its own document);
# the others start their own. That keeps this module at a few seconds.
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SERVER = Path(__file__).with_name("static_catalog_server.py")
CATALOG = {
    "servers": {
        "nb": {
            "prompts": [
                {
                    "name": "greet",
                    "title": "Greet someone",
                    "description": "Say hello to a person.",
                    "arguments": [
                        {"name": "name", "description": "who to greet"},
                        {"name": "lang", "required": False, "description": "language code"},
                    ],
                },
                {"name": "summarize_cell", "arguments": [{"name": "cell"}]},
                {"name": "dialogue", "description": "Two voices"},
                {"name": "broken"},
            ]
        },
        "kernel-1": {"prompts": [{"name": "greet"}]},
        "off": {"state": "down", "error": "it crashed"},
    },
    "values": ["python", "pytest", "pandas", "Ada Lovelace"],
}

StartBridge = Callable[..., AbstractAsyncContextManager[Bridge]]


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory) -> StartBridge:
    catalog = tmp_path_factory.mktemp("catalog") / "catalog.json"
    catalog.write_text(json.dumps(CATALOG))

    def begin(profile: str = "visual-studio-code", options: Any = None) -> AbstractAsyncContextManager[Bridge]:
        return start_bridge([sys.executable, str(SERVER), str(catalog)], profile=profile, options=options)

    return begin


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(start: StartBridge) -> AsyncIterator[Bridge]:
    async with start() as bridge:
        yield bridge


@pytest.fixture
def bridge(shared: Bridge) -> Bridge:
    shared.edits.clear()
    shared.accept_edits = True
    return shared


@pytest.fixture
def uri(request: pytest.FixtureRequest) -> str:
    """A document of its own for each test."""
    return f"file:///work/{re.sub(r'[^A-Za-z0-9_]+', '_', request.node.name)}.md"


def _labels(result: types.CompletionList) -> list[str]:
    return [item.label for item in result.items]


async def test_initialize_announces_triggers_resolve_and_the_render_command(bridge: Bridge) -> None:
    assert bridge.initialize_result is not None
    capabilities = bridge.initialize_result.capabilities
    assert capabilities.completion_provider is not None
    assert capabilities.completion_provider.trigger_characters == ("/", " ", "=")
    assert capabilities.completion_provider.resolve_provider
    assert capabilities.execute_command_provider is not None
    assert "mcpNotebook.renderPrompt" in capabilities.execute_command_provider.commands


async def test_slash_lists_every_command_as_a_snippet_in_rank_order(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/\n")
    result = await bridge.complete(uri, 0, 1)
    assert result.is_incomplete
    assert _labels(result) == [
        "/kernel-1:greet",
        "/nb:broken",
        "/nb:dialogue",
        "/nb:greet",
        "/nb:summarize_cell",
    ]
    greet = result.items[3]
    assert greet.insert_text_format == types.InsertTextFormat.Snippet
    assert isinstance(greet.text_edit, types.TextEdit)
    assert greet.text_edit.new_text == "/nb:greet name=${1:name}"
    assert greet.text_edit.range == types.Range(types.Position(0, 0), types.Position(0, 1))
    assert greet.detail == "Greet someone"
    assert [item.sort_text for item in result.items] == sorted(item.sort_text or "" for item in result.items)


async def test_typed_text_ranks_prefix_before_word_start_before_substring(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/gre\n/cell\n/ummar\n")
    assert _labels(await bridge.complete(uri, 0, 4)) == ["/kernel-1:greet", "/nb:greet"]
    assert _labels(await bridge.complete(uri, 1, 5)) == ["/nb:summarize_cell"]
    assert _labels(await bridge.complete(uri, 2, 6)) == ["/nb:summarize_cell"]


async def test_documentation_comes_from_resolve_in_vs_code(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:gr\n")
    (item,) = (await bridge.complete(uri, 0, 6)).items
    assert item.documentation is None
    resolved = await bridge.client.completion_item_resolve_async(item)
    assert isinstance(resolved.documentation, types.MarkupContent)
    assert resolved.documentation.kind == types.MarkupKind.Markdown
    text = resolved.documentation.value
    assert "**Greet someone**" in text and "Say hello to a person." in text
    assert "`name` *(required)* — who to greet" in text and "`lang` — language code" in text


async def test_old_neovim_gets_plain_text_and_inline_documentation(start: StartBridge, uri: str) -> None:
    async with start(profile="neovim@v0.10.0") as bridge:
        bridge.open(uri, "/nb:gr\n")
        (item,) = (await bridge.complete(uri, 0, 6)).items
        assert item.insert_text_format == types.InsertTextFormat.PlainText
        assert isinstance(item.text_edit, types.TextEdit)
        assert item.text_edit.new_text == "/nb:greet name="
        assert isinstance(item.documentation, types.MarkupContent)
        assert "who to greet" in item.documentation.value


async def test_current_neovim_gets_snippets(start: StartBridge, uri: str) -> None:
    async with start(profile="neovim") as bridge:
        bridge.open(uri, "/nb:gr\n")
        (item,) = (await bridge.complete(uri, 0, 6)).items
        assert item.insert_text_format == types.InsertTextFormat.Snippet


async def test_no_completion_away_from_a_slash_position(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "a/b and text\n")
    assert (await bridge.complete(uri, 0, 2)).items == ()
    assert (await bridge.complete(uri, 0, 8)).items == ()


async def test_other_file_types_are_left_alone_unless_star_is_set(start: StartBridge) -> None:
    uri = "file:///work/code.py"
    async with start() as bridge:
        bridge.open(uri, "/\n", language_id="python")
        assert (await bridge.complete(uri, 0, 1)).items == ()
    async with start(options={"mcpNotebook": {"fileTypes": "*"}}) as bridge:
        bridge.open(uri, "/\n", language_id="python")
        assert len((await bridge.complete(uri, 0, 1)).items) == 5


async def test_trigger_character_comes_from_initialization_options(start: StartBridge, uri: str) -> None:
    async with start(options={"trigger": "#"}) as bridge:
        assert bridge.initialize_result is not None
        provider = bridge.initialize_result.capabilities.completion_provider
        assert provider is not None and provider.trigger_characters == ("#", " ", "=")
        bridge.open(uri, "#nb:gr\n/nb:gr\n")
        assert _labels(await bridge.complete(uri, 0, 6)) == ["#nb:greet"]
        assert (await bridge.complete(uri, 1, 6)).items == ()


async def test_argument_names_are_offered_required_first_and_not_twice(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet \n/nb:greet name=Ada \n/nb:greet la\n")
    assert _labels(await bridge.complete(uri, 0, 10)) == ["name=", "lang="]
    assert _labels(await bridge.complete(uri, 1, 19)) == ["lang="]
    (lang,) = (await bridge.complete(uri, 2, 12)).items
    assert isinstance(lang.text_edit, types.TextEdit)
    assert lang.text_edit.range == types.Range(types.Position(2, 10), types.Position(2, 12))


async def test_argument_values_come_from_the_server_with_the_other_arguments(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet lang=p\n/nb:greet name=Ada lang=py\n")
    assert _labels(await bridge.complete(uri, 0, 16)) == ["python", "pytest", "pandas"]
    assert _labels(await bridge.complete(uri, 1, 26)) == ["python", "pytest", "context:name=Ada"]


async def test_quoted_values_with_spaces_are_completed_and_quoted(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, '/nb:greet name="Ada L\n')
    (item,) = (await bridge.complete(uri, 0, 21)).items
    assert item.label == "Ada Lovelace"
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.new_text == '"Ada Lovelace"'
    assert item.text_edit.range == types.Range(types.Position(0, 15), types.Position(0, 21))


async def test_positions_count_utf16_units(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "😀 /nb:gr\n")
    (item,) = (await bridge.complete(uri, 0, 9)).items
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.range == types.Range(types.Position(0, 3), types.Position(0, 9))


async def test_hover_shows_command_and_argument_documentation(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet name=Ada\n/off:x\nplain\n")
    hover = await bridge.hover(uri, 0, 3)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "**Greet someone**" in hover.contents.value
    assert hover.range == types.Range(types.Position(0, 0), types.Position(0, 9))
    argument = await bridge.hover(uri, 0, 11)
    assert argument is not None and isinstance(argument.contents, types.MarkupContent)
    assert "who to greet" in argument.contents.value
    down = await bridge.hover(uri, 1, 2)
    assert down is not None and isinstance(down.contents, types.MarkupContent)
    assert "down: it crashed" in down.contents.value
    assert await bridge.hover(uri, 2, 2) is None


async def test_diagnostics_flag_problems_as_soon_as_a_document_opens(bridge: Bridge, uri: str) -> None:
    text = "\n".join(
        [
            "/nb:greet name=Ada",
            "/nb:gret name=Ada",
            "/nb:greet lang=py",
            "/zzz:x",
            "/off:x",
            "/greet",
            "/nb:greet name=Ada Lovelace",
            "see /usr/bin",
        ]
    )
    bridge.open(uri, text)
    found = await bridge.diagnostics(uri, lambda d: len(d) > 0)
    by_line = {(d.range.start.line, d.code): d for d in found}
    assert sorted(by_line) == [
        (1, "unknown-prompt"),
        (2, "missing-argument"),
        (3, "unknown-server"),
        (4, "server-unavailable"),
        (5, "ambiguous-prompt"),
        (6, "trailing-text"),
    ]
    assert "did you mean /nb:greet" in by_line[(1, "unknown-prompt")].message
    assert by_line[(1, "unknown-prompt")].severity == types.DiagnosticSeverity.Error
    assert by_line[(2, "missing-argument")].message == "/nb:greet needs name="
    assert by_line[(4, "server-unavailable")].severity == types.DiagnosticSeverity.Information
    assert by_line[(6, "trailing-text")].range == types.Range(types.Position(6, 19), types.Position(6, 27))
    assert by_line[(6, "trailing-text")].severity == types.DiagnosticSeverity.Hint


async def test_diagnostics_follow_edits(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet\n")
    await bridge.diagnostics(uri, lambda d: [x.code for x in d] == ["missing-argument"])
    bridge.replace(uri, "/nb:greet name=Ada\n")
    assert await bridge.diagnostics(uri, lambda d: len(d) == 0) == ()


async def test_code_action_resolves_to_one_versioned_edit_of_the_line(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "# Notes\nPlease /nb:greet name=Ada lang=py\n")
    (action,) = await bridge.code_actions(uri, 1)
    assert action.title == "Render prompt /nb:greet"
    assert action.kind == types.CodeActionKind.RefactorInline
    assert action.edit is None  # rendered only when the user picks it
    resolved = await bridge.client.code_action_resolve_async(action)
    change = document_edit(resolved.edit)
    assert change.text_document.version == 1
    edit = single_text_edit(resolved.edit)
    assert edit.range == types.Range(types.Position(1, 7), types.Position(1, 33))
    assert edit.new_text == "greet: lang=py, name=Ada"


async def test_failed_resolve_leaves_the_action_without_edit_and_says_why(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:broken\n")
    (action,) = await bridge.code_actions(uri, 0)
    resolved = await bridge.client.code_action_resolve_async(action)
    assert resolved.edit is None
    found = await bridge.diagnostics(uri, lambda d: any(x.code == "render-failed" for x in d))
    assert any("failed on purpose" in d.message for d in found)


async def test_render_command_replaces_the_line_through_apply_edit(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "# Notes\nPlease /nb:greet name=Ada lang=py\n")
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 1])
    assert result == {"applied": True, "text": "greet: lang=py, name=Ada", "error": None}
    (params,) = bridge.edits
    assert params.label == "Render prompt"
    edit = single_text_edit(params.edit)
    assert edit.range == types.Range(types.Position(1, 7), types.Position(1, 33))
    assert edit.new_text == "greet: lang=py, name=Ada"


async def test_neovim_gets_a_plain_changes_edit(start: StartBridge, uri: str) -> None:
    async with start(profile="neovim") as bridge:
        bridge.open(uri, "/nb:dialogue\n")
        result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
        assert result["applied"] is True
        (params,) = bridge.edits
        assert params.edit.changes is not None
        (edit,) = params.edit.changes[uri]
        assert edit.new_text == "## User\n\nQuestion?\n\n## Assistant\n\nAnswer."


async def test_no_code_action_without_a_known_command(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "plain text\n/nb:nope\n")
    assert await bridge.code_actions(uri, 0) == []
    assert await bridge.code_actions(uri, 1) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/nb:greet lang=py", "/nb:greet needs name="),
        ("/nb:broken", "Cannot render /nb:broken: nb: Prompt 'broken' failed on purpose"),
        ("/nb:nope", "Unknown prompt 'nope' on MCP server 'nb'"),
        ("/off:x", "MCP server 'off' is not connected (down: it crashed)"),
        ("just text", "No slash command on line 1"),
    ],
)
async def test_render_errors_are_shown_and_pinned_to_the_line_without_editing(
    bridge: Bridge, line: str, message: str, uri: str
) -> None:
    bridge.open(uri, line + "\n")
    await bridge.diagnostics(uri, lambda d: True)
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
    assert result == {"applied": False, "text": None, "error": message}
    assert bridge.edits == []
    found = await bridge.diagnostics(uri, lambda d: any(x.code == "render-failed" for x in d))
    failed = next(d for d in found if d.code == "render-failed")
    assert failed.message == message and failed.range.start.line == 0
    assert bridge.client.messages[-1].message == message
    assert bridge.client.messages[-1].type == types.MessageType.Error


async def test_a_refused_edit_is_reported(bridge: Bridge, uri: str) -> None:
    bridge.accept_edits = False
    bridge.open(uri, "/nb:greet name=Ada\n")
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
    assert result["applied"] is False
    assert result["error"] == "The editor did not apply the rendered prompt: read-only document"
    assert len(bridge.edits) == 1


async def test_settings_pushed_by_the_editor_apply_at_once(start: StartBridge, uri: str) -> None:
    code = "file:///work/script.py"
    async with start() as bridge:
        bridge.open(code, "/\n", language_id="python")
        assert (await bridge.complete(code, 0, 1)).items == ()
        bridge.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"mcpNotebook": {"fileTypes": "*", "diagnostics": False}})
        )
        assert len((await bridge.complete(code, 0, 1)).items) == 5
        bridge.open(uri, "/nb:nope\n")
        assert await bridge.diagnostics(uri, lambda d: True) == ()


async def test_a_bad_start_up_option_is_reported_once_the_editor_is_ready(start: StartBridge) -> None:
    async with start(options={"maxItems": -1}) as bridge:
        await bridge.wait_for(types.WINDOW_SHOW_MESSAGE, lambda: bool(bridge.client.messages))
        (message,) = bridge.client.messages
        assert message.message == "mcpNotebook.maxItems must be a whole number from 1 to 5000; keeping 100"


async def test_a_bad_setting_is_reported_to_the_user(start: StartBridge) -> None:
    async with start() as bridge:
        bridge.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"mcpNotebook": {"images": "inline"}})
        )
        await bridge.wait_for(types.WINDOW_SHOW_MESSAGE, lambda: bool(bridge.client.messages))
        (message,) = bridge.client.messages
        assert message.type == types.MessageType.Warning
        assert message.message.startswith("mcpNotebook.images must be")


async def test_every_command_on_a_line_is_rendered_in_the_same_edit(bridge: Bridge, uri: str) -> None:
    bridge.open(uri, "/nb:greet name=Ada then /nb:summarize_cell cell=3\n")
    (action,) = await bridge.code_actions(uri, 0)
    assert action.title == "Render prompt /nb:greet, /nb:summarize_cell"
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
    assert result["applied"] is True
    (params,) = bridge.edits
    change = document_edit(params.edit)
    assert [(e.range.start.character, e.range.end.character, e.new_text) for e in change.edits] == [
        (0, 19, "greet: name=Ada\n\n"),  # "then" stays, on a line of its own
        (24, 49, "summarize_cell: cell=3"),
    ]
