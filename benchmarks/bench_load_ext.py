"""What `%load_ext mcp_notebook` costs on top of starting IPython, and what `mcp-notebook --help` costs.

Each sample is a fresh interpreter that times `InteractiveShell.instance()`,
then `shell.run_line_magic("load_ext", "mcp_notebook")`; the median over
`--repeats` runs is reported. For the command line, the wall time of
`mcp-notebook --help` is set against `python -c pass`.

When the extension misses its target (150 ms), `-X importtime` of one run
names the modules that `%load_ext` imported, heaviest first: the usual cause
is an import of the MCP SDK (or pydantic) on the extension's load path.
Example: `python -m benchmarks.bench_load_ext --repeats 9`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .import_log import ImportRecord, heaviest, parse_importtime
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command, wall_times

__all__ = ["main", "run_child"]

LOAD_EXT_TARGET_MS = 150.0
HELP_TARGET_MS = 100.0  # `mcp-notebook --help`, like `%load_ext`: instant to a person
_RESULT_PREFIX = "BENCH-RESULT "
_MARK = "BENCH-MARK load_ext"


def run_child() -> None:
    """In a fresh interpreter: time IPython's start, then `%load_ext mcp_notebook`; print one JSON line."""
    began = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    started = time.perf_counter()
    print(_MARK, file=sys.stderr, flush=True)  # splits `-X importtime` output: what follows is load_ext's
    shell.run_line_magic("load_ext", "mcp_notebook")
    loaded = time.perf_counter()
    loaded_modules = sorted(m for m in ("mcp", "mcp_types", "pydantic", "anyio") if m in sys.modules)
    line = {"ipython": started - began, "load_ext": loaded - started, "heavy_modules": loaded_modules}
    print(_RESULT_PREFIX + json.dumps(line), flush=True)
    # Leave at once: the figure is the load, not the teardown of threads the extension may have started.
    os._exit(0)


def _child_env(ipython_dir: Path) -> dict[str, str]:
    # A private IPython profile: the user's startup files and extensions must not be in the figure.
    return {**os.environ, "IPYTHONDIR": str(ipython_dir)}


def _run_child(env: dict[str, str], *, importtime: bool = False) -> tuple[dict[str, object], str]:
    argv = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "benchmarks.bench_load_ext", "--child"]
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith(_RESULT_PREFIX)]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"%load_ext child failed with {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    result: dict[str, object] = json.loads(lines[-1].removeprefix(_RESULT_PREFIX))
    return result, out.stderr


def _median_ms(samples: Sequence[float]) -> float:
    return summarize(samples).median


def _print_culprits(records: list[ImportRecord]) -> None:
    print("imports made by %load_ext (-X importtime, ms; traced, so inflated):")
    print("  top level, by cumulative time:")
    for record in heaviest(records, by="cumulative", limit=5):
        print(f"    {record.cumulative_ms:8.1f}  {record.name}")
    print("  any depth, by own time:")
    for record in heaviest(records, by="self"):
        print(f"    {record.self_ms:8.1f}  {record.name}")


def run(args: argparse.Namespace, ipython_dir: Path) -> tuple[FigureTable, list[ImportRecord]]:
    env = _child_env(ipython_dir)
    _run_child(env)  # warm-up: creates the profile, fills bytecode caches
    results = [_run_child(env)[0] for _ in range(args.repeats)]
    ipython_ms = _median_ms([float(str(r["ipython"])) for r in results])
    load_ms = _median_ms([float(str(r["load_ext"])) for r in results])
    heavy = results[-1]["heavy_modules"]
    table = FigureTable(f"IPython extension and CLI start (median of {args.repeats} fresh interpreters)")
    table.add("InteractiveShell.instance() (IPython start, for reference)", ipython_ms)
    table.add("%load_ext mcp_notebook on top of IPython start", load_ms, target=LOAD_EXT_TARGET_MS)
    table.add("load_ext / IPython start", load_ms / ipython_ms if ipython_ms else float("inf"), unit="x")
    python_ms = _median_ms(wall_times([sys.executable, "-c", "pass"], args.repeats))
    help_ms = _median_ms(wall_times(ours_command("--help"), args.repeats))
    table.add("`python -c pass`, spawn to exit", python_ms)
    table.add("`mcp-notebook --help`, spawn to exit", help_ms, target=HELP_TARGET_MS)
    table.add("`mcp-notebook --help` / `python -c pass`", help_ms / python_ms if python_ms else float("inf"), unit="x")
    print(f"heavy modules loaded once %load_ext returned: {heavy or 'none'}")
    culprits: list[ImportRecord] = []
    if load_ms >= LOAD_EXT_TARGET_MS or args.importtime:
        _, log = _run_child(env, importtime=True)
        culprits = parse_importtime(log, after=_MARK)
        _print_culprits(culprits)
    return table, culprits


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Time `%load_ext mcp_notebook` and `mcp-notebook --help`.")
    parser.add_argument("--repeats", type=int, default=9, help="fresh interpreters per figure")
    parser.add_argument("--importtime", action="store_true", help="always list the imports load_ext makes")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    if args.child:
        run_child()
        return
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-ipython-") as ipython_dir:
        table, culprits = run(args, Path(ipython_dir))
    print(table)
    if args.json:
        imports = {r.name: r.self_ms for r in heaviest(culprits, limit=30)}
        extra = {"environment": describe_environment(), "load_ext_imports_self_ms": imports}
        write_json(args.json, [table], extra)


if __name__ == "__main__":
    main()
