"""The `%mcp` subcommands as objects: a name, a summary, a parser and a run function, and their one parser class.

Every subcommand's parser is a `SubcommandParser`, so every `%mcp SUB --help`
(and `%mcp help SUB`, the same text) has the same sections: usage, what it
does, its arguments and options, and examples. A wrong word gives a one-line
`UsageError` that names the subcommand and points to its help; nothing exits.

The parsers of all subcommands are built here, from argparse alone, so that
`%load_ext mcp_notebook`, `--help` and Tab completion read them without
importing what runs them (widgets, the kernel's server, the MCP SDK). The
table of subcommands lives with the magic (`magics.SUBCOMMANDS`).
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from .magics import MCPMagics

__all__ = [
    "HELP_WIDTH",
    "Subcommand",
    "SubcommandParser",
    "check_parser",
    "complete_parser",
    "connect_parser",
    "disconnect_parser",
    "form_parser",
    "get_parser",
    "help_parser",
    "picker_parser",
    "prompts_parser",
    "serve_parser",
    "servers_parser",
    "skill_parser",
    "skills_parser",
    "stop_parser",
    "trust_parser",
    "unpublish_parser",
]

HELP_WIDTH = 88


class _HelpShown(Exception):
    """`--help` printed the help; the subcommand has nothing else to do."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as wrapped above, paragraph by paragraph (argparse would run them together).

    One width everywhere: argparse would follow $COLUMNS, which a kernel does not have.
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=HELP_WIDTH)


class SubcommandParser(argparse.ArgumentParser):
    """argparse for one `%mcp` subcommand: the same help layout for all, errors as one-line `UsageError`s.

    `description` is a sequence of paragraphs (each wrapped to `HELP_WIDTH`),
    `examples` are lines of code shown under "examples:".
    """

    def __init__(
        self, name: str, description: Sequence[str], examples: Sequence[str], *, allow_abbrev: bool = True
    ) -> None:
        super().__init__(
            prog=f"%mcp {name}",
            description="\n\n".join(textwrap.fill(p, width=HELP_WIDTH, break_on_hyphens=False) for p in description),
            epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
            formatter_class=_HelpFormatter,
            add_help=False,
            allow_abbrev=allow_abbrev,
        )
        self._positionals.title = "arguments"
        self.add_argument("-h", "--help", action="help", help="show this help")

    def parse(self, argv: Sequence[str]) -> argparse.Namespace | None:
        """The options of `argv`; None when it asked for `--help` (then printed)."""
        try:
            return self.parse_args(list(argv))
        except _HelpShown:
            return None

    def asks_for_help(self, argv: Sequence[str]) -> bool:
        """For subcommands whose words are NAME=VALUE (not parsed here): whether they ask for help."""
        return not argv or argv[0] in ("-h", "--help") or "--help" in argv

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise _HelpShown
        self.error((message or "").strip() or "invalid arguments")


@dataclass(frozen=True, slots=True)
class Subcommand:
    """One `%mcp` subcommand: what `%mcp help` lists, how its words are read, and what runs it.

    `run(magics, argv)` gets the `MCPMagics` and the words after the
    subcommand's name; it imports what it needs when called, so the table
    costs nothing to load.
    """

    name: str
    summary: str
    parser: Callable[[], SubcommandParser]
    run: Callable[[MCPMagics, list[str]], Any]


# -- talking to MCP servers ------------------------------------------------------------------------


def servers_parser() -> SubcommandParser:
    p = SubcommandParser(
        "servers",
        [
            "List the MCP servers %mcp knows: from your MCP configuration files (Claude Desktop, Cursor, "
            "VS Code .vscode/mcp.json, .mcp.json, mcp.json, $MCP_NOTEBOOK_CONFIG) and from %mcp connect."
        ],
        ["%mcp servers", "%mcp servers --config ~/my-mcp.json"],
    )
    p.add_argument("--config", metavar="PATH", action="append", default=[], help="also read this configuration file")
    p.add_argument("--reload", action="store_true", help="read the configuration files again")
    return p


def trust_parser() -> SubcommandParser:
    p = SubcommandParser(
        "trust",
        [
            "A project's MCP configuration (.mcp.json, .vscode/mcp.json, .cursor/mcp.json or mcp.json in the "
            "kernel's folder or a parent) names commands to run, so %mcp starts none of them until you trust the "
            "file, as it is now: an edited file must be trusted again. %mcp servers shows what an untrusted file "
            "would start. Your own files (Claude Desktop's, ~/.cursor/mcp.json, $MCP_NOTEBOOK_CONFIG) need no trust.",
            "Without PATH, trusts every untrusted project file found, exactly as %mcp showed it. The record is "
            "kept in your config folder, never in the project; `mcp-notebook trust --list` lists it.",
        ],
        ["%mcp trust", "%mcp trust .mcp.json", "%mcp trust --revoke .mcp.json", "%mcp servers"],
    )
    p.add_argument("path", nargs="?", metavar="PATH", help="the project file to trust (default: every one found)")
    p.add_argument("--revoke", action="store_true", help="take the trust of PATH back")
    return p


def connect_parser() -> SubcommandParser:
    p = SubcommandParser(
        "connect",
        [
            "Connect to an MCP server: one from your configuration by NAME, a URL (Streamable HTTP), or a "
            "command after -- (stdio). The server stays connected until %mcp disconnect."
        ],
        [
            "%mcp connect docs",
            "%mcp connect docs -- uvx some-mcp-server --flag",
            '%mcp connect remote https://host/mcp --header "Authorization: Bearer $TOKEN"',
        ],
    )
    p.add_argument("name", metavar="NAME", help="the name to use for the server (%%mcp get NAME:PROMPT)")
    p.add_argument("target", nargs="*", metavar="TARGET", help="a URL, or (after --) the command and its arguments")
    p.add_argument("--header", action="append", default=[], metavar='"KEY: VALUE"', help="an HTTP header")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="an environment variable")
    p.add_argument("--cwd", metavar="PATH", help="working directory of a stdio server")
    p.add_argument(
        "--mode",
        default="auto",
        choices=["auto", "legacy", "2026-07-28"],
        metavar="MODE",
        help="protocol era: auto (the default), legacy or 2026-07-28",
    )
    return p


def disconnect_parser() -> SubcommandParser:
    p = SubcommandParser(
        "disconnect",
        ["Close a server's connection (a stdio server process is stopped); all servers without NAME."],
        ["%mcp disconnect docs", "%mcp disconnect"],
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="the server to disconnect (default: all)")
    return p


def prompts_parser() -> SubcommandParser:
    p = SubcommandParser(
        "prompts",
        ["List the prompts of the given servers (default: every known server, connecting as needed)."],
        ["%mcp prompts", "%mcp prompts docs", "table = %mcp prompts docs"],
    )
    p.add_argument("servers", nargs="*", metavar="SERVER", help="server names")
    p.add_argument("--refresh", action="store_true", help="ask the servers again instead of using the cache")
    return p


def skills_parser() -> SubcommandParser:
    p = SubcommandParser(
        "skills",
        [
            "List the skills of MCP servers (the Skills extension, io.modelcontextprotocol/skills): each skill's "
            "name, description and files. Without SERVER, every connected server; a server that offers no skills "
            "is named, with the reason. The result's .skills holds them.",
        ],
        ["%mcp skills", "%mcp skills docs", "table = %mcp skills docs"],
    )
    p.add_argument("servers", nargs="*", metavar="SERVER", help="server names (default: the connected ones)")
    return p


def skill_parser() -> SubcommandParser:
    p = SubcommandParser(
        "skill",
        [
            "Show a skill: its SKILL.md instructions rendered as Markdown, with its origin, its frontmatter and "
            "its files, each with the line that opens it. With PATH, show that file of the skill instead.",
            "Address skills as SERVER:SKILL (a name, or a path such as acme/billing/refunds when names clash), or "
            "by bare name when only one server has it. Every file is checked against the SHA-256 digest and size "
            "the server listed for it. The result is a SkillView (.text, .body, .data, .skill).",
        ],
        [
            "%mcp skill docs:pdf-processing",
            "%mcp skill docs:pdf-processing references/FORMS.md",
            "howto = %mcp skill pdf-processing",
            "howto.body",
        ],
    )
    p.add_argument("reference", metavar="SERVER:SKILL", help="the skill")
    p.add_argument("path", nargs="?", default="SKILL.md", metavar="PATH", help="a file of the skill (default SKILL.md)")
    return p


def check_parser() -> SubcommandParser:
    p = SubcommandParser(
        "check",
        [
            "Check this kernel's notebook (as saved) and its %%prompt cells as mcp-notebook check does: the "
            "notebook's format warnings, what goes wrong with each prompt in each known MCP client (each limit "
            "with its source), and the notebook's prompt tests (test:NAME cells). Shows a table, worst first; "
            "the result's .report holds every finding.",
        ],
        ["%mcp check", "%mcp check --clients claude-code,zed", "%mcp check --notebook prompts.ipynb"],
    )
    p.add_argument(
        "--clients",
        type=lambda value: tuple(name.strip() for name in value.split(",") if name.strip()),
        metavar="A,B",
        help="only these clients' limits (default: all)",
    )
    p.add_argument("--notebook", metavar="PATH", help="the notebook to check, when jupyter-server cannot tell")
    p.add_argument("--update-snapshots", action="store_true", help="rewrite the prompt tests' snapshots that differ")
    return p


def get_parser() -> SubcommandParser:
    p = SubcommandParser(
        "get",
        [
            "Render a prompt and show it as a conversation; the result is a PromptConversation (a "
            "RenderedPrompt with .to_openai() and .to_anthropic()). Address prompts as SERVER:PROMPT, or by "
            "bare name when only one server has it.",
            "Arguments are NAME=VALUE; quote values with spaces; NAME=@var passes a variable (a DataFrame "
            "becomes a Markdown table; nothing is evaluated); NAME=@file:path passes a file's text; NAME=@@x is "
            "the literal @x.",
        ],
        [
            "%mcp get docs:code_review code=@my_code language=python",
            '%mcp get docs:summarize text="a few words" style=short',
            "msgs = %mcp get docs:code_review code=@file:app.py",
            "msgs.to_openai()",
        ],
    )
    p.add_argument("reference", metavar="SERVER:PROMPT", help="the prompt")
    p.add_argument("arguments", metavar="NAME=VALUE", nargs="*", help="its arguments")
    return p


def complete_parser() -> SubcommandParser:
    p = SubcommandParser(
        "complete",
        [
            "Ask the server for values of one argument of a prompt (completion/complete), given what is "
            "typed so far and, optionally, the arguments already chosen."
        ],
        ["%mcp complete docs:code_review language py", "%mcp complete docs:code_review language '' code=@my_code"],
    )
    p.add_argument("reference", metavar="SERVER:PROMPT", help="the prompt")
    p.add_argument("argument", metavar="ARGUMENT", help="the argument to complete")
    p.add_argument("prefix", nargs="?", default="", metavar="PREFIX", help="what is typed so far")
    p.add_argument("context", nargs="*", metavar="NAME=VALUE", help="arguments already chosen")
    return p


def help_parser() -> SubcommandParser:
    p = SubcommandParser(
        "help",
        ["Show help: the overview of %mcp, or one subcommand's (the same as %mcp SUBCOMMAND --help)."],
        ["%mcp help", "%mcp help get"],
    )
    p.add_argument("subcommand", nargs="?", metavar="SUBCOMMAND", help="the subcommand to explain")
    return p


# -- widgets -----------------------------------------------------------------------------------------


def form_parser() -> SubcommandParser:
    p = SubcommandParser(
        "form",
        [
            "Fill in a prompt's arguments in a form, with the server's suggestions, and render it.",
            "Each argument gets a field (required ones marked, descriptions as help); suggestions from the "
            "server appear as you type; NAME=@variable takes a variable of this session, as with %mcp get. "
            'Render shows the conversation in the form and keeps it as form.result; "Copy as code" shows the '
            "equivalent %mcp get line. NAME=VALUE words fill fields in advance.",
            "In a terminal (no widgets) the arguments are asked one by one instead.",
        ],
        [
            "%mcp form docs:code_review",
            "%mcp form docs:code_review language=python code=@my_code",
            "form = %mcp form docs:code_review      # later: form.result.to_openai()",
        ],
    )
    p.add_argument("reference", metavar="SERVER:PROMPT", help="the prompt")
    p.add_argument("values", metavar="NAME=VALUE", nargs="*", help="values to fill in advance")
    return p


def picker_parser() -> SubcommandParser:
    p = SubcommandParser(
        "picker",
        [
            "Browse the prompts of every connected server, search them, and open one in a form.",
            "Prompts are grouped by server and filtered by name, title and description as you type; choosing "
            "one opens its form underneath. The list follows the servers' changes by itself. While this "
            'kernel serves its own prompts (%mcp serve), they come first, as "this kernel".',
            "In a terminal (no widgets) the listing is printed instead.",
        ],
        ["%mcp picker", "%mcp picker review", "%mcp picker --all"],
    )
    p.add_argument("search", nargs="*", metavar="SEARCH", help="words to search for")
    p.add_argument(
        "--all", action="store_true", help="every configured server (connecting to each), not only the connected ones"
    )
    return p


# -- serving this kernel's prompts ---------------------------------------------------------------------


def serve_parser() -> SubcommandParser:
    p = SubcommandParser(
        "serve",
        [
            "Serve this kernel's prompts to MCP clients, and print how to connect them.",
            "Serves the %%prompt cells and the notebook this kernel belongs to (found through jupyter-server, or "
            "--notebook PATH; reloaded on save). --magics also lists the magics (documentation only), which "
            "clients show in their menus: the magic prompt, whose name completes every magic, and a few common "
            "ones as magic.<name> (--all-magics: one prompt per magic). Over Streamable HTTP on 127.0.0.1 (a "
            "random free port unless --port). Clients must send a "
            "random bearer token, kept in the connection file (never printed, since outputs are saved in the "
            "notebook); --no-token: none, so any local process may connect. The connection file, in the Jupyter "
            "runtime directory, lets editors and mcp-notebook connect find this kernel.",
            "--live %who,%whos lets clients *run* those magics (on this kernel, between cells, with arguments "
            "checked against what each magic accepts); no magic runs unless named here. Magics that read (%who, "
            "%whos, %history, %pwd, %env, %pinfo) are safe to allow. Magics that run code (%timeit, %time, "
            "%run, %%bash, %pip, %%writefile, and any extension's magic) let every client holding the token run "
            "arbitrary code in this kernel: allow them only if you would type what the model sends. Other "
            "magics (%cd, %reset, %config, …) are refused. A live magic may take --live-timeout seconds, then "
            "it is interrupted; so is one you interrupt.",
            "%mcp stop stops the server; the next %mcp serve in this kernel takes its port (when free) and token "
            "again, so configured clients still connect (--new-token: shut them out).",
        ],
        ["%mcp serve", "%mcp serve --magics", "%mcp serve --live %who,%whos --port 8765", "%mcp serve --stdio-proxy"],
        # --live and --live-timeout: a prefix must never pick one of them for the user.
        allow_abbrev=False,
    )
    p.add_argument("--port", type=int, default=0, metavar="N", help="the port (default: a random free one)")
    p.add_argument("--no-token", action="store_true", help="accept clients without the bearer token")
    p.add_argument(
        "--live", action="append", default=[], metavar="MAGIC,...", help="magics clients may run (repeatable)"
    )
    p.add_argument(
        "--live-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds a live magic may take before it is interrupted (default: 60)",
    )
    p.add_argument("--magics", action="store_true", help="list the magics too: the magic prompt and a few common ones")
    p.add_argument(
        "--all-magics", action="store_true", help="list one prompt per magic, not only the common ones (--magics)"
    )
    p.add_argument("--notebook", metavar="PATH", help="the notebook to serve, when jupyter-server cannot tell")
    p.add_argument(
        "--stdio-proxy",
        action="store_true",
        help="print configurations that start mcp-notebook connect (for clients that only speak stdio)",
    )
    p.add_argument(
        "--new-token",
        action="store_true",
        help="a fresh token (default: the last %%mcp serve's, so clients still connect)",
    )
    return p


def stop_parser() -> SubcommandParser:
    return SubcommandParser(
        "stop",
        [
            "Stop serving this kernel's prompts: the port closes and the connection file is removed. The "
            "%%prompt prompts stay defined for the next %mcp serve."
        ],
        ["%mcp stop"],
    )


def unpublish_parser() -> SubcommandParser:
    p = SubcommandParser(
        "unpublish",
        ["Withdraw prompts defined by %%prompt cells; connected clients hear of it at once."],
        ["%mcp unpublish explain", "%mcp unpublish explain review"],
    )
    p.add_argument("names", nargs="+", metavar="NAME", help="the prompts to withdraw")
    return p
