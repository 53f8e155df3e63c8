"""Diagnostics computed from a catalog snapshot, without an editor: what is flagged and what is left alone."""

from __future__ import annotations

from types import MappingProxyType

from lsprotocol import types

from lsp_bridge.diagnostics import resolve_command, to_diagnostics
from lsp_bridge.slashline import find_commands
from mcp_notebook.catalog.pool import CatalogSnapshot, ServerState, ServerStatus
from mcp_notebook.models import PromptArgument, PromptSpec
from mcp_notebook.ranking import CommandEntry, CommandIndex

GREET = PromptSpec("greet", arguments=(PromptArgument("name"), PromptArgument("lang", required=False)))
SNAPSHOT = CatalogSnapshot(
    1,
    MappingProxyType(
        {
            "nb": ServerStatus("nb", ServerState.READY, (GREET, PromptSpec("plot"))),
            "k": ServerStatus("k", ServerState.CONNECTING),
        }
    ),
    CommandIndex([CommandEntry("nb", GREET), CommandEntry("nb", PromptSpec("plot"))]),
)


def _codes(*lines: str, trigger: str = "/") -> list[tuple[int, str]]:
    def make_range(line: int, start: int, end: int) -> types.Range:
        return types.Range(types.Position(line, start), types.Position(line, end))

    found = to_diagnostics([f"{line}\n" for line in lines], SNAPSHOT, trigger, make_range)
    return [(d.range.start.line, str(d.code)) for d in found]


def test_a_correct_command_has_no_problems() -> None:
    assert _codes("/nb:greet name=Ada lang=py", "/greet name=Ada", "/plot") == []


def test_paths_and_urls_are_not_commands() -> None:
    assert _codes("/usr/local/bin:/usr/bin", "see https://example.com/x:y", "/etc/hosts", "/tmp") == []


def test_each_problem_has_its_code() -> None:
    assert _codes(
        "/nb:nope",
        "/nb:greet",
        "/nb:greet name=Ada color=red",
        "/nb:greet name=Ada name=Bob",
        '/nb:greet name="Ada',
        "/nb:greet Ada",
        "/zz:greet",
        "/k:anything",
    ) == [
        (0, "unknown-prompt"),
        (1, "missing-argument"),
        (2, "unknown-argument"),
        (3, "duplicate-argument"),
        (4, "unclosed-quote"),
        (5, "missing-argument"),
        (5, "trailing-text"),
        (6, "unknown-server"),
        (7, "server-unavailable"),
    ]


def test_a_misspelled_argument_name_is_told_which_was_meant() -> None:
    (found,) = to_diagnostics(
        ["/nb:greet name=Ada nmae=Bob\n"],
        SNAPSHOT,
        "/",
        lambda *_: types.Range(types.Position(0, 0), types.Position(0, 0)),
    )
    assert str(found.message).endswith("Did you mean name=?")


def test_words_between_arguments_are_stray() -> None:
    assert _codes("/nb:greet Ada name=Ada") == [(0, "stray-token")]


def test_the_trigger_setting_is_respected() -> None:
    assert _codes("#nb:nope", "/nb:nope", trigger="#") == [(0, "unknown-prompt")]


def test_bare_names_resolve_only_when_one_server_has_them() -> None:
    (command,) = find_commands("/greet name=Ada")
    entry = resolve_command(SNAPSHOT, command)
    assert entry is not None and entry.key == "nb:greet"
    (unknown,) = find_commands("/nothing")
    assert resolve_command(SNAPSHOT, unknown) is None
