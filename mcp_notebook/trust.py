"""Which project MCP configuration files the user has trusted, as they are now.

A project's MCP configuration (`.mcp.json`, `.vscode/mcp.json`,
`.cursor/mcp.json`, `mcp.json`, found from the working folder or the editor's
root) is code: it names commands to start and URLs to send headers to. A
folder the user merely opened, a cloned repository say, must not start any of
them. So a project file is used only once the user has trusted it, as Claude
Code and VS Code ask before they start a project's servers.

Trust is kept per file and per content: the SHA-256 of the file's bytes when
it was trusted. An edited file is not trusted until the user trusts it again.
The record lives in the user's config folder (`trust.json` under
`$XDG_CONFIG_HOME/mcp-notebook`, `~/.config/mcp-notebook` by default, or
`%APPDATA%\\mcp-notebook` on Windows), never in the project. The user's own
files (Claude Desktop's, `~/.cursor/mcp.json`, `$MCP_NOTEBOOK_CONFIG`, paths
given on the command line or to `%mcp servers --config`) are theirs, and trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .exceptions import ConfigError
from .owned_files import write_json

__all__ = [
    "TRUST_FILE_ENV",
    "TrustStore",
    "UntrustedConfig",
    "content_digest",
    "trust_store_path",
]

TRUST_FILE_ENV = "MCP_NOTEBOOK_TRUST_FILE"
_FORMAT = 1
_MAX_STORE_BYTES = 4 * 1024 * 1024  # a record of a few hundred bytes per file: anything larger is not ours


def content_digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes, as the record keeps it."""
    return hashlib.sha256(data).hexdigest()


def trust_store_path() -> Path:
    """Where the record of trusted files lives: `$MCP_NOTEBOOK_TRUST_FILE`, else the user's config folder."""
    explicit = os.environ.get(TRUST_FILE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "mcp-notebook" / "trust.json"
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home).expanduser() / "mcp-notebook" / "trust.json"


@dataclass(frozen=True, slots=True)
class UntrustedConfig:
    """A project configuration file the user has not trusted (as it is now), and what it would start."""

    path: Path
    digest: str
    # (server name, the command it would run or the URL it would reach), in the file's order.
    servers: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        """`name: command …` for each server, on one line (cut short: a file can name anything)."""
        shown = "; ".join(f"{name}: {what}" for name, what in self.servers) or "no servers"
        return shown if len(shown) <= 300 else shown[:299] + "…"

    def hint(self, how: str) -> str:
        """One line for the user: what the file would start, and `how` to trust it."""
        return f"not trusted: {self.path} would start {self.describe()}. {how}"


class TrustStore:
    """The user's record of trusted project files: path → digest of the content they trusted."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = trust_store_path() if path is None else path

    def entries(self) -> dict[str, str]:
        """Every trusted file (its absolute path) with the digest it was trusted at; {} when there is no record."""
        try:
            with self.path.open("rb") as file:
                data = file.read(_MAX_STORE_BYTES + 1)
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise ConfigError(str(self.path), f"cannot be read: {error}") from None
        if len(data) > _MAX_STORE_BYTES:
            raise ConfigError(str(self.path), "is too large to be a record of trusted files")
        try:
            document = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ConfigError(
                str(self.path), "is not a record of trusted files (not JSON); delete it to start over"
            ) from None
        files = document.get("files") if isinstance(document, dict) else None
        if not isinstance(files, dict):
            return {}
        return {
            str(path): str(entry["sha256"])
            for path, entry in files.items()
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
        }

    def is_trusted(self, path: Path, digest: str) -> bool:
        """True when `path` was trusted with exactly this content."""
        return self.entries().get(str(_key(path))) == digest

    def trust(self, path: Path, digest: str) -> None:
        """Record `path` as trusted at `digest` (the content the user was shown)."""
        entries = self.entries()
        entries[str(_key(path))] = digest
        self._write(entries)

    def revoke(self, path: Path) -> bool:
        """Forget `path`; False when it was not trusted."""
        entries = self.entries()
        if entries.pop(str(_key(path)), None) is None:
            return False
        self._write(entries)
        return True

    def _write(self, entries: Mapping[str, str]) -> None:
        """Replace the record in one step, readable by the user alone."""
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        document: dict[str, Any] = {
            "format": _FORMAT,
            "about": "Project MCP configuration files trusted by mcp-notebook (see `mcp-notebook trust --help`).",
            "files": {path: {"sha256": digest, "trusted": stamp} for path, digest in sorted(entries.items())},
        }
        write_json(self.path, document, indent=2)


def _key(path: Path) -> Path:
    """The file's absolute path with links resolved: one file, one entry, wherever it was reached from."""
    return Path(path).expanduser().resolve()
