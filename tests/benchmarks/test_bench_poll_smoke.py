"""`benchmarks.bench_poll` at tiny sizes: it runs, and prints a figure for each way of watching."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.run_all import QUICK_ARGUMENTS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_poll_benchmark_measures_inotify_and_each_interval() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_poll", *QUICK_ARGUMENTS["bench_poll"]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line.strip("|").split("|") for line in out.stdout.splitlines() if line.startswith("| ")]
    metrics = [row[0].strip() for row in rows[1:]]
    assert metrics[0].startswith("one look at the folder")
    for way in ("inotify", "--poll 0.3"):
        assert f"{way}: idle wake-ups per second" in metrics
        assert f"{way}: save -> list_changed, worst" in metrics
    for row in rows[1:]:
        assert re.fullmatch(r"-?\d+(?:\.\d+)? \S+", row[1].strip()), row
