"""Which modules a piece of code imports, in a fresh interpreter: how tests keep `--help` light.

Timing `--help` in a test would fail on a busy machine; its imports are what
make it slow, and they are the same on any machine.
"""

from __future__ import annotations

import subprocess
import sys

__all__ = ["ARGPARSE_HELP", "new_modules"]

# What argparse alone imports to print a help with subcommands (sized as ours is, without shutil).
ARGPARSE_HELP = (
    "import argparse\n"
    "parser = argparse.ArgumentParser(formatter_class=lambda prog: argparse.HelpFormatter(prog, width=78))\n"
    "parser.add_subparsers().add_parser('x', help='y')\n"
    "parser.format_help()"
)


def new_modules(code: str) -> set[str]:
    """The modules `code` imports in a fresh interpreter, beyond those the interpreter starts with."""
    probe = (
        "import sys\nbefore = set(sys.modules)\n"
        f"{code}\n"
        "print('NEW=' + ','.join(sorted(set(sys.modules) - before)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    line = next(line for line in done.stderr.splitlines() if line.startswith("NEW="))
    return {name for name in line.removeprefix("NEW=").split(",") if name}
