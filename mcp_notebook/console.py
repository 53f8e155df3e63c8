"""The `mcp-notebook` console script: help at once, everything else by `cli.main`.

`mcp-notebook --help`, `mcp-notebook COMMAND --help` (or `-h`), `--version` and a
bare `mcp-notebook` print text that argparse rendered in advance
(`help_text.py`, written by `cli.write_help_text()`), without importing argparse,
the command line or the option declarations its flags are derived from: a
person reading help should not wait for it. The text is used only where it is
exactly what argparse would print: under the Python minor version it was
rendered with (argparse's layout differs between versions) and at 80 columns
or more (help is laid out at most 80 wide, `terminal.py`). Anywhere else, and
for every other command line, `cli.main` parses and runs it.
"""

from __future__ import annotations

import sys

from .terminal import HELP_COLUMNS, help_columns
from .version import __version__

TYPE_CHECKING = False  # not typing's: importing typing would make `--help` slower
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main", "prerendered"]

_HELP = ("-h", "--help")
EXIT_USAGE = 2  # a bare `mcp-notebook` is a request for help, answered on stderr with 2, as `cli.main` does


def prerendered(typed: Sequence[str]) -> tuple[str, int] | None:
    """What to print for the command line `typed`, and the exit code (2: on stderr), if it is rendered in advance."""
    if list(typed) == ["--version"]:
        return f"mcp-notebook {__version__}\n", 0
    if len(typed) > 2 or (typed and typed[-1] not in _HELP) or help_columns() < HELP_COLUMNS:
        return None
    from . import help_text

    if tuple(sys.version_info[:2]) != help_text.PYTHON:
        return None
    text = help_text.TEXTS.get(typed[0] if len(typed) == 2 else "")
    if text is None:
        return None
    return text, (EXIT_USAGE if not typed else 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (`sys.argv` by default); returns the exit code."""
    answer = prerendered(sys.argv[1:] if argv is None else argv)
    if answer is None:
        from .cli import main as run

        return run(argv)
    text, code = answer
    (sys.stderr if code else sys.stdout).write(text)
    return code
