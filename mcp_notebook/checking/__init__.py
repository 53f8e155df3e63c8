"""Checking prompts before release: format warnings, each known client's limits, and prompt tests written as cells.

`report.check_paths` is what `mcp-notebook check`, `%mcp check` and the pytest
plugin (`pytest --mcp-prompts PATH`) run. Nothing is imported here, so that the
command line's parser (`command.py`) stays instant.
"""
