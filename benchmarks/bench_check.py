"""Checking against listing: `mcp-notebook check FOLDER` and `mcp-notebook list FOLDER` on the same corpus.

Both commands read the folder the same way (no persistent index: a one-shot
command reads every notebook); `check` then judges every prompt for every known
client and runs the prompt tests, where `list` prints every prompt. They take
turns, spawn to exit with stdout to /dev/null, after one unmeasured run of each;
each run's wall time and CPU time (the command and the children it forks) are kept.

Target: checking takes no longer than listing (ratio check / list <= 1.0).
Example: `python -m benchmarks.bench_check --notebooks 5000 --prompts 20` (100,000 prompts).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from .corpus import create_corpus
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command

__all__ = ["main"]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `argv`, spawn to exit."""
    cpu, began = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - began
    if done.returncode not in (0, 1):  # 1: the corpus has warnings or errors to report; anything else is a failure
        raise SystemExit(f"{' '.join(argv)} failed with {done.returncode}:\n{done.stderr.decode()[-3000:]}")
    return wall, _children_cpu() - cpu


def run(folder: Path, repeats: int, label: str) -> FigureTable:
    commands = {"list": ours_command("list", str(folder)), "check": ours_command("check", str(folder))}
    for argv in commands.values():
        _run(argv)  # unmeasured: bytecode and page cache, as after any earlier run
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for turn in range(repeats):
        order = list(commands) if turn % 2 == 0 else list(reversed(commands))  # who goes first alternates
        for name in order:
            runs[name].append(_run(commands[name]))
    table = FigureTable(f"check against list: {label} (median of {repeats} runs each, taking turns)")
    medians = {}
    for name in commands:
        wall = summarize([w for w, _ in runs[name]]).median
        cpu = summarize([c for _, c in runs[name]]).median
        medians[name] = (wall, cpu)
        table.add(f"`mcp-notebook {name} FOLDER`, spawn to exit: wall", wall)
        table.add(f"`mcp-notebook {name} FOLDER`: CPU (with its forked children)", cpu)
    table.add("check / list, wall", medians["check"][0] / medians["list"][0], unit="x", target=1.0)
    table.add("check / list, CPU", medians["check"][1] / medians["list"][1], unit="x", target=1.0)
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time `mcp-notebook check` against `mcp-notebook list`.")
    parser.add_argument("--notebooks", type=int, default=5000)
    parser.add_argument("--prompts", type=int, default=20, help="prompt cells per notebook")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        label = f"{args.notebooks} notebooks x {args.prompts} prompt cells = {corpus.size} prompts"
        table = run(corpus.folder, args.repeats, label)
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
