"""Every benchmark script runs at tiny sizes and prints its table; the figures themselves are not judged.

Speed is measured by the benchmarks, not by timed tests: these tests only
prove that the scripts still work against the current code (they start real
servers and interpreters, hence `slow`). Each script runs once per session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import benchmark_runs
import pytest

pytestmark = pytest.mark.slow

QUICK = {
    "benchmarks.bench_server": (
        "--notebooks", "3", "--prompts", "2", "--starts", "1", "--round-trips", "5", "--listings", "2",
    ),
    "benchmarks.bench_index": ("--notebooks", "3", "--prompts", "2", "--repeats", "1"),
    "benchmarks.bench_reload": ("--notebooks", "3", "--prompts", "2", "--saves", "2", "--probe-seconds", "0.5"),
    "benchmarks.bench_load_ext": ("--repeats", "1"),
    "benchmarks.bench_scale": (
        "--notebooks", "3", "--prompts", "2", "--runs", "1", "--saves", "2", "--idle-seconds", "0.2",
    ),
    "benchmarks.bench_loop_stall": ("--cells", "300", "--megabytes", "1", "--window", "0.3"),
    "benchmarks.bench_check": ("--notebooks", "3", "--prompts", "2", "--repeats", "1"),
    "benchmarks.bench_skills": ("--count", "20", "--repeats", "1"),
    "benchmarks": ("--quick", "--only", "bench_index"),
}  # fmt: skip
NUMBER = r"-?\d+(?:\.\d+)?"

Runner = Callable[[str], str]


@pytest.fixture(scope="module")
def users_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notebook index a user's `mcp-notebook serve` would write to, as the benchmarks run (empty before)."""
    return tmp_path_factory.mktemp("users-notebook-index")


@pytest.fixture(scope="module")
def run_benchmark(users_index: Path) -> Runner:
    """Runs `python -m MODULE` at its quick sizes (once per module) and returns its standard output."""
    outputs: dict[str, str] = {}
    env = {**os.environ, "MCP_NOTEBOOK_CACHE_DIR": str(users_index)}

    def run(module: str) -> str:
        if module not in outputs:
            outputs[module] = benchmark_runs.run_benchmark(module, *QUICK[module], env=env)
        return outputs[module]

    return run


def table_rows(output: str) -> list[list[str]]:
    """The body rows of every Markdown table in `output`, as lists of stripped cells."""
    rows = []
    for line in output.splitlines():
        if line.startswith("| ") and not line.startswith("| measurement"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_server_benchmark_prints_both_servers_and_their_ratio_for_every_measurement(run_benchmark: Runner) -> None:
    output = run_benchmark("benchmarks.bench_server")
    assert "| measurement | mcp-notebook | bare SDK | ratio ours/SDK |" in re.sub(r" +\|", " |", output)
    rows = table_rows(output)
    metrics = [row[0] for row in rows]
    assert any(m.startswith("process start -> first prompts/list answer") for m in metrics)
    assert any(m.startswith("prompts/get round trip, median") for m in metrics)
    assert any(m.startswith("prompts/get round trip, p99") for m in metrics)
    assert any(m.startswith("full listing") for m in metrics)
    for row in rows:
        ours, sdk, ratio = (float(cell) for cell in row[1:4])
        assert ours > 0 and sdk > 0
        assert ratio == pytest.approx(ours / sdk, rel=0.1, abs=0.05)


def test_server_benchmark_finds_both_servers_serve_the_same_prompts(run_benchmark: Runner) -> None:
    output = run_benchmark("benchmarks.bench_server")
    assert "do not serve the same prompts" not in output


@pytest.mark.parametrize(
    ("module", "first_metric"),
    [
        ("benchmarks.bench_index", "NotebookFolderSource.scan() into a PromptRegistry"),
        ("benchmarks.bench_reload", "save -> notifications/prompts/list_changed, median"),
        ("benchmarks.bench_load_ext", "InteractiveShell.instance()"),
        ("benchmarks.bench_scale", "floor: find and json-load every notebook"),
        ("benchmarks.bench_loop_stall", "stdio `ping`, 300-cell notebook saved"),
        ("benchmarks.bench_check", "`mcp-notebook list FOLDER`, spawn to exit: wall"),
        ("benchmarks.bench_skills", "20 prompts: spawn to the first page"),
    ],
)
def test_benchmark_prints_a_figure_for_each_of_its_measurements(
    run_benchmark: Runner, module: str, first_metric: str
) -> None:
    rows = table_rows(run_benchmark(module))
    assert rows
    assert rows[0][0].startswith(first_metric)
    for row in rows:
        assert re.fullmatch(rf"{NUMBER} \S+", row[1]), row


def test_skills_benchmark_sets_the_skills_beside_their_floor_and_the_peer_serving_the_same_folders(
    run_benchmark: Runner,
) -> None:
    rows = {row[0]: row[1] for row in table_rows(run_benchmark("benchmarks.bench_skills"))}
    assert rows["every folder listed and each of the 60 files' status read"].endswith(" ms")
    (parse,) = [value for name, value in rows.items() if name.startswith("json.loads of the whole listing (1 page, ")]
    assert re.fullmatch(rf"{NUMBER} ms", parse)
    for server in ("mcp-notebook", "FastMCP 4.2"):
        assert rows[f"{server}: spawn to the first page"].endswith(" ms")
    for what in ("start", "listing", "CPU"):
        assert re.fullmatch(rf"{NUMBER} x", rows[f"FastMCP / mcp-notebook, {what}"])


def test_reload_benchmark_times_each_save_to_the_notification_that_serves_it(run_benchmark: Runner) -> None:
    rows = {row[0]: row[1] for row in table_rows(run_benchmark("benchmarks.bench_reload"))}
    assert rows["save -> notifications/prompts/list_changed, max"].endswith(" ms")
    assert re.fullmatch(r"\d+ total", rows["notifications that came before the save was served"])


def test_load_ext_benchmark_sets_the_extension_against_ipython_start_and_help_against_python(
    run_benchmark: Runner,
) -> None:
    metrics = [row[0] for row in table_rows(run_benchmark("benchmarks.bench_load_ext"))]
    assert "%load_ext mcp_notebook on top of IPython start" in metrics
    assert "`mcp-notebook --help` / `python -c pass`" in metrics


def test_running_all_benchmarks_prints_the_environment_then_each_table(run_benchmark: Runner) -> None:
    output = run_benchmark("benchmarks")
    assert re.search(r"- mcp: \d", output)
    assert re.search(r"- machine: .*vCPU", output)
    assert "## bench_index" in output
    assert "NotebookFolderSource.scan()" in output


def test_no_benchmark_writes_the_users_notebook_index(run_benchmark: Runner, users_index: Path) -> None:
    """A benchmark's servers keep their index beside its corpus, in its scratch folder: never the user's."""
    for module in QUICK:
        run_benchmark(module)
    assert sorted(path.name for path in users_index.rglob("*")) == []
