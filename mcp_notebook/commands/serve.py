"""`mcp-notebook serve`: the notebooks' prompts over stdio, or over Streamable HTTP with a token and workers.

Only the standard library is imported up front: the MCP SDK (over a second to
import), the service and the transports are imported once the command runs.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..settings import CLI, LIMITS, argparse_type, from_env, option
from .usage import PROG, UsageProblem, say

TYPE_CHECKING = False  # not typing's: importing typing would make `--help` slower
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from ..asgi import ServeSettings
    from ..service import ServiceSettings
    from ..settings import Option

__all__ = ["SERVE_HELP", "TOKEN_ENV", "URL_LINE_PREFIX", "add_serve_arguments", "run_serve", "serve_settings"]

TOKEN_ENV = "MCP_NOTEBOOK_TOKEN"
URL_LINE_PREFIX = "MCP_NOTEBOOK_URL="  # a machine-readable line once HTTP is served: stdout, and stderr

SERVE_HELP = """\
Serve the prompts of notebooks (files or folders, searched recursively) over
stdio, for an MCP client that starts this command, or over Streamable HTTP.
Saving a notebook reloads it and tells connected clients (list_changed).
Logs and the summary go to stderr. Over stdio, stdout carries only MCP
messages, and serving ends when stdin closes, once the requests read are
answered; started by an MCP client (stdin not a terminal), a start that went
well writes nothing on stderr (-v: its summary), since clients log it.

examples:
  mcp-notebook serve prompts/                   # stdio, for a client config
  mcp-notebook serve prompts/ < requests.jsonl  # one JSON-RPC message a line
  mcp-notebook serve prompts/ --http            # http://127.0.0.1:<free port>/mcp
  mcp-notebook serve a.ipynb --http --port 8765 --token-file ~/.mcp-token
  mcp-notebook serve prompts/ --http --port 8765 --workers 4

With --http, stdout carries no MCP messages: once serving, the line
MCP_NOTEBOOK_URL=http://HOST:PORT/mcp is printed on stdout, for a script that
starts the server and reads its first line (and on stderr, beside the logs,
unless stdout and stderr are the same terminal or file).

With --http, a bearer token keeps other local users (and, with --allow-remote,
other machines) out: put it in a file only you can read (--token-file) or in
$MCP_NOTEBOOK_TOKEN. --token TOKEN works too, but every user of the machine can
read it in the process list, so it prints a warning.
"""

_SERVICE_OPTIONS = ("page_size", "name", "watch", "poll", "cache_dir", "cache", "skills")
_HTTP_SERVING_OPTIONS = ("workers", "allowed_hosts", "stateless", *LIMITS)
# Given only with --http: any of them without it is a mistake.
_HTTP_ONLY = ("host", "port", "token", *_HTTP_SERVING_OPTIONS)


def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    """The paths, `--http` and the options `settings.py` declares for serving, each explained."""
    serve.add_argument("paths", nargs="+", metavar="PATH", help=option("paths").help)
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP at /mcp instead of stdio")
    _add_declared(serve, "host", "port")
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help=f"with --http, require 'Authorization: Bearer TOKEN', TOKEN read from PATH (or set ${TOKEN_ENV})",
    )
    _add_declared(serve, "token")
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow --host to be an address other machines can reach"
    )
    _add_declared(serve, *_SERVICE_OPTIONS)
    serve.add_argument("-v", "--verbose", action="store_true", help="log what the server does (on stderr)")
    group = serve.add_argument_group("HTTP serving (with --http; see mcp-notebook help deployment)")
    _add_declared(group, *_HTTP_SERVING_OPTIONS)


def _add_declared(parser: argparse._ActionsContainer, *names: str) -> None:
    """The flags of options declared in `settings.py`; each is None when not given (`_given` tells)."""
    for name in names:
        declared = option(name)
        if declared.kind.name == "bool":
            action = "store_false" if declared.default is True else "store_true"
            parser.add_argument(declared.flag, dest=name, action=action, default=None, help=_cli_help(declared))
            continue
        parser.add_argument(
            declared.flag,
            dest=name,
            type=argparse_type(name),
            action="append" if declared.kind.name == "names" else "store",
            metavar=declared.metavar,
            help=_cli_help(declared) + ("; repeatable" if declared.kind.name == "names" else ""),
        )


def _cli_help(declared: Option) -> str:
    """The option's help, then its default: the value, the variable read first, or what unset means."""
    if declared.kind.name == "bool":
        return declared.off if declared.default is True and declared.off else declared.help
    default = declared.default_on(CLI)
    if default is None or default == ():
        said = declared.unset
    else:
        said = f"{default:g}" if isinstance(default, float) else str(default)
    if declared.cli_reads_env:
        said = f"${declared.env}" + (f", else {said}" if said else "")
    words = declared.flag_help or declared.help
    return f"{words} (default {said})" if said else words


def run_serve(args: argparse.Namespace) -> int:
    """Serve until stdin closes (stdio) or a signal stops the server (HTTP); returns the exit code."""
    import logging

    from ..lazy_packages import SDK_PACKAGE_INITS, defer_package_init

    # The server needs a few SDK submodules, not the whole SDK its packages' `__init__` imports.
    defer_package_init(*SDK_PACKAGE_INITS)

    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO if args.verbose else logging.WARNING, format=f"{PROG}: %(message)s"
    )
    if args.http:
        wanted, http = serve_settings(args)
        from ..transports.http import is_loopback

        if not is_loopback(http["host"]) and not args.allow_remote:
            raise UsageProblem(f"refusing to listen on {http['host']!r}: add --allow-remote to serve other machines")
        return _run_serve_http(args, wanted, http, _token(args))
    if args.token_file is not None or args.allow_remote or any(getattr(args, name) is not None for name in _HTTP_ONLY):
        # $MCP_NOTEBOOK_TOKEN is not among them: it is for --http, and a stdio server ignores it
        raise UsageProblem(
            "--host, --port, --token, --token-file, --allow-remote and the HTTP serving options need --http"
        )
    service_settings, _ = serve_settings(args)
    from ..service import NotebookService

    try:
        service = NotebookService(service_settings)
    except (FileNotFoundError, ValueError) as error:
        raise UsageProblem(str(error)) from None
    lines = service.start(meanwhile=_import_stdio_server)
    person = sys.stdin.isatty()  # a person, not an MCP client, started it
    # An MCP client logs whatever a stdio server writes on stderr, and some (Claude Code) label each line an
    # error: a start that went well says nothing there, unless asked (-v). Problems and advice are always said.
    summary = service.summary
    # Quiet: something is served and nothing is wrong.
    quiet = summary is not None and not summary.warnings and bool(service.registry.snapshot().prompts or summary.skills)
    if person or args.verbose or not quiet:
        for line in lines:
            say(line)
    if person:  # say what it waits for
        say(STDIO_WAITING)
    import anyio

    from ..transports.stdio import serve_stdio

    try:
        anyio.run(lambda: serve_stdio(service.server, tasks=[service.watch]))
    finally:
        service.close()
    return 0


def serve_settings(args: argparse.Namespace) -> tuple[ServiceSettings, dict[str, Any]]:
    """The settings `serve` was given: each flag, else (where declared so) its variable, else its default.

    Returns the service's settings and the values of the HTTP options.
    """
    from ..service import ServiceSettings

    if args.poll is not None and args.watch is False:
        raise UsageProblem("--poll says how to watch, --no-watch not to: give one of them")
    values: dict[str, Any] = {}
    for name in (*_SERVICE_OPTIONS, *_HTTP_ONLY):
        declared = option(name)
        value = getattr(args, name)
        if value is None and declared.cli_reads_env and not (name == "poll" and args.watch is False):
            try:
                value = from_env([name]).get(name)
            except ValueError as error:
                raise UsageProblem(str(error)) from None
        if value is None:
            value = declared.default_on(CLI)
        elif declared.kind.name == "names":
            value = tuple(one for given in value for one in given)
        values[name] = value
    service = ServiceSettings(paths=tuple(args.paths), **{name: values.pop(name) for name in _SERVICE_OPTIONS})
    return service, values


STDIO_WAITING = (
    "serving over stdio: waiting for an MCP client's messages on stdin (an MCP client starts this command "
    "itself: `mcp-notebook config PATH` prints its configuration; to try it by hand, `mcp-notebook list PATH` "
    "or `mcp-notebook render PATH NAME`). Ctrl-D or Ctrl-C stops it."
)


def _import_stdio_server() -> None:
    """The SDK and the server, imported while a large first scan is shared with children (most of a start)."""
    import anyio  # noqa: F401

    from ..protocol.server import create_server  # noqa: F401
    from ..transports.stdio import serve_stdio  # noqa: F401


def _run_serve_http(args: argparse.Namespace, service: ServiceSettings, http: dict[str, Any], token: str | None) -> int:
    """Bind first (a busy port is one line, before any indexing), then serve with one or more workers."""
    from dataclasses import replace

    from ..asgi import ServeSettings
    from ..transports.http import bind_socket, is_loopback, port_sharing, url_for
    from ..transports.limits import HttpLimits

    limits = HttpLimits(**{name: http[name] for name in LIMITS})
    host, workers = http["host"], http["workers"]
    try:
        sock = bind_socket(host, http["port"] or 0, shared_port=workers > 1 and port_sharing())
    except OSError as error:
        raise UsageProblem(f"cannot listen on {host}:{http['port'] or 0}: {error.strerror or error}") from None
    port = int(sock.getsockname()[1])
    url = url_for(host, port)
    serving = ServeSettings(
        service=service,
        host=host,
        port=port,
        token=token,
        token_hint=_token_hint(args) if token else None,
        allowed_hosts=http["allowed_hosts"],
        # Workers share no sessions: each request stands alone, on whichever worker gets it (docs/deployment.md).
        stateless=http["stateless"] or workers > 1,
        limits=limits,
    )
    if not is_loopback(host):
        say(f"WARNING: listening on {host}: other machines can reach these prompts")
        if not token:
            say(f"WARNING: no token: anyone who can reach this port can use it (set --token-file or {TOKEN_ENV})")

    def on_ready() -> None:
        by = f" by {workers} workers, handshake clients without sessions" if workers > 1 else ""
        say(f"serving over Streamable HTTP at {url}{by}" + (" (bearer token required)" if token else ""))
        _print_url_line(url)

    if workers > 1:
        import tempfile

        from ..transports.workers import run_workers

        with tempfile.TemporaryDirectory(prefix="mcp-notebook-workers-") as directory:
            os.environ.update(replace(serving, worker_dir=directory).to_env())
            if not run_workers(sock, workers, limits, on_ready):
                say("a worker could not start; see the messages above")
                return 1
        return 0
    return _serve_one_process(serving, sock, on_ready)


def _print_url_line(url: str) -> None:
    """`MCP_NOTEBOOK_URL=…` on stdout (with --http it carries no MCP), and beside the logs unless that is stdout too."""
    line = f"{URL_LINE_PREFIX}{url}"
    print(line, flush=True)
    try:
        same = os.path.samestat(os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno()))
    except (AttributeError, OSError, ValueError):  # streams replaced by ones without a file (a test's capture)
        same = False
    if not same:
        print(line, file=sys.stderr, flush=True)


def _serve_one_process(settings: ServeSettings, sock: socket.socket, on_ready: Callable[[], None]) -> int:
    import signal

    from ..asgi import create_app
    from ..transports.http import uvicorn_config
    from ..transports.ticks import SleepingServer

    try:
        app = create_app(settings, on_ready=on_ready)  # the summary goes to stderr, as `say` writes
    except (FileNotFoundError, ValueError) as error:
        sock.close()
        raise UsageProblem(str(error)) from None
    # uvicorn drains on SIGTERM, then raises the signal again for the previous handler: a drained
    # shutdown is a success, so that handler does nothing and the exit code is 0.
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        SleepingServer(uvicorn_config(app, settings.limits)).run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    return 0


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token: from --token-file, $MCP_NOTEBOOK_TOKEN, or (warned against) --token."""
    if args.token is not None and args.token_file is not None:
        raise UsageProblem("give the token once: --token-file or --token, not both")
    if args.token is not None:
        say(
            "WARNING: --token is visible to every user of this machine in the process list "
            f"(ps, /proc/PID/cmdline); use --token-file PATH or ${TOKEN_ENV} instead"
        )
        return args.token or None
    if args.token_file is not None:
        from pathlib import Path

        return _read_token_file(Path(args.token_file).expanduser())
    return os.environ.get(TOKEN_ENV) or None


def _token_hint(args: argparse.Namespace) -> str:
    """Where this server's token came from, as its 401 tells a client (the option, file or variable)."""
    if args.token is not None:
        return "the token given to this server's --token option"
    if args.token_file is not None:
        return f"the token in the file this server was started with (--token-file {args.token_file})"
    return f"the token in ${TOKEN_ENV}, which this server was started with"


def _read_token_file(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
        mode = path.stat().st_mode
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise UsageProblem(f"cannot read the token file {str(path)!r}: {reason}") from None
    token = text.strip()
    if not token or any(character.isspace() for character in token):
        raise UsageProblem(f"the token file {str(path)!r} must hold exactly one token, with no spaces in it")
    if os.name == "posix" and mode & 0o077:
        say(f"WARNING: the token file {str(path)!r} is readable by other users; chmod 600 it")
    return token
