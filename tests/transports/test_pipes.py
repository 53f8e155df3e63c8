"""Stdio served on the event loop: real OS pipes, read and written without worker threads.

The reader and writer are driven over `os.pipe()` in this process; the
claim of fds 0 and 1 and regular-file stdio are checked in subprocesses,
where those descriptors are the process's own.
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from mcp_notebook.protocol.screening import UnreadableMessage
from mcp_notebook.transports.pipes import InFlight, pipes_supported, read_messages, write_messages

DEADLINE = 10.0
ROOT = Path(__file__).resolve().parents[2]


class Pipe:
    """Both ends of an OS pipe; each end is closed once, by the test or at the end."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self._open = {self.read_end, self.write_end}

    def close_read(self) -> None:
        self._close(self.read_end)

    def close_write(self) -> None:
        self._close(self.write_end)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    def close(self) -> None:
        for fd in sorted(self._open):
            self._close(fd)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    ends = Pipe()
    yield ends
    ends.close()


Inbox = tuple[MemoryObjectSendStream[SessionMessage | Exception], MemoryObjectReceiveStream[SessionMessage | Exception]]


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    """Where the reader passes messages on (buffered, so a test can look at what arrived)."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    with send, receive:
        yield send, receive


def ping(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()


async def received(stream: MemoryObjectReceiveStream[SessionMessage | Exception]) -> SessionMessage | Exception:
    with anyio.fail_after(DEADLINE):
        return await stream.receive()


def request_id(item: SessionMessage | Exception) -> Any:
    assert isinstance(item, SessionMessage), item
    assert isinstance(item.message, types.JSONRPCRequest)
    return item.message.id


async def test_a_message_split_across_writes_arrives_once_it_is_whole(pipe: Pipe, inbox: Inbox) -> None:
    send, receive = inbox
    line = ping(1) + b"\n"
    async with anyio.create_task_group() as group:
        group.start_soon(read_messages, pipe.read_end, send)
        os.write(pipe.write_end, line[:10])
        await anyio.wait_all_tasks_blocked()
        assert receive.statistics().current_buffer_used == 0  # half a line is not a message yet
        os.write(pipe.write_end, line[10:])
        assert request_id(await received(receive)) == 1
        pipe.close_write()
    with pytest.raises(anyio.EndOfStream):
        await receive.receive()  # stdin closed: the stream ends


async def test_many_messages_in_one_read_crlf_and_a_last_line_without_newline(pipe: Pipe, inbox: Inbox) -> None:
    send, receive = inbox
    os.write(pipe.write_end, ping(1) + b"\r\n" + ping(2) + b"\n\n  \n" + ping(3))
    pipe.close_write()
    async with anyio.create_task_group() as group:
        group.start_soon(read_messages, pipe.read_end, send)
        first, second, third = [await received(receive) for _ in range(3)]  # blank lines are ignored
    assert [request_id(first), request_id(second), request_id(third)] == [1, 2, 3]
    with pytest.raises(anyio.EndOfStream):
        await receive.receive()


async def test_a_line_bigger_than_a_read_arrives_whole(pipe: Pipe, inbox: Inbox) -> None:
    send, receive = inbox
    value = "x" * 1_000_000
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": {"v": value}}}).encode()
    async with anyio.create_task_group() as group:
        group.start_soon(read_messages, pipe.read_end, send)
        await anyio.to_thread.run_sync(os.write, pipe.write_end, line + b"\n")  # blocks until the reader took it all
        item = await received(receive)
        pipe.close_write()
    assert isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCRequest)
    assert item.message.params is not None and item.message.params["_meta"]["v"] == value


async def test_bytes_that_are_not_utf_8_are_answered_as_a_parse_error(pipe: Pipe, inbox: Inbox) -> None:
    send, receive = inbox
    os.write(pipe.write_end, b"\xff\xfe{\n" + ping(2) + b"\n")
    pipe.close_write()
    async with anyio.create_task_group() as group:
        group.start_soon(read_messages, pipe.read_end, send)
        problem, message = await received(receive), await received(receive)
    assert isinstance(problem, UnreadableMessage)
    assert (problem.refusal.code, problem.refusal.id) == (types.PARSE_ERROR, None)
    assert request_id(message) == 2  # and the next line is served


def response(request_id: int, size: int = 0) -> SessionMessage:
    result = {"padding": "y" * size} if size else {}
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def read_all(fd: int) -> bytes:
    with io.FileIO(fd, closefd=False) as stream:
        return stream.readall()


async def test_a_client_that_does_not_read_stalls_its_connection_not_the_loop(pipe: Pipe) -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage](1)
    message = response(1, size=1_000_000)  # far more than a pipe holds
    expected = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"

    async def write_then_close() -> None:
        await write_messages(pipe.write_end, receive)
        pipe.close_write()  # the client then reads to the end

    async with anyio.create_task_group() as group:
        group.start_soon(write_then_close)
        await send.send(message)
        # Returns only if the writer waits on the event loop: a write(2) blocked on the full pipe would hang here.
        await anyio.wait_all_tasks_blocked()
        assert not select.select([], [pipe.write_end], [], 0)[1]  # the pipe is full: the writer is waiting
        await send.aclose()
        with anyio.fail_after(DEADLINE):
            data = await anyio.to_thread.run_sync(read_all, pipe.read_end)
    assert data == expected


async def test_a_client_that_left_loses_replies_without_stopping_the_server(pipe: Pipe) -> None:
    pipe.close_read()  # the client is gone: writes fail with EPIPE
    send, receive = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as group:
        group.start_soon(write_messages, pipe.write_end, receive)
        with anyio.fail_after(DEADLINE):
            for request in range(3):
                await send.send(response(request))  # each is taken (and dropped), none raises
        await send.aclose()
    assert receive.statistics().open_receive_streams == 0  # the writer finished when the stream closed


def request(request_id: int, method: str = "prompts/get") -> types.JSONRPCRequest:
    return types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params={})


async def test_the_end_of_stdin_waits_for_the_replies_to_requests_already_read() -> None:
    in_flight = InFlight()
    in_flight.read(request(1))
    in_flight.read(request(2))
    in_flight.read(request(3, "subscriptions/listen"))  # open until the client leaves: not waited for
    in_flight.read(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))
    drained = anyio.Event()

    async def drain() -> None:
        await in_flight.drain(DEADLINE)
        drained.set()

    async with anyio.create_task_group() as group:
        group.start_soon(drain)
        in_flight.written(response(1).message)
        await anyio.wait_all_tasks_blocked()
        assert not drained.is_set() and len(in_flight) == 1
        cancelled = {"requestId": 2, "reason": "the user gave up"}
        in_flight.read(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=cancelled))
        with anyio.fail_after(DEADLINE):
            await drained.wait()
    assert len(in_flight) == 0


async def test_a_request_that_is_never_answered_delays_the_end_only_so_long(caplog: pytest.LogCaptureFixture) -> None:
    in_flight = InFlight()
    in_flight.read(request(1, "prompts/get"))
    with anyio.fail_after(DEADLINE):
        await in_flight.drain(0.05)
    assert len(in_flight) == 1
    assert "stdin closed with 1 request(s) still unanswered" in caplog.text


def test_stdio_replaced_by_python_objects_is_left_to_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert not pipes_supported()


def run_python(code: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
        **kwargs,
    )


def test_while_serving_stray_output_goes_to_stderr_and_stdin_reads_nothing() -> None:
    completed = run_python(
        """
        import os, sys, anyio
        import mcp_types as types
        from mcp.shared.message import SessionMessage
        from mcp_notebook.transports.pipes import pipe_streams, pipes_supported

        async def main():
            assert pipes_supported()
            async with pipe_streams() as (read_stream, write_stream):
                print("stray print", flush=True)
                os.write(1, b"stray write\\n")
                print("stdin reads:", repr(os.read(0, 10)), file=sys.stderr, flush=True)
                async with read_stream, write_stream:
                    async for item in read_stream:  # answer every request
                        reply = types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={})
                        await write_stream.send(SessionMessage(reply))
            print("after serving", flush=True)

        anyio.run(main)
        """,
        input=ping(1) + b"\n" + ping(2) + b"\n",
    )
    assert completed.returncode == 0, completed.stderr.decode()
    lines = completed.stdout.decode().splitlines()
    assert [json.loads(line)["id"] for line in lines[:2]] == [1, 2]
    assert lines[2:] == ["after serving"]  # fd 1 is the wire again once serving ends
    assert "stray print\nstray write\nstdin reads: b''\n" in completed.stderr.decode()


def serve_examples(stdin: Any, stdout: Any) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-W", "error", "-m", "mcp_notebook", "serve", "--no-watch", str(ROOT / "examples")]
    return subprocess.run(
        command, cwd=ROOT, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=60, check=False
    )


def test_serve_answers_requests_read_from_a_file_into_a_file(tmp_path: Path) -> None:
    """`mcp-notebook serve < requests > replies`: regular files are read and written without waiting on them."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
    ]
    (tmp_path / "requests.jsonl").write_text("\n".join(json.dumps(r) for r in requests) + "\n")
    with (tmp_path / "requests.jsonl").open("rb") as stdin, (tmp_path / "replies.jsonl").open("wb") as stdout:
        completed = serve_examples(stdin, stdout)
    assert completed.returncode == 0, completed.stderr.decode()
    replies = [json.loads(line) for line in (tmp_path / "replies.jsonl").read_text().splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[0]["result"]["protocolVersion"] == "2025-11-25"
    assert "code_review" in [prompt["name"] for prompt in replies[1]["result"]["prompts"]]


def test_serve_with_no_input_ends_cleanly() -> None:
    completed = serve_examples(subprocess.DEVNULL, subprocess.PIPE)
    assert completed.returncode == 0, completed.stderr.decode()
    assert completed.stdout == b""


def test_serve_reads_a_terminal_until_end_of_file() -> None:
    """Someone typing requests at a terminal: the loop waits on the tty, and Ctrl-D ends serving."""
    import pty

    controller, terminal = pty.openpty()
    command = [sys.executable, "-W", "error", "-m", "mcp_notebook", "serve", "--no-watch", str(ROOT / "examples")]
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    with subprocess.Popen(command, cwd=ROOT, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as server:
        os.close(terminal)
        try:
            assert server.stdout is not None
            os.write(
                controller, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
            )
            os.write(controller, b"\n")
            reply = json.loads(server.stdout.readline())
            os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of file
            assert server.wait(timeout=DEADLINE) == 0
        finally:
            os.close(controller)
            if server.poll() is None:
                server.kill()
    assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "2025-06-18"


async def test_reading_pauses_only_while_the_limit_is_reached_and_the_client_reads_no_replies(pipe: Pipe) -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    in_flight = InFlight(limit=2)
    os.write(pipe.write_end, b"".join(ping(n) + b"\n" for n in range(1, 7)))

    async def nothing_more_is_read() -> None:
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(anyio.WouldBlock):
            receive.receive_nowait()

    async with send, receive, anyio.create_task_group() as group:
        group.start_soon(read_messages, pipe.read_end, send, in_flight)
        # The writer is not stalled: the limit alone never stops reading (a reply may wait on the client).
        assert [request_id(await received(receive)) for _ in range(4)] == [1, 2, 3, 4]
        in_flight.stalled(True)  # the client stopped reading replies, four are unanswered: over the limit
        await nothing_more_is_read()
        for answered in (1, 2, 3):
            in_flight.written(response(answered).message)  # one left unanswered: room again
        assert request_id(await received(receive)) == 5
        await nothing_more_is_read()  # two unanswered again, and still stalled
        in_flight.stalled(False)  # the client reads again
        assert request_id(await received(receive)) == 6
        pipe.close_write()
        group.cancel_scope.cancel()


@pytest.mark.parametrize("transport", ["pipes", "sdk"])
def test_the_fd_claim_matches_the_sdks_own_stdio_transport(transport: str) -> None:
    """A differential test: `pipe_streams` re-implements the SDK's claim of fds 0 and 1; both must behave alike."""
    opened = "pipe_streams()" if transport == "pipes" else "stdio_server()"
    completed = run_python(
        f"""
        import os, sys, anyio
        import mcp_types as types
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage
        from mcp_notebook.transports.pipes import pipe_streams

        async def main():
            async with {opened} as (read_stream, write_stream):
                print("stray print", flush=True)
                os.write(1, b"stray write\\n")
                print("stdin reads:", repr(os.read(0, 10)), file=sys.stderr, flush=True)
                async with read_stream, write_stream:
                    async for item in read_stream:
                        reply = types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={{}})
                        await write_stream.send(SessionMessage(reply))
            print("after serving", flush=True)

        anyio.run(main)
        """,
        input=ping(1) + b"\n" + ping(2) + b"\n",
    )
    assert completed.returncode == 0, completed.stderr.decode()
    lines = completed.stdout.decode().splitlines()
    assert [json.loads(line)["id"] for line in lines[:2]] == [1, 2], f"{transport}: {lines}"
    assert lines[2:] == ["after serving"], f"{transport}: fd 1 is not the wire again after serving"
    assert "stray print\nstray write\nstdin reads: b''\n" in completed.stderr.decode(), transport
