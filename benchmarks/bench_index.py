"""Index time: how long mcp-notebook takes to read a folder of notebooks into its prompt registry.

Each measurement runs in a fresh interpreter (no warm objects from an earlier
run; the files themselves are in the page cache, as after any recent save):

* in-process: `NotebookFolderSource([folder], registry).scan()`, timed around
  the call alone (imports are timed separately);
* for reference: the bare SDK baseline's reader (`json.loads` of every file,
  no validation), the least work that still finds every prompt;
* cold `mcp-notebook list FOLDER`, wall time from spawn to exit, when the CLI has `list`.

Target: under 3 s for 1,000 notebooks x 20 prompt cells. `--profile` prints the
functions that took the most cumulative time in one scan.
Example: `python -m benchmarks.bench_index --notebooks 1000 --prompts 20`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .corpus import create_corpus
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command, wall_times

__all__ = ["main", "run_child_scan"]

_RESULT_PREFIX = "BENCH-RESULT "
INDEX_TARGET_MS = 3000.0


def _scan(folder: Path) -> tuple[dict[str, float], int]:
    began = time.perf_counter()
    from mcp_notebook.registry import PromptRegistry
    from mcp_notebook.sources.folder import NotebookFolderSource

    imported = time.perf_counter()
    registry = PromptRegistry()
    source = NotebookFolderSource([folder], registry)
    scanning = time.perf_counter()
    source.scan()
    done = time.perf_counter()
    return {"import": imported - began, "scan": done - scanning}, len(registry.snapshot().prompts)


def _read_like_baseline(folder: Path) -> tuple[dict[str, float], int]:
    from .baseline_server import read_cell_prompts  # imports the SDK too; only the reading is timed

    began = time.perf_counter()
    prompts = read_cell_prompts([folder])
    return {"scan": time.perf_counter() - began}, len(prompts)


def run_child_scan(mode: str, folder: Path, profile: bool) -> None:
    """In a fresh interpreter: index `folder` once and print the timings as one JSON line."""
    measure = _scan if mode == "ours" else _read_like_baseline
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        timings, count = profiler.runcall(measure, folder)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    else:
        timings, count = measure(folder)
    print(_RESULT_PREFIX + json.dumps({**timings, "prompts": count}), flush=True)


def _child(mode: str, folder: Path, profile: bool = False) -> dict[str, float]:
    argv = [sys.executable, "-m", "benchmarks.bench_index", "--child", mode, str(folder)]
    if profile:
        argv.append("--profile")
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"index child ({mode}) failed with {out.returncode}:\n{out.stderr[-3000:]}")
    if profile:
        print(out.stderr)
    lines = [line for line in out.stdout.splitlines() if line.startswith(_RESULT_PREFIX)]
    result: dict[str, float] = json.loads(lines[-1].removeprefix(_RESULT_PREFIX))
    return result


def _has_list_command() -> bool:
    probe = subprocess.run(ours_command("list", "--help"), cwd=ROOT, capture_output=True, check=False)
    return probe.returncode == 0


def run(args: argparse.Namespace, folder: Path, expected: int) -> FigureTable:
    ours = [_child("ours", folder) for _ in range(args.repeats)]
    reference = [_child("baseline", folder) for _ in range(args.repeats)]
    for label, results in (("mcp-notebook", ours), ("baseline reader", reference)):
        if any(r["prompts"] != expected for r in results):
            print(f"warning: {label} indexed {results[0]['prompts']} prompts, expected {expected}")
    table = FigureTable(
        f"Index time: {args.notebooks} notebooks x {args.prompts} prompt cells = {expected} prompts "
        f"(median of {args.repeats} fresh interpreters)"
    )
    scan_ms = summarize([r["scan"] for r in ours]).median
    table.add("NotebookFolderSource.scan() into a PromptRegistry", scan_ms, target=INDEX_TARGET_MS)
    table.add(
        "import of registry + folder source (first import, fresh interpreter)",
        summarize([r["import"] for r in ours]).median,
    )
    reference_ms = summarize([r["scan"] for r in reference]).median
    table.add("reference: the SDK baseline's reader (json.loads, no validation)", reference_ms)
    table.add("scan / reference reader", scan_ms / reference_ms if reference_ms else float("inf"), unit="x")
    if _has_list_command():
        cold = wall_times(ours_command("list", str(folder)), args.repeats)
        table.add("cold `mcp-notebook list FOLDER`, spawn to exit", summarize(cold).median)
    else:
        print("note: `mcp-notebook list` is not available; its cold wall time is not measured")
    if args.profile:
        _child("ours", folder, profile=True)
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Time indexing a folder of notebooks into the prompt registry.")
    parser.add_argument("--notebooks", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=20, help="prompt cells per notebook")
    parser.add_argument("--repeats", type=int, default=3, help="fresh interpreters per figure")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one scan")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    if args.child:
        run_child_scan(args.child[0], Path(args.child[1]), args.profile)
        return
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        table = run(args, corpus.folder, corpus.size)
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
