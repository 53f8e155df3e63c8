"""FastMCP 4.2 serving the skill folders under ROOT and a prompt `git-workflow`: a clash the bridge must not hide.

Usage: python skill_clash_server.py ROOT
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

server = FastMCP("clash")
server.add_provider(SkillsDirectoryProvider(sys.argv[1]))


@server.prompt(name="git-workflow")
def git_workflow() -> str:
    """A prompt named like a skill."""
    return "The clash server's own git-workflow prompt."


if __name__ == "__main__":
    server.run(show_banner=False)
