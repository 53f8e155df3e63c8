"""Stdio on the event loop itself: the process's pipes read and written without worker threads.

The SDK's stdio transport reads each line and writes (then flushes) each
message in a worker thread: three thread hand-offs per request, the
largest part of a `prompts/get` round trip. Here the event loop waits on
the descriptors directly (POSIX pipes, sockets and terminals), which
answers the same messages with less CPU and less latency, and never blocks
the loop: data is read only once the descriptor is readable, and written
in chunks no larger than `PIPE_BUF`, each only once the descriptor is
writable (on Linux, a pipe is written through a non-blocking descriptor of
its own instead, as much at once as it takes), so a client that stops
reading stalls this connection, not the server's other work.

A client that sends requests but never reads the replies must not make the
server hold them without limit: once `InFlight.LIMIT` requests are
unanswered while the writer waits on a full pipe, reading stops (the
client's own writes then block, which is the backpressure a pipe gives),
and it resumes as soon as the client reads. Reading never stops while the
writer can write, so requests that wait on the client (asking the user)
cannot deadlock the connection.

As in the SDK transport, the connection is claimed for the duration: the
wire moves to private descriptors, fd 0 reads the null device and fd 1
writes to stderr, so stray `print`s and child processes cannot corrupt the
protocol; both are restored on exit (a differential test in
`tests/transports/test_pipes.py` holds this claim to the SDK's own).

Lines are UTF-8 JSON-RPC messages separated by `\\n` (a `\\r` before it
is ignored); a line that is not a message (`framing`) is passed on as an
`UnreadableMessage` carrying the error it gets.
"""

from __future__ import annotations

import logging
import os
import select
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio
import anyio.lowlevel
import mcp_types as types
from mcp.shared.message import SessionMessage

from ..protocol.prepared import result_written
from ..protocol.sdk_seam import ContextReceiveStream, ContextSendStream, ReadStream, WriteStream, create_context_streams
from .framing import LineCodec

__all__ = ["InFlight", "PipeStreams", "pipe_streams", "pipes_supported", "read_messages", "write_messages"]

log = logging.getLogger(__name__)

PipeStreams = tuple[ContextReceiveStream[SessionMessage | Exception], ContextSendStream[SessionMessage]]

READ_SIZE = 1 << 16
WRITE_CHUNK = select.PIPE_BUF if hasattr(select, "PIPE_BUF") else 512
"""A write no larger than this never blocks once the descriptor reports writable."""


def _waits(fd: int) -> bool:
    """Whether reads and writes on `fd` can block (pipes, sockets, terminals), so the loop must wait on it."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def _backed_by(stream: TextIO | None, fd: int) -> bool:
    try:
        return stream is not None and stream.buffer.fileno() == fd
    except (AttributeError, OSError, ValueError):
        return False


def pipes_supported() -> bool:
    """Whether this process's stdin and stdout can be served here (POSIX, `sys` streams on fds 0 and 1)."""
    if sys.platform == "win32":
        return False
    try:
        os.fstat(0), os.fstat(1)
    except OSError:
        return False
    return _backed_by(sys.stdin, 0) and _backed_by(sys.stdout, 1)


def _claim(fd: int, open_diversion: Callable[[], int]) -> tuple[int, Callable[[], None]]:
    """Move the wire on `fd` to a private descriptor and point `fd` elsewhere; returns it and the undo."""
    import fcntl

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        diversion = open_diversion()
        try:
            os.dup2(diversion, fd)
        finally:
            os.close(diversion)
    except OSError:
        os.close(private)
        raise

    def restore() -> None:
        with suppress(OSError):
            os.dup2(private, fd)
        with suppress(OSError):
            os.close(private)

    return private, restore


def _stdout_diversion() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


class InFlight:
    """The client's requests not answered yet: bounds them, and writes their replies when stdin ends.

    A client may close stdin right after its last request (`mcp-notebook
    serve < requests.jsonl`); without this, the server would stop and cancel
    what it had not answered yet. The wait is bounded: a request that waits
    on the client itself (asking the user) cannot finish once it is gone.

    It is also the reader's brake: `room()` waits while `LIMIT` requests are
    unanswered and the writer is stalled on a client that does not read.
    """

    LONG_LIVED = frozenset({"subscriptions/listen"})  # open until the client leaves, by design
    LIMIT = 64
    """Unanswered requests that stop the reading while the client reads none of the replies."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._ids: set[types.RequestId] = set()
        self._idle = anyio.Event()
        self._idle.set()
        self._stalled = False
        self._moved = anyio.Event()  # set whenever a reply is written or the writer gets unstuck

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def full(self) -> bool:
        """Whether the reader must wait: too many unanswered requests and replies the client does not take."""
        return self._stalled and len(self._ids) >= self.limit

    async def room(self) -> None:
        """Wait until the reader may read the next message (returns at once unless `full`)."""
        while self.full:
            self._moved = anyio.Event()
            await self._moved.wait()

    def stalled(self, stalled: bool) -> None:
        """The writer reports whether it is waiting for the client to read."""
        self._stalled = stalled
        if not stalled:
            self._moved.set()

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest) and message.method not in self.LONG_LIVED:
            if not self._ids:
                self._idle = anyio.Event()
            self._ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self._answered((message.params or {}).get("requestId"))

    def written(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._answered(message.id)

    def _answered(self, request_id: object) -> None:
        if request_id in self._ids:
            self._ids.discard(request_id)
            self._moved.set()
            if not self._ids:
                self._idle.set()

    async def drain(self, seconds: float) -> None:
        """Wait until every request read so far is answered, or `seconds` pass."""
        with anyio.move_on_after(seconds):
            await self._idle.wait()
        if self._ids:
            log.warning("stdin closed with %d request(s) still unanswered after %.0f s", len(self._ids), seconds)


DRAIN_SECONDS = 10.0


async def _deliver(
    line: bytes, send: WriteStream[SessionMessage | Exception], in_flight: InFlight | None, rules: LineCodec
) -> None:
    for item in rules.read(line):  # one message, or none (a blank line), or a batch's
        if in_flight is not None and isinstance(item, SessionMessage):
            in_flight.read(item.message)
        await send.send(item)  # a line that is not a message goes on as the `UnreadableMessage` it is


async def read_messages(
    fd: int,
    send: WriteStream[SessionMessage | Exception],
    in_flight: InFlight | None = None,
    rules: LineCodec | None = None,
) -> None:
    """Read lines from `fd` until it ends, passing each on as a message (or the error it is); closes `send`.

    With `in_flight`, the end of `fd` waits for the replies to the requests read (bounded) before closing.
    `rules` are the connection's (shared with its writer).
    """
    rules = rules or LineCodec()
    waits = _waits(fd)
    buffer = bytearray()
    async with send:
        while True:
            if waits:
                await anyio.wait_readable(fd)
            else:
                await anyio.lowlevel.checkpoint()
            try:
                chunk = os.read(fd, READ_SIZE)
            except OSError as error:
                log.warning("stdin failed (%s): closing the connection", error)
                break
            if not chunk:
                break
            begin, scanned = 0, len(buffer)  # what is left of the last read holds no newline
            buffer += chunk
            end = buffer.find(b"\n", scanned)
            while end >= 0:
                if in_flight is not None:
                    await in_flight.room()
                await _deliver(bytes(buffer[begin:end]), send, in_flight, rules)
                begin = end + 1
                end = buffer.find(b"\n", begin)
            del buffer[:begin]
        if buffer.strip():
            await _deliver(bytes(buffer), send, in_flight, rules)  # a last message without its newline
        if in_flight is not None:
            await in_flight.drain(DRAIN_SECONDS)


def _nonblocking_twin(fd: int) -> int | None:
    """A non-blocking descriptor of its own for the pipe `fd` writes to (Linux), or None.

    Opened anew through `/proc`, it has its own file status flags, so being
    non-blocking never reaches the client's end or any other process holding
    the pipe; then a reply is written in as few calls as the pipe takes it.
    """
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        twin = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if os.fstat(twin).st_ino != os.fstat(fd).st_ino:  # not the same pipe after all
        os.close(twin)
        return None
    return twin


async def _wait_writable(fd: int, in_flight: InFlight | None) -> None:
    if in_flight is not None:
        in_flight.stalled(True)
    try:
        await anyio.wait_writable(fd)
    finally:
        if in_flight is not None:
            in_flight.stalled(False)


async def _write_all(
    fd: int, data: bytes, writable: select.poll | None, in_flight: InFlight | None, twin: int | None = None
) -> None:
    view = memoryview(data)
    while view:
        if twin is not None:
            try:
                written = os.write(twin, view)  # as much as the pipe has room for, at once
            except BlockingIOError:
                await _wait_writable(twin, in_flight)
                continue
        elif writable is not None:
            if not writable.poll(0):
                await _wait_writable(fd, in_flight)
            written = os.write(fd, view[:WRITE_CHUNK])
        else:
            written = os.write(fd, view)
        view = view[written:]


async def write_messages(
    fd: int, receive: ReadStream[SessionMessage], in_flight: InFlight | None = None, rules: LineCodec | None = None
) -> None:
    """Write each message from `receive` to `fd` as one line, until the stream closes; drops them if `fd` is gone."""
    rules = rules or LineCodec()
    writable: select.poll | None = None
    twin: int | None = None
    if _waits(fd):
        writable = select.poll()
        writable.register(fd, select.POLLOUT)
        twin = _nonblocking_twin(fd)
    client_gone = False  # then messages are still taken, so the server never waits on a reader that left
    try:
        async with receive:
            async for session_message in receive:
                if not client_gone:
                    data = rules.encode(session_message.message)
                    try:
                        if data is not None:  # None: an answer held until the rest of its batch is in
                            await _write_all(fd, data, writable, in_flight, twin)
                    except OSError as error:
                        log.info("stdout closed (%s): dropping further messages", error)
                        client_gone = True
                    else:
                        if isinstance(session_message.message, types.JSONRPCResponse):
                            result_written(session_message.message.result)  # a listing may build its next page now
                if in_flight is not None:
                    in_flight.written(session_message.message)
    finally:
        if twin is not None:
            os.close(twin)


@asynccontextmanager
async def pipe_streams() -> AsyncIterator[PipeStreams]:
    """Serve messages on this process's stdin/stdout: yields (messages read, messages to write).

    Only when `pipes_supported()`; the streams close when stdin ends.
    """
    in_fd, restore_stdin = _claim(0, lambda: os.open(os.devnull, os.O_RDONLY))
    try:
        out_fd, restore_stdout = _claim(1, _stdout_diversion)
    except OSError:
        restore_stdin()
        raise
    try:
        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        write_stream, write_reader = create_context_streams[SessionMessage](0)
        in_flight, rules = InFlight(), LineCodec()
        async with anyio.create_task_group() as group:
            group.start_soon(read_messages, in_fd, read_writer, in_flight, rules)
            group.start_soon(write_messages, out_fd, write_reader, in_flight, rules)
            yield read_stream, write_stream
    finally:
        restore_stdout()
        restore_stdin()
