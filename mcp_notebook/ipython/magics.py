"""The `%mcp` line magic: MCP servers' prompts in IPython.

One magic with subcommands, each a `Subcommand` of the table `SUBCOMMANDS`:
its parser gives `%mcp SUB --help` (the same as `%mcp help SUB`), its run
function does the work. Talking to servers (`servers`, `connect`,
`disconnect`, `prompts`, `get`, `complete`, `skills`, `skill`) happens here; the widgets
(`form`, `picker`) and serving this kernel (`serve`, `stop`, `unpublish`)
are imported on first use, keeping `%load_ext` light. `%mcp?` prints the
overview with examples. Errors of the product become `UsageError`s that say
what to do; Ctrl-C cancels the request in flight.
"""

from __future__ import annotations

import inspect
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ..config import ServerConfig
from ..exceptions import (
    ConfigError,
    MCPNotebookError,
    MissingArgumentsError,
    UnknownArgumentsError,
    UnknownPromptError,
    UnknownSkillError,
)
from ..models import PromptArgument, PromptSpec
from ..naming import suggest_names
from . import subcommands as parsers
from .arguments import parse_arguments, split_line
from .display import PromptConversation, PromptTable, ServerRow, ServerTable
from .servers import TRUST_HINT, ServerPool
from .subcommands import Subcommand, SubcommandParser

if TYPE_CHECKING:
    from .skill_views import SkillTable, SkillView

__all__ = ["SUBCOMMANDS", "MCPMagics"]


@magics_class
class MCPMagics(Magics):
    """`%mcp`: list, render and complete MCP prompts from the servers in your MCP configuration."""

    def __init__(self, shell: Any, pool: ServerPool | None = None) -> None:
        super().__init__(shell)
        self.pool = pool if pool is not None else ServerPool()
        # Built once: parsing is the only use on a line, and Tab completion reads their options.
        self.parsers: dict[str, SubcommandParser] = {name: sub.parser() for name, sub in SUBCOMMANDS.items()}

    @magic_arguments()  # type: ignore[no-untyped-call, untyped-decorator]
    @argument(  # type: ignore[no-untyped-call, untyped-decorator]
        "subcommand",
        nargs="?",
        help="servers | connect | disconnect | prompts | get | complete | skills | skill | form | picker | help"
        " | trust | serve | stop | unpublish | check (%%mcp help lists them)",
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
          %mcp skills [SERVER ...]                     the skills of connected servers
          %mcp skill docs:pdf-processing [PATH]        a skill's SKILL.md rendered, its files
          %mcp form docs:code_review                   fill the arguments in a form (%mcp picker: browse)
          %mcp disconnect [SERVER]                     close connections
          %mcp trust                                   start the servers of this project's .mcp.json
          %mcp serve                                   serve this kernel's %%prompt cells (%mcp stop)
          %mcp SUBCOMMAND --help                       details and more examples

        Tab completes subcommands, SERVER:PROMPT, argument names and the values the
        server suggests, @variables and @file: paths. Ctrl-C cancels a request in flight.
        """
        words = split_line(line)
        name, argv = (words[0], words[1:]) if words else ("help", [])
        subcommand = SUBCOMMANDS.get(name)
        if subcommand is None:
            hint = suggest_names(name, list(SUBCOMMANDS))
            raise UsageError(
                f"%mcp has no subcommand {name!r}{f'; did you mean {hint[0]}?' if hint else ''} "
                f"(subcommands: {', '.join(SUBCOMMANDS)}; %mcp? explains)"
            )
        if argv[:1] in (["-h"], ["--help"]):
            # Answered here, so that asking for help never imports what runs the subcommand.
            self.parsers[name].print_help()
            return None
        try:
            return subcommand.run(self, argv)
        except (UnknownPromptError, MissingArgumentsError, UnknownArgumentsError):
            raise  # already turned into UsageError where the context is known
        except ConfigError as error:  # e.g. no server of that name: this kernel's own may be what was meant
            from .widgets import own_prompts_hint

            raise UsageError(f"{error}{own_prompts_hint(self.shell)}") from None
        except MCPNotebookError as error:
            raise UsageError(str(error)) from None

    # -- subcommands --------------------------------------------------------------------------------

    def _servers(self, argv: list[str]) -> ServerTable | None:
        options = self.parsers["servers"].parse(argv)
        if options is None:
            return None
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
        for untrusted in self.pool.untrusted:
            for name, what in untrusted.servers:
                untrusted_config = ServerConfig(name=name, command=what, source=str(untrusted.path))
                rows.append(ServerRow(config=untrusted_config, status="not trusted"))
        notes = [f"skipped: {error}" for error in self.pool.config_errors]
        if self.pool.untrusted:
            notes.append(f"not trusted: {', '.join(str(u.path) for u in self.pool.untrusted)}. {TRUST_HINT}")
        return ServerTable(rows=rows, notes=notes)

    def _trust(self, argv: list[str]) -> None:
        options = self.parsers["trust"].parse(argv)
        if options is None:
            return None
        from ..trust import TrustStore

        path = Path(options.path).expanduser().absolute() if options.path else None
        if options.revoke:
            if path is None:
                raise UsageError("%mcp trust --revoke needs the file: %mcp trust --revoke PATH")
            print(f"Revoked {path}." if TrustStore().revoke(path) else f"{path} was not trusted.")
            self.pool.reload()
            return None
        trusted = self.pool.trust(path)
        if not trusted:
            where = f"{path} is not a project MCP configuration found from here" if path else "Nothing to trust"
            print(f"{where}: every project MCP configuration file found is trusted, or there is none.")
            return None
        for untrusted in trusted:
            print(f"Trusted {untrusted.path} as it was shown. Its servers: {untrusted.describe()}")

    def _connect(self, argv: list[str]) -> None:
        options = self.parsers["connect"].parse(argv)
        if options is None:
            return None
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
        options = self.parsers["disconnect"].parse(argv)
        if options is None:
            return None
        if options.name is not None and options.name not in self.pool.connections():
            raise UsageError(
                f"{options.name!r} is not connected (connected: {', '.join(self.pool.connected()) or 'none'})"
            )
        closed = self.pool.disconnect(options.name)
        print(f"Disconnected {', '.join(closed)}." if closed else "Nothing was connected.")

    def _prompts(self, argv: list[str]) -> PromptTable | None:
        options = self.parsers["prompts"].parse(argv)
        if options is None:
            return None
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
        # The words after the prompt are NAME=VALUE, read by parse_arguments (argparse would take a value
        # such as -1 for an option); the parser only writes the help.
        if self.parsers["get"].asks_for_help(argv):
            self.parsers["get"].print_help()
            return None
        reference, *tokens = argv
        arguments = parse_arguments(tokens, self._namespace(), cwd=Path(os.getcwd()))
        connection, spec = self._resolve(reference)
        try:
            rendered = connection.get(spec.name, **arguments)
        except MissingArgumentsError as error:
            command = f"{connection.name}:{spec.name}"
            call = shlex.join(["%mcp", "get", command, *tokens])
            raise UsageError(_with_descriptions(error.how_to_call(command, call), spec, error.missing)) from None
        except UnknownArgumentsError as error:
            raise UsageError(f"{error}\n{_how_to_call(connection.name, spec)}") from None
        return PromptConversation.of(rendered)

    def _complete(self, argv: list[str]) -> None:
        options = self.parsers["complete"].parse(argv)
        if options is None:
            return None
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

    def _skills(self, argv: list[str]) -> SkillTable | None:
        options = self.parsers["skills"].parse(argv)
        if options is None:
            return None
        from .servers import why_no_skills
        from .skill_views import SkillTable

        names = options.servers or sorted(self.pool.connected())
        if not names:
            raise UsageError(
                "No MCP server is connected: name one (%mcp skills SERVER) or connect one first "
                "(%mcp connect NAME -- COMMAND; %mcp servers lists the configured ones)."
            )
        for name in names:
            self.pool.config(name)
        listings, unavailable = {}, {}
        for name, listing in self.pool.skill_listings(names).items():
            if isinstance(listing, MCPNotebookError):
                unavailable[name] = why_no_skills(listing)
            else:
                listings[name] = listing
        return SkillTable(listings=listings, unavailable=unavailable)

    def _skill(self, argv: list[str]) -> SkillView | None:
        options = self.parsers["skill"].parse(argv)
        if options is None:
            return None
        from .skill_views import SkillView

        try:
            connection, skill = self.pool.resolve_skill(options.reference)
        except UnknownSkillError as error:
            server = options.reference.partition(":")[0] if ":" in options.reference else None
            listing = f"%mcp skills {server}" if server else "%mcp skills"
            raise UsageError(f"{error} ({listing} lists them)") from None
        return SkillView.of(connection.read_skill(skill, options.path))

    def _help(self, argv: list[str]) -> None:
        options = self.parsers["help"].parse(argv)
        if options is None:
            return
        if options.subcommand is None:
            # magic_arguments prefixes the usage with a reST "::" line, meant for %mcp?; drop it here.
            # The "positional arguments" block (for %mcp?) would repeat the list of subcommands below.
            overview = inspect.cleandoc(self.mcp.__doc__ or "").removeprefix("::")
            print(overview.split("\npositional arguments:")[0].strip())
            width = max(map(len, SUBCOMMANDS))
            print("\nsubcommands:")
            print("\n".join(f"  {name:<{width}}  {sub.summary}" for name, sub in SUBCOMMANDS.items()))
        elif options.subcommand in self.parsers:
            self.parsers[options.subcommand].print_help()
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


def _with_descriptions(message: str, spec: PromptSpec, names: Sequence[str]) -> str:
    """`message`, then a line for each of `names` that the prompt describes."""
    lines = [message]
    for name in names:
        arg = spec.argument(name)
        if arg is not None and (detail := arg.description or arg.title):
            lines.append(f"  {name}: {detail}")
    return "\n".join(lines)


def _optional_note(arg: PromptArgument) -> str:
    if arg.required:
        return ""
    return " (optional)" if arg.default is None else f" (optional, default: {arg.default!r})"


# -- the subcommands other modules implement, imported on first use -----------------------------------


def _serve(magics: MCPMagics, argv: list[str]) -> Any:
    from .kernel_server import serve_command

    return serve_command(magics.shell, argv)


def _stop(magics: MCPMagics, argv: list[str]) -> Any:
    from .kernel_server import stop_command

    return stop_command(magics.shell, argv)


def _unpublish(magics: MCPMagics, argv: list[str]) -> Any:
    from .kernel_server import unpublish_command

    return unpublish_command(magics.shell, argv)


def _form(magics: MCPMagics, argv: list[str]) -> Any:
    from .widgets import form_command

    return form_command(magics.shell, argv)


def _picker(magics: MCPMagics, argv: list[str]) -> Any:
    from .widgets import picker_command

    return picker_command(magics.shell, argv)


def _check(magics: MCPMagics, argv: list[str]) -> Any:
    from .check import check_command

    options = magics.parsers["check"].parse(argv)
    return None if options is None else check_command(magics.shell, options)


def _table(*entries: Subcommand) -> dict[str, Subcommand]:
    return {entry.name: entry for entry in entries}


# Every %mcp subcommand, in the order %mcp help and Tab list them.
SUBCOMMANDS: dict[str, Subcommand] = _table(
    Subcommand("servers", "the MCP servers %mcp knows", parsers.servers_parser, MCPMagics._servers),
    Subcommand("connect", "connect to a server by name, URL or command", parsers.connect_parser, MCPMagics._connect),
    Subcommand("disconnect", "close connections", parsers.disconnect_parser, MCPMagics._disconnect),
    Subcommand("prompts", "the prompts of servers, as a table", parsers.prompts_parser, MCPMagics._prompts),
    Subcommand("get", "render a prompt as a conversation", parsers.get_parser, MCPMagics._get),
    Subcommand("complete", "suggestions for a prompt's argument", parsers.complete_parser, MCPMagics._complete),
    Subcommand("skills", "the skills of servers, as a table", parsers.skills_parser, MCPMagics._skills),
    Subcommand("skill", "show a skill's SKILL.md and files, or one file", parsers.skill_parser, MCPMagics._skill),
    Subcommand("help", "the overview, or one subcommand's help", parsers.help_parser, MCPMagics._help),
    Subcommand("trust", "start a project's configured servers", parsers.trust_parser, MCPMagics._trust),
    Subcommand("serve", "serve this kernel's prompts over MCP", parsers.serve_parser, _serve),
    Subcommand("stop", "stop serving this kernel's prompts", parsers.stop_parser, _stop),
    Subcommand("unpublish", "withdraw a %%prompt prompt", parsers.unpublish_parser, _unpublish),
    Subcommand("form", "fill in a prompt's arguments in a form", parsers.form_parser, _form),
    Subcommand("picker", "browse the prompts of connected servers", parsers.picker_parser, _picker),
    Subcommand("check", "check this notebook's prompts for every client", parsers.check_parser, _check),
)
