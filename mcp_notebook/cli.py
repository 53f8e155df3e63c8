"""The `mcp-notebook` command line: the table of commands, the parser, `main`, and the help rendered in advance.

Each command lives in a module of its own (`commands/`, `trust_command.py`),
imported only when that command is the one typed. Only the standard library is
imported at module level: `--help` and argument errors must stay instant, so
the MCP SDK (over a second to import) and the notebook sources are imported
inside the command that needs them.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys

from .command_line import HelpFormatter
from .commands.usage import EXIT_USAGE, PROG, UsageProblem, say
from .settings import CLI, on
from .terminal import HELP_COLUMNS
from .version import __version__

# Not `typing.TYPE_CHECKING`: importing typing (or json, shlex, shutil, pathlib) here would make `--help` slower.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import NoReturn

__all__ = ["main"]

if TYPE_CHECKING:
    Command = Callable[[argparse.Namespace], int]

# The commands, in the order `mcp-notebook --help` lists them: name, summary, and the module (under mcp_notebook/)
# that holds the command's `NAME_HELP` (its --help description), `add_NAME_arguments(parser)` and `run_NAME(args)`.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("serve", "serve notebooks as MCP prompts (stdio or HTTP)", "commands.serve"),
    ("list", "list the prompts notebooks publish", "commands.prompts"),
    ("render", "render one prompt with arguments", "commands.prompts"),
    ("check", "check prompts for every client and run their prompt tests", "commands.check"),
    ("config", "print MCP client configuration", "commands.client_config"),
    ("connect", "connect a stdio client to a running kernel's server", "commands.connect"),
    ("trust", "trust a project's MCP configuration file", "trust_command"),
    ("help", "print a guide: the notebook format, deployment", "commands.guides"),
)

_MAIN_HELP = """\
Serve the prompts written in Jupyter notebooks to any MCP client (Claude Code,
VS Code, Cursor, ...), and check them from the command line.

A notebook cell becomes part of a prompt when its metadata says so
(metadata.mcp.prompt = "NAME") or it carries the tag prompt:NAME; {{name}}
placeholders become the prompt's arguments.
"""

_DECLARED_FLAGS = frozenset(declared.flag for declared in on(CLI) if declared.kind.name != "bool")


class _Parser(argparse.ArgumentParser):
    """argparse's usage line and error, then a line saying what to type when a word is close to a known one."""

    typed: Sequence[str] | None = None  # the command line being parsed, set by `main` (None: sys.argv)

    def subcommands(self, name: str) -> list[argparse.ArgumentParser]:
        """The parser of subcommand `name`, if there is one (a list of none or one)."""
        return [
            parser
            for action in self._actions  # argparse lists no other way to a subcommand's parser
            if isinstance(action, argparse._SubParsersAction) and (parser := action.choices.get(name)) is not None
        ]

    def error(self, message: str) -> NoReturn:
        flag, _, refusal = message.removeprefix("argument ").partition(": ")
        if refusal and flag in _DECLARED_FLAGS:
            # A declared option's value refused: one line, as a bad $MCP_NOTEBOOK_* variable gets.
            say(f"{flag} {refusal}")
            raise SystemExit(EXIT_USAGE)
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        from .command_line import correction_for, options_of

        typed = sys.argv[1:] if _Parser.typed is None else _Parser.typed
        if (fix := correction_for(message, options_of(self), typed)) is not None:
            say(fix.hint(PROG, typed))
        raise SystemExit(EXIT_USAGE)


def build_parser(command: str | None = None) -> _Parser:
    """The whole command line; each subcommand's --help explains every option with examples.

    With `command`, the other subcommands are only named (their modules are not
    imported, they take no options): what `main` parses, `--help` included, costs less.
    """
    parser = _Parser(prog=PROG, description=_MAIN_HELP, formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Required, but checked by `main`: argparse would say so before naming a misspelled option (`--hlep`).
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    for name, summary, where in COMMANDS:
        if command not in (None, name):
            commands.add_parser(name, help=summary)
            continue
        module = importlib.import_module(f"{__package__}.{where}")
        details = getattr(module, f"{name.upper()}_HELP")
        chosen = commands.add_parser(name, help=summary, description=details, formatter_class=HelpFormatter)
        getattr(module, f"add_{name}_arguments")(chosen)
        chosen.set_defaults(run=getattr(module, f"run_{name}"))
    return parser


HELP_COMMANDS = ("", *(name for name, _, _ in COMMANDS))  # "": `mcp-notebook --help`
HELP_TEXT_MODULE = "help_text.py"


def help_texts() -> dict[str, str]:
    """Each command's `--help` as argparse prints it at 80 columns, whatever the terminal: what `help_text.py` holds."""
    at_80 = functools.partial(argparse.RawDescriptionHelpFormatter, width=HELP_COLUMNS - 2)
    texts = {}
    for command in HELP_COMMANDS:
        parser = build_parser(command)
        chosen = next(iter(parser.subcommands(command)), parser) if command else parser
        chosen.formatter_class = at_80
        texts[command] = chosen.format_help()
    return texts


def _quoted(line: str) -> str:
    """`line` as a Python string literal, quoted as the formatter (ruff) would write it."""
    literal = repr(line)
    if literal.startswith("'") and '"' not in line:
        literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
    return literal


def write_help_text() -> Path:
    """Write `help_text.py` again from the parser, for this Python: run it after changing any option or help."""
    from pathlib import Path

    lines = [
        '"""`mcp-notebook --help`, rendered in advance by `cli.write_help_text()` (do not edit; see `console.py`)."""',
        "",
        f"PYTHON = {tuple(sys.version_info[:2])!r}  # argparse lays help out differently in other versions",
        "TEXTS: dict[str, str] = {",
    ]
    for command, text in help_texts().items():
        lines.append(f"    {_quoted(command)}: (")
        lines.extend(f"        {_quoted(line)}" for line in text.splitlines(keepends=True))
        lines.append("    ),")
    lines.append("}")
    path = Path(__file__).with_name(HELP_TEXT_MODULE)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    typed = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(next((word for word in typed if not word.startswith("-")), ""))
    if not typed:
        parser.print_help(sys.stderr)  # a bare `mcp-notebook` is a request for help, not a mistake
        return EXIT_USAGE
    _Parser.typed = typed
    try:
        args, extras = parser.parse_known_args(typed)
        if extras:  # as parse_args does, but under the subcommand's usage line, whose options the hint is chosen from
            chosen = next(iter(parser.subcommands(args.command)), parser)
            chosen.error(f"unrecognized arguments: {' '.join(extras)}")
        if args.command is None:
            parser.error("the following arguments are required: COMMAND")
    finally:
        _Parser.typed = None
    run: Command = args.run
    try:
        return run(args)
    except UsageProblem as problem:
        say(str(problem))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
