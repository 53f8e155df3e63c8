"""uvicorn's server without its ten wake-ups a second: an idle HTTP server sleeps.

uvicorn's main loop wakes every 0.1 s to see whether it should stop (and,
every tenth time, to renew its `Date` header). `SleepingServer` renews the
header once a second, which is all its resolution needs, and is woken at
once when asked to stop (a signal, `should_exit = True`), so shutting down
is as prompt as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

import uvicorn  # Server.main_loop / on_tick / should_exit are private: watched in uvicorn_seam.py

__all__ = ["TICK_SECONDS", "SleepingServer"]

TICK_SECONDS: Final = 1.0
"""How often an idle server wakes: the `Date` header's resolution."""
_TICKS_PER_WAKE: Final = 10  # uvicorn counts 0.1 s ticks and renews the header on every tenth


class SleepingServer(uvicorn.Server):
    """A uvicorn server whose main loop wakes once a second, or at once to stop."""

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _exit = False

    @property
    def should_exit(self) -> bool:
        return self._exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._exit = value
        wake, loop = self._wake, self._loop
        if value and wake is not None and loop is not None and not loop.is_closed():
            # Set from a signal handler or another thread, too: the loop wakes to stop.
            loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + _TICKS_PER_WAKE) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK_SECONDS)
            should_exit = await self.on_tick(counter)
