"""Kernel connection files: how a running kernel's MCP server can be found.

A kernel that serves its prompts over HTTP writes one small JSON file into the
Jupyter runtime directory (`mcp-notebook-kernel-<kernel id>.json`, mode 0600,
since it holds a bearer token) and removes it when it stops. Editors and other
tools list those files to find live kernels; files left behind by a kernel that
crashed are recognised by their dead `pid` and skipped.

    {"version": 1, "url": "http://127.0.0.1:51234/mcp", "token": "…",
     "kernel_id": "3f2a…", "notebook_path": "/home/ada/analysis.ipynb",
     "pid": 4242, "created": 1767225600.0}

A kernel whose runtime directory is not the default one (`JUPYTER_RUNTIME_DIR`
set for the kernel, which clients started elsewhere do not inherit) also
leaves a pointer to its file in the user's state directory
(`$MCP_NOTEBOOK_STATE_DIR`, else `$XDG_STATE_HOME/mcp-notebook`, else
`~/.local/state/mcp-notebook`; `~/Library/Application Support/mcp-notebook` on
macOS, `%LOCALAPPDATA%\\mcp-notebook` on Windows), under `kernels/`. Listing
the default directory also follows those pointers, so `mcp-notebook connect
--latest` and the editor bridge find such kernels from any shell.

Pure standard library, and `jupyter_core` for the runtime directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .owned_files import write_json

__all__ = [
    "CACHE_DIR_ENV",
    "CONNECTION_FILE_PREFIX",
    "STATE_DIR_ENV",
    "KernelConnection",
    "connection_file_name",
    "default_cache_dir",
    "default_runtime_dir",
    "is_default_runtime_dir",
    "is_process_alive",
    "latest_kernel_connection",
    "list_kernel_connections",
    "read_connection_file",
    "register_connection_file",
    "remove_connection_file",
    "runtime_dir",
    "state_dir",
    "write_connection_file",
]

CONNECTION_FILE_PREFIX = "mcp-notebook-kernel-"
_SUFFIX = ".json"
_FORMAT_VERSION = 1
STATE_DIR_ENV = "MCP_NOTEBOOK_STATE_DIR"
_POINTERS = "kernels"


@dataclass(frozen=True, slots=True)
class KernelConnection:
    """Where a kernel's MCP server listens, and which kernel it belongs to."""

    url: str
    token: str | None
    kernel_id: str
    notebook_path: str | None
    pid: int
    created: float
    # The connection file this was read from (or written to).
    path: str

    @property
    def short_id(self) -> str:
        """The first eight characters of the kernel id, enough to tell kernels apart."""
        return self.kernel_id[:8]


def runtime_dir() -> Path:
    """The Jupyter runtime directory, where kernels leave their connection files (`$JUPYTER_RUNTIME_DIR` when set)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def default_runtime_dir() -> Path:
    """The runtime directory of a process without `$JUPYTER_RUNTIME_DIR`: where a client looks by default."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "runtime"


def state_dir() -> Path:
    """The user's mcp-notebook state directory, where kernels in other runtime directories leave pointers."""
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "mcp-notebook"


def is_default_runtime_dir(folder: Path) -> bool:
    """Whether `folder` is the runtime directory clients look in by default."""
    try:
        return folder.resolve() == default_runtime_dir().resolve()
    except OSError:
        return False


def _pointer_path(connection_file: Path) -> Path:
    return state_dir() / _POINTERS / connection_file.name


def register_connection_file(path: Path | str) -> Path | None:
    """Leave a pointer to a connection file outside the default runtime directory; its path, or None.

    Nothing is written for a file in the default directory (clients look there anyway).
    """
    target = Path(path).absolute()
    if is_default_runtime_dir(target.parent):
        return None
    pointer = _pointer_path(target)
    pointer.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_json(pointer, {"version": _FORMAT_VERSION, "connection_file": str(target)})
    return pointer


def _pointed_files() -> list[Path]:
    """The connection file of every pointer in the state directory that names one."""
    folder = state_dir() / _POINTERS
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found: list[Path] = []
    for name in names:
        if not (name.startswith(CONNECTION_FILE_PREFIX) and name.endswith(_SUFFIX)):
            continue
        try:
            with open(folder / name, encoding="utf-8") as handle:
                data: Any = json.load(handle)
        except (OSError, ValueError):
            continue
        target = data.get("connection_file") if isinstance(data, dict) else None
        # A pointer names a connection file of the same name, never any other file.
        if isinstance(target, str) and os.path.isabs(target) and Path(target).name == name:
            found.append(Path(target))
    return found


def connection_file_name(kernel_id: str) -> str:
    """The file name a kernel's connection file has: `mcp-notebook-kernel-<id>.json`."""
    if not kernel_id or any(sep in kernel_id for sep in ("/", "\\", "\0")) or kernel_id in (".", ".."):
        raise ValueError(f"not a usable kernel id: {kernel_id!r}")
    return f"{CONNECTION_FILE_PREFIX}{kernel_id}{_SUFFIX}"


def write_connection_file(
    *,
    url: str,
    token: str | None,
    kernel_id: str,
    notebook_path: str | None = None,
    pid: int | None = None,
    created: float | None = None,
    directory: Path | str | None = None,
) -> Path:
    """Publish a kernel's MCP endpoint; returns the file's path.

    The write is atomic (readers see the old file or the new one, never half of
    one) and the file is readable by its owner only, because it holds a token.
    `pid` defaults to this process and `created` to now.
    """
    folder = Path(directory) if directory is not None else runtime_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = folder / connection_file_name(kernel_id)
    payload = {
        "version": _FORMAT_VERSION,
        "url": url,
        "token": token,
        "kernel_id": kernel_id,
        "notebook_path": notebook_path,
        "pid": os.getpid() if pid is None else pid,
        "created": time.time() if created is None else created,
    }
    write_json(target, payload)
    return target


def remove_connection_file(path: Path | str) -> None:
    """Remove a connection file, and its pointer if it has one; a file that is already gone is fine."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    target = Path(path).absolute()
    pointer = _pointer_path(target)
    try:
        with open(pointer, encoding="utf-8") as handle:
            data: Any = json.load(handle)
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("connection_file") == str(target):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pointer)


def read_connection_file(path: Path | str) -> KernelConnection | None:
    """The connection a file describes, or None when the file is unreadable or malformed."""
    try:
        with open(path, encoding="utf-8") as handle:
            data: Any = json.load(handle)
    except (OSError, ValueError):
        return None
    return _to_connection(data, str(path))


def _to_connection(data: Any, path: str) -> KernelConnection | None:
    if not isinstance(data, dict):
        return None
    url, token, kernel_id = data.get("url"), data.get("token"), data.get("kernel_id")
    notebook_path, pid, created = data.get("notebook_path"), data.get("pid"), data.get("created")
    if not isinstance(url, str) or not url or not isinstance(kernel_id, str) or not kernel_id:
        return None
    if token is not None and not isinstance(token, str):
        return None
    if notebook_path is not None and not isinstance(notebook_path, str):
        return None
    # bool is an int subclass; a pid of True is not a pid.
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if not isinstance(created, int | float) or isinstance(created, bool):
        return None
    return KernelConnection(
        url=url,
        token=token,
        kernel_id=kernel_id,
        notebook_path=notebook_path,
        pid=pid,
        created=float(created),
        path=path,
    )


def is_process_alive(pid: int) -> bool:
    """True while a process with this id exists (on any user's account)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _is_windows_process_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, it just belongs to someone else
        return True
    except OSError:
        return False
    return True


def _is_windows_process_alive(pid: int) -> bool:
    # os.kill(pid, 0) would terminate the process on Windows; ask the kernel32 API instead.
    import ctypes

    process_query_limited_information = 0x1000
    still_active = 259
    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
    handle = kernel32.OpenProcess(process_query_limited_information, False, pid)
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return bool(code.value == still_active)
    finally:
        kernel32.CloseHandle(handle)


def list_kernel_connections(directory: Path | str | None = None) -> list[KernelConnection]:
    """Every live kernel's connection, newest first.

    Without `directory`: the runtime directory, and the kernels in other
    runtime directories that left a pointer in the state directory. Malformed
    files are skipped; so are stale ones, whose process is gone (a crashed
    kernel cannot remove its file). A missing directory means no kernels.
    """
    folder = Path(directory) if directory is not None else runtime_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    candidates = [folder / name for name in names if name.startswith(CONNECTION_FILE_PREFIX) and name.endswith(_SUFFIX)]
    if directory is None:
        candidates += _pointed_files()
    found: dict[str, KernelConnection] = {}
    for path in candidates:
        connection = read_connection_file(path)
        if connection is None or not is_process_alive(connection.pid):
            continue
        found.setdefault(os.path.abspath(connection.path), connection)
    return sorted(found.values(), key=lambda c: (c.created, c.kernel_id), reverse=True)


def latest_kernel_connection(directory: Path | str | None = None) -> KernelConnection | None:
    """The most recently started live kernel's connection, if any."""
    connections = list_kernel_connections(directory)
    return connections[0] if connections else None


CACHE_DIR_ENV = "MCP_NOTEBOOK_CACHE_DIR"


def default_cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """The user's cache folder of mcp-notebook (the notebook index, the editors' stored prompt lists):
    `$MCP_NOTEBOOK_CACHE_DIR`, else `$XDG_CACHE_HOME/mcp-notebook`, else `~/.cache/mcp-notebook`."""
    if environ.get(CACHE_DIR_ENV):
        return Path(environ[CACHE_DIR_ENV]).expanduser()
    base = Path(environ["XDG_CACHE_HOME"]).expanduser() if environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "mcp-notebook"
