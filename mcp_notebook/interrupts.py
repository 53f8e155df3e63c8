"""SIGINT reaches the host's event loop as `KeyboardInterrupt`, however deep in a task group it lands.

A Jupyter server with no terminal (which is how JupyterHub runs a user's
server, and stops it: with SIGINT) ends when `KeyboardInterrupt` leaves its
event loop. Python raises it wherever the main thread is. In a task, asyncio
lets it out of the loop at once, unless a task group on the way collected it
into an exception group: the group is no `KeyboardInterrupt`, so the task keeps
it as its result, and the server goes on serving until it is killed.

`interrupts_pass` wraps the coroutine at the top of each task of ours that
runs task groups (the MCP endpoint's requests, the host, a client's
connection): a group holding a `KeyboardInterrupt` is raised as one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["interrupts_pass"]

P = ParamSpec("P")
T = TypeVar("T")


def interrupts_pass(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """`fn`, raising `KeyboardInterrupt` where a task group would end it with a group holding one."""

    @functools.wraps(fn)
    async def passing(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except BaseExceptionGroup as group:
            if group.subgroup(KeyboardInterrupt) is None:
                raise
            raise KeyboardInterrupt from group

    return passing
