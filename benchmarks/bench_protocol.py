"""The HTTP protocol's own time per request: `serve --http`'s protocol driven in-process, without sockets.

`bench_http` measures requests a second through the kernel's sockets, where
the system time of reading and writing and the load generator's share of
the two cores move the figures. This drives the very protocol `serve --http`
runs (uvicorn's httptools protocol with ours on top, its ASGI cycle, the
access gate and the application behind it) with a stateless 2026-07-28
request at a time, fed as the bytes a client sends, into a transport that
only keeps what is written, and prints the CPU time per request. Example:
`python -m benchmarks.bench_protocol --method prompts/get`.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import MutableMapping, Sequence
from pathlib import Path
from typing import Any

from .bench_http import METHODS, _request
from .corpus import create_corpus

__all__ = ["main"]

_PORT = 8000


class _Kept(asyncio.Transport):
    """A transport that keeps the start of the last answer written to it (a large one comes in pieces)."""

    def __init__(self) -> None:
        super().__init__()
        self.last = b""
        self.answered = asyncio.Event()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if data[:5] == b"HTTP/":
            self.last = bytes(data[:256])
            self.answered.set()

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", _PORT), "peername": ("127.0.0.1", 50000)}.get(name, default)


async def _measure(method: str, requests: int, folder: Path, name: str) -> float:
    import anyio
    from uvicorn.server import ServerState

    from mcp_notebook.service import NotebookService, ServiceSettings
    from mcp_notebook.transports.http import allowed_hosts_for, create_http_app, uvicorn_config
    from mcp_notebook.transports.limits import HttpLimits

    service = NotebookService(ServiceSettings(paths=(str(folder),)))
    await anyio.to_thread.run_sync(service.start)
    gate = create_http_app(service.server, allowed_hosts=allowed_hosts_for("127.0.0.1", _PORT), stateless=True)
    lifespan: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    started = asyncio.Event()

    async def said(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    await lifespan.put({"type": "lifespan.startup"})
    running = asyncio.create_task(
        gate({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, lifespan.get, said)
    )
    await started.wait()
    config = uvicorn_config(gate, HttpLimits())
    config.load()
    protocol = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})  # type: ignore[call-arg]
    transport = _Kept()
    protocol.connection_made(transport)
    request = _request(_PORT, name, method)

    async def run(count: int) -> float:
        began = time.process_time()
        for _ in range(count):
            transport.answered.clear()
            protocol.data_received(request)
            await transport.answered.wait()  # the turns of the loop the ASGI cycle takes
        return (time.process_time() - began) / count

    await run(requests // 10)
    if not transport.last.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"the protocol did not answer {method}: {transport.last[:200]!r}")
    whole = await run(requests)
    await lifespan.put({"type": "lifespan.shutdown"})
    await running
    service.close()
    return whole


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", choices=METHODS, default="prompts/get")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10, help="prompts per notebook")
    args = parser.parse_args(argv)
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-protocol-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        whole = runner(_measure(args.method, args.requests, corpus.folder, corpus.prompt_names[0]))
    print(f"`{args.method}`, {args.requests} requests in-process, CPU per request: {whole * 1e6:.1f} us")


if __name__ == "__main__":
    main()
