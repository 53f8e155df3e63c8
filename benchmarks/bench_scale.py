"""A large library against the physical floor: 100,000 prompts (5,000 notebooks x 20 prompt cells).

The floor is what no server can beat: a fresh interpreter that finds every
`.ipynb` and json-loads it, nothing more. Every figure that depends on the
machine's load is measured in each of `--runs` runs (five by default), beside
that run's own floor, and printed as the median with the lowest and highest;
a target is met only when it is met in every run:

* cold start: process start to the first `prompts/list` answer of `mcp-notebook serve`, its index
  empty (and the CPU time the server used by then, steadier than wall time on a busy machine);
* warm start: the same again, the index now holding every notebook;
* a full paginated listing (every page, default page size) right after each of those starts,
  then once more with its pages built, with the CPU both sides used;
* save to `notifications/prompts/list_changed` (median and worst of `--saves`), at this size;
* once: the first listing at `--page-size 50` (ten times the requests), the server's resident
  memory after indexing, and its wake-ups per second when idle (context switches of all its
  threads: a watcher that polls shows here).

Example: `python -m benchmarks.bench_scale` (about three minutes, some of it writing the
corpus); `--runs 1 --notebooks 500 --prompts 20` for a quicker look.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mcp_notebook.sources.index import CACHE_DIR_ENV

from .bench_reload import measure_saves, subscribe
from .corpus import Corpus, create_corpus
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command
from .stdio_rpc import RawStdioClient

__all__ = ["floor_seconds", "main", "wakeups_per_second"]

# The floor: find and json-load every notebook, in a fresh interpreter, as fast as Python can.
_FLOOR = """
import json, os, sys
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".ipynb"):
            with open(os.path.join(folder, name), "rb") as f:
                json.loads(f.read())
"""


def floor_seconds(folder: Path, repeats: int) -> float:
    """Median seconds for a fresh interpreter to json-load every notebook under `folder`."""
    samples = []
    for index in range(repeats + 1):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", _FLOOR, str(folder)], check=True)
        if index:  # the first run only warms the page cache
            samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def _context_switches(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:  # a thread that ended meanwhile
            continue
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def wakeups_per_second(pid: int, seconds: float) -> float:
    """Context switches per second of every thread of `pid` over `seconds` of idleness (Linux)."""
    before = _context_switches(pid)
    time.sleep(seconds)  # measuring idleness: nothing to wait for but time itself
    return (_context_switches(pid) - before) / seconds


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _full_listing(client: RawStdioClient) -> tuple[int, int, float, float, float]:
    """Every page: (prompts, pages, wall seconds, this client's CPU seconds, the server's CPU seconds).

    This client keeps every entry it reads until the end; with collection on, its own collector
    would visit them again and again (most of its time), which says nothing of the server. So
    collection is off meanwhile, as a client that reads a large listing should have it, and
    the entries are let go before it is on again (kept, they would make a later collection in
    this process stall whatever is measured next, by a tenth of a second).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        began, began_cpu, server_began = time.perf_counter(), time.process_time(), client.cpu_seconds() or 0.0
        prompts, pages = client.list_all_prompts(timeout=600)
        wall, client_cpu = time.perf_counter() - began, time.process_time() - began_cpu
        server_cpu = (client.cpu_seconds() or float("nan")) - server_began
        listed = len(prompts)
        del prompts
    finally:
        if enabled:
            gc.enable()
    return listed, pages, wall, client_cpu, server_cpu


@dataclass
class _Run:
    """What one run measured (seconds, except where named)."""

    floor: float
    cold: float  # process start to the first `prompts/list` answer, the index empty
    cold_cpu: float
    cold_listing: float  # every page, asked for at once after that first answer
    warm: float  # the same, the index holding every notebook
    warm_cpu: float
    warm_listing: float
    listing_server_cpu: float
    listing_client_cpu: float
    again: float  # every page once more, the pages built
    saves: list[float]  # save -> list_changed, each


def _start_and_list(corpus: Corpus, argv: list[str], index: Path) -> tuple[float, float, float, float, float, float]:
    """Start `argv`, ask for the first page, then for every page.

    Returns seconds from process start to the first answer, the server's CPU by then, and the full listing's
    wall seconds, server CPU and this client's CPU, then the same listing again (its pages built).
    """
    env = {**os.environ, CACHE_DIR_ENV: str(index)}
    with RawStdioClient(argv, cwd=ROOT, env=env) as client:
        client.open_session(timeout=600)
        client.request("prompts/list", {}, timeout=600)
        elapsed = time.perf_counter() - client.started_at
        cpu = client.cpu_seconds() or float("nan")
        listed, _, listing, client_cpu, server_cpu = _full_listing(client)
        assert listed == corpus.size, f"listed {listed} of {corpus.size} prompts"
        again = _full_listing(client)[2]
        return elapsed, cpu, listing, server_cpu, client_cpu, again


def _one_run(args: argparse.Namespace, corpus: Corpus, scratch: Path, number: int) -> _Run:
    """A cold start and a warm one, each followed by a full listing, then saves: the floor measured beside them."""
    floor = floor_seconds(corpus.folder, args.repeats)
    index = scratch / f"index-{number}"  # empty: this run's first start is a cold one
    serve = ours_command("serve", str(corpus.folder), "--no-watch", *args.serve_args)
    cold, cold_cpu, cold_listing, _, _, _ = _start_and_list(corpus, serve, index)
    warm, warm_cpu, warm_listing, server_cpu, client_cpu, again = _start_and_list(corpus, serve, index)
    env = {**os.environ, CACHE_DIR_ENV: str(index)}
    with RawStdioClient(ours_command("serve", str(corpus.folder), *args.serve_args), cwd=ROOT, env=env) as client:
        subscribe(client)
        saves = measure_saves(client, corpus, args.saves, scratch, first=number * args.saves)
    return _Run(
        floor,
        cold,
        cold_cpu,
        cold_listing,
        warm,
        warm_cpu,
        warm_listing,
        server_cpu,
        client_cpu,
        again,
        saves.latencies,
    )


def run(args: argparse.Namespace, corpus: Corpus, scratch: Path) -> FigureTable:
    runs = []
    for number in range(args.runs):
        runs.append(_one_run(args, corpus, scratch, number))
        print(f"run {number + 1} of {args.runs} done", file=sys.stderr, flush=True)
    index = scratch / "index-0"  # warm
    env = {**os.environ, CACHE_DIR_ENV: str(index)}
    with RawStdioClient(ours_command("serve", str(corpus.folder), *args.serve_args), cwd=ROOT, env=env) as client:
        subscribe(client)
        pid = client.pid
        rss = _rss_mib(pid)
        _full_listing(client)
        listed_rss = _rss_mib(pid)  # the listing's entries are kept, as bytes, until the prompts change
        idle = wakeups_per_second(pid, args.idle_seconds)
    small_command = ours_command("serve", str(corpus.folder), "--no-watch", "--page-size", "50", *args.serve_args)
    with RawStdioClient(small_command, cwd=ROOT, env=env) as client:
        client.open_session(timeout=600)
        _, small_pages, small, _, small_server_cpu = _full_listing(client)
    pages = -(-corpus.size // _page_size(args.serve_args))
    table = FigureTable(
        f"{corpus.size:,} prompts ({len(corpus.notebooks):,} notebooks x {corpus.prompts_per_notebook}), "
        f"{args.runs} run(s); the floor is a fresh interpreter json-loading every notebook, measured in each run"
    )

    def each(metric: str, values: list[float], unit: str = "ms", target: float | None = None) -> None:
        table.add_runs(metric, values, unit=unit, target=target)

    each("floor: find and json-load every notebook", [r.floor * 1000 for r in runs])
    each("cold start (empty index) -> first prompts/list answer", [r.cold * 1000 for r in runs])
    each("cold start / floor", [r.cold / r.floor for r in runs], unit="x", target=6.0)
    # On a shared machine the wall times stretch with its load; the server's own CPU time much less.
    each("cold start: server CPU by then", [r.cold_cpu * 1000 for r in runs])
    each(f"full listing ({pages} pages) right after a cold start", [r.cold_listing * 1000 for r in runs], target=1000.0)
    each("warm start (folder unchanged) -> first prompts/list answer", [r.warm * 1000 for r in runs])
    each("warm start / floor", [r.warm / r.floor for r in runs], unit="x", target=3.0)
    each("warm start: server CPU by then", [r.warm_cpu * 1000 for r in runs])
    each(f"full listing ({pages} pages) right after a warm start", [r.warm_listing * 1000 for r in runs], target=1000.0)
    each("full listing: server CPU", [r.listing_server_cpu * 1000 for r in runs])
    each("full listing: this client's CPU (reading, json-decoding)", [r.listing_client_cpu * 1000 for r in runs])
    each("full listing again (pages built)", [r.again * 1000 for r in runs])
    medians = [summarize(r.saves).median for r in runs]
    each(f"save -> list_changed, median of {args.saves}", medians, target=40.0)
    each("save -> list_changed, worst", [summarize(r.saves).maximum for r in runs], target=150.0)
    table.add(f"full listing at --page-size 50 ({small_pages} pages), the first", small * 1000)
    table.add("full listing at --page-size 50: server CPU", small_server_cpu * 1000)
    table.add("resident memory after indexing", rss, unit="MiB", target=200.0)
    table.add("resident memory after a full listing", listed_rss, unit="MiB")
    table.add(f"idle wake-ups per second (over {args.idle_seconds:g} s)", idle, unit="/s")
    return table


def _page_size(serve_args: list[str]) -> int:
    for position, arg in enumerate(serve_args):
        if arg == "--page-size" and position + 1 < len(serve_args):
            return int(serve_args[position + 1])
        if arg.startswith("--page-size="):
            return int(arg.partition("=")[2])
    return 500


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="100,000 prompts against the floor of reading the files.")
    parser.add_argument("--notebooks", type=int, default=5000)
    parser.add_argument("--prompts", type=int, default=20, help="prompt cells per notebook")
    parser.add_argument("--runs", type=int, default=5, help="runs of every figure measured per run (median, spread)")
    parser.add_argument("--repeats", type=int, default=1, help="floor measurements per run (their median)")
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--serve-args", nargs=argparse.REMAINDER, default=[], help="extra `mcp-notebook serve` options")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        table = run(args, corpus, Path(scratch))
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
