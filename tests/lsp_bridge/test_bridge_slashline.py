"""Parsing the slash line: commands, arguments, quoting, and what the cursor would complete."""

from __future__ import annotations

import pytest

from lsp_bridge.slashline import (
    ArgumentNameContext,
    ArgumentValueContext,
    CommandNameContext,
    context_at,
    find_commands,
    format_invocation,
    quote_value,
    split_command_name,
)


def test_command_at_start_of_line_is_found_with_its_arguments() -> None:
    (command,) = find_commands("/nb:greet name=Ada lang=py")
    assert command.name == "nb:greet"
    assert (command.server, command.prompt) == ("nb", "greet")
    assert command.values() == {"name": "Ada", "lang": "py"}
    assert (command.start, command.name_end, command.end) == (0, 9, 26)


def test_command_after_whitespace_is_found() -> None:
    (command,) = find_commands("Please run /nb:greet name=Ada")
    assert command.start == 11
    assert command.values() == {"name": "Ada"}


@pytest.mark.parametrize("line", ["a/b", "http://example.com/x", "see path/to/file", "x=/nb:greet"])
def test_slash_inside_a_word_is_not_a_command(line: str) -> None:
    assert find_commands(line) == ()


def test_double_quoted_value_keeps_spaces_and_escapes() -> None:
    (command,) = find_commands('/nb:greet name="Ada \\"the\\" Countess" lang=py')
    assert command.values() == {"name": 'Ada "the" Countess', "lang": "py"}
    name = command.arguments[0]
    assert name.quote == '"' and name.closed


def test_single_quoted_value_keeps_spaces() -> None:
    (command,) = find_commands("/nb:greet name='two words'")
    assert command.values() == {"name": "two words"}


def test_unterminated_quote_runs_to_the_end_of_the_line() -> None:
    (command,) = find_commands('/nb:greet name="Ada Lovel')
    arg = command.arguments[0]
    assert (arg.value, arg.closed, arg.end) == ("Ada Lovel", False, 25)


def test_empty_value_is_an_empty_string() -> None:
    (command,) = find_commands("/nb:greet name= lang=py")
    assert command.values() == {"name": "", "lang": "py"}


def test_tokens_without_equals_sign_are_stray() -> None:
    (command,) = find_commands("/nb:greet Ada name=x")
    assert [t.text for t in command.stray] == ["Ada"]
    assert command.values() == {"name": "x"}


def test_words_after_the_last_argument_are_trailing_text_outside_the_command() -> None:
    (command,) = find_commands("/nb:greet name=Ada and more")
    assert command.end == 18
    assert [t.text for t in command.trailing] == ["and", "more"]
    assert command.stray == ()
    (bare,) = find_commands("/nb:greet Ada")
    assert (bare.end, [t.text for t in bare.trailing]) == (9, ["Ada"])


def test_several_commands_on_one_line_split_their_arguments() -> None:
    first, second = find_commands("/a:one x=1 /b:two y=2")
    assert (first.name, first.values(), first.end) == ("a:one", {"x": "1"}, 10)
    assert (second.name, second.values()) == ("b:two", {"y": "2"})


def test_custom_trigger_character() -> None:
    (command,) = find_commands("#nb:greet name=Ada", trigger="#")
    assert command.name == "nb:greet"
    assert find_commands("/nb:greet", trigger="#") == ()


def test_bare_prompt_name_has_no_server() -> None:
    assert split_command_name("greet") == (None, "greet")
    assert split_command_name("kernel-1:magic.time") == ("kernel-1", "magic.time")


def test_lone_trigger_completes_an_empty_query() -> None:
    ctx = context_at("/", 1)
    assert isinstance(ctx, CommandNameContext)
    assert (ctx.query, ctx.start, ctx.end) == ("", 0, 1)


def test_cursor_in_command_name_completes_the_command_up_to_the_cursor() -> None:
    ctx = context_at("/nb:gre x=1", 5)
    assert isinstance(ctx, CommandNameContext)
    assert (ctx.query, ctx.start, ctx.end) == ("nb:g", 0, 7)


def test_cursor_before_the_trigger_completes_nothing() -> None:
    assert context_at("  /nb:greet", 1) is None
    assert context_at("  /nb:greet", 2) is None


def test_cursor_after_command_and_space_completes_argument_names() -> None:
    ctx = context_at("/nb:greet name=Ada ", 19)
    assert isinstance(ctx, ArgumentNameContext)
    assert (ctx.prefix, ctx.start, ctx.end, ctx.used) == ("", 19, 19, frozenset({"name"}))


def test_partial_argument_name_is_the_prefix() -> None:
    ctx = context_at("/nb:greet la", 12)
    assert isinstance(ctx, ArgumentNameContext)
    assert (ctx.prefix, ctx.start, ctx.end) == ("la", 10, 12)


def test_cursor_in_the_name_part_of_an_argument_completes_names() -> None:
    ctx = context_at("/nb:greet lang=py", 12)
    assert isinstance(ctx, ArgumentNameContext)
    assert (ctx.prefix, ctx.start, ctx.end) == ("la", 10, 15)


def test_cursor_in_a_value_completes_values_with_the_other_arguments_as_context() -> None:
    ctx = context_at("/nb:greet name=Ada lang=py", 26)
    assert isinstance(ctx, ArgumentValueContext)
    assert (ctx.argument, ctx.prefix, ctx.start, ctx.end) == ("lang", "py", 24, 26)
    assert dict(ctx.others) == {"name": "Ada"}


def test_cursor_right_after_equals_sign_has_an_empty_prefix() -> None:
    ctx = context_at("/nb:greet lang=", 15)
    assert isinstance(ctx, ArgumentValueContext)
    assert (ctx.argument, ctx.prefix, ctx.start, ctx.end) == ("lang", "", 15, 15)


def test_quoted_value_prefix_is_unquoted() -> None:
    line = '/nb:greet name="Ada Lo'
    ctx = context_at(line, len(line))
    assert isinstance(ctx, ArgumentValueContext)
    assert (ctx.argument, ctx.prefix, ctx.start, ctx.end) == ("name", "Ada Lo", 15, len(line))


def test_cursor_in_the_middle_of_a_value_uses_the_text_before_it() -> None:
    ctx = context_at("/nb:greet lang=python", 17)
    assert isinstance(ctx, ArgumentValueContext)
    assert (ctx.prefix, ctx.end) == ("py", 21)


def test_text_before_any_command_completes_nothing() -> None:
    assert context_at("hello world", 5) is None
    assert context_at("", 0) is None


def test_cursor_in_a_stray_word_completes_argument_names() -> None:
    ctx = context_at("/nb:greet Ad", 12)
    assert isinstance(ctx, ArgumentNameContext)
    assert (ctx.prefix, ctx.start, ctx.end) == ("Ad", 10, 12)


def test_slash_inside_a_word_completes_nothing() -> None:
    assert context_at("a/b", 2) is None


@pytest.mark.parametrize(
    ("value", "written"),
    [("py", "py"), ("two words", '"two words"'), ("", '""'), ('say "hi"', '"say \\"hi\\""'), ("a=b", '"a=b"')],
)
def test_values_are_quoted_only_when_needed(value: str, written: str) -> None:
    assert quote_value(value) == written


def test_formatted_invocation_parses_back_to_the_same_arguments() -> None:
    arguments = {"name": "Ada \\ Lovelace", "lang": "py", "note": 'a "b"'}
    line = format_invocation("nb:greet", arguments)
    (command,) = find_commands(line)
    assert command.name == "nb:greet"
    assert command.values() == arguments
