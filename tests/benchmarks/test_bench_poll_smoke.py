"""`benchmarks.bench_poll` at tiny sizes: it runs, and prints a figure for each way of watching."""

from __future__ import annotations

import re

import pytest
from benchmark_runs import run_benchmark

from benchmarks.run_all import QUICK_ARGUMENTS

pytestmark = pytest.mark.slow


def test_the_poll_benchmark_measures_inotify_and_each_interval() -> None:
    out = run_benchmark("benchmarks.bench_poll", *QUICK_ARGUMENTS["bench_poll"])
    rows = [line.strip("|").split("|") for line in out.splitlines() if line.startswith("| ")]
    metrics = [row[0].strip() for row in rows[1:]]
    assert metrics[0].startswith("one look at the folder")
    for way in ("inotify", "--poll 0.3"):
        assert f"{way}: idle wake-ups per second" in metrics
        assert f"{way}: save -> list_changed, worst" in metrics
    for row in rows[1:]:
        assert re.fullmatch(r"-?\d+(?:\.\d+)? \S+", row[1].strip()), row
