"""`QuickCompletions`: value completions never wait beyond their deadline (the JupyterLab extension's 0.2 s rule)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest

from mcp_notebook.catalog.pool import CatalogSnapshot, QuickCompletions
from mcp_notebook.exceptions import ServerConnectionError
from mcp_notebook.models import CompletionResult, RenderedPrompt


class _SlowCatalog:
    """A catalog whose server suggests values only once `gate` is open (open from the start when `slow` is False)."""

    def __init__(self, *, slow: bool = False) -> None:
        self.gate = asyncio.Event()
        if not slow:
            self.gate.set()
        self.asked = 0

    def snapshot(self) -> CatalogSnapshot:
        return CatalogSnapshot()

    def add_listener(self, listener: Callable[[CatalogSnapshot], None]) -> Callable[[], None]:
        return lambda: None

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt:
        raise AssertionError("not used")

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult:
        self.asked += 1
        await self.gate.wait()  # the slow server itself
        return CompletionResult(values=(f"{value}-1", f"{value}-2"))


async def test_a_slow_server_gets_no_wait_beyond_the_deadline_and_answers_the_next_request() -> None:
    slow = _SlowCatalog(slow=True)
    quick = QuickCompletions(slow, 0.2)
    async with asyncio.timeout(10):  # without the deadline these would wait for the server forever
        with pytest.raises(ServerConnectionError, match=r"no values within 0\.2 s"):
            await quick.complete("s", "p", "a", "Ru", {})
        with pytest.raises(ServerConnectionError):
            await quick.complete("s", "p", "a", "Ru", {})  # still coming: the same request, not a second one
    assert slow.asked == 1
    slow.gate.set()  # the server answers at last
    async with asyncio.timeout(10):
        while True:  # the background answer lands in the cache
            try:
                result = await quick.complete("s", "p", "a", "Ru", {})
                break
            except ServerConnectionError:
                continue
    assert result.values == ("Ru-1", "Ru-2")
    assert slow.asked == 1


async def test_a_fast_server_answers_at_once() -> None:
    quick = QuickCompletions(_SlowCatalog(), 0.2)
    assert (await quick.complete("s", "p", "a", "x", {"b": "1"})).values == ("x-1", "x-2")
