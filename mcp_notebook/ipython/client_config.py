"""Ready-to-paste client configuration for a kernel's MCP server (Claude Code, VS Code, Cursor)."""

from __future__ import annotations

import json
import shlex
from typing import Any

__all__ = ["format_client_config"]


def _http_entries(name: str, url: str, token: str | None) -> tuple[str, dict[str, Any], dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    claude = ["claude", "mcp", "add", "--transport", "http", name, url]
    if headers:
        claude += ["--header", f"Authorization: Bearer {token}"]
    vscode: dict[str, Any] = {"type": "http", "url": url}
    cursor: dict[str, Any] = {"url": url}
    if headers:
        vscode["headers"] = headers
        cursor["headers"] = headers
    return shlex.join(claude), vscode, cursor


def _stdio_entries(name: str, kernel_id: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    args = ["connect", "--kernel", kernel_id]
    claude = shlex.join(["claude", "mcp", "add", name, "--", "mcp-notebook", *args])
    vscode: dict[str, Any] = {"type": "stdio", "command": "mcp-notebook", "args": args}
    cursor: dict[str, Any] = {"command": "mcp-notebook", "args": args}
    return claude, vscode, cursor


def format_client_config(
    *, url: str, token: str | None, kernel_id: str, connection_file: str | None, stdio_proxy: bool = False
) -> str:
    """What `%mcp serve` prints: the endpoint, then each client's configuration, ready to paste.

    With `stdio_proxy` the configurations start `mcp-notebook connect --kernel ID`
    (for clients that only speak stdio) instead of naming the URL and token.
    """
    name = f"kernel-{kernel_id[:8]}"
    if stdio_proxy:
        claude, vscode, cursor = _stdio_entries(name, kernel_id)
    else:
        claude, vscode, cursor = _http_entries(name, url, token)
    lines = [
        f"MCP server of this kernel: {url}",
        f"Token: {token}" if token else "Token: none (--no-token): any local process can connect",
    ]
    if connection_file:
        lines.append(f"Connection file: {connection_file}")
    lines += [
        "",
        "Claude Code:",
        f"  {claude}",
        "",
        "VS Code (.vscode/mcp.json):",
        _indent(json.dumps({"servers": {name: vscode}}, indent=2)),
        "",
        "Cursor (~/.cursor/mcp.json):",
        _indent(json.dumps({"mcpServers": {name: cursor}}, indent=2)),
        "",
        f"Clients that only speak stdio: mcp-notebook connect --kernel {kernel_id}",
    ]
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
