"""Tab on `%mcp` lines, without servers: reading the line, quoting, registration, and the empty answer."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from magics_harness import isolated_shell

from mcp_notebook.ipython.completion import MATCHER_ID
from mcp_notebook.ipython.completion_line import MagicLine, quoted, read_magic_line

__all__ = ["isolated_shell"]

LINES: dict[str, tuple[str, MagicLine | None]] = {
    "subcommand": ("%mcp ge", MagicLine("mcp", (), "ge", "ge")),
    "after a space": ("%mcp get ", MagicLine("mcp", ("get",), "", "")),
    "assignment": ("msgs = %mcp get d", MagicLine("mcp", ("get",), "d", "d")),
    "leading spaces": ("   %mcp get d", MagicLine("mcp", ("get",), "d", "d")),
    "pair": ("%mcp get a:b k=v", MagicLine("mcp", ("get", "a:b"), "k=v", "k=v")),
    "open double quote": ('%mcp get a:b k="two wo', MagicLine("mcp", ("get", "a:b"), 'k="two wo', "k=two wo")),
    "open single quote": ("%mcp get a:b k='it", MagicLine("mcp", ("get", "a:b"), "k='it", "k=it")),
    "closed quotes": ('%mcp get a:b k="x y" z', MagicLine("mcp", ("get", "a:b", "k=x y"), "z", "z")),
    "escaped space": ("%mcp get a:b k=x\\ y", MagicLine("mcp", ("get", "a:b"), "k=x\\ y", "k=x y")),
    "quote open earlier": ('%mcp get "a b c d', MagicLine("mcp", ("get",), '"a b c d', "a b c d")),
    "not a magic": ("print(mcp", None),
    "another magic": ("%mcpx get", None),
    "no space yet": ("%mcp", None),
    "in a string": ("x = '%mcp get'", None),
}


@pytest.mark.parametrize(("text", "expected"), LINES.values(), ids=LINES.keys())
def test_a_magic_line_is_read_as_percent_mcp_will_read_it(text: str, expected: MagicLine | None) -> None:
    assert read_magic_line(text, 0, text) == expected


def test_only_the_first_line_of_a_prompt_cell_completes() -> None:
    cell = "%%prompt name --ro\nbody --ro"
    assert read_magic_line(cell, 0, "%%prompt name --ro") == MagicLine("prompt", ("name",), "--ro", "--ro")
    assert read_magic_line(cell, 1, "body --ro") is None
    assert read_magic_line("x\n%%prompt a --r", 1, "%%prompt a --r") is None


VALUES = {
    "plain": ("Rust", "Ru", "Rust"),
    "spaces": ("two words", "tw", "'two words'"),
    "double quote started": ("two words", '"tw', '"two words"'),
    "single quote started": ("it's", "'i", "'it'\\''s'"),
    "double quote inside": ('say "hi"', '"s', '"say \\"hi\\""'),
    "empty": ("", "", "''"),
    "shell characters": ("a;b|c", "a", "'a;b|c'"),
    "path": ("@file:src/app.py", "@file:s", "@file:src/app.py"),
}


@pytest.mark.parametrize(("value", "typed", "expected"), VALUES.values(), ids=VALUES.keys())
def test_a_value_is_quoted_so_the_magic_reads_it_back_as_one_word(value: str, typed: str, expected: str) -> None:
    import shlex

    assert quoted(value, typed) == expected
    assert shlex.split(expected) == [value]


def _matchers(shell: InteractiveShell) -> list[Any]:
    return [m for m in shell.Completer.custom_matchers if getattr(m, "matcher_identifier", None) == MATCHER_ID]


def test_loading_registers_one_matcher_and_unloading_removes_it(isolated_shell: InteractiveShell) -> None:
    assert len(_matchers(isolated_shell)) == 1
    isolated_shell.run_line_magic("unload_ext", "mcp_notebook")
    try:
        assert _matchers(isolated_shell) == []
    finally:
        isolated_shell.run_line_magic("load_ext", "mcp_notebook")
    assert len(_matchers(isolated_shell)) == 1


def test_a_mcp_line_with_nothing_to_offer_offers_no_python_names(isolated_shell: InteractiveShell) -> None:
    # No servers are configured: nothing is known about the prompt, and Python's builtins must not stand in.
    from IPython.core.completer import provisionalcompleter

    def texts(code: str) -> list[str]:
        with provisionalcompleter():
            return [c.text for c in isolated_shell.Completer.completions(code, len(code))]

    assert texts("%mcp get nothing:here Ru") == ["Ru"]
    assert texts("%mcp ge") == ["get"]


class _ManualStarts:
    """Stands in for the runtime: each fetch gets a future the test completes by hand."""

    def __init__(self) -> None:
        self.futures: list[Any] = []

    def __call__(self, fetch: Any) -> Any:
        import concurrent.futures

        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.futures.append(future)
        return future


def test_a_late_answer_is_not_waited_for_but_serves_the_next_tab() -> None:
    from mcp_notebook.ipython.completion import _BackgroundCache, _Deadline

    starts = _ManualStarts()
    cache = _BackgroundCache(starts)
    request = {"k": lambda: None}
    assert cache.get_many(request, 10, _Deadline(0.01)) == {}
    assert cache.get_many(request, 10, _Deadline(0.01)) == {}
    assert len(starts.futures) == 1  # the request in flight is reused
    starts.futures[0].set_result(("Rust",))
    assert cache.get_many(request, 10, _Deadline(0.01)) == {"k": ("Rust",)}
    assert len(starts.futures) == 1  # fresh: not asked again


def test_a_failed_request_gives_nothing_and_is_not_repeated_at_once() -> None:
    from mcp_notebook.ipython.completion import _BackgroundCache, _Deadline

    starts = _ManualStarts()
    cache = _BackgroundCache(starts)
    request = {"k": lambda: None}
    cache.get_many(request, 10, _Deadline(0.0))
    starts.futures[0].set_exception(ConnectionError("gone"))
    assert cache.get_many(request, 10, _Deadline(0.0)) == {}
    assert len(starts.futures) == 1


def test_a_cancelled_request_is_asked_again() -> None:
    from mcp_notebook.ipython.completion import _BackgroundCache, _Deadline

    starts = _ManualStarts()
    cache = _BackgroundCache(starts)
    request = {"k": lambda: None}
    cache.get_many(request, 10, _Deadline(0.0))
    starts.futures[0].cancel()
    cache.get_many(request, 10, _Deadline(0.0))
    assert len(starts.futures) == 2


def test_a_failure_while_completing_prints_nothing_and_offers_no_python_names(
    isolated_shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from IPython.core.completer import provisionalcompleter

    from mcp_notebook.ipython.completion import MCPCompleter

    def broken(*_: Any) -> Any:
        raise RuntimeError("broken")

    monkeypatch.setattr(MCPCompleter, "offers", broken)
    with provisionalcompleter():
        texts = [c.text for c in isolated_shell.Completer.completions("%mcp get x", 10)]
    assert texts == ["x"]
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err


def _texts(shell: InteractiveShell, code: str) -> list[str]:
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        return [c.text for c in shell.Completer.completions(code, len(code))]


def test_unpublish_offers_the_prompt_cells_published_not_named_yet(isolated_shell: InteractiveShell) -> None:
    assert _texts(isolated_shell, "%mcp unpublish ") == [""]  # nothing published yet: the word stays as typed
    isolated_shell.run_cell("%%prompt greet\nHello {{who}}")
    isolated_shell.run_cell("%%prompt bye\nBye {{who}}")
    try:
        assert sorted(_texts(isolated_shell, "%mcp unpublish ")) == ["bye", "greet"]
        assert _texts(isolated_shell, "%mcp unpublish g") == ["greet"]
        assert _texts(isolated_shell, "%mcp unpublish greet ") == ["bye"]
        isolated_shell.run_line_magic("mcp", "unpublish bye")
        assert _texts(isolated_shell, "%mcp unpublish ") == ["greet"]
    finally:
        isolated_shell.run_line_magic("mcp", "unpublish greet")


def test_serve_live_offers_the_magics_that_may_run_live_those_that_read_first(
    isolated_shell: InteractiveShell,
) -> None:
    from mcp_notebook.sources.live_policy import live_policy
    from mcp_notebook.sources.magics import describe_magics

    offered = _texts(isolated_shell, "%mcp serve --live ")
    policies = {info.title: live_policy(info) for info in describe_magics(isolated_shell.magics_manager.magics)}
    assert {"%who", "%whos", "%history", "%pwd", "%timeit", "%%bash"} <= set(offered)
    assert not {"%cd", "%reset", "%config", "%alias"} & set(offered)  # never run live: not offered
    assert set(offered) == {title for title, policy in policies.items() if policy is not None}
    effects = [policies[title].effect for title in offered]  # type: ignore[union-attr]
    assert effects == sorted(effects, key=lambda effect: {"reads": 0, "runs-code": 1}.get(effect, 2))
    assert _texts(isolated_shell, "%mcp serve --live %wh") == ["%who", "%who_ls", "%whos"]
    assert _texts(isolated_shell, "%mcp serve --live %who,%wh") == ["%who,%who_ls", "%who,%whos"]
    assert _texts(isolated_shell, "%mcp serve --port 8765 --live %%ba") == ["%%bash"]
    assert _texts(isolated_shell, "%mcp serve --live %cd") == ["%cd"]  # nothing offered: the word stays as typed
