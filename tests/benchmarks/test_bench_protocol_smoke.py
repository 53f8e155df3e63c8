"""The in-process protocol benchmark answers each method directly and prints its CPU per request."""

from __future__ import annotations

import re

import pytest
from benchmark_runs import run_benchmark

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("method", ["prompts/get", "prompts/list", "completion/complete"])
def test_the_protocol_benchmark_prints_the_time_per_request(method: str) -> None:
    quick = ["--method", method, "--requests", "200", "--notebooks", "2", "--prompts", "2"]
    out = run_benchmark("benchmarks.bench_protocol", *quick, timeout=120)
    figures = re.findall(r"CPU per request: ([0-9.]+) us$", out, re.M)
    assert len(figures) == 1 and float(figures[0]) > 0, out
