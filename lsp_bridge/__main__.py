"""`python -m lsp_bridge`: the same as `mcp-notebook-lsp`."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
