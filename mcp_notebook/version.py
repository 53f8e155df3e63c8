"""The version of mcp-notebook, in a module of its own so that any layer may name it without importing upward."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
