"""`mcp-notebook connect`: a stdio client's way to a running kernel's server; `kernel_proxy.py` does the work.

Importing `kernel_proxy` costs only the standard library until the proxy starts.
"""

from __future__ import annotations

import argparse

from ..kernel_proxy import add_connect_arguments

__all__ = ["CONNECT_HELP", "add_connect_arguments", "run_connect"]

CONNECT_HELP = """\
Connect an MCP client that only speaks stdio to a running kernel's server
(started in a notebook with %mcp serve). The kernel is found through its
connection file in the Jupyter runtime directory; messages are relayed over
HTTP with the kernel's token, in every protocol revision. Exits with 2 when
no such kernel serves MCP, and says which kernels do.

examples:
  mcp-notebook connect --latest
  mcp-notebook connect --kernel 3f2a9c1e
  claude mcp add my-kernel -- mcp-notebook connect --latest
"""


def run_connect(args: argparse.Namespace) -> int:
    """Relay stdio to the kernel's server until the client goes; returns the exit code (2: no such kernel)."""
    from ..kernel_proxy import main as connect

    return connect(options=args)
