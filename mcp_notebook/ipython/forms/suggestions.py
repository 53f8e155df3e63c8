"""Asking a server for argument suggestions while the user types.

Each keystroke replaces the previous request: the request waits a short
debounce delay on the background loop and gives up if a newer keystroke came
meanwhile, so a burst of typing costs one `completion/complete`; and an answer
that arrives after a newer keystroke is dropped, so the list never shows
suggestions for text the field no longer holds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future

import anyio

from ...models import CompletionResult
from .services import TaskRunner

__all__ = ["DEFAULT_DEBOUNCE_SECONDS", "SuggestionFetcher"]

log = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_SECONDS = 0.2  # what VS Code uses for the same request

CompleteFn = Callable[[str, Mapping[str, str]], Awaitable[CompletionResult]]
"""Asks for suggestions for a value, given the other arguments already filled in."""


class SuggestionFetcher:
    """Debounced, newest-wins suggestion requests for one field.

    `on_suggestions(value, result)` and `on_error(value, error)` are called on
    the background loop's thread, only for the newest request.
    """

    def __init__(
        self,
        runner: TaskRunner,
        complete: CompleteFn,
        on_suggestions: Callable[[str, CompletionResult], None],
        on_error: Callable[[str, BaseException], None],
        delay: float = DEFAULT_DEBOUNCE_SECONDS,
    ) -> None:
        self._runner = runner
        self._complete = complete
        self._on_suggestions = on_suggestions
        self._on_error = on_error
        self.delay = delay
        self._lock = threading.Lock()
        self._generation = 0
        self._pending: Future[CompletionResult | None] | None = None
        self.discarded = 0  # answers dropped because a newer request had been made

    def request(self, value: str, context: Mapping[str, str]) -> Future[CompletionResult | None]:
        """Ask for suggestions for `value`, replacing any request still waiting or running.

        The future's result is None when a newer request superseded this one
        before it reached the server.
        """
        with self._lock:
            self._generation += 1
            generation = self._generation
            previous, self._pending = self._pending, None
        if previous is not None:
            previous.cancel()
        arguments = dict(context)
        delay = self.delay

        async def fetch() -> CompletionResult | None:
            if delay > 0:
                await anyio.sleep(delay)
            if not self._is_current(generation):
                return None  # a newer keystroke came during the delay: the server need not hear of this one
            return await self._complete(value, arguments)

        future = self._runner.start(fetch)
        with self._lock:
            if generation == self._generation:
                self._pending = future
        future.add_done_callback(lambda done: self._on_done(generation, value, done))
        return future

    def _is_current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation

    def cancel(self) -> None:
        """Forget any request in flight; its answer, if it still comes, is dropped."""
        with self._lock:
            self._generation += 1
            previous, self._pending = self._pending, None
        if previous is not None:
            previous.cancel()

    def _on_done(self, generation: int, value: str, future: Future[CompletionResult | None]) -> None:
        if future.cancelled():
            return
        error = future.exception()
        result = None if error is not None else future.result()
        if error is None and result is None:
            return  # superseded before it reached the server
        with self._lock:
            stale = generation != self._generation
            if stale:
                self.discarded += 1
            elif self._pending is future:
                self._pending = None
        if stale:
            log.debug("dropped suggestions for %r: the field changed since", value)
        elif error is not None:
            self._on_error(value, error)
        elif result is not None:
            self._on_suggestions(value, result)
