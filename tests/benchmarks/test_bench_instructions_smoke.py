"""The instruction counter runs each server under callgrind and prints its instructions a request, side by side."""

from __future__ import annotations

import re
import shutil

import pytest
from benchmark_runs import run_benchmark

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("callgrind_control") is None, reason="needs valgrind (callgrind)"),
]


def test_the_instruction_counter_prints_ours_against_the_floor() -> None:
    quick = ["--servers", "ours", "floor", "--requests", "60", "--warm", "20", "--clients", "4"]
    out = run_benchmark("benchmarks.bench_instructions", *quick, "--notebooks", "2", "--prompts", "2", timeout=600)
    rows = dict(re.findall(r"^\| (ours|floor) \| ([0-9,]+) \|", out, re.M))
    assert set(rows) == {"ours", "floor"}, out
    assert all(int(count.replace(",", "")) > 10_000 for count in rows.values()), out
    assert re.search(r"^floor / ours: [0-9.]+", out, re.M), out
