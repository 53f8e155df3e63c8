"""`mcp-notebook config`: ready-to-paste MCP client configuration, for notebooks served over stdio or a Jupyter server.

Only the standard library is imported, and only what the command needs, once it runs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from .usage import PROG, UsageProblem, say

TYPE_CHECKING = False  # not typing's: importing typing would make `--help` slower
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["CONFIG_HELP", "JUPYTER_TOKEN_ENV", "add_config_arguments", "run_config"]

JUPYTER_TOKEN_ENV = "JUPYTER_TOKEN"
# Where a Jupyter URL stops naming the server: the user interfaces and APIs below its base URL.
_JUPYTER_PAGES = frozenset({"lab", "tree", "notebooks", "doc", "edit", "terminals", "view", "files", "api", "login"})

CONFIG_HELP = """\
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


def add_config_arguments(config: argparse.ArgumentParser) -> None:
    """The paths to serve, or the Jupyter server to reach, and the name clients know the server by."""
    config.add_argument("paths", nargs="*", metavar="PATH", help="notebook files or folders to serve")
    config.add_argument("--name", help="server name in the client (default: the first path's name)")
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
    """Print what makes each client start this server for the notebooks given (or reach `--jupyter URL`)."""
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
        say("WARNING: the token is written into this configuration: keep such files out of version control")
    else:
        shell = f"token ${{{JUPYTER_TOKEN_ENV}}}"  # expanded by Claude Code when it reads its configuration
        claude, editor, cursor = shell, "token ${input:jupyter-token}", f"token ${{env:{JUPYTER_TOKEN_ENV}}}"
        hint = "the token after ?token= in the URL" if url_token else "the Jupyter server's token"
        say(f"the configuration reads the token from ${JUPYTER_TOKEN_ENV}: export {JUPYTER_TOKEN_ENV}=<{hint}>")
    say(f"MCP endpoint: {url}")
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
