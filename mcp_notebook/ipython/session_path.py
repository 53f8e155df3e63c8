"""Which notebook this kernel belongs to now, as the Jupyter server that started it says.

jupyter-server starts a notebook's kernel with `JPY_SESSION_NAME` set to the
notebook's path, once: when JupyterLab renames the notebook (its first save
renames "Untitled.ipynb"), the variable keeps the old name. The server's
sessions API (`GET /api/sessions`) always has the current path, so the kernel
asks it, with its own kernel id.

The kernel finds its server through the file every Jupyter server writes into
the runtime directory, `jpserver-<pid>.json` (its URL, token and root
folder; readable by the user only): the one whose `pid` is the kernel's
parent (`JPY_PARENT_PID`, set by jupyter_client) is asked first. Pure
standard library, so that it works whichever environment the server runs in.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..discovery import is_process_alive, runtime_dir

__all__ = ["JupyterServerInfo", "SessionLookup", "find_servers", "session_notebook"]

log = logging.getLogger(__name__)

_TIMEOUT = 5.0  # seconds; a loopback request to a Jupyter server answers in milliseconds


@dataclass(frozen=True, slots=True)
class JupyterServerInfo:
    """A running Jupyter server, from its `jpserver-<pid>.json`."""

    url: str  # ends in '/', base URL included
    token: str
    root_dir: Path
    pid: int


def _read_server_file(path: Path) -> JupyterServerInfo | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    url, token, root, pid = data.get("url"), data.get("token", ""), data.get("root_dir"), data.get("pid")
    if not (isinstance(url, str) and isinstance(token, str) and isinstance(root, str) and isinstance(pid, int)):
        return None
    return JupyterServerInfo(url=url if url.endswith("/") else url + "/", token=token, root_dir=Path(root), pid=pid)


def find_servers(folder: Path | None = None) -> list[JupyterServerInfo]:
    """The running Jupyter servers that left a `jpserver-*.json` in the runtime directory, the kernel's parent first."""
    folder = folder if folder is not None else runtime_dir()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = [
        info
        for name in names
        if name.startswith("jpserver-") and name.endswith(".json")
        if (info := _read_server_file(folder / name)) is not None and is_process_alive(info.pid)
    ]
    # jupyter_client names the server that launched the kernel; the parent process is the next best guess
    # (the same, unless a wrapper script started the kernel).
    named = os.environ.get("JPY_PARENT_PID", "")
    first = [int(named)] if named.isdigit() else []
    rank = {pid: place for place, pid in enumerate([*first, os.getppid()])}
    return sorted(found, key=lambda info: rank.get(info.pid, len(rank)))


def _sessions(server: JupyterServerInfo) -> list[Any]:
    request = urllib.request.Request(f"{server.url}api/sessions")
    # A JupyterHub single-user server takes the hub's API token, which its kernels inherit.
    token = server.token or os.environ.get("JUPYTERHUB_API_TOKEN", "")
    if token:
        request.add_header("Authorization", f"token {token}")
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as answer:
        data: Any = json.load(answer)
    return data if isinstance(data, list) else []


@dataclass(frozen=True, slots=True)
class SessionLookup:
    """What the server said: `found` is False when no server knows this kernel (then `path` is None)."""

    found: bool
    path: Path | None = None


def session_notebook(kernel_id: str, folder: Path | None = None) -> SessionLookup:
    """The notebook path of the session whose kernel is `kernel_id`, asking each Jupyter server in turn.

    The path is absolute (the server's root folder joined with the session's
    path); it may not exist yet while JupyterLab is between renaming the file
    and the session. `found` is False when no server answers for this kernel.
    """
    for server in find_servers(folder):
        try:
            sessions = _sessions(server)
        except (OSError, ValueError) as error:  # a server that is gone, or that refuses the token
            log.debug("asking %s for this kernel's session failed: %s", server.url, error)
            continue
        for session in sessions:
            kernel = session.get("kernel") if isinstance(session, dict) else None
            if not isinstance(kernel, dict) or kernel.get("id") != kernel_id:
                continue
            path = session.get("path")
            if not isinstance(path, str) or not path.endswith(".ipynb"):
                return SessionLookup(found=True)  # a console's session, or a file that is not a notebook
            relative = PurePosixPath(path.lstrip("/"))
            if ".." in relative.parts:
                return SessionLookup(found=True)
            with contextlib.suppress(OSError):
                return SessionLookup(found=True, path=(server.root_dir.expanduser() / relative).resolve())
            return SessionLookup(found=True)
    return SessionLookup(found=False)
