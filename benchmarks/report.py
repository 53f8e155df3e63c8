"""Summaries of timing samples and the tables the benchmarks print.

A `ComparisonTable` prints one row per measurement with our figure, the SDK
baseline's figure and the ratio ours/SDK (below 1.0 means mcp-notebook is
faster); a `FigureTable` prints figures of ours alone against their targets.
Figures are milliseconds unless a row says otherwise.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ComparisonRow",
    "ComparisonTable",
    "FigureRow",
    "FigureTable",
    "Summary",
    "summarize",
    "write_json",
]


@dataclass(frozen=True, slots=True)
class Summary:
    """Order statistics of timing samples, in milliseconds."""

    count: int
    median: float
    p99: float
    minimum: float
    maximum: float

    def __str__(self) -> str:
        return f"median {self.median:.2f} ms, p99 {self.p99:.2f} ms (n={self.count})"


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    # Nearest rank: a value that was really measured, never an interpolation between two.
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summarize(seconds: Sequence[float]) -> Summary:
    """Summarize samples given in seconds (as `time.perf_counter()` differences) into milliseconds."""
    if not seconds:
        raise ValueError("no samples")
    ordered = sorted(s * 1000.0 for s in seconds)
    return Summary(
        count=len(ordered),
        median=statistics.median(ordered),
        p99=_percentile(ordered, 0.99),
        minimum=ordered[0],
        maximum=ordered[-1],
    )


def _ratio(ours: float, sdk: float) -> float:
    return ours / sdk if sdk > 0 else math.inf


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    metric: str
    ours: float
    sdk: float
    target: float | None = None  # the ratio ours/SDK should be at most this

    @property
    def ratio(self) -> float:
        return _ratio(self.ours, self.sdk)

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        return "ok" if self.ratio <= self.target else f"MISSED (target <= {self.target:.2f})"


def _render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    separator = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), separator, *(line(r) for r in rows)])


@dataclass
class ComparisonTable:
    """Rows of ours vs the bare SDK server; `str()` is a Markdown table with the ratio ours/SDK."""

    title: str
    rows: list[ComparisonRow] = field(default_factory=list)

    def add(self, metric: str, ours: float, sdk: float, target: float | None = None) -> ComparisonRow:
        row = ComparisonRow(metric, ours, sdk, target)
        self.rows.append(row)
        return row

    def __str__(self) -> str:
        header = ("measurement", "mcp-notebook", "bare SDK", "ratio ours/SDK", "target")
        body = [(r.metric, f"{r.ours:.2f}", f"{r.sdk:.2f}", f"{r.ratio:.2f}", r.verdict) for r in self.rows]
        return f"{self.title}\n\n{_render(header, body)}\n"


@dataclass(frozen=True, slots=True)
class FigureRow:
    metric: str
    value: float
    unit: str = "ms"
    target: float | None = None  # the value should be at most this
    spread: tuple[float, float] | None = None  # the lowest and highest over the runs; `value` is their median

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        worst = self.value if self.spread is None else self.spread[1]  # a target is met in every run, or not
        every = "" if self.spread is None else " in every run"
        return f"ok{every}" if worst <= self.target else f"MISSED (target <= {self.target:g} {self.unit})"

    def shown(self) -> str:
        value = f"{_figure(self.value, self.unit)} {self.unit}"
        if self.spread is None:
            return value
        low, high = self.spread
        return f"{value} ({_figure(low, self.unit)}–{_figure(high, self.unit)})"


def _figure(value: float, unit: str) -> str:
    # Durations and ratios get two decimals; counts are shown as the whole numbers they are.
    return f"{value:.2f}" if unit in ("ms", "s", "x") else f"{value:g}"


@dataclass
class FigureTable:
    """Figures of mcp-notebook alone; `str()` is a Markdown table with each target's verdict."""

    title: str
    rows: list[FigureRow] = field(default_factory=list)

    def add(self, metric: str, value: float, unit: str = "ms", target: float | None = None) -> FigureRow:
        row = FigureRow(metric, value, unit, target)
        self.rows.append(row)
        return row

    def add_runs(
        self, metric: str, values: Sequence[float], unit: str = "ms", target: float | None = None
    ) -> FigureRow:
        """A figure measured once per run: its median, with the lowest and highest when there are several."""
        ordered = sorted(values)
        spread = (ordered[0], ordered[-1]) if len(ordered) > 1 else None
        row = FigureRow(metric, statistics.median(ordered), unit, target, spread)
        self.rows.append(row)
        return row

    def __str__(self) -> str:
        header = ("measurement", "value (lowest–highest over the runs)", "target")
        body = [(r.metric, r.shown(), r.verdict) for r in self.rows]
        return f"{self.title}\n\n{_render(header, body)}\n"


def write_json(path: Path, tables: Sequence[ComparisonTable | FigureTable], extra: dict[str, Any]) -> None:
    """Save the tables (and any extra facts: sizes, versions) for later comparison between runs."""
    data = {
        "tables": [
            {
                "title": t.title,
                "rows": [
                    {**asdict(r), "ratio": r.ratio} if isinstance(r, ComparisonRow) else asdict(r) for r in t.rows
                ],
            }
            for t in tables
        ],
        **extra,
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
