"""A large library against the physical floor: 100,000 prompts (5,000 notebooks x 20 prompt cells).

The floor is what no server can beat: a fresh interpreter that finds every
`.ipynb` and json-loads it, nothing more. Every other figure is a multiple of
it, measured in the same run:

* cold start: process start to the first `prompts/list` answer of `mcp-notebook serve`
  (and the CPU time the server used by then, steadier than wall time on a busy machine);
* warm start: the same again, the folder unchanged since the previous run;
* save to `notifications/prompts/list_changed` (median and worst), at this size;
* a full paginated listing (every page, default page size): the first after the start, again
  once its pages are built, and the first at `--page-size 50` (the former default: ten times the
  requests), each with the CPU both sides used;
* the server's resident memory after indexing, and its wake-ups per second when idle
  (context switches of all its threads: a watcher that polls shows here).

Example: `python -m benchmarks.bench_scale` (about two minutes, most of it writing and
reading the corpus); `--notebooks 500 --prompts 20` for a quicker look.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def _start_to_first_list(corpus: Corpus, serve_args: list[str]) -> tuple[float, float]:
    """Seconds from process start to the first `prompts/list` answer, and the CPU seconds the server used by then."""
    with RawStdioClient(ours_command("serve", str(corpus.folder), "--no-watch", *serve_args), cwd=ROOT) as client:
        client.open_session(timeout=600)
        client.request("prompts/list", {}, timeout=600)
        elapsed = time.perf_counter() - client.started_at
        return elapsed, client.cpu_seconds() or float("nan")


def run(args: argparse.Namespace, corpus: Corpus, scratch: Path) -> FigureTable:
    floor = floor_seconds(corpus.folder, args.repeats)
    cold, cold_cpu = _start_to_first_list(corpus, args.serve_args)  # the first start after the corpus was written
    warm_runs = [_start_to_first_list(corpus, args.serve_args) for _ in range(args.repeats)]
    warm = statistics.median(run[0] for run in warm_runs)
    warm_cpu = statistics.median(run[1] for run in warm_runs)
    with RawStdioClient(ours_command("serve", str(corpus.folder), *args.serve_args), cwd=ROOT) as client:
        subscribe(client)
        pid = client.pid
        rss = _rss_mib(pid)
        # What the listing costs each side: the client's own share (reading and json-decoding every
        # page) bounds the wall time from below, whatever the server does.
        listed, pages, listing, listing_client_cpu, listing_server_cpu = _full_listing(client)
        assert listed == corpus.size, f"listed {listed} of {corpus.size} prompts"
        again = _full_listing(client)[2]
        listed_rss = _rss_mib(pid)  # the listing's entries are kept, as bytes, until the prompts change
        saves = measure_saves(client, corpus, args.saves, scratch)
        idle = wakeups_per_second(pid, args.idle_seconds)
    small_command = ours_command("serve", str(corpus.folder), "--no-watch", "--page-size", "50", *args.serve_args)
    with RawStdioClient(small_command, cwd=ROOT) as client:
        client.open_session(timeout=600)
        _, small_pages, small, _, small_server_cpu = _full_listing(client)
    summary = summarize(saves.latencies)
    table = FigureTable(
        f"{corpus.size:,} prompts ({len(corpus.notebooks):,} notebooks x {corpus.prompts_per_notebook}); "
        f"floor (fresh interpreter json-loads every notebook) {floor * 1000:.0f} ms"
    )
    table.add("floor: find and json-load every notebook", floor * 1000)
    table.add("cold start -> first prompts/list answer", cold * 1000)
    table.add("cold start / floor", cold / floor, unit="x", target=8.0)
    # On a shared machine the wall times stretch with its load; the server's own CPU time much less.
    table.add("cold start: server CPU by then", cold_cpu * 1000)
    table.add("warm start (folder unchanged) -> first prompts/list answer", warm * 1000)
    table.add("warm start / floor", warm / floor, unit="x", target=3.0)
    table.add("warm start: server CPU by then", warm_cpu * 1000)
    table.add("save -> list_changed, median", summary.median, target=60.0)
    table.add("save -> list_changed, worst", summary.maximum, target=150.0)
    table.add(f"full paginated listing ({pages} pages), the first", listing * 1000, target=1000.0)
    table.add("full listing: server CPU", listing_server_cpu * 1000)
    table.add("full listing: this client's CPU (reading, json-decoding)", listing_client_cpu * 1000)
    table.add("full listing again (pages built)", again * 1000)
    table.add(f"full listing at --page-size 50 ({small_pages} pages), the first", small * 1000)
    table.add("full listing at --page-size 50: server CPU", small_server_cpu * 1000)
    table.add("resident memory after indexing", rss, unit="MiB", target=200.0)
    table.add("resident memory after the listings", listed_rss, unit="MiB")
    table.add(f"idle wake-ups per second (over {args.idle_seconds:g} s)", idle, unit="/s")
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="100,000 prompts against the floor of reading the files.")
    parser.add_argument("--notebooks", type=int, default=5000)
    parser.add_argument("--prompts", type=int, default=20, help="prompt cells per notebook")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the floor and of the warm start")
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
