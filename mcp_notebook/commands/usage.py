"""What every command shares: the program's name, its usage error and how it says one line."""

from __future__ import annotations

import sys

__all__ = ["EXIT_USAGE", "PROG", "UsageProblem", "say"]

PROG = "mcp-notebook"
EXIT_USAGE = 2


class UsageProblem(Exception):
    """Bad input from the command line: printed as one clear message, exit code 2."""


def say(message: str) -> None:
    """`message` on stderr, after the program's name."""
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
