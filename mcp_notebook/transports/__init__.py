"""Running a server: `stdio.serve_stdio` (every revision, one client) and `http.serve_http` (Streamable HTTP at /mcp).

Nothing is imported here, so the command line can choose a transport without loading the other.
"""

from __future__ import annotations

__all__: list[str] = []
