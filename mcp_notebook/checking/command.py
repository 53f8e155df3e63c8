"""`mcp-notebook check`: its help, its options, and running it (the command line's table names it).

Only the standard library at module level, as the rest of the command line:
building the parser must stay instant; the check itself is imported when run.
"""

from __future__ import annotations

import argparse

__all__ = ["CHECK_HELP", "add_check_arguments", "run_check"]

CHECK_HELP = """\
Check the prompts of notebooks before release: the format warnings `list`
gives (the skills' too), what goes wrong with each prompt in each known MCP
client (Zed, Claude Code, VS Code, opencode, Cursor, clients that forward only
text; each limit with its source), and the prompt tests written as cells
(test:NAME, see mcp-notebook help format). Grouped by notebook, worst first.

Exits with 1 on errors (a notebook that cannot be read, a failed prompt test),
and with --strict on warnings too; 2 on bad usage.

examples:
  mcp-notebook check prompts/
  mcp-notebook check prompts/ --clients claude-code,zed --strict
  mcp-notebook check prompts/ --junit check.xml      # for CI test reports
  mcp-notebook check prompts/ --json | jq '.notebooks[] | select(.errors > 0)'
  mcp-notebook check prompts/ --update-snapshots     # rewrite changed snapshots
"""


def _clients(value: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    if not names:
        raise argparse.ArgumentTypeError("name at least one client, e.g. --clients claude-code,zed")
    return names


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="notebook files or folders")
    parser.add_argument(
        "--clients",
        type=_clients,
        metavar="A,B",
        help="only these clients' limits: claude-code, cursor, opencode, text-only, vscode, zed (default: all)",
    )
    parser.add_argument("--strict", action="store_true", help="exit with 1 on warnings too")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the report")
    parser.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML to FILE")
    parser.add_argument(
        "--update-snapshots", action="store_true", help="rewrite the snapshots of prompt tests that differ or are new"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list the prompt tests that passed too")


def run_check(args: argparse.Namespace) -> int:
    """Run the check; returns the exit code. Raises `ValueError` / `FileNotFoundError` for bad usage."""
    import gc
    import json
    from pathlib import Path

    from .report import check_paths

    # What the check builds lives until the command ends: collecting it only costs time (a full collection over
    # 100,000 prompts), so collection waits, and what is left is frozen, as `serve` does after its first scan
    # (the interpreter's last collection, at exit, skips it too).
    collecting = gc.isenabled()
    gc.disable()
    try:
        report = check_paths(args.paths, clients=args.clients, update_snapshots=args.update_snapshots)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    if args.junit:
        try:
            Path(args.junit).write_bytes(report.junit_xml(strict=args.strict))
        except OSError as error:
            raise ValueError(f"cannot write the JUnit file {args.junit!r}: {error.strerror or error}") from None
    if args.json:
        print(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        text = report.text(verbose=args.verbose)
        print(text)
    return report.exit_code(strict=args.strict)
