"""The `mcp-notebook` command: serve notebooks as MCP prompts, list and render them, print client config.

Only the standard library is imported at module level: `--help` and
argument errors must stay instant, so the MCP SDK (over a second to import)
and the notebook sources are imported inside the command that needs them.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys

from . import settings
from .command_line import HelpFormatter
from .terminal import HELP_COLUMNS
from .version import __version__

# Not `typing.TYPE_CHECKING`: importing typing (or json, shlex, shutil, pathlib) here would make `--help` slower.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any, NoReturn

    from .asgi import ServeSettings
    from .models import PromptSpec
    from .registry import PromptRegistry
    from .service import ServiceSettings
    from .sources.folder import NotebookFolderSource

__all__ = ["main"]

PROG = "mcp-notebook"
TOKEN_ENV = "MCP_NOTEBOOK_TOKEN"
URL_LINE_PREFIX = "MCP_NOTEBOOK_URL="  # a machine-readable line once HTTP is served: stdout, and stderr
EXIT_USAGE = 2
_ARGUMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=")

if TYPE_CHECKING:
    Command = Callable[[argparse.Namespace], int]


class UsageProblem(Exception):
    """Bad input from the command line: printed as one clear message, exit code 2."""


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


# --- commands ------------------------------------------------------------------------------------------------------


def _load_quietly(paths: Sequence[str]) -> tuple[PromptRegistry, NotebookFolderSource]:
    """`_load` for one-shot commands, which report every notebook error themselves, once."""
    import logging

    sources = logging.getLogger("mcp_notebook.sources")
    propagate, sources.propagate = sources.propagate, False
    silent = logging.NullHandler()
    sources.addHandler(silent)
    try:
        return _load(paths)
    finally:
        sources.removeHandler(silent)
        sources.propagate = propagate


def _load(paths: Sequence[str]) -> tuple[PromptRegistry, NotebookFolderSource]:
    """The notebooks at `paths`, scanned once (for `list` and `render`; `serve` runs a `NotebookService`)."""
    from .registry import PromptRegistry
    from .sources.folder import NotebookFolderSource

    registry = PromptRegistry()
    try:
        source = NotebookFolderSource(list(paths), registry)
    except (FileNotFoundError, ValueError) as error:
        raise UsageProblem(str(error)) from None
    source.first_scan()
    return registry, source


def _summary(registry: PromptRegistry, source: NotebookFolderSource, *, then: str = ".") -> list[str]:
    from .sources.start_report import summary_lines

    return summary_lines(registry, source, then=then)


def run_serve(args: argparse.Namespace) -> int:
    import logging

    from .lazy_packages import SDK_PACKAGE_INITS, defer_package_init

    # The server needs a few SDK submodules, not the whole SDK its packages' `__init__` imports.
    defer_package_init(*SDK_PACKAGE_INITS)

    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO if args.verbose else logging.WARNING, format=f"{PROG}: %(message)s"
    )
    if args.http:
        wanted, http = _serve_settings(args)
        from .transports.http import is_loopback

        if not is_loopback(http["host"]) and not args.allow_remote:
            raise UsageProblem(f"refusing to listen on {http['host']!r}: add --allow-remote to serve other machines")
        return _run_serve_http(args, wanted, http, _token(args))
    if args.token_file is not None or args.allow_remote or any(getattr(args, name) is not None for name in _HTTP_ONLY):
        # $MCP_NOTEBOOK_TOKEN is not among them: it is for --http, and a stdio server ignores it
        raise UsageProblem(
            "--host, --port, --token, --token-file, --allow-remote and the HTTP serving options need --http"
        )
    service_settings, _ = _serve_settings(args)
    from .service import NotebookService

    try:
        service = NotebookService(service_settings)
    except (FileNotFoundError, ValueError) as error:
        raise UsageProblem(str(error)) from None
    for line in service.start(meanwhile=_import_stdio_server):
        _say(line)
    import anyio

    from .transports.stdio import serve_stdio

    try:
        anyio.run(lambda: serve_stdio(service.server, tasks=[service.watch]))
    finally:
        service.close()
    return 0


def _serve_settings(args: argparse.Namespace) -> tuple[ServiceSettings, dict[str, Any]]:
    """The settings `serve` was given: each flag, else (where declared so) its variable, else its default.

    Returns the service's settings and the values of the HTTP options.
    """
    from .service import ServiceSettings

    if args.poll is not None and args.watch is False:
        raise UsageProblem("--poll says how to watch, --no-watch not to: give one of them")
    values: dict[str, Any] = {}
    for name in (*_SERVICE_OPTIONS, *_HTTP_ONLY):
        declared = settings.option(name)
        value = getattr(args, name)
        if value is None and declared.cli_reads_env and not (name == "poll" and args.watch is False):
            try:
                value = settings.from_env([name]).get(name)
            except ValueError as error:
                raise UsageProblem(str(error)) from None
        if value is None:
            value = declared.default_on(settings.CLI)
        elif declared.kind.name == "names":
            value = tuple(one for given in value for one in given)
        values[name] = value
    service = ServiceSettings(paths=tuple(args.paths), **{name: values.pop(name) for name in _SERVICE_OPTIONS})
    return service, values


def _import_stdio_server() -> None:
    """The SDK and the server, imported while a large first scan is shared with children (most of a start)."""
    import anyio  # noqa: F401

    from .protocol.server import create_server  # noqa: F401
    from .transports.stdio import serve_stdio  # noqa: F401


def _run_serve_http(args: argparse.Namespace, service: ServiceSettings, http: dict[str, Any], token: str | None) -> int:
    """Bind first (a busy port is one line, before any indexing), then serve with one or more workers."""
    from dataclasses import replace

    from .asgi import ServeSettings
    from .transports.http import bind_socket, is_loopback, port_sharing, url_for
    from .transports.limits import HttpLimits

    limits = HttpLimits(**{name: http[name] for name in settings.LIMITS})
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
        _say(f"WARNING: listening on {host}: other machines can reach these prompts")
        if not token:
            _say(f"WARNING: no token: anyone who can reach this port can use it (set --token-file or {TOKEN_ENV})")

    def on_ready() -> None:
        by = f" by {workers} workers, handshake clients without sessions" if workers > 1 else ""
        _say(f"serving over Streamable HTTP at {url}{by}" + (" (bearer token required)" if token else ""))
        _print_url_line(url)

    if workers > 1:
        import tempfile

        from .transports.workers import run_workers

        with tempfile.TemporaryDirectory(prefix="mcp-notebook-workers-") as directory:
            os.environ.update(replace(serving, worker_dir=directory).to_env())
            if not run_workers(sock, workers, limits, on_ready):
                _say("a worker could not start; see the messages above")
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

    from .asgi import create_app
    from .transports.http import uvicorn_config
    from .transports.ticks import SleepingServer

    try:
        app = create_app(settings, on_ready=on_ready)  # the summary goes to stderr, as `_say` writes
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
        _say(
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
        _say(f"WARNING: the token file {str(path)!r} is readable by other users; chmod 600 it")
    return token


def _spec_record(spec: PromptSpec) -> dict[str, Any]:
    arguments = [
        {
            "name": a.name,
            "title": a.title,
            "description": a.description,
            "required": a.required,
            "default": a.default,
            "completions": list(a.completions),
        }
        for a in spec.arguments
    ]
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "arguments": arguments,
        "origin": spec.origin,
    }


def run_list(args: argparse.Namespace) -> int:
    import json

    registry, source = _load_quietly(args.paths)
    snapshot = registry.snapshot()
    if args.json:
        records = [_spec_record(spec) for spec in snapshot.prompts]
        document = {"prompts": records, "warnings": list(snapshot.warnings), "errors": dict(source.errors)}
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for spec in snapshot.prompts:
            title = f" — {spec.title}" if spec.title else ""
            print(f"{spec.name}{title}  ({spec.origin})")
            if spec.description:
                print(f"    {spec.description}")
            for arg in spec.arguments:
                need = "required" if arg.required else f"optional, default {arg.default!r}"
                about = f": {arg.description}" if arg.description else ""
                print(f"    {arg.name} ({need}){about}")
        for line in _summary(registry, source):
            print(line, file=sys.stderr)
    return 1 if source.errors else 0


def _call_line(paths: Sequence[str], spec: PromptSpec) -> str:
    import shlex

    placeholders = [f"{a.name}=<{a.name}>" if a.required else f"[{a.name}=...]" for a in spec.arguments]
    return " ".join([shlex.join([PROG, "render", *paths, spec.name]), *placeholders])


def run_render(args: argparse.Namespace) -> int:
    import shlex

    from .exceptions import MCPNotebookError, MissingArgumentsError, UnknownArgumentsError, UnknownPromptError
    from .naming import suggest_names
    from .rendering import render_prompt
    from .transcript import Layout, to_transcript

    items: list[str] = list(args.items)
    values: dict[str, str] = {}
    while items and _ARGUMENT.match(items[-1]):
        key, _, value = items.pop().partition("=")
        values.setdefault(key, value)
    if len(items) < 2:
        raise UsageProblem("render needs at least one notebook or folder, then a prompt name (see --help)")
    if (unsaid := _words_without_values(items)) is not None:
        return unsaid
    *paths, name = items
    registry, source = _load_quietly(paths)
    snapshot = registry.snapshot()
    spec = snapshot.get(name)
    try:
        if spec is None:
            raise UnknownPromptError(name, suggest_names(name, snapshot.by_name))
        rendered = render_prompt(spec, values, read_file=source.read_file)
    except MissingArgumentsError as error:
        assert spec is not None
        given = [f"{key}={value}" for key, value in reversed(values.items())]  # in the order typed
        _say(error.how_to_call(spec.name, shlex.join([PROG, "render", *paths, spec.name, *given])))
        return EXIT_USAGE
    except UnknownArgumentsError as error:
        assert spec is not None
        _say(str(error))
        _say(f"call it as: {_call_line(paths, spec)}")
        return EXIT_USAGE
    except UnknownPromptError as error:
        _say(str(error))
        _say(f"available: {', '.join(snapshot.by_name) or '(none)'}")
        for problem in source.errors.values():
            _say(f"not read, so its prompts are missing: {problem}")
        return EXIT_USAGE
    except MCPNotebookError as error:
        _say(str(error))
        return EXIT_USAGE
    layout = Layout(blocks="text", sections="message", headings="always", heading="markdown-as-sent", title="markdown")
    if text := to_transcript(rendered, layout):
        print(text, end="\n\n")
    return 0


def _words_without_values(items: list[str]) -> int | None:
    """`render PATH NAME lang`: the exit code after saying that `lang` needs `lang=…`; None if that is not it.

    A word that is no path, followed by other words, is taken for the prompt name when the
    paths before it serve such a prompt; the words after it are then arguments missing `=`.
    """
    from pathlib import Path

    cut = next((i for i, item in enumerate(items[:-1]) if not Path(item).expanduser().exists()), None)
    if not cut:  # every path exists (or the very first is missing: an error about that path)
        return None
    paths, name, words = items[:cut], items[cut], items[cut + 1 :]
    spec = _load_quietly(paths)[0].snapshot().get(name)
    if spec is None:
        return None
    known = [argument.name for argument in spec.arguments]
    for word in words:
        if _ARGUMENT.match(word):
            continue
        if word in known:
            _say(f"{word} needs a value: {word}=…")
        else:
            takes = ", ".join(f"{k}=…" for k in known) or "no arguments"
            _say(f"{word!r} is not NAME=VALUE: {name} takes {takes}")
    _say(f"call it as: {_call_line(paths, spec)}")
    return EXIT_USAGE


def _launcher() -> list[str]:
    """How clients should start this very installation of mcp-notebook."""
    import shutil
    from pathlib import Path

    beside = Path(sys.executable).parent / PROG
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which(PROG)
    return [str(Path(found).resolve())] if found else [sys.executable, "-m", "mcp_notebook"]


def _default_name(paths: Sequence[str]) -> str:
    from pathlib import Path

    first = Path(paths[0]).expanduser().resolve()
    stem = first.stem if first.suffix == ".ipynb" else first.name
    return re.sub(r"[^a-z0-9_-]+", "-", stem.lower()).strip("-") or "notebooks"


def run_config(args: argparse.Namespace) -> int:
    import json
    import shlex
    from pathlib import Path

    if args.jupyter is not None:
        return run_jupyter_config(args)
    if not args.paths:
        raise UsageProblem("config needs notebook files or folders, or --jupyter URL (see --help)")
    missing = [p for p in args.paths if not Path(p).expanduser().exists()]
    if missing:
        raise UsageProblem(f"No such notebook or folder: {', '.join(missing)}")
    name = args.name or _default_name(args.paths)
    command, *prefix = _launcher()
    serve_args = [*prefix, "serve", *(str(Path(p).expanduser().resolve()) for p in args.paths)]
    entry = {"command": command, "args": serve_args}
    print(f"# Claude Code\n{shlex.join(['claude', 'mcp', 'add', name, '--', command, *serve_args])}\n")
    vscode = {"servers": {name: {"type": "stdio", **entry}}}
    print(f"# VS Code: .vscode/mcp.json\n{json.dumps(vscode, indent=2)}\n")
    desktop = {"mcpServers": {name: entry}}
    print(
        f"# Claude Desktop (claude_desktop_config.json) and Cursor (.cursor/mcp.json)\n{json.dumps(desktop, indent=2)}"
    )
    return 0


JUPYTER_TOKEN_ENV = "JUPYTER_TOKEN"
# Where a Jupyter URL stops naming the server: the user interfaces and APIs below its base URL.
_JUPYTER_PAGES = frozenset({"lab", "tree", "notebooks", "doc", "edit", "terminals", "view", "files", "api", "login"})


def _jupyter_endpoint(url: str) -> tuple[str, str | None]:
    """The MCP endpoint of the Jupyter server `url` points into (any page of it), and the URL's `?token=`."""
    from urllib.parse import parse_qs, urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageProblem(f"--jupyter needs the http(s) URL of a Jupyter server, not {url!r}")
    token = next(iter(parse_qs(parts.query).get("token", [])), None)
    segments = [segment for segment in parts.path.split("/") if segment]
    if segments[-1:] == ["mcp"]:
        segments.pop()
    elif segments[:1] == ["hub"]:
        raise UsageProblem(f"{url} is JupyterHub's own page: give your server's URL (…/user/<name>/)")
    else:
        cut = next((i for i, segment in enumerate(segments) if segment in _JUPYTER_PAGES), len(segments))
        segments = segments[:cut]
    path = "/" + "".join(f"{segment}/" for segment in segments) + "mcp"
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), token


def run_jupyter_config(args: argparse.Namespace) -> int:
    """`config --jupyter URL`: clients that reach a Jupyter server's MCP endpoint with its token header."""
    import json
    import shlex

    url, url_token = _jupyter_endpoint(args.jupyter)
    name = args.name or "jupyter"
    if args.embed_token:
        token = url_token or os.environ.get(JUPYTER_TOKEN_ENV)
        if not token:
            raise UsageProblem(f"--embed-token needs a token: in the URL (?token=...) or in ${JUPYTER_TOKEN_ENV}")
        shell, claude, editor, cursor = (f"token {token}",) * 4
        _say("WARNING: the token is written into this configuration: keep such files out of version control")
    else:
        shell = f"token ${{{JUPYTER_TOKEN_ENV}}}"  # expanded by Claude Code when it reads its configuration
        claude, editor, cursor = shell, "token ${input:jupyter-token}", f"token ${{env:{JUPYTER_TOKEN_ENV}}}"
        hint = "the token after ?token= in the URL" if url_token else "the Jupyter server's token"
        _say(f"the configuration reads the token from ${JUPYTER_TOKEN_ENV}: export {JUPYTER_TOKEN_ENV}=<{hint}>")
    _say(f"MCP endpoint: {url}")
    command = ["claude", "mcp", "add", "--transport", "http", "--scope", "project", name, url]
    print(f"# Claude Code (writes .mcp.json)\n{shlex.join([*command, '--header', f'Authorization: {shell}'])}\n")
    project = {"mcpServers": {name: {"type": "http", "url": url, "headers": {"Authorization": claude}}}}
    print(f"# Claude Code: .mcp.json\n{json.dumps(project, indent=2)}\n")
    vscode: dict[str, Any] = {"servers": {name: {"type": "http", "url": url, "headers": {"Authorization": editor}}}}
    if not args.embed_token:
        prompt = {"type": "promptString", "id": "jupyter-token", "description": "Jupyter token", "password": True}
        vscode = {"inputs": [prompt], **vscode}
    print(f"# VS Code: .vscode/mcp.json (asks for the token once, keeps it secret)\n{json.dumps(vscode, indent=2)}\n")
    desktop = {"mcpServers": {name: {"url": url, "headers": {"Authorization": cursor}}}}
    print(f"# Cursor: .cursor/mcp.json\n{json.dumps(desktop, indent=2)}")
    return 0


def _add_jupyter_config_arguments(config: argparse.ArgumentParser) -> None:
    config.add_argument(
        "--jupyter",
        metavar="URL",
        help="configure clients of the MCP endpoint of the Jupyter server (or JupyterHub server) at URL instead",
    )
    config.add_argument(
        "--embed-token",
        action="store_true",
        help=f"with --jupyter: write the token (from the URL or ${JUPYTER_TOKEN_ENV}) into the configuration itself",
    )


# --- the parser ----------------------------------------------------------------------------------------------------

_MAIN_HELP = """\
Serve the prompts written in Jupyter notebooks to any MCP client (Claude Code,
VS Code, Cursor, ...), and check them from the command line.

A notebook cell becomes part of a prompt when its metadata says so
(metadata.mcp.prompt = "NAME") or it carries the tag prompt:NAME; {{name}}
placeholders become the prompt's arguments.
"""

_SERVE_HELP = """\
Serve the prompts of notebooks (files or folders, searched recursively) over
stdio, for an MCP client that starts this command, or over Streamable HTTP.
Saving a notebook reloads it and tells connected clients (list_changed).
Logs and the summary go to stderr. Over stdio, stdout carries only MCP
messages, and serving ends when stdin closes, once the requests read are
answered.

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

_LIST_HELP = """\
List the prompts the notebooks publish: name, title, arguments and the notebook
each comes from, then any warnings about the notebooks (on stderr). Exits with 1
when a notebook cannot be read, so it can guard a commit or a CI job.

examples:
  mcp-notebook list prompts/
  mcp-notebook list prompts/ --json | jq '.prompts[].name'
"""

_RENDER_HELP = """\
Render one prompt as a client would receive it, with arguments given as
NAME=VALUE after the prompt name. Prints each message under its role; images
and audio show as [mime/type, N bytes]. Exits with 2 when the prompt is unknown
or arguments are missing or unknown, and says how to call it.

examples:
  mcp-notebook render prompts/ summarize_cell cell=3
  mcp-notebook render analysis.ipynb explain style=short "question=What does it do?"
"""

_CONFIG_HELP = """\
Print ready-to-paste configuration that makes an MCP client start this server
over stdio for the given notebooks: the Claude Code command, VS Code's
.vscode/mcp.json, and the mcpServers JSON of Claude Desktop and Cursor. Paths
are made absolute and the command is this installation's own executable.

With --jupyter URL, configure clients of a Jupyter server's MCP endpoint
(<base_url>mcp, served by the mcp_notebook server extension) instead: any URL
of that server will do (its /lab page, a JupyterHub /user/<name>/ URL). The
token header refers to $JUPYTER_TOKEN (VS Code asks for it once), so the
token stays out of files you might commit, unless you add --embed-token.

examples:
  mcp-notebook config prompts/
  mcp-notebook config prompts/ --name team-prompts
  mcp-notebook config --jupyter 'http://127.0.0.1:8888/lab?token=...'
  mcp-notebook config --jupyter https://hub.example.org/user/alice/ --name team
"""


_CONNECT_HELP = """\
Connect an MCP client that only speaks stdio to a running kernel's server
(started in a notebook with %mcp serve). The kernel is found through its
connection file in the Jupyter runtime directory; messages are relayed over
HTTP with the kernel's token, in every protocol revision. Exits with 2 when
no such kernel serves MCP, and says which kernels do.

examples:
  mcp-notebook connect --latest
  mcp-notebook connect --kernel 3f2a9c1e
  claude mcp add my-kernel -- mcp-notebook connect --latest
"""


def run_connect(args: argparse.Namespace) -> int:
    from .kernel_proxy import main as connect

    return connect(options=args)


_DECLARED_FLAGS = frozenset(declared.flag for declared in settings.on(settings.CLI) if declared.kind.name != "bool")


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
            _say(f"{flag} {refusal}")
            raise SystemExit(EXIT_USAGE)
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        from .command_line import correction_for, options_of

        typed = sys.argv[1:] if _Parser.typed is None else _Parser.typed
        if (fix := correction_for(message, options_of(self), typed)) is not None:
            _say(fix.hint(PROG, typed))
        raise SystemExit(EXIT_USAGE)


def _add_command(
    commands: argparse._SubParsersAction[_Parser], name: str, summary: str, details: str, run: Command
) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=summary, description=details, formatter_class=HelpFormatter)
    parser.set_defaults(run=run)
    return parser


_SERVICE_OPTIONS = ("page_size", "name", "watch", "poll", "cache_dir", "cache")
_HTTP_SERVING_OPTIONS = ("workers", "allowed_hosts", "stateless", *settings.LIMITS)
# Given only with --http: any of them without it is a mistake.
_HTTP_ONLY = ("host", "port", "token", *_HTTP_SERVING_OPTIONS)


def _cli_help(declared: settings.Option) -> str:
    """The option's help, then its default: the value, the variable read first, or what unset means."""
    if declared.kind.name == "bool":
        return declared.off if declared.default is True and declared.off else declared.help
    default = declared.default_on(settings.CLI)
    if default is None or default == ():
        said = declared.unset
    else:
        said = f"{default:g}" if isinstance(default, float) else str(default)
    if declared.cli_reads_env:
        said = f"${declared.env}" + (f", else {said}" if said else "")
    words = declared.flag_help or declared.help
    return f"{words} (default {said})" if said else words


def _add_declared(parser: argparse._ActionsContainer, *names: str) -> None:
    """The flags of options declared in `settings.py`; each is None when not given (`_given` tells)."""
    for name in names:
        declared = settings.option(name)
        if declared.kind.name == "bool":
            action = "store_false" if declared.default is True else "store_true"
            parser.add_argument(declared.flag, dest=name, action=action, default=None, help=_cli_help(declared))
            continue
        parser.add_argument(
            declared.flag,
            dest=name,
            type=settings.argparse_type(name),
            action="append" if declared.kind.name == "names" else "store",
            metavar=declared.metavar,
            help=_cli_help(declared) + ("; repeatable" if declared.kind.name == "names" else ""),
        )


def build_parser(command: str | None = None) -> _Parser:
    """The whole command line; each subcommand's --help explains every option with examples.

    With `command`, the other subcommands may lack their options (`connect`'s come
    from the kernel proxy's module): what `main` parses, `--help` included, costs less.
    """
    parser = _Parser(prog=PROG, description=_MAIN_HELP, formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Required, but checked by `main`: argparse would say so before naming a misspelled option (`--hlep`).
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")

    serve = _add_command(commands, "serve", "serve notebooks as MCP prompts (stdio or HTTP)", _SERVE_HELP, run_serve)
    serve.add_argument("paths", nargs="+", metavar="PATH", help=settings.option("paths").help)
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
    group = serve.add_argument_group("HTTP serving (with --http; see docs/deployment.md)")
    _add_declared(group, *_HTTP_SERVING_OPTIONS)

    listing = _add_command(commands, "list", "list the prompts notebooks publish", _LIST_HELP, run_list)
    listing.add_argument("paths", nargs="+", metavar="PATH", help="notebook files or folders")
    listing.add_argument("--json", action="store_true", help="print one JSON document (prompts, warnings, errors)")

    render = _add_command(commands, "render", "render one prompt with arguments", _RENDER_HELP, run_render)
    render.add_argument(
        "items", nargs="+", metavar="PATH... NAME [ARG=VALUE ...]", help="notebooks, the prompt name, its arguments"
    )

    config = _add_command(commands, "config", "print MCP client configuration", _CONFIG_HELP, run_config)
    config.add_argument("paths", nargs="*", metavar="PATH", help="notebook files or folders to serve")
    config.add_argument("--name", help="server name in the client (default: the first path's name)")
    _add_jupyter_config_arguments(config)

    connect = _add_command(
        commands, "connect", "connect a stdio client to a running kernel's server", _CONNECT_HELP, run_connect
    )
    if command in (None, "connect"):
        from .kernel_proxy import add_connect_arguments  # standard library only until the proxy starts

        add_connect_arguments(connect)

    from .trust_command import TRUST_HELP, add_trust_arguments, run_trust

    trust = _add_command(commands, "trust", "trust a project's MCP configuration file", TRUST_HELP, run_trust)
    add_trust_arguments(trust)
    return parser


HELP_COMMANDS = ("", "serve", "list", "render", "config", "connect", "trust")  # "": `mcp-notebook --help`
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
        _say(str(problem))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
