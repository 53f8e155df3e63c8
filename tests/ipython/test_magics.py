"""%mcp in an in-process IPython shell, against real stdio test servers."""

from __future__ import annotations

import builtins
import signal
import sys
import threading
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from magics_harness import (
    DEADLINE,
    LEGACY_SERVER,
    isolated_shell,
    legacy_entry,
    live_children,
    wait_until,
    write_mcp_json,
)

from mcp_notebook.ipython import servers as server_hooks
from mcp_notebook.ipython.display import PromptConversation, PromptTable, ServerTable
from mcp_notebook.models import TextContent

__all__ = ["isolated_shell"]

pytestmark = pytest.mark.slow


def mcp(shell: InteractiveShell, line: str) -> object:
    return shell.run_line_magic("mcp", line)


@pytest.fixture
def docs(isolated_shell: InteractiveShell) -> InteractiveShell:
    """A shell whose project `mcp.json` names one server, `docs`."""
    write_mcp_json(Path.cwd(), {"docs": legacy_entry("--version", "2025-06-18")})
    return isolated_shell


def text_of(conversation: object) -> list[str]:
    assert isinstance(conversation, PromptConversation)
    return [m.content.text for m in conversation.messages if isinstance(m.content, TextContent)]


def test_servers_lists_the_projects_configuration_without_connecting(docs: InteractiveShell) -> None:
    others = {p.pid for p in live_children()}

    table = mcp(docs, "servers")

    assert isinstance(table, ServerTable)
    assert "docs" in repr(table) and "not connected" in repr(table) and "mcp.json" in repr(table)
    assert "<table>" in table._repr_html_()
    assert [p for p in live_children() if p.pid not in others] == []


def test_a_configured_server_connects_on_first_use_and_disconnect_stops_it(docs: InteractiveShell) -> None:
    others = {p.pid for p in live_children()}

    table = mcp(docs, "prompts docs")

    assert isinstance(table, PromptTable)
    assert "docs:greet" in repr(table)
    assert len([p for p in live_children() if p.pid not in others]) == 1
    assert "connected (2025-06-18)" in repr(mcp(docs, "servers"))

    mcp(docs, "disconnect docs")

    assert [p for p in live_children() if p.pid not in others] == []


def test_get_fills_arguments_from_quotes_variables_and_files(docs: InteractiveShell, tmp_path: Path) -> None:
    docs.user_ns["who"] = "Ada Lovelace"
    (tmp_path / "lang.txt").write_text("Rust", encoding="utf-8")

    by_var = mcp(docs, f"get docs:greet name=@who lang=@file:{tmp_path / 'lang.txt'}")
    quoted = mcp(docs, "get docs:greet name=\"Grace Hopper\" lang='plain C'")

    assert text_of(by_var)[0] == "Say hello to Ada Lovelace in Rust."
    assert text_of(quoted)[0] == "Say hello to Grace Hopper in plain C."


def test_a_variable_is_passed_as_data_never_evaluated(docs: InteractiveShell) -> None:
    docs.user_ns["payload"] = "__import__('os').getcwd()"

    assert text_of(mcp(docs, "get docs:greet name=@payload"))[0].startswith("Say hello to __import__('os')")
    with pytest.raises(UsageError, match="no variable named 'nope'"):
        mcp(docs, "get docs:greet name=@nope")
    with pytest.raises(UsageError, match="@ takes a variable name"):
        mcp(docs, "get docs:greet name=@payload.upper()")


def test_the_result_can_be_kept_and_converted_for_llm_sdks(docs: InteractiveShell) -> None:
    docs.run_cell("msgs = %mcp get docs:greet name=Ada")
    msgs = docs.user_ns["msgs"]

    assert isinstance(msgs, PromptConversation)
    assert msgs.to_openai()[1] == {"role": "assistant", "content": "Hello, **Ada**!"}
    assert msgs.to_anthropic()[0]["content"][0]["text"] == "Say hello to Ada in plain words."


def test_a_bare_prompt_name_works_when_one_server_has_it(docs: InteractiveShell) -> None:
    assert text_of(mcp(docs, "get greet name=Bo"))[0] == "Say hello to Bo in plain words."


def test_a_bare_name_offered_by_two_servers_must_be_qualified(isolated_shell: InteractiveShell) -> None:
    write_mcp_json(Path.cwd(), {"one": legacy_entry(), "two": legacy_entry()})

    with pytest.raises(UsageError, match="several servers; name one: one:greet, two:greet"):
        mcp(isolated_shell, "get greet name=x")


def test_an_unknown_prompt_suggests_close_names(docs: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"Unknown prompt: docs:gret; did you mean docs:greet\? \(%mcp prompts docs"):
        mcp(docs, "get docs:gret name=x")
    with pytest.raises(UsageError, match=r"Unknown prompt: gret; did you mean docs:greet\? \(%mcp prompts lists"):
        mcp(docs, "get gret")


def test_a_missing_argument_is_named_alone_with_the_call_to_make(docs: InteractiveShell) -> None:
    with pytest.raises(UsageError) as caught:
        mcp(docs, 'get docs:greet lang="rust 2024"')

    # Only the missing argument (not `lang`, which was given), and the user's own call completed.
    assert str(caught.value) == (
        "Missing required argument for docs:greet: name. "
        "Call it as: %mcp get docs:greet 'lang=rust 2024' name=…\n"
        "  name: who to greet"
    )


def test_an_unknown_server_is_named_with_the_known_ones(docs: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"no MCP server named 'dosc' \(known: docs\); did you mean docs\?"):
        mcp(docs, "get dosc:greet name=x")


def test_malformed_arguments_say_how_to_write_them(docs: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="expected NAME=VALUE"):
        mcp(docs, "get docs:greet Ada")
    with pytest.raises(UsageError, match="close your quotes"):
        mcp(docs, 'get docs:greet name="Ada')


def test_complete_prints_the_servers_suggestions(docs: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    mcp(docs, "complete docs:greet lang r")

    assert capsys.readouterr().out.splitlines() == ["rust", "ruby"]


def test_connect_starts_a_command_given_after_double_dash(isolated_shell: InteractiveShell) -> None:
    mcp(isolated_shell, f"connect adhoc -- {sys.executable} {LEGACY_SERVER} --version 2025-03-26")

    assert "connected (2025-03-26)" in repr(mcp(isolated_shell, "servers"))
    assert text_of(mcp(isolated_shell, "get adhoc:greet name=x"))[0] == "Say hello to x in plain words."


def test_a_server_that_cannot_start_is_a_usage_error_that_says_why(isolated_shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="command not found"):
        mcp(isolated_shell, "connect ghost -- no-such-mcp-server-1b6582")
    assert "ghost" not in repr(mcp(isolated_shell, "servers"))


def test_a_list_change_on_the_server_refreshes_the_prompt_table(docs: InteractiveShell) -> None:
    assert "docs:grown_1" not in repr(mcp(docs, "prompts docs"))

    mcp(docs, "get docs:grow")

    wait_until(lambda: "docs:grown_1" in repr(mcp(docs, "prompts docs")), "the new prompt is listed")


def test_a_server_asking_for_input_is_answered_with_input(
    docs: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, str]] = []

    def typed(question: str = "") -> str:
        asked.append((question, threading.current_thread().name))
        return "teal"

    monkeypatch.setattr(builtins, "input", typed)

    rendered = mcp(docs, "get docs:ask")

    assert text_of(rendered) == ["Paint it teal."]
    assert asked == [("colour: ", threading.current_thread().name)]  # on the thread that ran the magic


def test_the_input_hook_can_be_replaced(docs: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    async def form(request: object) -> dict[str, str]:
        return {"colour": "from a form"}

    monkeypatch.setattr(server_hooks, "input_handler", form)

    assert text_of(mcp(docs, "get docs:ask")) == ["Paint it from a form."]


@pytest.mark.usefixtures("sigint_raises_keyboard_interrupt")
def test_ctrl_c_cancels_a_slow_request_and_the_shell_stays_usable(
    isolated_shell: InteractiveShell, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    write_mcp_json(Path.cwd(), {"docs": legacy_entry("--log", str(log))})
    mcp(isolated_shell, "prompts docs")
    main = threading.main_thread().ident
    assert main is not None

    def interrupt_when_held() -> None:
        wait_until(lambda: log.exists() and "holding" in log.read_text(), "the server holds the request")
        signal.pthread_kill(main, signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_when_held, daemon=True)
    interrupter.start()
    with pytest.raises(KeyboardInterrupt):
        mcp(isolated_shell, "get docs:slow")
    interrupter.join(DEADLINE)

    wait_until(lambda: "cancelled" in log.read_text(), "the server saw the cancellation")
    assert text_of(mcp(isolated_shell, "get docs:greet name=after"))[0] == "Say hello to after in plain words."


def test_every_subcommand_has_help_with_examples(
    isolated_shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    for sub in ("servers", "connect", "disconnect", "prompts", "get", "complete", "help"):
        assert mcp(isolated_shell, f"{sub} --help") is None
        out = capsys.readouterr().out
        assert out.startswith(f"usage: %mcp {sub}"), out
        assert "examples:\n  %mcp" in out


def test_mcp_help_prints_the_overview_as_plain_text(
    isolated_shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    mcp(isolated_shell, "help")
    out = capsys.readouterr().out

    assert out.startswith("%mcp [subcommand] [arguments ...]\n"), out
    assert "\n  %mcp servers " in out  # the examples keep their indentation, and only theirs


def test_mcp_question_mark_shows_the_overview_with_examples(isolated_shell: InteractiveShell) -> None:
    doc = isolated_shell.find_line_magic("mcp").__doc__

    assert "%mcp [subcommand] [arguments ...]" in doc
    assert "msgs = %mcp get docs:code_review" in doc
    assert "Ctrl-C cancels" in doc


def test_an_unknown_subcommand_suggests_the_closest(isolated_shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="no subcommand 'promts'; did you mean prompts"):
        mcp(isolated_shell, "promts")


def test_disconnecting_a_server_that_is_not_connected_says_so(isolated_shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="'docs' is not connected"):
        mcp(isolated_shell, "disconnect docs")


def test_unloading_disconnects_every_server_and_removes_the_magics(isolated_shell: InteractiveShell) -> None:
    others = {p.pid for p in live_children()}
    threads_before = set(threading.enumerate())  # another test's loop may have started the worker pool
    mcp(isolated_shell, f"connect a -- {sys.executable} {LEGACY_SERVER}")
    mcp(isolated_shell, f"connect b -- {sys.executable} {LEGACY_SERVER}")
    assert len([p for p in live_children() if p.pid not in others]) == 2

    isolated_shell.run_line_magic("unload_ext", "mcp_notebook")

    assert [p for p in live_children() if p.pid not in others] == []
    assert isolated_shell.find_line_magic("mcp") is None
    assert isolated_shell.find_cell_magic("prompt") is None
    assert not [t for t in set(threading.enumerate()) - threads_before if t.name.startswith("mcp-notebook")]
    isolated_shell.run_line_magic("load_ext", "mcp_notebook")  # the fixture unloads it again
