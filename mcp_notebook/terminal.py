"""How wide help is laid out: the terminal's width, at most 80 columns (standard library only, nothing imported).

Both command lines (`mcp-notebook`, `mcp-notebook-lsp`) lay their help out at this
width. Lines longer than 80 columns are hard to read, so a wider terminal gets
the 80-column layout, which is also the one `mcp-notebook --help` has rendered
in advance (`console.py`); a narrower terminal gets its own width.
"""

from __future__ import annotations

import os
import sys

__all__ = ["HELP_COLUMNS", "help_columns"]

HELP_COLUMNS = 80


def help_columns() -> int:
    """`$COLUMNS`, else stdout's terminal width (as `shutil.get_terminal_size` reads them), at most 80; else 80."""
    try:
        stdout = sys.__stdout__.fileno()  # type: ignore[union-attr]
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size(stdout).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return min(columns, HELP_COLUMNS) if columns > 0 else HELP_COLUMNS
