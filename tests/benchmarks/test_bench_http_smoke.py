"""The HTTP throughput benchmark runs at tiny sizes and prints ours, the SDK's and the floor's rates and ratios.

The figures are not judged, only that each is reported as a number: on a busy machine a 0.2 s window may
answer few requests, and a ratio then prints as 0.00. That the floor answers with our bytes is judged (the
benchmark checks it, or fails), and that no request failed.
It runs with each load generator: the Python one, `load.c` (built with the machine's C compiler), and wrk
(Debian's, from `.ci/bench-setup.sh`). The Python one sends every method; the other two send `prompts/get`
alone, enough to show their counts reach the tables (wrk measures for a whole second at least, so each
method costs it twelve seconds).
"""

from __future__ import annotations

import re
import shutil

import pytest
from benchmark_runs import ROOT, run_benchmark

from benchmarks import bench_http

MARKER = ROOT / "test-artifacts" / "bench-setup.txt"
pytestmark = pytest.mark.slow
NUMBER = re.compile(r"\d+(?:\.\d+)?")  # a figure as the tables print it, however small


@pytest.mark.parametrize(
    ("load", "methods"),
    [("python", bench_http.METHODS), ("c", ("prompts/get",)), ("wrk", ("prompts/get",))],
    ids=["python", "c", "wrk"],
)
def test_http_benchmark_prints_ours_the_sdk_and_the_floor_for_each_worker_count(
    load: str, methods: tuple[str, ...]
) -> None:
    if load == "c" and bench_http._compiler() is None:
        pytest.skip("load.c needs Linux and a C compiler")
    if load == "wrk" and shutil.which("wrk") is None:
        reason = MARKER.read_text().strip() if MARKER.exists() else "wrk is not on the PATH"
        pytest.skip(f"{reason} (bash .ci/bench-setup.sh installs it)")
    quick = ["--notebooks", "2", "--prompts", "2", "--seconds", "0.2", "--clients", "1", "2", "--workers", "1", "2"]
    quick += ["--load", load, "--methods", *methods]
    out = run_benchmark("benchmarks.bench_http", *quick)
    assert f"load generator: {load}," in out
    header = (
        "| clients | ours, 1 | SDK, 1 | floor, 1 | ours, 2 | SDK, 2 | floor, 2 | ours/floor, 1 | ours/floor, 2"
        " | ours/SDK, 1 | ours/SDK, 2 | ours 2 workers / 1 | SDK 2 / 1 | floor 2 / 1 |"
    )
    assert out.count(header) == len(methods)  # a table per method sent
    rows = [line for line in out.splitlines() if re.match(r"\| \d+ \| [\d.]+ \|", line)]
    assert len(rows) == 2 * len(methods)  # a row per client count
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 14 and all(NUMBER.fullmatch(cell) for cell in cells[1:]), row
    # The CPU each server and the load generator spent per answered request, read from /proc (Linux).
    cpu_header = (
        "| clients | ours, 1 | SDK, 1 | floor, 1 | ours, 2 | SDK, 2 | floor, 2"
        " | ours 2 workers / 1 if the load generator took no CPU |"
    )
    assert out.count(cpu_header) == len(methods)
    cpu_rows = [line for line in out.splitlines() if re.match(r"\| \d+ \| \d+ \+ \d+ \|", line)]
    assert len(cpu_rows) == 2 * len(methods)
    for row in cpu_rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        spent = [re.fullmatch(r"(\d+) \+ (\d+)", cell) for cell in cells[1:7]]
        assert all(spent), row
        assert NUMBER.fullmatch(cells[7]), row
    assert out.count("errors: 0") == len(methods)
    assert all(f"`{method}`, requests/s:" in out for method in methods)


def test_http_benchmark_sends_only_the_methods_asked_for() -> None:
    quick = ["--notebooks", "2", "--prompts", "2", "--seconds", "0.2", "--clients", "2", "--workers", "1"]
    out = run_benchmark("benchmarks.bench_http", *quick, "--methods", "completion/complete", "--load", "python")
    assert "`completion/complete`, requests/s:" in out
    assert "`prompts/get`" not in out and "`prompts/list`" not in out
    assert out.count("errors: 0") == 1
