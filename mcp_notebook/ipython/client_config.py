"""Ready-to-paste client configuration for a kernel's MCP server (Claude Code, VS Code, Cursor).

The text is a cell's output, and outputs are saved in the notebook: it never
holds the token. Configurations refer to it instead: Claude Code's command
line reads it with `mcp-notebook connect --print-token` when it runs (and
registers nothing when that fails), VS Code asks for it once (a password
input), Cursor reads it from an environment variable. The `mcp-notebook` named is the one installed beside this kernel's
Python, by its full path, so the commands work from any shell, and
`--runtime-dir` is added when the connection file is not where a client looks
by default.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..naming import kernel_server_name

__all__ = [
    "STDIO_HEADING",
    "TOKEN_VARIABLE",
    "ClientConfig",
    "client_config",
    "connect_command",
]

TOKEN_VARIABLE = "MCP_NOTEBOOK_KERNEL_TOKEN"  # Cursor's configuration reads the token from this variable
STDIO_HEADING = "Clients that only speak stdio"


def _mcp_notebook() -> list[str]:
    """The command that runs this kernel's mcp-notebook, from any shell (no PATH or venv needed)."""
    script = Path(sys.executable).with_name("mcp-notebook.exe" if sys.platform == "win32" else "mcp-notebook")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "mcp_notebook"]


def connect_command(kernel_id: str, runtime_dir: str | None = None, *extra: str) -> list[str]:
    """`mcp-notebook connect --kernel ID [--runtime-dir DIR] …` as words, ready to run anywhere."""
    words = [*_mcp_notebook(), "connect", "--kernel", kernel_id]
    if runtime_dir is not None:
        words += ["--runtime-dir", runtime_dir]
    return [*words, *extra]


def _http_entries(name: str, url: str, token_command: list[str] | None) -> tuple[str, dict[str, Any], dict[str, Any]]:
    claude = shlex.join(["claude", "mcp", "add", "--transport", "http", name, url])
    vscode: dict[str, Any] = {"servers": {name: {"type": "http", "url": url}}}
    cursor: dict[str, Any] = {"mcpServers": {name: {"url": url}}}
    if token_command is not None:
        # The shell runs the command when the line is pasted; the token goes into Claude's config, not here.
        # `token=$(…) &&`: when the command fails (no such kernel) nothing is registered, not an empty token.
        claude = f'token=$({shlex.join(token_command)}) && {claude} --header "Authorization: Bearer $token"'
        input_id = f"{name}-token"
        vscode["servers"][name]["headers"] = {"Authorization": f"Bearer ${{input:{input_id}}}"}
        vscode["inputs"] = [
            {
                "type": "promptString",
                "id": input_id,
                "description": f"Token of the kernel's MCP server (run: {shlex.join(token_command)})",
                "password": True,
            }
        ]
        cursor["mcpServers"][name]["headers"] = {"Authorization": f"Bearer ${{env:{TOKEN_VARIABLE}}}"}
    return claude, vscode, cursor


def _stdio_entries(name: str, command: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    claude = shlex.join(["claude", "mcp", "add", name, "--", *command])
    vscode: dict[str, Any] = {"servers": {name: {"type": "stdio", "command": command[0], "args": command[1:]}}}
    cursor: dict[str, Any] = {"mcpServers": {name: {"command": command[0], "args": command[1:]}}}
    return claude, vscode, cursor


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """How to connect clients to a kernel's server: its endpoint, then one ready-to-paste entry per client."""

    url: str
    name: str  # the server's name in the clients' configurations
    token_command: str | None  # the shell command that prints the token; None without a token
    connection_file: str | None
    clients: tuple[tuple[str, str], ...]  # (heading, what to paste), in the order shown

    def text(self) -> str:
        """Everything as plain text, for terminals and for front ends that show no HTML."""
        lines = [f"MCP server of this kernel: {self.url}", *self.token_lines()]
        if self.connection_file:
            lines.append(f"Connection file: {self.connection_file}")
        for heading, body in self.clients:
            # The stdio command is short enough for its heading's line; the others are blocks to copy.
            lines += ["", f"{heading}: {body}"] if heading == STDIO_HEADING else ["", f"{heading}:", _indent(body)]
        return "\n".join(lines)

    def token_lines(self) -> list[str]:
        if self.token_command is None:
            return ["Token: none (--no-token): any local process can connect"]
        return [
            "Token: in the connection file, never printed here (cell outputs are saved in the notebook).",
            f"  To see it: {self.token_command}",
        ]


def client_config(
    *,
    url: str,
    token: str | None,
    kernel_id: str,
    connection_file: str | None,
    stdio_proxy: bool = False,
    runtime_dir: str | None = None,
    notebook: str | None = None,
) -> ClientConfig:
    """Each client's configuration for the kernel's server; never the token.

    With `stdio_proxy` the configurations start `mcp-notebook connect --kernel ID`
    (for clients that only speak stdio) instead of naming the URL. `runtime_dir`
    is the connection file's directory when clients would not look there by default. The server's name
    comes from `notebook` (the kernel's notebook), as in every client.
    """
    name = kernel_server_name(notebook, kernel_id)  # what the editors' bridge calls this kernel too
    connect = connect_command(kernel_id, runtime_dir)
    token_command = connect_command(kernel_id, runtime_dir, "--print-token") if token else None
    if stdio_proxy:
        claude, vscode, cursor = _stdio_entries(name, connect)
    else:
        claude, vscode, cursor = _http_entries(name, url, token_command)
    if token_command is not None and not stdio_proxy:
        cursor_heading = f"Cursor (~/.cursor/mcp.json; set {TOKEN_VARIABLE} to the token in Cursor's environment)"
    else:
        cursor_heading = "Cursor (~/.cursor/mcp.json)"
    return ClientConfig(
        url=url,
        name=name,
        token_command=shlex.join(token_command) if token_command is not None else None,
        connection_file=connection_file,
        clients=(
            ("Claude Code", claude),
            ("VS Code (.vscode/mcp.json)", json.dumps(vscode, indent=2)),
            (cursor_heading, json.dumps(cursor, indent=2)),
            (STDIO_HEADING, shlex.join(connect)),
        ),
    )


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
