"""MCP server configuration: read the files users already have.

Supported files and their dialects (each file is read the way its own tool
reads it):

=========================================  ===============  ==========================================
file                                       servers key      variables
=========================================  ===============  ==========================================
Claude Desktop ``claude_desktop_config``   ``mcpServers``   none
Cursor ``~/.cursor/mcp.json``, project     ``mcpServers``   ``${env:VAR}``, ``${userHome}``,
``.cursor/mcp.json``                                        ``${workspaceFolder}``, ``${pathSeparator}``
VS Code ``.vscode/mcp.json``               ``servers``      ``${env:VAR}``, ``${workspaceFolder}``,
                                                            ``${userHome}``; ``inputs`` are ignored
Claude Code ``.mcp.json``                  ``mcpServers``   ``${VAR}``, ``${VAR:-default}``
project ``mcp.json``, ``$MCP_NOTEBOOK_     either           all of the above
CONFIG``, explicit paths
=========================================  ===============  ==========================================

An entry is stdio (``command``, ``args``, ``env``, ``cwd``) or HTTP (``url``,
``headers``; ``type`` ``http``/``streamable-http``, or ``sse`` for the old
HTTP+SSE transport). Entries with ``"disabled": true`` are skipped. Nothing
here imports the MCP SDK.

A project's files (the four found from the working folder or the editor's
root) start nothing until the user has trusted them as they are now
(`trust.py`); the user's own files are trusted.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .exceptions import ConfigError
from .trust import TrustStore, UntrustedConfig, content_digest

__all__ = [
    "CONFIG_ENV_VAR",
    "Loaded",
    "ServerConfig",
    "default_config_paths",
    "describe_project_file",
    "load_config_file",
    "load_server_configs",
    "load_trusted",
    "project_config_paths",
    "read_config_bytes",
    "untrusted_servers",
]

CONFIG_ENV_VAR = "MCP_NOTEBOOK_CONFIG"

Dialect = Literal["claude-desktop", "cursor", "vscode", "claude-code", "generic"]

_PROJECT_FILES = (
    (".cursor", "mcp.json"),
    (".vscode", "mcp.json"),
    (".mcp.json",),
    ("mcp.json",),
)
_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamablehttp"}
_VARIABLE = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How to reach one MCP server: a command to start (stdio) or a URL (HTTP)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None
    # The file this entry came from, for messages ("from ~/.cursor/mcp.json").
    source: str | None = None
    # True for the old two-endpoint HTTP+SSE transport (VS Code / Claude Code `"type": "sse"`).
    sse: bool = field(default=False, kw_only=True)

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """`"stdio"` when the server is a command to start, `"http"` when it is a URL."""
        return "http" if self.url is not None else "stdio"

    def describe(self) -> str:
        """A one-line summary for listings: the command line or the URL."""
        if self.url is not None:
            return f"{self.url} (SSE)" if self.sse else self.url
        return " ".join([self.command or "", *self.args]).strip()


def default_config_paths(cwd: Path | None = None) -> list[Path]:
    """Every place a user's MCP configuration may live, lowest priority first.

    User-wide files come first (Claude Desktop, Cursor), then the project's
    files (found in `cwd` or the nearest parent below the home folder that has
    one), then each path listed in `$MCP_NOTEBOOK_CONFIG`. Paths that do not
    exist are included; `load_server_configs` skips them.
    """
    return [*_user_wide_paths(), *project_config_paths(cwd), *_named_by_variable()]


def _user_wide_paths() -> list[Path]:
    """Claude Desktop's and Cursor's files of the user."""
    home = Path.home()
    return [*_claude_desktop_paths(home), home / ".cursor" / "mcp.json"]


def _named_by_variable() -> list[Path]:
    """The files `$MCP_NOTEBOOK_CONFIG` names: the user's own choice."""
    return [Path(p).expanduser() for p in os.environ.get(CONFIG_ENV_VAR, "").split(os.pathsep) if p]


def project_config_paths(cwd: Path | None = None) -> list[Path]:
    """The project's own files (which need the user's trust): in `cwd` or the nearest parent below home with one."""
    project = _find_project_dir(Path.cwd() if cwd is None else cwd, Path.home())
    return [project.joinpath(*parts) for parts in _PROJECT_FILES]


def _claude_desktop_paths(home: Path) -> list[Path]:
    name = "claude_desktop_config.json"
    if sys.platform == "darwin":
        return [home / "Library" / "Application Support" / "Claude" / name]
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        return [Path(appdata) / "Claude" / name] if appdata else []
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [config_home / "Claude" / name]


def _find_project_dir(start: Path, home: Path) -> Path:
    """The nearest folder (from `start` up, stopping below home) holding a project MCP file."""
    start = start.resolve()
    home = home.resolve()
    for folder in (start, *start.parents):
        if folder == home or folder == Path(folder.anchor):
            break
        if any(folder.joinpath(*parts).is_file() for parts in _PROJECT_FILES):
            return folder
    return start


def load_server_configs(
    paths: Sequence[Path] = (),
    *,
    cwd: Path | None = None,
    include_defaults: bool = True,
    on_error: Callable[[ConfigError], None] | None = None,
    on_untrusted: Callable[[UntrustedConfig], None] | None = None,
    trust: TrustStore | None = None,
) -> dict[str, ServerConfig]:
    """Merge the servers of the default files and of `paths` (later files win).

    Missing default files are skipped; a missing explicit path is an error.
    Errors raise `ConfigError` unless `on_error` is given, in which case each
    bad file or entry is reported to it and skipped. A project file the user
    has not trusted as it is now (`trust`, the user's record by default)
    gives no server: it is reported to `on_untrusted` with what it would start.
    """
    # The project folder is searched once: its files are both candidates and the ones that need trust.
    found = project_config_paths(cwd) if include_defaults else []
    named = _named_by_variable() if include_defaults else []
    project = {path.absolute() for path in found} - {path.absolute() for path in named}
    candidates = [(p, False) for p in [*_user_wide_paths(), *found, *named]] if include_defaults else []
    candidates += [(Path(p), True) for p in paths]
    servers: dict[str, ServerConfig] = {}
    for path, explicit in candidates:
        if not explicit and not path.is_file():
            continue
        try:
            data = read_config_bytes(path)
            if not explicit and path.absolute() in project:
                untrusted = _untrusted(path, data, trust or TrustStore())
                if untrusted is not None:
                    if on_untrusted is not None:
                        on_untrusted(untrusted)
                    continue
            servers.update(_parse_config(path, data, workspace=cwd, on_error=on_error))
        except ConfigError as error:
            if on_error is None:
                raise
            on_error(error)
    return servers


Loaded = tuple[dict[str, "ServerConfig"], list[UntrustedConfig], list[ConfigError]]


def load_trusted(explicit: Sequence[Path], *, root: Path | None, include_defaults: bool) -> Loaded:
    """The servers of the configuration (the project's only where trusted), the untrusted files, the problems."""
    problems: list[ConfigError] = []
    untrusted: list[UntrustedConfig] = []
    configs = load_server_configs(
        explicit,
        cwd=root,
        include_defaults=include_defaults,
        on_error=problems.append,
        on_untrusted=untrusted.append,
    )
    return configs, untrusted, problems


def untrusted_servers(
    untrusted: Sequence[UntrustedConfig], configs: Mapping[str, ServerConfig]
) -> dict[str, tuple[str, str]]:
    """name → (what it would start, its file) for each server of an untrusted file that no trusted file names."""
    return {name: (what, str(file.path)) for file in untrusted for name, what in file.servers if name not in configs}


def load_config_file(
    path: Path,
    *,
    workspace: Path | None = None,
    on_error: Callable[[ConfigError], None] | None = None,
) -> dict[str, ServerConfig]:
    """Read the servers of one configuration file (`mcpServers` or `servers` shape).

    `workspace` is what `${workspaceFolder}` means for user-wide files; for
    project files it is the project folder. A bad entry raises `ConfigError`
    naming the file and the entry, unless `on_error` is given (then the entry
    is reported and skipped). The file is read as named: trust is the caller's.
    """
    path = Path(path).expanduser()
    return _parse_config(path, read_config_bytes(path), workspace=workspace, on_error=on_error)


_MAX_CONFIG_BYTES = 16 * 1024 * 1024  # far beyond any configuration file; past it, one line and nothing read


def read_config_bytes(path: Path) -> bytes:
    """The file's bytes, read once: what is trusted is what is parsed."""
    try:
        with Path(path).expanduser().open("rb") as file:
            data = file.read(_MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(str(path), "no such configuration file") from None
    except OSError as error:
        raise ConfigError(str(path), f"cannot be read: {error}") from None
    if len(data) > _MAX_CONFIG_BYTES:
        raise ConfigError(str(path), f"is over {_MAX_CONFIG_BYTES // (1024 * 1024)} MiB: not a configuration file")
    return data


def _entries(path: Path, data: bytes) -> dict[str, Any] | None:
    """The file's `mcpServers` / `servers` object (None: the file names no servers)."""
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(str(path), f"cannot be read: {error}") from None
    except json.JSONDecodeError as error:
        raise ConfigError(str(path), f"is not valid JSON (line {error.lineno}, column {error.colno})") from None
    if not isinstance(document, dict):
        raise ConfigError(str(path), "must hold a JSON object with an 'mcpServers' or 'servers' key")
    entries = document.get("mcpServers", document.get("servers"))
    if entries is None:
        return None
    if not isinstance(entries, dict):
        raise ConfigError(str(path), "'mcpServers' / 'servers' must be an object mapping names to servers")
    return entries


def describe_project_file(path: Path, data: bytes) -> tuple[tuple[str, str], ...]:
    """(server name, the command it would run or the URL it would reach) for each server `data` names, as written.

    No variable is expanded: a file the user has not trusted yet must not pull secrets out of the environment.
    """
    servers = []
    for name, entry in (_entries(path, data) or {}).items():
        if not isinstance(entry, dict) or entry.get("disabled") is True:
            continue
        url = entry.get("url", entry.get("serverUrl"))
        command = entry.get("command")
        args = entry.get("args")
        if isinstance(url, str):
            servers.append((str(name), url))
        elif isinstance(command, str):
            words = [command, *(str(a) for a in args)] if isinstance(args, list) else [command]
            servers.append((str(name), shlex.join(words)))
    return tuple(servers)


def _untrusted(path: Path, data: bytes, trust: TrustStore) -> UntrustedConfig | None:
    """What an untrusted project file would start; None if it is trusted as it is, or starts nothing."""
    digest = content_digest(data)
    if trust.is_trusted(path, digest):
        return None
    servers = describe_project_file(path, data)
    if not servers:
        return None  # nothing to start, nothing to trust
    return UntrustedConfig(path=path.absolute(), digest=digest, servers=servers)


def _parse_config(
    path: Path,
    data: bytes,
    *,
    workspace: Path | None,
    on_error: Callable[[ConfigError], None] | None,
) -> dict[str, ServerConfig]:
    entries = _entries(path, data)
    if entries is None:
        return {}
    dialect = _dialect_of(path)
    folder = _workspace_of(path, dialect, workspace)
    servers: dict[str, ServerConfig] = {}
    for name, entry in entries.items():
        try:
            config = _to_server_config(str(name), entry, path, dialect, folder)
        except ConfigError as error:
            if on_error is None:
                raise
            on_error(error)
            continue
        if config is not None:
            servers[config.name] = config
    return servers


def _dialect_of(path: Path) -> Dialect:
    if path.name == "claude_desktop_config.json":
        return "claude-desktop"
    if path.name == ".mcp.json":
        return "claude-code"
    if path.name == "mcp.json" and path.parent.name == ".vscode":
        return "vscode"
    if path.name == "mcp.json" and path.parent.name == ".cursor":
        return "cursor"
    return "generic"


def _workspace_of(path: Path, dialect: Dialect, workspace: Path | None) -> Path:
    if dialect in ("vscode", "cursor") and path.parent.parent != Path.home():
        return path.parent.parent
    if dialect == "generic" and workspace is None:
        return path.parent
    return Path.cwd() if workspace is None else workspace


def _to_server_config(name: str, entry: Any, path: Path, dialect: Dialect, folder: Path) -> ServerConfig | None:
    def fail(message: str) -> ConfigError:
        return ConfigError(str(path), f"server {name!r}: {message}")

    if not isinstance(entry, dict):
        raise fail("must be an object with 'command' or 'url'")
    if entry.get("disabled") is True:
        return None

    def expand(value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise fail(f"{key!r} must be a string, not {type(value).__name__}")
        return _expand(value, dialect, folder, lambda message: fail(f"{key!r}: {message}"))

    def expand_map(key: str) -> dict[str, str] | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise fail(f"{key!r} must be an object of strings")
        return {str(k): expand(v, f"{key}.{k}") for k, v in value.items()}

    kind = str(entry.get("type", "")).lower()
    url = entry.get("url", entry.get("serverUrl"))
    command = entry.get("command")
    if url is not None and command is not None:
        raise fail("has both 'command' and 'url'; keep one")
    if url is not None or kind in _HTTP_TYPES or kind == "sse":
        if url is None:
            raise fail(f"type {kind!r} needs a 'url'")
        return ServerConfig(
            name=name,
            url=expand(url, "url"),
            headers=expand_map("headers"),
            source=str(path),
            sse=kind == "sse",
        )
    if command is None:
        raise fail("needs 'command' (a program to start) or 'url' (an HTTP endpoint)")
    if kind not in ("", "stdio"):
        raise fail(f"unknown type {kind!r} (expected stdio, http or sse)")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise fail("'args' must be a list of strings")
    env = expand_map("env")
    cwd = entry.get("cwd")
    return ServerConfig(
        name=name,
        command=expand(command, "command"),
        args=tuple(expand(a, f"args[{i}]") for i, a in enumerate(args)),
        env=env,
        cwd=str(folder / expand(cwd, "cwd")) if cwd is not None else None,
        source=str(path),
    )


def _expand(value: str, dialect: Dialect, folder: Path, fail: Callable[[str], ConfigError]) -> str:
    """Substitute `${…}` variables the way the file's own tool does; unknown forms stay literal."""
    if dialect == "claude-desktop":
        return value
    editor_style = dialect in ("vscode", "cursor", "generic")
    shell_style = dialect in ("claude-code", "generic")

    def substitute(match: re.Match[str]) -> str:
        body = match.group(1)
        if editor_style:
            if body.startswith("env:"):
                # VS Code and Cursor substitute an empty string for an unset variable.
                return os.environ.get(body[4:], "")
            editor = {
                "workspaceFolder": str(folder),
                "workspaceFolderBasename": folder.name,
                "userHome": str(Path.home()),
                "pathSeparator": os.sep,
                "/": os.sep,
            }
            if body in editor:
                return editor[body]
        if shell_style and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(:-.*)?", body, flags=re.DOTALL):
            variable, has_default, default = body.partition(":-")
            if variable in os.environ:
                return os.environ[variable]
            if has_default:
                return default
            raise fail(f"environment variable {variable} is not set (set it, or write ${{{variable}:-default}})")
        return match.group(0)

    return _VARIABLE.sub(substitute, value)
