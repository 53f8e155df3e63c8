"""`mcp-notebook check`: format warnings, each known client's limits and the prompt tests (`checking/` does the work).

Importing `checking.command` costs only the standard library until the check runs.
"""

from __future__ import annotations

import argparse

from ..checking.command import CHECK_HELP, add_check_arguments
from .usage import UsageProblem

__all__ = ["CHECK_HELP", "add_check_arguments", "run_check"]


def run_check(args: argparse.Namespace) -> int:
    """Check the paths; exit 1 on errors (and on warnings with --strict), 2 for a path that cannot be read."""
    from ..checking.command import run_check as check

    try:
        return check(args)
    except (FileNotFoundError, ValueError) as error:
        raise UsageProblem(str(error)) from None
