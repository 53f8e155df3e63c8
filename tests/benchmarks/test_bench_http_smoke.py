"""The HTTP throughput benchmark runs at tiny sizes and prints ours, the SDK's and the floor's rates and ratios.

The figures are not judged; that the floor answers with our bytes is (the benchmark checks it, or fails).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_http_benchmark_prints_ours_the_sdk_and_the_floor_for_each_worker_count() -> None:
    quick = ["--notebooks", "2", "--prompts", "2", "--seconds", "0.2", "--clients", "1", "2", "--workers", "1", "2"]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_http", *quick],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    header = (
        "| clients | ours, 1 | SDK, 1 | floor, 1 | ours, 2 | SDK, 2 | floor, 2 | ours/floor, 1 | ours/floor, 2"
        " | ours/SDK, 1 | ours/SDK, 2 | ours 2 workers / 1 | SDK 2 / 1 | floor 2 / 1 |"
    )
    assert out.stdout.count(header) == 3  # prompts/get, prompts/list and completion/complete
    rows = [line for line in out.stdout.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == 6
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 14 and all(float(cell) > 0 for cell in cells[1:]), row
    assert out.stdout.count("errors: 0") == 3
    assert "`completion/complete`, requests/s:" in out.stdout
