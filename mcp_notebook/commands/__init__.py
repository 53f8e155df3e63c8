"""The commands of `mcp-notebook`, one module per job; `cli.py` registers them and parses the command line.

`serve.py` (`serve`, stdio or HTTP), `prompts.py` (`list`, `render`),
`client_config.py` (`config`), `connect.py` (`connect`), and `usage.py`, what
they share. Each command NAME's module holds `NAME_HELP` (its `--help`
description), `add_NAME_arguments(parser)` and `run_NAME(args)`; only the
standard library is imported up front, so that `--help` stays instant.
"""

__all__: list[str] = []
