"""`mcp-notebook-lsp`: the language server, started by an editor over stdio.

Only the standard library's argparse and re are imported up front (not even
typing, logging or pathlib): `--help` and a bad option stay instant; the
settings, the configuration files, pygls and the MCP SDK come once the options
are read.
"""

from __future__ import annotations

import argparse
import sys

from mcp_notebook.command_line import HelpFormatter
from mcp_notebook.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing would make `--help` slower
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import NoReturn

    from mcp_notebook.config import ServerConfig

    from .settings import BridgeSettings

__all__ = ["create_parser", "main"]

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

EXAMPLES = """\
Editors start this program and talk LSP with it over stdin/stdout. Type "/" in
a markdown or plain-text document to pick an MCP prompt; use the "Render
prompt" code action (or the mcpNotebook.renderPrompt command) to replace the
slash line with the rendered prompt.

examples:
  mcp-notebook-lsp                                 # servers from your MCP config files, and running kernels
  mcp-notebook-lsp --config ./mcp.json --no-default-config --no-kernels
  mcp-notebook-lsp --file-types '*' --trigger '//'
  mcp-notebook-lsp --tcp 2087 --log-level debug       # debug: serve one editor over a socket
"""


class _Parser(argparse.ArgumentParser):
    """Errors in one line: editors show the server's stderr in a narrow log, if at all.

    A misspelled option or choice ends that line with what to type (`mcp_notebook.command_line`).
    """

    typed: Sequence[str] | None = None  # the command line being parsed (None: sys.argv)

    def error(self, message: str) -> NoReturn:
        from mcp_notebook.command_line import correction_for, options_of

        hint = ""
        typed = sys.argv[1:] if self.typed is None else self.typed
        if (fix := correction_for(message, options_of(self), typed)) is not None:
            hint = f"; {fix.hint(self.prog, typed)}"
        _fail(f"{message} (see {self.prog} --help){hint}")


def _fail(message: str) -> NoReturn:
    print(f"mcp-notebook-lsp: error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in _LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{value!r} is not one of {', '.join(_LOG_LEVELS)} (any case)")
    return level


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number (0-65535; 0 picks a free one)")
    return port


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number > 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    return number


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


_path.__name__ = "path"  # as argparse names the type in an error


def create_parser() -> _Parser:
    parser = _Parser(
        prog="mcp-notebook-lsp",
        description="MCP prompts as / slash commands in any LSP editor (completion, hover, diagnostics, render).",
        epilog=EXAMPLES,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        type=_path,
        metavar="PATH",
        help="an MCP configuration file (mcpServers / servers); repeat for several; later files win",
    )
    parser.add_argument(
        "--no-default-config",
        action="store_true",
        help="read only --config files, not Claude Desktop, Cursor, VS Code, Claude Code or project mcp.json",
    )
    parser.add_argument(
        "--cwd", type=_path, help="the project folder for project config files (default: the editor's workspace root)"
    )
    parser.add_argument("--no-kernels", action="store_true", help="do not offer the prompts of running kernels")
    parser.add_argument(
        "--runtime-dir", type=_path, help="where kernels leave connection files (default: Jupyter's runtime dir)"
    )
    parser.add_argument(
        "--kernel-poll", type=_positive, default=1.0, metavar="SECONDS", help="how often to look for kernels"
    )
    parser.add_argument("--trigger", default="/", help="what starts a slash command (default: /)")
    parser.add_argument(
        "--file-types",
        default="markdown,plaintext",
        metavar="IDS",
        help="comma-separated LSP language ids to serve, or '*' for every document (default: markdown,plaintext)",
    )
    parser.add_argument("--images", choices=["placeholder", "data-uri"], default="placeholder")
    parser.add_argument("--max-items", type=int, default=100, help="slash commands per completion answer")
    parser.add_argument("--magics", action="store_true", help="list kernels' magic prompts in the / menu too")
    parser.add_argument(
        "--timeout", type=_positive, default=30.0, help="seconds to wait for a server to start or answer"
    )
    parser.add_argument(
        "--health-interval",
        type=_positive,
        default=5.0,
        help="seconds between checks that HTTP servers (kernels) are still there; stdio servers are noticed at once",
    )
    parser.add_argument("--log-file", type=_path, help="write logs here instead of stderr")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=_log_level,
        metavar="LEVEL",
        help="debug, info, warning (the default) or error, in any case",
    )
    parser.add_argument(
        "--tcp",
        type=_port,
        metavar="PORT",
        help="serve one editor over TCP on 127.0.0.1:PORT instead of stdio, to debug (0: any free port, printed)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address --tcp listens on (default: 127.0.0.1)")
    # Some editors' generic clients add this; stdio is the default transport anyway.
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    return parser


def _settings(args: argparse.Namespace) -> BridgeSettings:
    """The settings the options give; a bad one ends the program with one line saying which and why."""
    from .settings import ALL_FILE_TYPES, parse_setting, to_settings

    file_types: object = (
        ALL_FILE_TYPES
        if args.file_types.strip() == ALL_FILE_TYPES
        else [t.strip() for t in args.file_types.split(",") if t.strip()]
    )
    values = {}
    for option, key, value in (
        ("--trigger", "trigger", args.trigger),
        ("--file-types", "fileTypes", file_types or None),
        ("--max-items", "maxItems", args.max_items),
        ("--images", "images", args.images),
        ("--magics", "magics", args.magics),
    ):
        try:
            values[key] = parse_setting(key, value)
        except ValueError as error:
            _fail(f"{option} {error}")
    return to_settings(values)[0]


def _check_config_files(paths: Sequence[Path]) -> None:
    """Read the files named with --config once at start: a bad one is one line on stderr, and exit 2."""
    from mcp_notebook.config import load_server_configs
    from mcp_notebook.exceptions import ConfigError

    try:
        load_server_configs(paths, include_defaults=False)
    except ConfigError as error:
        _fail(str(error))


def main(argv: Sequence[str] | None = None) -> int:
    parser = create_parser()
    parser.typed = None if argv is None else list(argv)
    args = parser.parse_args(argv)
    settings = _settings(args)
    if args.config:
        _check_config_files(args.config)
    import logging
    from pathlib import Path

    # stdout carries the LSP messages: logs go to stderr (editors show it) or to a file.
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(
        level=args.log_level, handlers=[handler], format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    # pygls and the MCP SDK are imported only now, so --help stays instant.

    from lsprotocol import types

    from mcp_notebook.catalog.kernels import KernelWatcher
    from mcp_notebook.catalog.pool import ClientPool
    from mcp_notebook.config import load_trusted
    from mcp_notebook.naming import command_server_names

    from .server import create_server
    from .trust_prompt import TRUST_COMMAND, ProjectTrust

    pool = ClientPool(connect_timeout=args.timeout, request_timeout=args.timeout, health_interval=args.health_interval)
    watchers: list[KernelWatcher] = []

    configured: dict[str, object] = {}

    def apply(configs: dict[str, ServerConfig], untrusted: Mapping[str, tuple[str, str]]) -> None:
        named = command_server_names(configs)
        configured.clear()
        configured.update(named)
        pool.set_servers(named)
        pool.set_untrusted(untrusted)

    async def on_start() -> None:
        root = args.cwd or (Path(server.workspace.root_path) if server.workspace.root_path else None)
        trust.configure(lambda: load_trusted(list(args.config), root=root, include_defaults=not args.no_default_config))
        await pool.prepare()
        problems = await trust.refresh()
        for problem in problems:
            server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, str(problem)))
        if not args.no_kernels:
            watcher = KernelWatcher(
                lambda kernels: pool.set_servers(kernels, group="kernels"),
                directory=args.runtime_dir,
                interval=args.kernel_poll,
                taken=configured.keys,
            )
            watchers.append(watcher)
            watcher.start()

    async def on_stop() -> None:
        await trust.aclose()
        for watcher in watchers:
            await watcher.aclose()
        await pool.aclose()

    server = create_server(pool, settings, on_start=on_start, on_stop=on_stop)
    trust = ProjectTrust(server, apply)

    @server.command(TRUST_COMMAND)
    async def ask_about_project_files(*_: object) -> None:
        """The menu's "not trusted" item: read the files again, and ask about each untrusted one."""
        await trust.refresh(ask_again=True)

    if args.tcp is not None:
        server.start_tcp(args.host, args.tcp)
    else:
        server.start_io()
    return 0
