"""Helpers for the widget tests: waiting on conditions with a deadline, rendering a form to its end."""

from __future__ import annotations

from client_harness import DEADLINE, wait_until

from mcp_notebook.ipython.forms import PromptForm
from mcp_notebook.models import RenderedPrompt

__all__ = ["DEADLINE", "render_and_keep", "wait_until"]


def render_and_keep(form: PromptForm) -> RenderedPrompt:
    """Click Render, as the user does, and wait until the form has rendered and kept the result."""
    future = form.render()
    assert future is not None
    future.result(timeout=DEADLINE)
    wait_until(lambda: form.result is not None, "the result is kept")
    assert form.result is not None
    return form.result
