"""`python -m mcp_notebook`: the same command line as `mcp-notebook`."""

from __future__ import annotations

from .console import main

if __name__ == "__main__":
    raise SystemExit(main())
