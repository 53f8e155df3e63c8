"""Project MCP configuration files that a test means as the user's own: trusted, as they are, by the user."""

from __future__ import annotations

from pathlib import Path

from mcp_notebook.trust import TrustStore, content_digest

__all__ = ["trusted"]


def trusted(path: Path, record: Path | None = None) -> Path:
    """Trust `path` as it is now, in `record` (default: `$MCP_NOTEBOOK_TRUST_FILE`, which conftest sets)."""
    TrustStore(record).trust(path, content_digest(path.read_bytes()))
    return path
