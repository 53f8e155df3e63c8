"""Benchmarks of mcp-notebook, side by side with a bare MCP SDK server serving the same prompts.

Run everything with `python -m benchmarks` from the project root (`--quick` for tiny sizes);
each `bench_*` module also runs on its own (`python -m benchmarks.bench_server --help`).
"""

from __future__ import annotations

__all__: list[str] = []
