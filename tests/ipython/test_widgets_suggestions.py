"""SuggestionFetcher: a burst of keystrokes costs one request, and a late answer never overwrites a newer one."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future
from typing import TypeVar

import anyio
import pytest
from widget_harness import wait_until

from mcp_notebook.ipython.forms.services import TaskRunner
from mcp_notebook.ipython.forms.suggestions import SuggestionFetcher
from mcp_notebook.models import CompletionResult
from mcp_notebook.runtime import BackgroundRuntime, get_runtime

T = TypeVar("T")


@pytest.fixture
def runner() -> BackgroundRuntime:
    return get_runtime()


class Recorder:
    """Collects what the fetcher reports, from the loop thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shown: list[tuple[str, tuple[str, ...]]] = []
        self.errors: list[tuple[str, str]] = []

    def on_suggestions(self, value: str, result: CompletionResult) -> None:
        with self.lock:
            self.shown.append((value, result.values))

    def on_error(self, value: str, error: BaseException) -> None:
        with self.lock:
            self.errors.append((value, str(error)))


def test_a_burst_of_keystrokes_asks_the_server_once_for_the_last_value(runner: BackgroundRuntime) -> None:
    asked: list[str] = []
    recorder = Recorder()

    async def complete(value: str, context: Mapping[str, str]) -> CompletionResult:
        asked.append(value)
        return CompletionResult(values=(value + "!",))

    # A long debounce: every keystroke lands well inside the previous one's delay.
    fetcher = SuggestionFetcher(runner, complete, recorder.on_suggestions, recorder.on_error, delay=0.5)
    for value in ("p", "py", "pyt"):
        last = fetcher.request(value, {})
    last.result(timeout=10)
    wait_until(lambda: recorder.shown, "the last request's suggestions are shown")

    assert asked == ["pyt"]
    assert recorder.shown == [("pyt", ("pyt!",))]


class UncancellableRunner:
    """A runner whose started tasks run to the end even when their future is cancelled."""

    def __init__(self, inner: BackgroundRuntime) -> None:
        self.inner = inner

    def start(self, fn: Callable[[], Awaitable[T]]) -> Future[T]:
        outer: Future[T] = Future()
        outer.set_running_or_notify_cancel()  # a running future refuses cancel()
        inner = self.inner.start(fn)

        def copy(done: Future[T]) -> None:
            error = done.exception()
            if error is not None:
                outer.set_exception(error)
            else:
                outer.set_result(done.result())

        inner.add_done_callback(copy)
        return outer


@pytest.mark.parametrize("cancels", [True, False], ids=["runner-cancels-tasks", "runner-lets-tasks-finish"])
def test_an_answer_overtaken_by_a_newer_keystroke_is_never_shown(runner: BackgroundRuntime, cancels: bool) -> None:
    first_asked = threading.Event()
    release_first = threading.Event()
    recorder = Recorder()

    async def complete(value: str, context: Mapping[str, str]) -> CompletionResult:
        if value == "r":
            first_asked.set()
            # The slow server: still thinking about "r" when the user has typed "ru".
            await anyio.to_thread.run_sync(release_first.wait, 10)
        return CompletionResult(values=(f"{value}-answer",))

    chosen: TaskRunner = runner if cancels else UncancellableRunner(runner)
    fetcher = SuggestionFetcher(chosen, complete, recorder.on_suggestions, recorder.on_error, delay=0)
    first = fetcher.request("r", {})
    assert first_asked.wait(10), "the first request never reached the server"
    fetcher.request("ru", {}).result(timeout=10)
    wait_until(lambda: recorder.shown, "the newer suggestions are shown")
    release_first.set()
    wait_until(first.done, "the slow request ended")
    if not cancels:
        assert first.result() == CompletionResult(values=("r-answer",))
        wait_until(lambda: fetcher.discarded == 1, "the slow answer was dropped")

    assert recorder.shown == [("ru", ("ru-answer",))]


def test_the_other_arguments_travel_as_context(runner: BackgroundRuntime) -> None:
    contexts: list[dict[str, str]] = []
    recorder = Recorder()

    async def complete(value: str, context: Mapping[str, str]) -> CompletionResult:
        contexts.append(dict(context))
        return CompletionResult(values=())

    fetcher = SuggestionFetcher(runner, complete, recorder.on_suggestions, recorder.on_error, delay=0)
    fetcher.request("x", {"language": "python"}).result(timeout=10)

    assert contexts == [{"language": "python"}]


def test_a_failing_server_is_reported_for_the_newest_value_only(runner: BackgroundRuntime) -> None:
    recorder = Recorder()

    async def complete(value: str, context: Mapping[str, str]) -> CompletionResult:
        raise RuntimeError(f"no completions for {value}")

    fetcher = SuggestionFetcher(runner, complete, recorder.on_suggestions, recorder.on_error, delay=0)
    with pytest.raises(RuntimeError):
        fetcher.request("q", {}).result(timeout=10)
    wait_until(lambda: recorder.errors, "the error is reported")

    assert recorder.errors == [("q", "no completions for q")]
    assert recorder.shown == []
