"""An LSP server offering MCP prompts as `/` slash commands in any editor."""

from __future__ import annotations

__all__: list[str] = []
