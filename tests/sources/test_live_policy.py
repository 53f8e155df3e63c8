"""Which magics may run live and what a client may pass them, over every magic IPython defines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.sources.live_policy import InvalidMagicArgumentError, is_builtin_magic, live_policy
from mcp_notebook.sources.magics import (
    MAGIC_META_KEY,
    MagicInfo,
    build_invocation,
    build_live_invocation,
    describe_magics,
    to_magic_prompts,
)


@pytest.fixture(scope="module")
def infos() -> Iterator[dict[str, MagicInfo]]:
    shell = InteractiveShell.instance()
    shell.magics_manager.load_all_lazy_magics()
    yield {info.title: info for info in describe_magics(shell.magics_manager.magics)}


def test_every_builtin_magic_reads_runs_code_or_is_refused_and_state_changers_are_refused(
    infos: dict[str, MagicInfo],
) -> None:
    assert all(is_builtin_magic(infos[title]) for title in ("%who", "%%bash", "%cd", "%history", "%timeit"))
    effects = {title: (p.effect if (p := live_policy(info)) else "refused") for title, info in infos.items()}
    assert {effects[t] for t in ("%who", "%whos", "%history", "%pwd", "%env", "%pinfo")} == {"reads"}
    assert {effects[t] for t in ("%timeit", "%%bash", "%pip", "%%writefile", "%run", "%load_ext")} == {"runs-code"}
    refused = ("%cd", "%reset", "%config", "%alias", "%xdel", "%precision", "%logstart", "%save", "%pycat", "%ls")
    assert {effects[t] for t in refused if t in effects} == {"refused"}


def test_a_magic_nobody_knows_is_treated_as_running_code() -> None:
    info = MagicInfo(name="mine", kind="line", module="__main__")
    policy = live_policy(info)
    assert policy is not None and policy.executes_code and policy.effect == "unknown"


def _parser_arguments(infos: dict[str, MagicInfo]) -> list[tuple[str, str]]:
    return [
        (info.title, option.argument)
        for info in infos.values()
        for option in info.options or ()
        if option.takes_value or option.flag is None
    ]


INJECTIONS = ["-f /tmp/x", "-f", "--filename=x", "1 -f x", "-yf x", " -q", "'-f' x"]


@pytest.mark.parametrize("value", INJECTIONS)
def test_no_value_of_any_magics_option_or_positional_can_inject_an_option(
    infos: dict[str, MagicInfo], value: str
) -> None:
    cases = _parser_arguments(infos)
    assert len(cases) > 20
    for title, argument in cases:
        info = infos[title]
        option = next(o for o in info.options or () if o.argument == argument)
        if not option.multiple and not value.lstrip().startswith("-"):
            continue  # one word holding "1 -f x" is quoted whole: the parser reads it as one value
        with pytest.raises(InvalidMagicArgumentError, match="would be read as an option"):
            build_invocation(info, {argument: value})


def test_a_single_word_value_with_spaces_is_passed_as_one_quoted_word(infos: dict[str, MagicInfo]) -> None:
    info = infos["%history"]
    assert build_invocation(info, {"limit": "1 -f x"}).line == "-l '1 -f x'"


def test_history_never_offers_its_file_options_live_and_checks_each_value(infos: dict[str, MagicInfo]) -> None:
    [live] = [p for p in to_magic_prompts(list(infos.values()), ["history"]) if p.name == "magic.history"]
    names = [a.name for a in live.arguments]
    assert "filename" not in names and "overwrite" not in names and "range" in names
    assert live.meta is not None and live.meta[MAGIC_META_KEY]["executes_code"] is False
    policy = live_policy(infos["%history"])
    assert policy is not None
    assert build_live_invocation(infos["%history"], policy, {"range": "~2/1-5 4", "print_nums": "true"}).line == (
        "-n '~2/1-5' 4"
    )
    for values in ({"filename": "/tmp/x"}, {"range": "{x}"}, {"limit": "$n"}, {"range": "1\n2"}, {"pattern": "-f"}):
        with pytest.raises(InvalidMagicArgumentError):
            build_live_invocation(infos["%history"], policy, values)


@pytest.mark.parametrize(
    ("title", "line"),
    [
        ("%who", "{x.append(1)}"),
        ("%who", "$x"),
        ("%who", "int str;"),
        ("%whos", "!ls"),
        ("%pwd", "x"),
        ("%env", "A=1"),
        ("%env", "A B"),
        ("%pinfo", "os.system('x')"),
        ("%dhist", "1 2 3"),
        ("%who", "int\x00"),
        ("%who", "x" * 5000),
    ],
)
def test_a_reading_magic_refuses_any_word_it_would_not_accept(
    infos: dict[str, MagicInfo], title: str, line: str
) -> None:
    policy = live_policy(infos[title])
    assert policy is not None and policy.effect == "reads"
    with pytest.raises(InvalidMagicArgumentError):
        build_live_invocation(infos[title], policy, {"line": line})


def test_a_cell_body_may_hold_newlines_but_never_nul(infos: dict[str, MagicInfo]) -> None:
    info = infos["%%markdown"]
    policy = live_policy(info)
    assert policy is not None
    assert build_live_invocation(info, policy, {"body": "# T\n\tx\r\n"}).body == "# T\n\tx\r\n"
    with pytest.raises(InvalidMagicArgumentError, match="control character"):
        build_live_invocation(info, policy, {"body": "a\x00b"})
