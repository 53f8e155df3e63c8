"""Run every benchmark in turn and print their tables under one header of date, machine and versions.

`python -m benchmarks` (full sizes, a few minutes on 2 vCPU) or
`python -m benchmarks --quick` (tiny sizes: proves the scripts work, figures mean nothing).
Each benchmark runs in its own interpreter so one cannot warm caches for the next;
the exit status is non-zero when any of them failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .servers import ROOT, describe_environment

__all__ = ["BENCHMARKS", "QUICK_ARGUMENTS", "main"]

BENCHMARKS = (
    "bench_server",
    "bench_http",
    "bench_index",
    "bench_reload",
    "bench_load_ext",
    "bench_lsp_completion",
    "bench_scale",
    "bench_loop_stall",
    "bench_poll",
    "bench_check",
    "bench_skills",
    "bench_lab_slash",
)

# Sizes small enough for a smoke test in CI.
QUICK_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "bench_server": ("--notebooks", "3", "--prompts", "2", "--starts", "1", "--round-trips", "5", "--listings", "2"),
    "bench_http": ("--notebooks", "2", "--prompts", "2", "--seconds", "0.2", "--clients", "1", "2"),
    "bench_index": ("--notebooks", "3", "--prompts", "2", "--repeats", "1"),
    "bench_reload": ("--notebooks", "3", "--prompts", "2", "--saves", "2", "--probe-seconds", "0.5"),
    "bench_load_ext": ("--repeats", "1"),
    "bench_lsp_completion": ("--quick",),
    "bench_scale": ("--notebooks", "3", "--prompts", "2", "--runs", "1", "--saves", "2", "--idle-seconds", "0.2"),
    "bench_loop_stall": ("--cells", "300", "--megabytes", "1", "--window", "0.3"),
    "bench_poll": ("--notebooks", "3", "--prompts", "1", "--saves", "1", "--idle-seconds", "0.2", "--intervals", "0.3"),
    "bench_check": ("--notebooks", "3", "--prompts", "2", "--repeats", "1"),
    "bench_skills": ("--count", "20", "--repeats", "1"),
    "bench_lab_slash": ("--runs", "1"),
}


def _available(name: str) -> bool:
    return (ROOT / "benchmarks" / f"{name}.py").exists()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run every mcp-notebook benchmark.")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    parser.add_argument("--json", type=Path, help="write each benchmark's figures as JSON into this folder")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run just these benchmarks")
    args = parser.parse_args(argv)

    print("# mcp-notebook benchmarks\n")
    for key, value in describe_environment().items():
        print(f"- {key}: {value}")
    print()
    failed: list[str] = []
    for name in args.only or BENCHMARKS:
        if not _available(name):
            print(f"## {name}: not present, skipped\n")
            continue
        command = [sys.executable, "-m", f"benchmarks.{name}", *(QUICK_ARGUMENTS[name] if args.quick else ())]
        if args.json:
            args.json.mkdir(parents=True, exist_ok=True)
            command += ["--json", str(args.json / f"{name}.json")]
        print(f"## {name}\n", flush=True)
        if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:
            failed.append(name)
            print(f"{name} FAILED\n", flush=True)
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
