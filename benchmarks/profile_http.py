"""Where an HTTP server's time goes under load: py-spy samples it while 32 clients send one method.

Starts `mcp-notebook serve --http` (or the bare SDK server, `--server sdk`)
on a generated corpus, drives it with `bench_http`'s load generator (stateless
2026-07-28 requests on keep-alive connections) and records the server's
Python stacks with py-spy meanwhile. It prints the share of the server's busy
samples spent in each party's own code (ours, the SDK, anyio, starlette,
uvicorn, pydantic, json, asyncio and the rest) and the functions that cost
the most, the figures to read before cutting anything from the request path.
`--raw FILE` keeps the collapsed stacks for a flame graph (speedscope,
inferno, flamegraph.pl). py-spy must be installed (`pip install py-spy`); on
Linux it needs permission to trace the server (root, or
`kernel.yama.ptrace_scope` 0). Example:
`python -m benchmarks.profile_http --method prompts/list --seconds 10`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .bench_http import measure, serving_process
from .corpus import create_corpus

__all__ = ["Profile", "main", "owner_of", "read_collapsed"]

METHODS = ("prompts/get", "prompts/list", "completion/complete")

# Whose code a frame is, by where its file lives; the first match wins.
_OWNERS: tuple[tuple[str, str], ...] = (
    ("/mcp_notebook/", "ours"),
    ("/benchmarks/", "ours"),
    ("/mcp/", "SDK"),
    ("/anyio/", "anyio"),
    ("/starlette/", "starlette"),
    ("/sse_starlette/", "starlette"),
    ("/uvicorn/", "uvicorn"),
    ("/httptools/", "uvicorn"),
    ("/pydantic_core/", "pydantic"),
    ("/pydantic/", "pydantic"),
    ("/json/", "json"),
    ("/asyncio/", "asyncio"),
    ("/uvloop/", "asyncio"),
)
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def owner_of(path: str) -> str:
    """The party whose code lives at `path`: ours, SDK, anyio, starlette, uvicorn, pydantic, json, asyncio or other."""
    normal = "/" + path.replace("\\", "/")  # py-spy writes package-relative paths where it can
    return next((owner for marker, owner in _OWNERS if marker in normal), "other")


@dataclass(frozen=True, slots=True)
class Profile:
    """Samples per party (the leaf frame's owner) and per function (`function (file)`), and their total."""

    samples: int
    by_owner: Counter[str]
    by_function: Counter[str]

    def owner_lines(self) -> list[str]:
        lines = ["| code | share of busy samples |", "|---|---|"]
        for owner, count in self.by_owner.most_common():
            lines.append(f"| {owner} | {count / self.samples:.0%} |")
        return lines

    def function_lines(self, top: int) -> list[str]:
        lines = ["| function | owner | self |", "|---|---|---|"]
        for function, count in self.by_function.most_common(top):
            file = function.rsplit(" (", 1)[-1].rstrip(")")
            lines.append(f"| `{function}` | {owner_of(file)} | {count / self.samples:.1%} |")
        return lines


def read_collapsed(lines: Iterable[str]) -> Profile:
    """The profile of py-spy's collapsed stacks (`frame;frame;... COUNT` per line, the leaf frame last)."""
    by_owner: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    samples = 0
    for line in lines:
        stack, _, count_text = line.rstrip("\n").rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = [match for frame in stack.split(";") if (match := _FRAME.match(frame.strip()))]
        if not frames:
            continue
        count = int(count_text)
        leaf = frames[-1]
        file = leaf["file"]
        by_owner[owner_of(file)] += count
        by_function[f"{leaf['function']} ({_short(file)})"] += count
        samples += count
    return Profile(samples, by_owner, by_function)


def _short(path: str) -> str:
    """`path` from its package on: `.../site-packages/mcp/server/x.py` is `mcp/server/x.py`."""
    normal = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/", "/mcp_notebook/"):
        if marker in normal:
            head = "mcp_notebook/" if marker == "/mcp_notebook/" else ""
            return head + normal.rsplit(marker, 1)[1]
    return normal


def profile(server: str, method: str, seconds: float, clients: int, notebooks: int, prompts: int, raw: Path) -> Profile:
    """Record `server` answering `clients` clients' `method` for `seconds`; the collapsed stacks go to `raw`."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: pip install py-spy")
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-profile-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=notebooks, prompts=prompts)
        name = corpus.prompt_names[0]
        with serving_process(server, corpus.folder, 1, name) as (port, process):
            measure(port, name, clients, min(1.0, seconds), method)  # warm
            sampling = ["--subprocesses", "--format", "raw", "--rate", "200", "--duration", str(max(1, round(seconds)))]
            recording = subprocess.Popen(
                [spy, "record", "--pid", str(process.pid), *sampling, "--output", str(raw), "--nonblocking"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            loading = threading.Thread(target=measure, args=(port, name, clients, seconds + 1.0, method))
            loading.start()
            _, problems = recording.communicate(timeout=seconds + 120)
            loading.join()
    if recording.returncode != 0 or not raw.exists():
        raise SystemExit(f"py-spy could not record the server (exit {recording.returncode}):\n{problems.strip()}")
    return read_collapsed(raw.read_text().splitlines())


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", choices=("ours", "sdk"), default="ours", help="whose server to profile")
    parser.add_argument("--method", choices=METHODS, default="prompts/get", help="the method the clients send")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to record")
    parser.add_argument("--clients", type=int, default=32, help="concurrent keep-alive clients")
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10, help="prompts per notebook")
    parser.add_argument("--top", type=int, default=20, help="how many functions to list")
    parser.add_argument("--raw", type=Path, help="keep py-spy's collapsed stacks here, for a flame graph")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-stacks-") as scratch:
        raw = args.raw or Path(scratch) / "stacks.txt"
        found = profile(args.server, args.method, args.seconds, args.clients, args.notebooks, args.prompts, raw)
    if not found.samples:
        raise SystemExit("py-spy recorded no busy samples of the server")
    print(f"### Where {args.server} spends `{args.method}` ({args.clients} clients, {found.samples} busy samples)\n")
    print("\n".join(found.owner_lines()))
    print()
    print("\n".join(found.function_lines(args.top)))


if __name__ == "__main__":
    main()
