"""`mcp-notebook trust`: see, trust and revoke the project MCP configuration files found from a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from .config import describe_project_file, project_config_paths, read_config_bytes
from .exceptions import ConfigError
from .trust import TrustStore, content_digest, trust_store_path

__all__ = ["TRUST_HELP", "add_trust_arguments", "run_trust"]

TRUST_HELP = """\
A project's MCP configuration (.mcp.json, .vscode/mcp.json, .cursor/mcp.json or
mcp.json, found in the working folder or the nearest parent that has one) names
commands to run. The editor bridge, %mcp in a kernel and the Python API start
none of them until you trust that file, as it is now: an edited file must be
trusted again. Your own files (Claude Desktop's, ~/.cursor/mcp.json,
$MCP_NOTEBOOK_CONFIG, --config) need no trust. The record is kept in your
config folder, never in the project.

examples:
  mcp-notebook trust                       # the project files found from here, and what each would start
  mcp-notebook trust .mcp.json             # trust it as it is now
  mcp-notebook trust --revoke .mcp.json    # take the trust back
  mcp-notebook trust --list                # every file you trust, and whether it changed since
"""


def add_trust_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE", help="project configuration files to trust as they are now")
    parser.add_argument("--revoke", action="store_true", help="take the trust of each FILE back")
    parser.add_argument("--list", action="store_true", help="list every file you trust, and whether it changed since")


def run_trust(args: argparse.Namespace) -> int:
    """Trust, revoke or show; exit 1 when a named file cannot be read."""
    store = TrustStore()
    if args.list:
        return _list(store)
    if not args.paths:
        return _show_found(store)
    status = 0
    for name in args.paths:
        path = Path(name).expanduser().absolute()
        if args.revoke:
            print(f"Revoked {path}." if store.revoke(path) else f"{path} was not trusted.")
            continue
        try:
            data = read_config_bytes(path)
            servers = describe_project_file(path, data)
        except ConfigError as error:
            print(error)
            status = 1
            continue
        store.trust(path, content_digest(data))
        print(f"Trusted {path} as it is now. It may start:")
        for server, what in servers or (("(nothing)", ""),):
            print(f"  {server}: {what}" if what else f"  {server}")
    return status


def _show_found(store: TrustStore) -> int:
    found = [path for path in project_config_paths() if path.is_file()]
    if not found:
        print("No project MCP configuration here (.mcp.json, .vscode/mcp.json, .cursor/mcp.json, mcp.json).")
        return 0
    trusted = store.entries()
    for path in found:
        try:
            data = read_config_bytes(path)
            servers = describe_project_file(path, data)
        except ConfigError as error:
            print(error)
            continue
        digest = trusted.get(str(path.resolve()))
        state = (
            "trusted" if digest == content_digest(data) else "changed since you trusted it" if digest else "not trusted"
        )
        print(f"{path}: {state}")
        for server, what in servers:
            print(f"  {server}: {what}")
        if state != "trusted" and servers:
            print(f"  trust it with: mcp-notebook trust {path}")
    return 0


def _list(store: TrustStore) -> int:
    entries = store.entries()
    if not entries:
        print(f"You trust no project MCP configuration file (the record: {trust_store_path()}).")
        return 0
    for name, digest in sorted(entries.items()):
        path = Path(name)
        try:
            state = "as trusted" if content_digest(path.read_bytes()) == digest else "changed since: not trusted"
        except OSError:
            state = "gone"
        print(f"{path}  ({state})")
    return 0
