"""FastMCP 4.2 serving a folder of skills (the Skills extension, SEP-2640), over stdio or HTTP.

Usage: python skills_fastmcp_server.py [--http] [--prompt] [--reload] [ROOT]

ROOT defaults to `skill_folders/` beside this file (`git-workflow`, `pdf-processing` with a
reference and a script). `--http` serves Streamable HTTP on 127.0.0.1 at a free port and prints
`MCP_NOTEBOOK_URL=http://127.0.0.1:PORT/mcp` on stderr. `--prompt` adds one prompt, `hello`.
`--reload` reads the folders again on each request (an edited skill gets new digests).
This is the peer the client's skills support is tested against: a real server, not ours.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

FOLDERS = Path(__file__).resolve().parent / "skill_folders"


def create_server(root: Path, *, prompt: bool, reload: bool) -> FastMCP:
    server = FastMCP("skill-shop")
    server.add_provider(SkillsDirectoryProvider(root, reload=reload))
    if prompt:

        @server.prompt
        def hello(who: str = "world") -> str:
            """Say hello."""
            return f"Hello, {who}!"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", type=Path, default=FOLDERS)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--prompt", action="store_true")
    parser.add_argument("--reload", action="store_true")
    options = parser.parse_args()
    server = create_server(options.root, prompt=options.prompt, reload=options.reload)
    if not options.http:
        server.run(show_banner=False)
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog from now on, so the URL is usable at once
    port = sock.getsockname()[1]
    print(f"MCP_NOTEBOOK_URL=http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(server.http_app(path="/mcp"), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
