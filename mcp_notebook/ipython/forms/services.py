"""What the forms need from the rest of the product: a prompt client and a background runner.

The forms run on the kernel's main thread and must never block it (the
front end's clicks and keystrokes arrive there), so every call to a server is
started on the background runtime and finished by a callback. Both needs are
spelt as protocols: the real `PromptClient` and runtime fit them, and so does
anything a caller wants to put in between (a wrapper that counts requests).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from ...models import CompletionResult, PromptSpec, RenderedPrompt

__all__ = ["MimeBundle", "PromptService", "RenderedPromptDisplay", "TaskRunner"]

T = TypeVar("T")

MimeBundle = dict[str, Any]
"""A display bundle keyed by MIME type (`text/html`, `text/plain`, …)."""

RenderedPromptDisplay = Callable[[RenderedPrompt], MimeBundle]
"""Turns a rendered prompt into the bundle the magics show for it."""


class PromptService(Protocol):
    """One connected MCP server, as the forms use it."""

    async def list_prompts(self) -> Sequence[PromptSpec]: ...

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> RenderedPrompt: ...

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult: ...


class TaskRunner(Protocol):
    """Runs coroutines on the background event loop; cancelling the future cancels the task."""

    def start(self, fn: Callable[[], Awaitable[T]]) -> Future[T]: ...
