"""Replies written to a pipe in as few writes as it takes them, never making the client's end non-blocking."""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from mcp_notebook.transports import pipes
from mcp_notebook.transports.pipes import write_messages

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the pipe's own descriptor is Linux's")
DEADLINE = 10.0


def _reply(size: int) -> SessionMessage:
    result: dict[str, Any] = {"prompts": [{"name": "x" * size}]}
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result))


@pytest.mark.parametrize("size", [10, 50_000, 1_000_000])
async def test_a_reply_arrives_whole_in_few_writes_and_the_pipe_stays_blocking(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_end, write_end = os.pipe()
    writes: list[int] = []
    real_write = os.write

    def counting_write(fd: int, data: Any) -> int:
        written = real_write(fd, data)
        if fd != write_end:  # the writer's own descriptor of the pipe
            writes.append(written)
        return written

    monkeypatch.setattr(pipes.os, "write", counting_write)
    received = bytearray()

    def read_all() -> None:
        while chunk := os.read(read_end, 1 << 20):
            received.extend(chunk)

    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        send, receive = anyio.create_memory_object_stream[SessionMessage](1)
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as group:
                group.start_soon(write_messages, write_end, receive)
                async with send:
                    await send.send(_reply(size))
        assert os.get_blocking(write_end)  # the client's end of the pipe is as it was
    finally:
        os.close(write_end)
        reader.join(DEADLINE)
        os.close(read_end)
    message = json.loads(bytes(received))
    assert message["result"]["prompts"][0]["name"] == "x" * size
    assert writes and sum(writes) == len(received)
    # As much as the pipe has room for at a time: fewer writes than 4 KiB chunks would take (one when it fits).
    assert len(writes) == 1 if len(received) <= 4096 else len(writes) < len(received) // 4096
