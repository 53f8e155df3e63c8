"""The in-process protocol benchmark answers each method directly and prints its CPU per request."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("method", ["prompts/get", "prompts/list", "completion/complete"])
def test_the_protocol_benchmark_prints_the_whole_and_the_gates_answer(method: str) -> None:
    quick = ["--method", method, "--requests", "200", "--notebooks", "2", "--prompts", "2"]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_protocol", *quick],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    figures = dict(re.findall(r"^  (the whole protocol|the gate's answer).*?: ([0-9.]+) us$", out.stdout, re.M))
    assert set(figures) == {"the whole protocol", "the gate's answer"}, out.stdout
    assert 0 < float(figures["the gate's answer"]) < float(figures["the whole protocol"])
