"""The `%mcp` line magic: MCP servers' prompts in IPython.

One magic with subcommands (`servers`, `connect`, `disconnect`, `prompts`,
`get`, `complete`, `help`); each has an argparse parser, so `%mcp SUB --help`
prints real help, and `%mcp?` prints the overview with examples. Errors of
the product become `UsageError`s that say what to do; Ctrl-C cancels the
request in flight.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser, argument, magic_arguments

from ..config import ServerConfig
from ..exceptions import MCPNotebookError, MissingArgumentsError, UnknownArgumentsError, UnknownPromptError
from ..models import PromptArgument, PromptSpec
from ..naming import suggest_names
from .arguments import parse_arguments, split_line
from .display import PromptConversation, PromptTable, ServerRow, ServerTable
from .servers import ServerPool

__all__ = ["DELEGATED_SUBCOMMANDS", "MCPMagics"]

# Subcommands other parts of the product implement, imported on first use to keep `%load_ext` light:
# name -> (module, function(shell, argv), one-line help).
DELEGATED_SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "serve": ("mcp_notebook.ipython.kernel_server", "serve_command", "serve this kernel's prompts over MCP"),
    "stop": ("mcp_notebook.ipython.kernel_server", "stop_command", "stop serving this kernel's prompts"),
    "unpublish": ("mcp_notebook.ipython.kernel_server", "unpublish_command", "withdraw a %%prompt prompt"),
    "form": ("mcp_notebook.ipython.widgets", "form_command", "fill in a prompt's arguments in a form"),
    "picker": ("mcp_notebook.ipython.widgets", "picker_command", "browse the prompts of connected servers"),
}


class _HelpShown(Exception):
    """`--help` printed the help; nothing else to do."""


class _SubcommandParser(MagicArgumentParser):
    def __init__(self, name: str, description: str, examples: Sequence[str]) -> None:
        epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
        super().__init__(  # type: ignore[no-untyped-call]
            prog=f"%mcp {name}",
            description=textwrap.fill(description, width=88),
            epilog=epilog,
            add_help=True,
            # Plain argparse layout for --help (IPython's formatter writes reST for docstrings).
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n{self.format_usage().strip()}\n({self.prog} --help explains)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _HelpShown


def _parsers() -> dict[str, _SubcommandParser]:
    parsers: dict[str, _SubcommandParser] = {}

    def add(name: str, description: str, *examples: str) -> _SubcommandParser:
        parsers[name] = _SubcommandParser(name, description, examples)
        return parsers[name]

    p = add(
        "servers",
        "List the MCP servers %mcp knows: from your MCP configuration files (Claude Desktop, Cursor, "
        "VS Code .vscode/mcp.json, .mcp.json, mcp.json, $MCP_NOTEBOOK_CONFIG) and from %mcp connect.",
        "%mcp servers",
        "%mcp servers --config ~/my-mcp.json",
    )
    p.add_argument("--config", metavar="PATH", action="append", default=[], help="also read this configuration file")
    p.add_argument("--reload", action="store_true", help="read the configuration files again")

    p = add(
        "connect",
        "Connect to an MCP server: one from your configuration by NAME, a URL (Streamable HTTP), or a "
        "command after -- (stdio). The server stays connected until %mcp disconnect.",
        "%mcp connect docs",
        "%mcp connect docs -- uvx some-mcp-server --flag",
        '%mcp connect remote https://host/mcp --header "Authorization: Bearer $TOKEN"',
    )
    p.add_argument("name", help="the name to use for the server (%%mcp get NAME:PROMPT)")
    p.add_argument("target", nargs="*", help="a URL, or (after --) the command and its arguments")
    p.add_argument("--header", action="append", default=[], metavar='"KEY: VALUE"', help="an HTTP header")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="an environment variable")
    p.add_argument("--cwd", help="working directory of a stdio server")
    p.add_argument("--mode", default="auto", choices=["auto", "legacy", "2026-07-28"], help="protocol era")

    p = add(
        "disconnect",
        "Close a server's connection (a stdio server process is stopped); all servers without NAME.",
        "%mcp disconnect docs",
        "%mcp disconnect",
    )
    p.add_argument("name", nargs="?", help="the server to disconnect (default: all)")

    p = add(
        "prompts",
        "List the prompts of the given servers (default: every known server, connecting as needed).",
        "%mcp prompts",
        "%mcp prompts docs",
        "table = %mcp prompts docs",
    )
    p.add_argument("servers", nargs="*", help="server names")
    p.add_argument("--refresh", action="store_true", help="ask the servers again instead of using the cache")

    add(
        "get",
        "Render a prompt and show it as a conversation; the result is a PromptConversation (a RenderedPrompt "
        "with .to_openai() and .to_anthropic()). Address prompts as SERVER:PROMPT, or by bare name when only "
        "one server has it. Arguments are NAME=VALUE; quote values with spaces; NAME=@var passes a variable "
        "(a DataFrame becomes a Markdown table; nothing is evaluated); NAME=@file:path passes a file's text; "
        "NAME=@@x is the literal @x.",
        "%mcp get docs:code_review code=@my_code language=python",
        '%mcp get docs:summarize text="a few words" style=short',
        "msgs = %mcp get docs:code_review code=@file:app.py",
        "msgs.to_openai()",
    ).add_argument("reference", metavar="SERVER:PROMPT", nargs="?")

    p = add(
        "complete",
        "Ask the server for values of one argument of a prompt (completion/complete), given what is typed "
        "so far and, optionally, the arguments already chosen.",
        "%mcp complete docs:code_review language py",
        "%mcp complete docs:code_review language '' code=@my_code",
    )
    p.add_argument("reference", metavar="SERVER:PROMPT")
    p.add_argument("argument", help="the argument to complete")
    p.add_argument("prefix", nargs="?", default="", help="what is typed so far")
    p.add_argument("context", nargs="*", metavar="NAME=VALUE", help="arguments already chosen")

    add("help", "Show help: the overview, or one subcommand's.", "%mcp help", "%mcp help get").add_argument(
        "subcommand", nargs="?"
    )
    return parsers


@magics_class
class MCPMagics(Magics):
    """`%mcp`: list, render and complete MCP prompts from the servers in your MCP configuration."""

    def __init__(self, shell: Any, pool: ServerPool | None = None) -> None:
        super().__init__(shell)
        self.pool = pool if pool is not None else ServerPool()
        self._parsers = _parsers()

    @magic_arguments()  # type: ignore[no-untyped-call, untyped-decorator]
    @argument(  # type: ignore[no-untyped-call, untyped-decorator]
        "subcommand",
        nargs="?",
        help="servers | connect | disconnect | prompts | get | complete | form | picker | help"
        " (and serve | stop | unpublish to publish this kernel's own prompts)",
    )
    @argument("arguments", nargs="*", help="see %%mcp SUBCOMMAND --help")  # type: ignore[no-untyped-call, untyped-decorator]
    @line_magic
    def mcp(self, line: str) -> Any:
        """Use MCP servers' prompts in IPython.

        Servers come from your MCP configuration (Claude Desktop, Cursor, VS Code,
        .mcp.json, mcp.json) or from %mcp connect; each connects on first use and
        stays connected. Prompts are SERVER:PROMPT, or a bare name when unambiguous.

          %mcp servers                                 the servers you have
          %mcp connect docs -- uvx some-mcp-server     a stdio server
          %mcp connect remote https://host/mcp --header "Authorization: Bearer …"
          %mcp prompts [SERVER ...]                    their prompts, as a table
          %mcp get docs:code_review code=@my_var language=python
          msgs = %mcp get docs:code_review code="print('hi')"
          msgs.to_openai()                             messages for the OpenAI SDK (.to_anthropic() too)
          %mcp complete docs:code_review language py   suggestions for an argument
          %mcp form docs:code_review                   fill the arguments in a form (%mcp picker: browse)
          %mcp disconnect [SERVER]                     close connections
          %mcp SUBCOMMAND --help                       details and more examples

        Tab completes subcommands, SERVER:PROMPT, argument names and the values the
        server suggests, @variables and @file: paths. Ctrl-C cancels a request in flight.
        """
        words = split_line(line)
        name, argv = (words[0], words[1:]) if words else ("help", [])
        try:
            return self._dispatch(name, argv)
        except _HelpShown:
            return None
        except (UnknownPromptError, MissingArgumentsError, UnknownArgumentsError):
            raise  # already turned into UsageError where the context is known
        except MCPNotebookError as error:
            raise UsageError(str(error)) from None

    def _dispatch(self, name: str, argv: list[str]) -> Any:
        handlers: dict[str, Callable[[list[str]], Any]] = {
            "servers": self._servers,
            "connect": self._connect,
            "disconnect": self._disconnect,
            "prompts": self._prompts,
            "get": self._get,
            "complete": self._complete,
            "help": self._help,
        }
        if name in handlers:
            return handlers[name](argv)
        if name in DELEGATED_SUBCOMMANDS:
            module, function, _ = DELEGATED_SUBCOMMANDS[name]
            return getattr(importlib.import_module(module), function)(self.shell, argv)
        known = [*handlers, *DELEGATED_SUBCOMMANDS]
        hint = suggest_names(name, known)
        raise UsageError(
            f"%mcp has no subcommand {name!r}{f'; did you mean {hint[0]}?' if hint else ''} "
            f"(subcommands: {', '.join(known)}; %mcp? explains)"
        )

    # -- subcommands --------------------------------------------------------------------------------

    def _servers(self, argv: list[str]) -> ServerTable:
        options = self._parsers["servers"].parse_args(argv)
        for path in options.config:
            self.pool.add_config_file(Path(path))
        if options.reload:
            self.pool.reload()
        connected = self.pool.connected()
        rows = []
        for name, config in sorted(self.pool.configs().items()):
            client = connected.get(name)
            status = f"connected ({client.protocol_version})" if client is not None else "not connected"
            rows.append(ServerRow(config=config, status=status))
        notes = [f"skipped: {error}" for error in self.pool.config_errors]
        return ServerTable(rows=rows, notes=notes)

    def _connect(self, argv: list[str]) -> None:
        options = self._parsers["connect"].parse_args(argv)
        headers = dict(_split_pair(h, ":", "--header", '"KEY: VALUE"') for h in options.header)
        env = dict(_split_pair(e, "=", "--env", "KEY=VALUE") for e in options.env)
        if options.target:
            first, rest = options.target[0], options.target[1:]
            if first.startswith(("http://", "https://")):
                if rest:
                    raise UsageError(f"%mcp connect {options.name} URL takes no more words, got {' '.join(rest)!r}")
                config = ServerConfig(name=options.name, url=first, headers=headers or None, source="%mcp connect")
            else:
                config = ServerConfig(
                    name=options.name,
                    command=first,
                    args=tuple(rest),
                    env=env or None,
                    cwd=options.cwd,
                    source="%mcp connect",
                )
        else:
            from ..api import resolve_server

            config = resolve_server(options.name, configured=self.pool.configs())
        connection = self.pool.add(config, mode=options.mode)
        client = connection.client
        title = f" ({client.server_title})" if client.server_title else ""
        print(f"Connected to {config.name}{title} over {config.transport}, protocol {client.protocol_version}.")

    def _disconnect(self, argv: list[str]) -> None:
        options = self._parsers["disconnect"].parse_args(argv)
        if options.name is not None and options.name not in self.pool.connections():
            raise UsageError(
                f"{options.name!r} is not connected (connected: {', '.join(self.pool.connected()) or 'none'})"
            )
        closed = self.pool.disconnect(options.name)
        print(f"Disconnected {', '.join(closed)}." if closed else "Nothing was connected.")

    def _prompts(self, argv: list[str]) -> PromptTable:
        options = self._parsers["prompts"].parse_args(argv)
        names = options.servers or sorted(self.pool.configs())
        for name in names:
            self.pool.config(name)
        if options.refresh:
            for name in names:
                self.pool.connection(name).prompts(refresh=True)
        listings, errors = {}, {}
        for name, listing in self.pool.listings(names).items():
            if isinstance(listing, MCPNotebookError):
                errors[name] = str(listing)
            else:
                listings[name] = listing
        return PromptTable(listings=listings, errors=errors)

    def _get(self, argv: list[str]) -> PromptConversation | None:
        if not argv or argv[0] in ("-h", "--help") or "--help" in argv:
            self._parsers["get"].print_help()
            return None
        reference, *tokens = argv
        arguments = parse_arguments(tokens, self._namespace(), cwd=Path(os.getcwd()))
        connection, spec = self._resolve(reference)
        try:
            rendered = connection.get(spec.name, **arguments)
        except (MissingArgumentsError, UnknownArgumentsError) as error:
            raise UsageError(f"{error}\n{_how_to_call(connection.name, spec)}") from None
        return PromptConversation.of(rendered)

    def _complete(self, argv: list[str]) -> None:
        options = self._parsers["complete"].parse_args(argv)
        context = parse_arguments(options.context, self._namespace(), cwd=Path(os.getcwd()))
        connection, spec = self._resolve(options.reference)
        if spec.argument(options.argument) is None:
            raise UsageError(
                f"prompt {spec.name!r} has no argument {options.argument!r}\n{_how_to_call(connection.name, spec)}"
            )
        result = connection.complete(spec.name, options.argument, options.prefix, **context)
        if not result.values:
            print(f"No suggestions for {options.argument}={options.prefix!r}.")
            return
        print("\n".join(result.values))
        more = (result.total or len(result.values)) - len(result.values)
        if result.has_more or more > 0:
            print(f"… and {more if more > 0 else 'more'} more")

    def _help(self, argv: list[str]) -> None:
        options = self._parsers["help"].parse_args(argv)
        if options.subcommand is None:
            # magic_arguments prefixes the usage with a reST "::" line, meant for %mcp?; drop it here.
            print(inspect.cleandoc(self.mcp.__doc__ or "").removeprefix("::").strip())
        elif options.subcommand in self._parsers:
            self._parsers[options.subcommand].print_help()
        elif options.subcommand in DELEGATED_SUBCOMMANDS:
            module, function, summary = DELEGATED_SUBCOMMANDS[options.subcommand]
            print(f"%mcp {options.subcommand}: {summary}\n")
            print(inspect.cleandoc(getattr(importlib.import_module(module), function).__doc__ or ""))
        else:
            raise UsageError(f"no subcommand {options.subcommand!r}; %mcp help lists them")

    def _namespace(self) -> dict[str, Any]:
        shell = self.shell
        return shell.user_ns if shell is not None else {}

    def _resolve(self, reference: str) -> tuple[Any, PromptSpec]:
        try:
            return self.pool.resolve(reference)
        except UnknownPromptError as error:
            server = reference.partition(":")[0] if ":" in reference else None
            listing = f"%mcp prompts {server}" if server else "%mcp prompts"
            raise UsageError(f"{error} ({listing} lists them)") from None


def _split_pair(text: str, separator: str, option: str, shape: str) -> tuple[str, str]:
    key, found, value = text.partition(separator)
    if not found or not key.strip():
        raise UsageError(f"{option} takes {shape}, got {text!r}")
    return key.strip(), value.strip()


def _how_to_call(server: str, spec: PromptSpec) -> str:
    """A usage line for a prompt, with each argument's description."""
    call = " ".join(
        [f"%mcp get {server}:{spec.name}"] + [f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in spec.arguments]
    )
    lines = [f"Call it like: {call}"]
    for arg in spec.arguments:
        detail = arg.description or arg.title or ""
        lines.append(f"  {arg.name}{_optional_note(arg)}{': ' + detail if detail else ''}")
    return "\n".join(lines)


def _optional_note(arg: PromptArgument) -> str:
    if arg.required:
        return ""
    return " (optional)" if arg.default is None else f" (optional, default: {arg.default!r})"
