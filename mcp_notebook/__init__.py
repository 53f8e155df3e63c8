"""mcp-notebook: Jupyter as the home of LLM prompts.

Serve notebook cells and IPython magics as MCP prompts, and use any MCP
server's prompts from IPython (`%load_ext mcp_notebook`).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
