"""How the bridge runs, and how it always ends: no process outlives the editor.

The bridge ends on the first of these:

* the `exit` notification (exit code 0 after `shutdown`, 1 without);
* its input closing (the editor went away without a word);
* SIGTERM, SIGHUP or SIGINT;
* the editor's process ending (`processId` in `initialize`), or the bridge's
  parent process ending.

Ending stops the servers (a polite close for a bounded time, then their
process groups are terminated, then killed) and leaves the process with
`os._exit`: the thread blocked reading stdin and any connection still closing
cannot hold it up, which a normal interpreter exit (joining threads,
cancelling every task) would allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, BinaryIO, NoReturn

from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

from .processes import is_running

if TYPE_CHECKING:
    from .server import BridgeServer

__all__ = ["run_stdio", "run_tcp"]

log = logging.getLogger(__name__)

# How often the editor's and the parent's processes are looked at.
_PARENT_POLL = 0.2

End = Callable[[int, str], None]
Connect = Callable[["BridgeServer", End], Awaitable[None]]


def run_stdio(server: BridgeServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> NoReturn:
    """Serve one editor over stdin/stdout until it goes away, then leave the process."""

    async def connect(server: BridgeServer, end: End) -> None:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lsp-stdin")
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, executor)
        server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        _read_until_closed(server, reader, end)

    _leave(_run(server, connect))


def run_tcp(server: BridgeServer, host: str, port: int) -> NoReturn:
    """Serve the first editor that connects to `host:port` (port 0: any free one), then leave.

    The address is printed on stderr (`listening on HOST:PORT`), for debugging
    with an editor that can connect to a socket.
    """

    async def connect(server: BridgeServer, end: End) -> None:
        connected = asyncio.Event()

        async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if connected.is_set():  # one editor per bridge
                writer.close()
                return
            connected.set()
            listener.close()
            server.protocol.set_writer(writer)  # has write() and close(), as pygls needs
            _read_until_closed(server, reader, end)

        listener = await asyncio.start_server(on_client, host, port)
        bound = listener.sockets[0].getsockname()
        print(f"mcp-notebook-lsp: listening on {bound[0]}:{bound[1]}", file=sys.stderr, flush=True)

    _leave(_run(server, connect))


def _read_until_closed(server: BridgeServer, reader: object, end: End) -> None:
    """Read messages in the background; the input ending ends the bridge."""
    task = asyncio.get_running_loop().create_task(
        run_async(
            stop_event=threading.Event(),
            reader=reader,  # type: ignore[arg-type]  # pygls' reader protocols
            protocol=server.protocol,
            logger=log,
            error_handler=server.report_server_error,
        ),
        name="lsp-input",
    )
    task.add_done_callback(lambda _: end(0 if server.shut_down else 1, "the editor closed the connection"))


def _run(server: BridgeServer, connect: Connect) -> int:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop.run_until_complete(_serve(server, connect))


async def _serve(server: BridgeServer, connect: Connect) -> int:
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[int] = loop.create_future()

    def end(code: int, why: str) -> None:
        if not ended.done():
            log.info("ending (%s)", why)
            ended.set_result(code)

    server.owns_children = True
    server.on_exit = lambda code: end(code, "exit")
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        loop.add_signal_handler(sig, end, 0, signal.Signals(sig).name)
    await connect(server, end)
    watcher = loop.create_task(_watch_parent(server, end), name="lsp-parent-watch")
    code = await ended
    watcher.cancel()
    try:
        await server.stop()
    except Exception:  # ending goes on whatever went wrong
        log.exception("stopping the servers failed")
    return code


async def _watch_parent(server: BridgeServer, end: End) -> None:
    """End the bridge when the editor's process (or the bridge's parent) is gone."""
    parent = os.getppid()
    while True:
        await asyncio.sleep(_PARENT_POLL)  # no event tells of another process's end: look now and then
        editor = server.process_id
        if editor is not None and editor > 0 and editor != os.getpid() and not is_running(editor):
            end(1, f"the editor's process {editor} ended")
            return
        if os.getppid() != parent:
            end(1, f"the parent process {parent} ended")
            return


def _leave(code: int) -> NoReturn:
    """Leave at once: stdin's reading thread and closing connections must not keep the process."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
