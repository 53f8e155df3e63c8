"""What watching by polling costs (`serve --poll SECONDS`, and network file systems): 1,000 notebooks.

Starts `mcp-notebook serve CORPUS` over stdio three ways: watched by inotify
(the default on a local disk) and polled every 2 s (the default on NFS, CIFS,
FUSE) and every 1 s. For each it measures, once the watch is in place:

* idle wake-ups per second (context switches of all the server's threads) and
  the server's CPU time per second while nobody asks anything: polling's cost;
* save -> `notifications/prompts/list_changed` (median and worst of `--saves`):
  a save must reach clients within the interval plus 1 s;

and, in this process, how long one look at the folder takes (the walk and the
`stat` of every notebook a poll does each interval, median of 10).

Example: `python -m benchmarks.bench_poll` (about a minute); `--notebooks 100` for a quicker look.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from mcp_notebook.sources.embeds import is_hidden_part
from mcp_notebook.sources.polling import look

from .bench_reload import _wait_until_watching, measure_saves, subscribe
from .bench_scale import wakeups_per_second
from .corpus import Corpus, create_corpus
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command
from .stdio_rpc import RawStdioClient

__all__ = ["look_seconds", "main"]

# A save may wait for the next look, then needs its reload and the notification: at most this much after it.
_SLACK_SECONDS = 1.0


def look_seconds(folder: Path, repeats: int = 10) -> float:
    """Median seconds of one look at `folder` as a poll takes it (every wanted notebook stat-ed)."""
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        look([(folder, True)], lambda name: name.endswith(".ipynb"), lambda name: not is_hidden_part(name))
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def _measure(
    corpus: Corpus, scratch: Path, poll: float | None, args: argparse.Namespace
) -> tuple[float, float, list[float]]:
    """(idle wake-ups per second, idle server CPU ms per second, save latencies) for one way of watching."""
    extra = ["--poll", f"{poll:g}"] if poll is not None else []
    argv = ours_command("serve", str(corpus.folder), "--no-cache", *extra, *args.serve_args)
    with RawStdioClient(argv, cwd=ROOT) as client:
        subscribe(client)
        _wait_until_watching(client, corpus, scratch)  # saves until one is announced: the watch is in place
        cpu_before = client.cpu_seconds() or 0.0
        wakeups = wakeups_per_second(client.pid, args.idle_seconds)
        cpu = ((client.cpu_seconds() or float("nan")) - cpu_before) / args.idle_seconds
        saves = measure_saves(client, corpus, args.saves, scratch)
    return wakeups, cpu * 1000, saves.latencies


def run(args: argparse.Namespace, scratch: Path) -> FigureTable:
    corpus = create_corpus(scratch / "corpus-0", notebooks=args.notebooks, prompts=args.prompts)
    table = FigureTable(
        f"Watching {len(corpus.notebooks):,} notebooks ({corpus.size:,} prompts): inotify against polling; "
        f"idle over {args.idle_seconds:g} s, {args.saves} saves"
    )
    table.add("one look at the folder (walk + stat of every notebook), median", look_seconds(corpus.folder) * 1000)
    ways = (("inotify", None), *((f"--poll {interval:g}", interval) for interval in args.intervals))
    for index, (label, poll) in enumerate(ways):
        if index:  # a corpus of its own: the saves of one way must be news to the next server too
            corpus = create_corpus(scratch / f"corpus-{index}", notebooks=args.notebooks, prompts=args.prompts)
        wakeups, cpu, latencies = _measure(corpus, scratch, poll, args)
        summary = summarize(latencies)
        target = (poll + _SLACK_SECONDS) * 1000 if poll is not None else None
        table.add(f"{label}: idle wake-ups per second", wakeups, unit="/s")
        table.add(f"{label}: idle server CPU per second", cpu, unit="ms/s")
        table.add(f"{label}: save -> list_changed, median", summary.median, target=target)
        table.add(f"{label}: save -> list_changed, worst", summary.maximum, target=target)
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="What watching by polling costs, against inotify.")
    parser.add_argument("--notebooks", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=2, help="prompt cells per notebook")
    parser.add_argument("--saves", type=int, default=5)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--intervals", type=float, nargs="+", default=[2.0, 1.0], help="--poll intervals to measure")
    parser.add_argument("--serve-args", nargs=argparse.REMAINDER, default=[], help="extra `mcp-notebook serve` options")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        table = run(args, Path(scratch))
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
