"""The completion benchmark still runs end to end (at tiny sizes; its figures are not judged here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_completion_benchmark_prints_its_table_and_json(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_lsp_completion", "--quick", "--json", str(tmp_path / "b.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Completion through a real LSP client, 40 prompts on 2 servers" in out.stdout
    assert "| `/`: median (40 items)" in out.stdout
    assert "| empty completion (no slash): median" in out.stdout
    assert "Editor start-up, one local server (10 prompts), median of 1 starts" in out.stdout
    figures = json.loads((tmp_path / "b.json").read_text())
    assert figures["prompts"] == 40
    metrics = [row["metric"] for row in figures["tables"][0]["rows"]]
    assert "`/`: p99" in metrics
    startup = {row["metric"]: row for row in figures["tables"][1]["rows"]}
    assert startup["initialize answered -> first `/` with prompts"]["target"] == 1000
    assert set(startup) == {
        "spawn -> initialize answered",
        "initialize answered -> first `/` with an item",
        "initialize answered -> first `/` with prompts",
        "spawn -> first `/` with prompts",
        "initialize answered -> first `/` with prompts, a later start (the stored list)",
    }
    assert startup["initialize answered -> first `/` with prompts, a later start (the stored list)"]["target"] == 300
