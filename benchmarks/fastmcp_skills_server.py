"""The peer for skills: FastMCP 4.2 serving a folder of skill folders (the Skills extension) over stdio.

FastMCP's `SkillsDirectoryProvider` is what a developer would use to serve `SKILL.md` folders over MCP
today: every skill under ROOT is listed by `skills/list` with its manifest (each file's SHA-256 digest).
It speaks the Skills extension at protocol 2026-07-28 only, so it is asked in that era.

This file imports only the standard library and FastMCP, and runs as a script:
`python benchmarks/fastmcp_skills_server.py ROOT`.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider


def main() -> None:
    server = FastMCP("skills")
    server.add_provider(SkillsDirectoryProvider(sys.argv[1]))
    server.run(show_banner=False)


if __name__ == "__main__":
    main()
