"""Benchmark summaries use measured values only, and the tables show the ratio ours/SDK."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.baseline_server import CellPrompt, CellPromptRenderer
from benchmarks.import_log import heaviest, parse_importtime
from benchmarks.report import ComparisonTable, FigureTable, summarize


def test_summary_is_in_milliseconds_and_p99_is_a_measured_sample() -> None:
    samples = [i / 1000 for i in range(1, 101)]  # 1 ms .. 100 ms
    summary = summarize(samples)
    assert summary.median == pytest.approx(50.5)
    assert summary.p99 == pytest.approx(99.0)
    assert summary.minimum == pytest.approx(1.0)
    assert summary.maximum == pytest.approx(100.0)


def test_summarizing_no_samples_is_an_error() -> None:
    with pytest.raises(ValueError, match="no samples"):
        summarize([])


def test_comparison_table_shows_ratio_and_flags_a_missed_target() -> None:
    table = ComparisonTable("t")
    table.add("fast", 1.0, 2.0, target=1.0)
    table.add("slow", 3.0, 2.0, target=1.0)
    lines = str(table).splitlines()
    assert any("fast" in line and "0.50" in line and "ok" in line for line in lines)
    assert any("slow" in line and "1.50" in line and "MISSED" in line for line in lines)


def test_a_figure_of_several_runs_shows_its_median_and_spread_and_is_judged_by_its_worst_run() -> None:
    table = FigureTable("t")
    once = table.add_runs("steady", [3.0, 1.0, 2.0], unit="x", target=6.0)
    worst = table.add_runs("one bad run", [5.0, 7.0, 4.0, 5.5, 5.0], unit="x", target=6.0)
    single = table.add_runs("one run", [0.9], unit="s", target=1.0)
    assert (once.value, once.spread, once.verdict) == (2.0, (1.0, 3.0), "ok in every run")
    assert (worst.value, worst.spread) == (5.0, (4.0, 7.0))
    assert worst.verdict == "MISSED (target <= 6 x)"  # the median meets it, one run does not
    assert (single.spread, single.verdict) == (None, "ok")
    lines = str(table).splitlines()
    assert any("one bad run" in line and "5.00 x (4.00–7.00)" in line for line in lines)
    assert any("one run" in line and "0.90 s " in line and "–" not in line for line in lines)


def test_import_log_keeps_only_modules_after_the_mark_with_their_depth() -> None:
    log = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 | early",
            "BENCH-MARK load_ext",
            "import time:       500 |        500 |   pydantic_core",
            "import time:      1000 |      90000 | mcp",
            "import time:       200 |        200 | json",
        ]
    )
    records = parse_importtime(log, after="BENCH-MARK")
    assert [(r.name, r.depth) for r in records] == [("pydantic_core", 1), ("mcp", 0), ("json", 0)]
    assert [r.name for r in heaviest(records, by="cumulative")] == ["mcp", "json"]
    assert [r.name for r in heaviest(records, by="self", limit=1)] == ["mcp"]


def test_baseline_renderer_fills_placeholders_defaults_and_keeps_escapes() -> None:
    prompt = CellPrompt(
        name="p",
        title=None,
        description=None,
        arguments=({"name": "topic"}, {"name": "audience", "required": False, "default": "all"}),
        cells=(("user", "{{ topic }} for {{audience}} \\{{topic}}"), ("assistant", "ok")),
    )
    messages = asyncio.run(CellPromptRenderer(prompt)(topic="x"))
    assert [(m.role, getattr(m.content, "text", None)) for m in messages] == [
        ("user", "x for all {{topic}}"),
        ("assistant", "ok"),
    ]
