"""Helpers for the widget tests: waiting on conditions with a deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

DEADLINE = 20.0  # seconds; generous for a loaded CI machine, never reached when things work


def wait_until(condition: Callable[[], object], what: str, timeout: float = DEADLINE) -> None:
    """Wait until `condition()` is true (re-checked on a short interval), or fail saying `what` did not happen."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        tick.wait(0.01)
