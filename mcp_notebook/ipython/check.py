"""`%mcp check`: the checks of `mcp-notebook check` on this kernel's notebook and its `%%prompt` cells, as a table.

The notebook is the one this kernel belongs to (as its Jupyter server says;
`--notebook PATH` otherwise), checked from its file as saved; the `%%prompt`
cells are checked as this kernel publishes them. The result is a `CheckTable`:
an HTML table in Jupyter (a row per finding, worst first, each client's limit
linked to its source), aligned text in a terminal, and the `Report` itself as
`.report` for code.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..checking.report import Report, check_paths, check_prompts

__all__ = ["CheckTable", "check_command"]

KERNEL_CELLS = "%%prompt cells"
_LINK = re.compile(r"https://\S+")
_COLOURS = {"error": "#d32f2f", "warning": "#b26a00", "passed": "#2e7d32"}


@dataclass(frozen=True, slots=True)
class CheckTable:
    """What `%mcp check` found: a row per finding and per prompt test, worst first."""

    report: Report

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(where, severity, what, source) for each finding, then each passed prompt test."""
        rows: list[tuple[str, str, str, str]] = []
        for notebook in self.report.worst_first():
            where = notebook.notebook or "(all)"
            for finding in sorted(notebook.findings, key=lambda f: f.severity != "error"):
                what = finding.message
                if finding.kind == "client":
                    what = f"{finding.client}: {finding.message} — {', '.join(finding.prompts)}"
                if finding.detail:
                    what = f"{what}\n{finding.detail}"
                rows.append((where, finding.severity, what, finding.source or ""))
            rows += [(where, "passed", f"test {r.test.name}", "") for r in notebook.tests if r.passed]
        return rows

    def __repr__(self) -> str:
        lines = []
        for where, severity, what, source in self.rows():
            first, *rest = what.splitlines()
            lines.append(f"{where}  {severity:<7}  {first}" + (f" (source: {source})" if source else ""))
            lines += [f"    {line}" for line in rest]
        return "\n".join([*lines, self.report.summary()])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        head = "".join(
            f'<th style="text-align: left">{name}</th>' for name in ("where", "", "what goes wrong", "source")
        )
        body = []
        for where, severity, what, source in self.rows():
            first, _, rest = what.partition("\n")
            cell = html.escape(first)
            if rest:
                cell += f'<pre style="margin: 4px 0; font-size: 90%">{html.escape(rest)}</pre>'
            link = _LINK.search(source)
            said = (
                f'<a href="{html.escape(link.group(0))}" target="_blank" rel="noopener">{html.escape(source)}</a>'
                if link
                else html.escape(source)
            )
            colour = _COLOURS[severity]
            top = "text-align: left; vertical-align: top"
            body.append(
                f'<tr><td style="{top}; white-space: nowrap"><code>{html.escape(where)}</code></td>'
                f'<td style="{top}; color: {colour}; font-weight: bold">{severity}</td>'
                f'<td style="{top}">{cell}</td><td style="{top}">{said}</td></tr>'
            )
        table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>" if body else ""
        return f"{table}<p>{html.escape(self.report.summary())}</p>"


def _kernel_notebook(shell: Any, requested: str | None) -> Path | None:
    from .kernel_host import _kernel_id
    from .kernel_host import _kernel_notebook as find
    from .session_path import SessionLookup, session_notebook

    session = SessionLookup(found=False) if requested else session_notebook(_kernel_id())
    return find(shell, requested, session)


def check_command(shell: Any, options: Any) -> CheckTable:
    """Run `%mcp check` with its parsed `options` (see `subcommands.check_parser`)."""
    from .kernel_server import kernel_prompt_state

    notebook = _kernel_notebook(shell, options.notebook)
    try:
        report = (
            check_paths([notebook], clients=options.clients, update_snapshots=options.update_snapshots)
            if notebook is not None
            else Report()
        )
    except ValueError as error:
        raise UsageError(f"%mcp check: {error}") from None
    cells = kernel_prompt_state(shell).registry.snapshot().prompts
    check_prompts({KERNEL_CELLS: cells}, clients=options.clients, report=report)
    if notebook is None and not cells:
        raise UsageError(
            "%mcp check: nothing to check: this kernel's notebook is not known (give --notebook PATH) "
            "and it has no %%prompt cells"
        )
    return CheckTable(report)
