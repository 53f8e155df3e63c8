"""Render the compatibility table (client, protocol revision, transport, result) from the interop test results.

Each interop test records one JSON row in `.tools/results/compat/` (see `interop_harness.CompatRow`); this
script groups them by client, revision and transport and prints a markdown table:

    .venv/bin/python tests/interop/make_compat_table.py                          # print the table
    .venv/bin/python tests/interop/make_compat_table.py --write docs/compatibility.md

`--write` replaces the text between `<!-- compat-table:start -->` and `<!-- compat-table:end -->` in that file.
Run the interop tests first (`pytest -m interop`); delete `.tools/results/compat/` before a full run to drop
rows of tests that no longer exist.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CompatGroup", "load_rows", "main", "render_table", "replace_table"]

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RESULTS = ROOT / ".tools" / "results" / "compat"
START = "<!-- compat-table:start -->"
END = "<!-- compat-table:end -->"


@dataclass
class CompatGroup:
    """The checks of one client at one protocol revision over one transport."""

    client: str
    protocol: str
    transport: str
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    @property
    def result(self) -> str:
        total = len(self.passed) + len(self.failed)
        if self.failed:
            return f"**fail** ({len(self.failed)} of {total} checks: {', '.join(self.failed)})"
        if not self.passed:
            return "skipped" if self.skipped else "not run"
        return f"pass ({total} check{'s' if total != 1 else ''})"

    def checks(self) -> str:
        names = ", ".join(f"`{c}`" for c in [*self.passed, *self.failed])
        return "; ".join([names, *self.details]) if self.details else names


def load_rows(folder: Path) -> list[dict[str, str]]:
    """Every recorded row, in a stable order."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))]


def _groups(rows: Iterable[dict[str, str]]) -> list[CompatGroup]:
    groups: dict[tuple[str, str, str], CompatGroup] = {}
    for row in rows:
        key = (row["client"], row["protocol"], row["transport"])
        group = groups.setdefault(key, CompatGroup(*key))
        check = row.get("check") or row.get("test", "?")
        {"pass": group.passed, "fail": group.failed}.get(row.get("result", ""), group.skipped).append(check)
        if row.get("detail") and row["detail"] not in group.details:
            group.details.append(row["detail"])
    return [groups[key] for key in sorted(groups)]


def render_table(rows: Iterable[dict[str, str]]) -> str:
    """The markdown table of `rows`, one line per client, revision and transport."""
    lines = [
        "| Client | Protocol revision | Transport | Result | What was checked |",
        "|---|---|---|---|---|",
    ]
    for group in _groups(rows):
        cells = [group.client, group.protocol, group.transport, group.result, group.checks()]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def replace_table(document: str, table: str) -> str:
    """`document` with the text between the table markers replaced by `table`."""
    start, end = document.find(START), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the document has no {START} ... {END} markers")
    return document[: start + len(START)] + "\n" + table + document[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="folder of JSON rows")
    parser.add_argument("--write", type=Path, help="markdown file whose marked table is replaced")
    options = parser.parse_args(argv)
    rows = load_rows(options.results)
    if not rows:
        print(f"no results in {options.results}: run the interop tests first (pytest -m interop)", file=sys.stderr)
        return 1
    table = render_table(rows)
    if options.write is None:
        sys.stdout.write(table)
    else:
        options.write.write_text(replace_table(options.write.read_text(encoding="utf-8"), table), encoding="utf-8")
        print(f"wrote {len(rows)} results into {options.write}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
