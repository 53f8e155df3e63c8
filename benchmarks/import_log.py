"""Reading `python -X importtime` logs: which modules were imported, and what each cost.

Used when a start-up figure misses its target, to name the modules to blame.
Figures under `-X importtime` are inflated by the tracing itself: compare them
with each other, not with untraced wall times.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["ImportRecord", "heaviest", "parse_importtime"]


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One module in an import-time log (milliseconds)."""

    name: str
    self_ms: float
    cumulative_ms: float
    depth: int  # 0: imported by the traced code itself; more: imported by another module being imported


def parse_importtime(log: str, *, after: str | None = None) -> list[ImportRecord]:
    """The modules in a `-X importtime` log, in the order they finished importing.

    With `after`, only the modules logged after the first line containing that
    marker (the traced program prints it between phases) are returned.
    """
    if after is not None:
        log = log.split(after, 1)[-1] if after in log else ""
    records: list[ImportRecord] = []
    for line in log.splitlines():
        # "import time: <self us> | <cumulative us> | <package>", nested imports indented two spaces a level.
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        package = parts[2].removeprefix(" ")
        name = package.lstrip(" ")
        depth = (len(package) - len(name)) // 2
        self_us = int(parts[0].removeprefix("import time:"))
        records.append(ImportRecord(name.rstrip(), self_us / 1000.0, int(parts[1]) / 1000.0, depth))
    return records


def heaviest(
    records: Iterable[ImportRecord], *, by: Literal["self", "cumulative"] = "self", limit: int = 12
) -> list[ImportRecord]:
    """The costliest modules: by `self` time (any depth) or by `cumulative` time (top level only)."""
    if by == "cumulative":
        chosen = [r for r in records if r.depth == 0]
        return sorted(chosen, key=lambda r: r.cumulative_ms, reverse=True)[:limit]
    return sorted(records, key=lambda r: r.self_ms, reverse=True)[:limit]
