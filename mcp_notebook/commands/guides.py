"""`mcp-notebook help TOPIC`: the guides a hint names, printed from the installed package.

The guides are the pages of docs/ that messages point to (`docs/` itself is
in the source tree only); the package carries them as data (`guides/`, which
links each one to its page in docs/, so there is one text).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["GUIDES", "HELP_HELP", "add_help_arguments", "guide_text", "run_help"]

# topic: (file under mcp_notebook/guides/, what it says)
GUIDES: dict[str, tuple[str, str]] = {
    "format": ("notebook-format.md", "the notebook prompt format: which cells become prompts, each field"),
    "deployment": ("deployment.md", "serving a team: --workers, --stateless, process managers, Kubernetes"),
}

_TOPICS = "".join(f"  {topic:<12}{summary}\n" for topic, (_, summary) in GUIDES.items())

HELP_HELP = (
    "Print a guide from the installed package: the page of the project's\n"
    "documentation that messages and help point to.\n\n"
    f"topics:\n{_TOPICS}\n"
    "examples:\n  mcp-notebook help format\n  mcp-notebook help format | less\n"
)


def add_help_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", nargs="?", choices=tuple(GUIDES), metavar="TOPIC", help=f"one of: {', '.join(GUIDES)}")


def guide_text(topic: str) -> str:
    """The guide of `topic`, as the package carries it."""
    from importlib.resources import files

    name, _ = GUIDES[topic]
    return files("mcp_notebook").joinpath("guides", name).read_text(encoding="utf-8")


def run_help(args: argparse.Namespace) -> int:
    if args.topic is None:  # what there is to read
        sys.stdout.write(f"mcp-notebook help TOPIC prints a guide; the topics:\n{_TOPICS}")
        return 0
    sys.stdout.write(guide_text(args.topic))
    return 0
