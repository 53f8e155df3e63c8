"""Instructions per HTTP request: ours against the floor and the bare SDK, a figure the machine's load cannot move.

`bench_http`'s rates and CPU times move with whatever else runs on the
cores. This counts what does not: the user-space instructions each server's
process executes per answered request, under valgrind's callgrind. Each
server (`serve --http`, one worker; the floor, `http_floor.py`, answering with
our bytes; the bare SDK server under uvicorn) starts under callgrind with
its instrumentation off (so starting costs little), answers `--warm`
requests, then counts while `--clients` keep-alive connections send exactly
`--requests` more (each checked: a 200 with a JSON-RPC result), and the
count is dumped. The three run one after the other on the same corpus with
the same request bytes as `bench_http`. Kernel time (the sockets' system
calls) is not counted, for any of them. Example:
`python -m benchmarks.bench_instructions --method prompts/get --requests 2000`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .bench_http import METHODS, _read_response, _request, capture, serving_process
from .corpus import create_corpus

__all__ = ["count", "main"]

SERVERS = ("ours", "floor", "sdk")


async def _send(port: int, request: bytes, total: int, clients: int) -> int:
    """Send `request` `total` times over `clients` keep-alive connections; the answers that are a result."""
    left = [total]
    good = [0]

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while left[0] > 0:
                left[0] -= 1
                writer.write(request)
                status, body = await _read_response(reader)
                good[0] += status == 200 and b'"result"' in body
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return good[0]


def _callgrind(pid: int, *options: str) -> None:
    subprocess.run(["callgrind_control", *options, str(pid)], check=True, capture_output=True)


def _totals(folder: Path, pid: int) -> int:
    """The instructions of the counts dumped by process `pid` (the sum over its dump files, all threads)."""
    total = 0
    for dump in folder.glob(f"callgrind.out.{pid}*"):
        found = re.search(r"^(?:totals|summary): (\d+)", dump.read_text(errors="replace"), re.MULTILINE)
        total += int(found[1]) if found else 0
    return total


def count(
    server: str,
    folder: Path,
    name: str,
    method: str,
    requests: int,
    clients: int,
    warm: int,
    canned: Path,
    keep: Path | None = None,
) -> tuple[int, int]:
    """(instructions, answered) of `server` answering `requests` `method` requests under callgrind; `keep`: a
    folder to copy callgrind's dump into, for `callgrind_annotate`."""
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-callgrind-") as scratch:
        out = Path(scratch)
        wrapper = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            "--separate-threads=no",
            f"--callgrind-out-file={out}/callgrind.out.%p",
        ]
        with serving_process(server, folder, 1, name, canned, wrapper=wrapper, startup=600) as (port, process):
            if server == "ours":
                canned.write_text(json.dumps({m: capture(port, name, m) for m in METHODS}))
            request = _request(port, name, method)
            asyncio.run(_send(port, request, warm, clients))
            _callgrind(process.pid, "--instr=on")
            _callgrind(process.pid, "--zero")
            answered = asyncio.run(_send(port, request, requests, clients))
            _callgrind(process.pid, "--dump")
            instructions = _totals(out, process.pid)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for dump in out.glob("callgrind.out.*"):
                shutil.copy(dump, keep / f"{server}.{dump.name}")
    return instructions, answered


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", choices=METHODS, default="prompts/get")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warm", type=int, default=300, help="requests answered before counting")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--servers", nargs="+", choices=SERVERS, default=list(SERVERS))
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10, help="prompts per notebook")
    parser.add_argument("--keep", type=Path, help="copy each server's callgrind dump into this folder")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("bench_instructions needs valgrind (callgrind) on the PATH")
    servers = ["ours", *(s for s in args.servers if s != "ours")]  # the floor answers with ours' bytes
    counted: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-instructions-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        canned = Path(scratch) / "floor-responses.json"
        for server in servers:
            instructions, answered = count(
                server,
                corpus.folder,
                corpus.prompt_names[0],
                args.method,
                args.requests,
                args.clients,
                args.warm,
                canned,
                args.keep,
            )
            if answered != args.requests:
                raise SystemExit(f"{server}: {args.requests - answered} of {args.requests} requests not answered")
            counted[server] = instructions / answered
    print(
        f"`{args.method}`, {args.requests} requests over {args.clients} connections, one worker: "
        f"user-space instructions a request (callgrind)\n"
    )
    print("| server | instructions a request | ours / this |")
    print("|---|---|---|")
    for server in servers if "ours" in args.servers else servers[1:]:
        print(f"| {server} | {counted[server]:,.0f} | {counted['ours'] / counted[server]:.2f} |")
    if "floor" in counted:
        print(f"\nfloor / ours: {counted['floor'] / counted['ours']:.2f} (the target is at least 0.4)")
    if "sdk" in counted:
        print(f"SDK / ours: {counted['sdk'] / counted['ours']:.2f} (the target is at least 5)")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (it does not move these)")


if __name__ == "__main__":
    main()
