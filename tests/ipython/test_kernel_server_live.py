"""The parts of the kernel server that touch the shell: namespace snapshots and live magics on the main thread."""

from __future__ import annotations

import asyncio
import enum
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from kernel_server_harness import MainLoop

from mcp_notebook.ipython.live_magics import MagicExecutionError, MainThreadScheduler, run_magic
from mcp_notebook.ipython.namespace import NamespaceSnapshot, NamespaceWatcher, take_namespace_snapshot, type_matches
from mcp_notebook.models import CompletionResult
from mcp_notebook.sources.magics import MagicInvocation

DEADLINE = 10.0


class Frame:
    """A data-frame stand-in whose attribute access must never be triggered by a snapshot."""

    touched = False

    def __getattr__(self, name: str) -> Any:
        Frame.touched = True
        raise AttributeError(name)


class WideFrame(Frame):
    pass


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    shell = InteractiveShell.instance()
    saved = dict(shell.user_ns)
    yield shell
    shell.user_ns.clear()
    shell.user_ns.update(saved)


@pytest.fixture
def main_loop() -> Iterator[MainLoop]:
    loop = MainLoop()
    yield loop
    loop.close()


def test_a_snapshot_lists_user_variables_with_their_classes_and_never_touches_them() -> None:
    Frame.touched = False
    snapshot = take_namespace_snapshot({"df": WideFrame(), "n": 3, "_hidden": 1, "In": []}, hidden={"In"})
    assert [v.name for v in snapshot.variables] == ["df", "n"]
    df = snapshot.variables[0]
    assert df.classes == ((__name__, "WideFrame"), (__name__, "Frame"))
    assert Frame.touched is False


def test_completion_filters_by_prefix_case_insensitively_and_by_declared_type() -> None:
    snapshot = take_namespace_snapshot({"df_sales": Frame(), "DF_costs": WideFrame(), "dfn": 1, "other": Frame()})
    assert snapshot.complete("df") == CompletionResult(values=("DF_costs", "df_sales", "dfn"), total=3)
    frames = CompletionResult(values=("DF_costs", "df_sales"), total=2)
    assert snapshot.complete("df", (f"{__name__}.Frame",)) == frames
    assert snapshot.complete("", (f"{__name__}.WideFrame",)).values == ("DF_costs",)
    assert snapshot.complete("", ("Frame",)).values == ()  # a class is named with its module
    assert snapshot.complete("", ("int",)).values == ("dfn",)
    assert snapshot.complete("zz") == CompletionResult(values=(), total=0)


class DataFrame:
    """Any class that happens to be called DataFrame."""


class Flag(enum.IntEnum):
    ON = 1


@pytest.mark.parametrize(
    ("declared", "module", "qualname", "bases", "matches"),
    [
        ("pandas.DataFrame", "pandas.core.frame", "DataFrame", (), True),  # defined below the package it is named by
        ("pandas.core.frame.DataFrame", "pandas.core.frame", "DataFrame", (), True),
        ("pandas.DataFrame", "__main__", "DataFrame", (), False),
        ("pandas.DataFrame", "pandasish", "DataFrame", (), False),
        ("pandas.DataFrame", "geopandas.geodataframe", "GeoDataFrame", (("pandas.core.frame", "DataFrame"),), True),
        ("mod.Outer.Inner", "mod", "Outer.Inner", (), True),
        ("int", "builtins", "int", (), True),
        ("builtins.int", "builtins", "int", (), True),
        ("int", "builtins", "bool", (("builtins", "int"),), False),  # built-in types exactly, never a subclass
        ("int", __name__, "Flag", (("enum", "IntEnum"), ("builtins", "int")), False),
    ],
)
def test_a_type_is_matched_by_its_qualified_name(
    declared: str, module: str, qualname: str, bases: tuple[tuple[str, str], ...], matches: bool
) -> None:
    assert type_matches(declared, ((module, qualname), *bases)) is matches


def test_a_class_named_dataframe_is_no_pandas_dataframe_and_an_int_subclass_no_int() -> None:
    snapshot = take_namespace_snapshot({"fake": DataFrame(), "flag": Flag.ON, "yes": True, "n": 3})
    assert snapshot.complete("", ("pandas.DataFrame",)).values == ()
    assert snapshot.complete("", ("int",)).values == ("n",)
    assert snapshot.complete("", (f"{__name__}.DataFrame",)).values == ("fake",)


def test_completion_caps_values_at_one_hundred_and_says_there_are_more() -> None:
    snapshot = take_namespace_snapshot({f"v{i:03}": i for i in range(150)})
    result = snapshot.complete("v")
    assert len(result.values) == 100
    assert (result.total, result.has_more) == (150, True)


def test_the_watcher_takes_a_new_snapshot_after_each_cell_and_stops_when_closed(shell: InteractiveShell) -> None:
    watcher = NamespaceWatcher(shell)
    try:
        shell.run_cell("fresh_variable_for_watcher = 1")
        assert "fresh_variable_for_watcher" in {v.name for v in watcher.snapshot.variables}
    finally:
        watcher.close()
    shell.run_cell("later_variable_for_watcher = 2")
    assert "later_variable_for_watcher" not in {v.name for v in watcher.snapshot.variables}
    assert isinstance(watcher.snapshot, NamespaceSnapshot)


def test_a_scheduled_function_runs_on_the_main_thread(shell: InteractiveShell, main_loop: MainLoop) -> None:
    scheduler = main_loop.run(lambda: MainThreadScheduler(shell, main_loop.post))
    try:
        assert scheduler.submit(threading.current_thread).result(DEADLINE) is main_loop.thread
    finally:
        scheduler.close()


def test_a_scheduled_function_waits_for_the_running_cell_to_finish(
    shell: InteractiveShell, main_loop: MainLoop
) -> None:
    scheduler = main_loop.run(lambda: MainThreadScheduler(shell, main_loop.post))
    try:
        main_loop.run(lambda: shell.events.trigger("pre_execute"))
        ran = threading.Event()
        future = scheduler.submit(ran.set)
        main_loop.run(lambda: None)  # everything posted before this has had its turn on the main thread
        assert not ran.is_set()
        main_loop.run(lambda: shell.events.trigger("post_execute"))
        future.result(DEADLINE)
        assert ran.is_set()
    finally:
        scheduler.close()


def test_a_function_whose_caller_gave_up_never_runs(shell: InteractiveShell, main_loop: MainLoop) -> None:
    scheduler = main_loop.run(lambda: MainThreadScheduler(shell, main_loop.post))
    try:
        main_loop.run(lambda: shell.events.trigger("pre_execute"))
        ran = threading.Event()

        async def give_up() -> None:
            await scheduler.run(ran.set, deadline=0.01)

        with pytest.raises(TimeoutError):
            asyncio.run(give_up())
        main_loop.run(lambda: shell.events.trigger("post_execute"))
        main_loop.run(lambda: None)  # the drain posted by post_execute has run
        main_loop.run(lambda: None)
        assert not ran.is_set()
    finally:
        scheduler.close()


def test_a_live_magic_returns_what_it_printed(shell: InteractiveShell) -> None:
    shell.user_ns["visible_to_who"] = 42
    captured = run_magic(shell, MagicInvocation(name="who", kind="line", line="int"))
    assert "visible_to_who" in captured.stdout


def test_a_live_cell_magic_gets_its_body_and_its_displays_are_captured(shell: InteractiveShell) -> None:
    captured = run_magic(shell, MagicInvocation(name="markdown", kind="cell", line="", body="# Title"))
    assert captured.displays and captured.displays[0].get("text/markdown") == "# Title"


def test_a_magic_that_returns_a_value_gives_its_rich_representation(shell: InteractiveShell) -> None:
    shell.user_ns["listed_by_who_ls"] = 1
    captured = run_magic(shell, MagicInvocation(name="who_ls", kind="line", line="int"))
    assert captured.result is not None
    assert "listed_by_who_ls" in captured.result["text/plain"]


def test_a_failing_magic_raises_a_magic_execution_error_with_its_message(shell: InteractiveShell) -> None:
    with pytest.raises(MagicExecutionError, match=r"^%history failed: unrecognized arguments: --bogus$"):
        run_magic(shell, MagicInvocation(name="history", kind="line", line="--bogus"))


def test_the_public_surfaces_are_pinned() -> None:
    import mcp_notebook.ipython.live_magics as live_magics
    import mcp_notebook.ipython.namespace as namespace

    assert sorted(namespace.__all__) == [
        "FORMAT_SECONDS",
        "MAX_VARIABLE_CHARS",
        "NamespaceSnapshot",
        "NamespaceWatcher",
        "VariableInfo",
        "is_user_variable",
        "read_variables",
        "take_namespace_snapshot",
        "type_matches",
    ]
    assert sorted(live_magics.__all__) == [
        "LiveMagicCall",
        "MagicExecutionError",
        "MainThreadScheduler",
        "create_kernel_scheduler",
        "run_magic",
    ]
