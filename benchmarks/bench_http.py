"""HTTP throughput: `mcp-notebook serve --http --workers W` vs the bare SDK server and the HTTP floor.

Stateless 2026-07-28 `prompts/get`, `prompts/list` and `completion/complete` requests (each
one stands alone, so any worker can answer it) from C concurrent clients, each
on its own keep-alive connection, for a fixed time; the figure is requests per second, for W = 1
and 2 workers and C = 1, 8 and 32 clients. Both servers run the same HTTP
stack (uvicorn, httptools, uvloop) on the same corpus. The floor
(`http_floor.py`) is a raw ASGI app under that same stack answering with
our exact response bytes, captured from ours in the same run: what HTTP
alone costs here. The three take turns, one after the other, per worker
count, and every figure is printed as a ratio too (ours/floor, ours/SDK),
which is what counts on a loaded machine.

The load generator shares the machine's cores with the servers, so what it
spends per request is taken from them: with two workers on two cores it caps
the ratio of two workers to one at 2 S / (S + L), S being the server's CPU
per request and L the generator's. The leanest one is the default: `load.c`
beside this file (C, one thread, epoll, a write and a read a request, run as a
batch task so that it does not preempt a server at work; built with the
machine's C compiler on Linux), about 4-6 us a request here; then
`wrk` (Debian's package) when it is on the PATH, about 6-7; then one process
of raw asyncio sockets on uvloop (pre-built requests, a minimal response
reader), about 14. All three count an answer only when it is a 200 carrying a
JSON-RPC result. `--load` picks one.
Example: `python -m benchmarks.bench_http --notebooks 50 --prompts 10 --seconds 5`.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import math
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .corpus import create_corpus, prompt_arguments_for
from .servers import ROOT, describe_environment, ours_command, warm_index

__all__ = ["Cell", "Measured", "capture", "main", "measure", "measure_cpu", "run", "serving_process"]

MODERN = "2026-07-28"
STARTUP = 60.0


@dataclass(frozen=True, slots=True)
class Cell:
    method: str
    server: str
    workers: int
    clients: int
    requests: int
    errors: int
    seconds: float
    server_cpu: float = 0.0  # CPU seconds of the server's processes over the measured time (0: not known)
    load_cpu: float = 0.0  # and of the load generator

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    def per_request(self, cpu: float) -> float:
        """`cpu` seconds over the answered requests, in microseconds."""
        return cpu / self.requests * 1e6 if self.requests else 0.0


@dataclass(frozen=True, slots=True)
class Measured:
    answered: int
    errors: int
    seconds: float
    server_cpu: float  # CPU seconds of the server's processes over the measured time (0: not known)
    load_cpu: float  # and of the load generator


def _tree_cpu(pid: int | None) -> float:
    """User and system CPU seconds so far of process `pid` and every process below it (Linux; else 0)."""
    if pid is None or not Path("/proc/self/stat").exists():
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue  # gone meanwhile
    return total


def _own_cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _request(port: int, name: str, method: str = "prompts/get") -> bytes:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    params: dict[str, Any] = {"_meta": meta}
    named = ""
    if method == "prompts/get":
        params |= {"name": name, "arguments": prompt_arguments_for(name)}
        named = f"Mcp-Name: {name}\r\n"
    elif method == "completion/complete":
        params |= {"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "audience", "value": "re"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n"
        f"Mcp-Method: {method}\r\n{named}Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _read_response(reader: Any) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lines = head.lower().split(b"\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in lines if line.startswith(b"content-length:")), None)
    if length is not None:
        return status, await reader.readexactly(length)
    body = bytearray()  # chunked
    while True:
        size = int((await reader.readuntil(b"\r\n")).strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return status, bytes(body)
        body.extend((await reader.readexactly(size + 2))[:-2])


async def _client(port: int, request: bytes, until: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            writer.write(request)
            status, body = await _read_response(reader)
            ok = status == 200 and b'"result"' in body
            counts[0 if ok else 1] += 1
    finally:
        writer.close()


async def _load(port: int, request: bytes, clients: int, seconds: float, server: int | None) -> Measured:
    counts = [0, 0]
    warm = time.perf_counter() + min(1.0, seconds / 2)
    await asyncio.gather(*(_client(port, request, warm, [0, 0]) for _ in range(clients)))
    server_cpu, own_cpu = _tree_cpu(server), _own_cpu(resource.RUSAGE_SELF)
    started = time.perf_counter()
    await asyncio.gather(*(_client(port, request, started + seconds, counts) for _ in range(clients)))
    spent = time.perf_counter() - started
    server_cpu, own_cpu = _tree_cpu(server) - server_cpu, _own_cpu(resource.RUSAGE_SELF) - own_cpu
    return Measured(counts[0], counts[1], spent, server_cpu, own_cpu)


def measure(
    port: int, name: str, clients: int, seconds: float, method: str = "prompts/get", load: str = "python"
) -> tuple[int, int, float]:
    """(answered, errors, seconds) for `clients` clients sending `method` (about `name`) for `seconds`.

    `load` is the load generator: "python" (ours, asyncio on uvloop), "c" (`load.c`) or "wrk".
    """
    found = measure_cpu(port, name, clients, seconds, method, load)
    return found.answered, found.errors, found.seconds


def measure_cpu(
    port: int, name: str, clients: int, seconds: float, method: str, load: str, server: int | None = None
) -> Measured:
    """`measure`, with the CPU time the server's processes (those of `server` down) and the load generator
    spent over the measured time."""
    if load == "wrk":
        return _measure_with_wrk(port, _request(port, name, method), clients, seconds, server)
    if load == "c":
        return _measure_with_c(port, _request(port, name, method), clients, seconds, server)
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    result: Measured = runner(_load(port, _request(port, name, method), clients, seconds, server))
    return result


# wrk sends the request `_request` builds (its own Host and Content-Length) and counts the answers that
# are not a 200 with a JSON-RPC result, as the Python load generator does.
_WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = %(body)s
%(headers)s
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local count = 0
  for _, thread in ipairs(threads) do count = count + thread:get("bad") end
  io.write(string.format("not answered: %%d\\n", count))
end
"""


def _lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII is a Lua string literal


def _wrk_script(request: bytes) -> str:
    head, body = request.split(b"\r\n\r\n", 1)
    fields = [line.split(":", 1) for line in head.decode("ascii").split("\r\n")[1:]]
    headers = "\n".join(
        f"wrk.headers[{_lua_string(name)}] = {_lua_string(value.strip())}"
        for name, value in fields
        if name.lower() not in ("host", "content-length")
    )
    return _WRK_SCRIPT % {"body": _lua_string(body.decode("ascii")), "headers": headers}


_WRK_TIMEOUT = 60


def _measure_with_wrk(port: int, request: bytes, clients: int, seconds: float, server: int | None) -> Measured:
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-wrk-") as scratch:
        script = Path(scratch) / "request.lua"
        script.write_text(_wrk_script(request))
        url = f"http://127.0.0.1:{port}/mcp"
        # Its own 2 s timeout would count the SDK's slowest answers (500-prompt pages) as errors: none here.
        wrk = ["wrk", "-t1", f"-c{clients}", f"--timeout={_WRK_TIMEOUT}s", "-s", str(script)]
        subprocess.run([*wrk, "-d1s", url], capture_output=True)  # warm-up
        # wrk runs whole seconds: a shorter cell runs one.
        argv = [*wrk, f"-d{max(1, math.ceil(seconds))}s", url]
        server_cpu, own_cpu = _tree_cpu(server), _own_cpu(resource.RUSAGE_CHILDREN)
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        server_cpu, own_cpu = _tree_cpu(server) - server_cpu, _own_cpu(resource.RUSAGE_CHILDREN) - own_cpu
    done = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)\b", out)
    refused = re.search(r"not answered: (\d+)", out)
    if done is None or refused is None:
        raise RuntimeError(f"wrk printed what this does not read:\n{out}")
    spent = float(done[2]) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[done[3]]
    failed = int(refused[1]) + sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    return Measured(int(done[1]) - int(refused[1]), failed, spent, server_cpu, own_cpu)


def _measure_with_c(port: int, request: bytes, clients: int, seconds: float, server: int | None) -> Measured:
    program = str(_built_load())
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-load-") as scratch:
        sent = Path(scratch) / "request"
        sent.write_bytes(request)
        subprocess.run([program, str(port), str(clients), "1", str(sent)], capture_output=True)  # warm-up
        server_cpu, own_cpu = _tree_cpu(server), _own_cpu(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [program, str(port), str(clients), str(seconds), str(sent)], capture_output=True, text=True
        )
        server_cpu, own_cpu = _tree_cpu(server) - server_cpu, _own_cpu(resource.RUSAGE_CHILDREN) - own_cpu
    found = re.fullmatch(r"answered (\d+) not-answered (\d+) errors (\d+) seconds ([\d.]+)\s*", done.stdout)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"the load generator (load.c) failed, exit {done.returncode}:\n{done.stdout}{done.stderr}")
    answered, refused, errors, spent = int(found[1]), int(found[2]), int(found[3]), float(found[4])
    return Measured(answered, refused + errors, spent, server_cpu, own_cpu)


_LOAD_SOURCE = Path(__file__).with_name("load.c")
_built: list[Path] = []  # the lean generator, once built in this process (its folder goes at exit)


def _compiler() -> str | None:
    """The C compiler that builds `load.c`, on Linux (it uses epoll); None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    return next((found for name in ("cc", "gcc", "clang") if (found := shutil.which(name))), None)


class _LoadNotBuilt(RuntimeError):
    """`load.c` could not be built here: no C compiler on Linux, or it failed."""


def _built_load() -> Path:
    """`load.c`, built once per process; `_LoadNotBuilt` says why it could not be."""
    if _built:
        return _built[0]
    compiler = _compiler()
    if compiler is None:
        raise _LoadNotBuilt("load.c needs Linux and a C compiler (cc, gcc or clang) on the PATH")
    folder = tempfile.mkdtemp(prefix="mcp-notebook-load-build-")
    atexit.register(shutil.rmtree, folder, True)
    program = Path(folder) / "load"
    built = subprocess.run([compiler, "-O2", "-o", str(program), str(_LOAD_SOURCE)], capture_output=True, text=True)
    if built.returncode != 0:
        raise _LoadNotBuilt(f"{compiler} could not build {_LOAD_SOURCE}:\n{built.stderr}")
    _built.append(program)
    return program


def load_generator(choice: str) -> str:
    """The load generator to use, `c`, `wrk` or `python`: `choice`, with `auto` taking the leanest one there is
    (and saying so on standard error when `load.c` could not be built)."""
    if choice == "auto":
        try:
            _built_load()
            return "c"
        except _LoadNotBuilt as problem:
            fallback = "wrk" if shutil.which("wrk") else "python"
            print(f"bench_http: {problem}; the load generator is {fallback}", file=sys.stderr)
            return fallback
    if choice == "wrk" and not shutil.which("wrk"):
        raise SystemExit("--load wrk: wrk is not on the PATH (Debian: apt install wrk)")
    if choice == "c":
        try:
            _built_load()
        except _LoadNotBuilt as problem:
            raise SystemExit(f"--load c: {problem}") from None
    return choice


_HOP_HEADERS = (b"date", b"server", b"content-length", b"transfer-encoding")


def capture(port: int, name: str, method: str) -> dict[str, Any]:
    """One response of the server on `port` to `method`: status, headers (less uvicorn's own), body and framing
    (by its length, or chunked)."""

    async def once() -> dict[str, Any]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(_request(port, name, method))
            head = await reader.readuntil(b"\r\n\r\n")
            status, body = await _read_response(_Replay(head, reader))
        finally:
            writer.close()
        fields = [line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line]
        pairs = [(k.strip().decode("latin-1"), v.strip().decode("latin-1")) for k, v in fields]
        headers = [[k, v] for k, v in pairs if k.lower().encode() not in _HOP_HEADERS]  # as JSON has them
        framing = "length" if any(k.lower() == "content-length" for k, _ in pairs) else "chunked"
        return {"status": status, "headers": headers, "body": body.decode(), "framing": framing}

    return asyncio.run(once())


class _Replay:
    """A reader that gives `head` once more before reading on from `reader`."""

    def __init__(self, head: bytes, reader: asyncio.StreamReader) -> None:
        self._head: bytes | None = head
        self._reader = reader

    async def readuntil(self, separator: bytes) -> bytes:
        if self._head is not None:
            head, self._head = self._head, None
            return head
        return await self._reader.readuntil(separator)

    async def readexactly(self, size: int) -> bytes:
        return await self._reader.readexactly(size)


def _bound_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    return sock


def _wait_until_serving(port: int, name: str, process: subprocess.Popen[bytes], startup: float = STARTUP) -> None:
    deadline = time.monotonic() + startup
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            answered, _, _ = measure(port, name, 1, 0.05)
            if answered:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not serve in time")


@contextmanager
def _serving(
    server: str, folder: Path, workers: int, name: str, canned: Path | None = None
) -> Iterator[tuple[int, int]]:
    with serving_process(server, folder, workers, name, canned) as (port, process):
        yield port, process.pid


@contextmanager
def serving_process(
    server: str,
    folder: Path,
    workers: int,
    name: str,
    canned: Path | None = None,
    wrapper: Sequence[str] = (),
    startup: float = STARTUP,
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`server` ("ours", "sdk" or "floor") serving `folder` with `workers` workers: its port and its process.

    Ours reads the index `warm_index` leaves beside `folder`.

    `wrapper` goes before the server's command (valgrind, for `bench_instructions`), `startup` is how long
    it may take to serve."""
    # Every server binds the port it is given, as a TCP socket: uvicorn's `--fd` takes a socket for a Unix
    # one, so its connections would go without TCP_NODELAY and wait on delayed ACKs.
    sock = _bound_socket()
    port = int(sock.getsockname()[1])
    sock.close()
    env = {**os.environ, "BASELINE_FOLDERS": str(folder), "HTTP_FLOOR_RESPONSES": str(canned or "")}
    if server == "ours":
        index = warm_index(folder)
        argv = ours_command("serve", str(folder), "--http", "--port", str(port), "--workers", str(workers))
        argv += ["--cache-dir", str(index)]
    else:
        factory = "benchmarks.http_floor:create_floor_app" if server == "floor" else _BASELINE
        argv = [sys.executable, "-m", "uvicorn", "--factory", factory, "--loop", "uvloop", "--http", "httptools"]
        argv += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
        argv += ["--log-level", "warning", "--no-access-log"]
    argv = [*wrapper, *argv]
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until_serving(port, name, process, startup)
        yield port, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


_BASELINE = "benchmarks.baseline_server:create_baseline_http_app"
METHODS = ("prompts/get", "prompts/list", "completion/complete")
SERVERS = ("ours", "sdk", "floor")


def run(
    folder: Path,
    name: str,
    workers: Sequence[int],
    clients: Sequence[int],
    seconds: float,
    load: str = "python",
    methods: Sequence[str] = METHODS,
) -> list[Cell]:
    """Every cell, the servers taking turns per worker count; the floor answers with the bytes ours gave."""
    cells: list[Cell] = []
    canned = folder.parent / "floor-responses.json"
    for count in workers:
        # The floor needs our bytes first; the SDK goes first or between, turn about.
        for server in ("ours", "sdk", "floor") if count % 2 else ("sdk", "ours", "floor"):
            with _serving(server, folder, count, name, canned) as (port, pid):
                if server == "ours":
                    canned.write_text(json.dumps({method: capture(port, name, method) for method in METHODS}))
                elif server == "floor":
                    _check_floor(port, name, canned)
                for method in methods:
                    for concurrency in clients:
                        found = measure_cpu(port, name, concurrency, seconds, method, load, pid)
                        figures = (found.answered, found.errors, found.seconds, found.server_cpu, found.load_cpu)
                        cells.append(Cell(method, server, count, concurrency, *figures))
    return cells


def _check_floor(port: int, name: str, canned: Path) -> None:
    """Stop unless the floor on `port` answers every method with exactly the bytes ours gave, framed alike."""
    ours = json.loads(canned.read_text())
    for method in METHODS:
        if capture(port, name, method) != ours[method]:
            raise RuntimeError(f"the floor does not answer {method} with our bytes")


def render(all_cells: Sequence[Cell]) -> str:
    return "\n\n".join(
        f"`{method}`, requests/s:\n\n" + _render_method([c for c in all_cells if c.method == method])
        for method in METHODS
        if any(c.method == method for c in all_cells)
    )


def _render_method(cells: Sequence[Cell]) -> str:
    def rate(server: str, workers: int, clients: int) -> float:
        return next((c.rate for c in cells if (c.server, c.workers, c.clients) == (server, workers, clients)), 0.0)

    def ratio(top: float, bottom: float) -> str:
        return f"{top / bottom:.2f}" if bottom > 0 else "-"

    clients = sorted({c.clients for c in cells})
    workers = sorted({c.workers for c in cells})
    scaling = {1, 2} <= set(workers)
    heads = ["clients"]
    heads += [f"{s}, {w}" for w in workers for s in ("ours", "SDK", "floor")]
    heads += [f"ours/floor, {w}" for w in workers] + [f"ours/SDK, {w}" for w in workers]
    if scaling:
        heads += ["ours 2 workers / 1", "SDK 2 / 1", "floor 2 / 1"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for count in clients:
        row = [str(count)]
        row += [f"{rate(s, w, count):.0f}" for w in workers for s in SERVERS]
        row += [ratio(rate("ours", w, count), rate("floor", w, count)) for w in workers]
        row += [ratio(rate("ours", w, count), rate("sdk", w, count)) for w in workers]
        if scaling:
            row += [ratio(rate(s, 2, count), rate(s, 1, count)) for s in SERVERS]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(f"errors: {sum(c.errors for c in cells)}")
    if any(c.server_cpu for c in cells):
        lines += ["", _render_cpu(cells, clients, workers)]
    return "\n".join(lines)


def _render_cpu(cells: Sequence[Cell], clients: Sequence[int], workers: Sequence[int]) -> str:
    """CPU per answered request, the server's and the load generator's; and two workers / one without the
    load generator's share of the cores."""

    def cell(server: str, count: int, concurrency: int) -> Cell | None:
        return next((c for c in cells if (c.server, c.workers, c.clients) == (server, count, concurrency)), None)

    def spent(found: Cell | None) -> str:
        if found is None or not found.requests:
            return "-"
        return f"{found.per_request(found.server_cpu):.0f} + {found.per_request(found.load_cpu):.0f}"

    cores = os.cpu_count() or 1
    scaling = {1, 2} <= set(workers)
    heads = ["clients"] + [f"{s}, {w}" for w in workers for s in ("ours", "SDK", "floor")]
    if scaling:
        heads.append("ours 2 workers / 1 if the load generator took no CPU")
    lines = [
        "CPU per answered request, us: the server's processes + the load generator (both on this machine's cores):",
        "",
        "| " + " | ".join(heads) + " |",
        "|" + "---|" * len(heads),
    ]
    for count in clients:
        row = [str(count)] + [spent(cell(s, w, count)) for w in workers for s in SERVERS]
        if scaling:
            one, two = cell("ours", 1, count), cell("ours", 2, count)
            ceiling = "-"
            if one is not None and two is not None and one.requests and two.requests and two.server_cpu:
                # One worker keeps a core busy; two keep two busy, less what the load generator takes of them.
                ceiling = f"{min(cores, 2) * one.per_request(one.server_cpu) / two.per_request(two.server_cpu):.2f}"
            row.append(ceiling)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10, help="prompts per notebook")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time per cell")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS), help="the methods sent")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument(
        "--load",
        choices=("auto", "c", "wrk", "python"),
        default="auto",
        help="the load generator: load.c, wrk or the Python one; by default the first of them this machine can run",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        load = load_generator(args.load)
        cells = run(corpus.folder, corpus.prompt_names[0], args.workers, args.clients, args.seconds, load, args.methods)
    print(
        f"### HTTP throughput ({corpus.size} prompts, {args.seconds:g} s per cell, load generator: {load}, "
        f"machine load: {_load_average()})\n"
    )
    print(render(cells))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "environment": describe_environment(),
            "load_generator": load,
            "cells": [asdict(c) | {"rate": c.rate} for c in cells],
        }
        args.json.write_text(json.dumps(document, indent=2))
    if sum(c.errors for c in cells):
        raise SystemExit("some requests failed")


if __name__ == "__main__":
    main()
