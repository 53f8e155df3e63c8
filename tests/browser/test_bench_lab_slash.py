"""The JupyterLab `/` benchmark (benchmarks/bench_lab_slash.py) runs once and prints its figures; not judged."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from lab_harness import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_first_slash_benchmark_prints_a_figure_for_each_measurement(chromium_path: str) -> None:
    run = [sys.executable, "-m", "benchmarks.bench_lab_slash", "--runs", "1"]
    done = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("| ")][1:]  # not the header
    rows = [line.strip("|").split("|") for line in lines]
    metrics = [row[0].strip() for row in rows]
    assert metrics[0] == "first `/` pressed to the menu listing prompts", metrics
    assert len(metrics) == 4
    for row in rows:
        assert re.fullmatch(r"-?\d+(?:\.\d+)? ms", row[1].strip()), row
