"""A FastMCP server whose prompt has typed arguments, over stdio: what the forms' typed widgets are tested on.

FastMCP describes every argument that is not a plain `str` with a JSON schema
appended to its description and parses the string it receives as JSON.
`plan_trip` takes a number of days, a budget, a yes/no, one of two tones and a
list of tags; its topic must have three letters or more, so a short one gets
pydantic's full report back as the error.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastmcp import FastMCP
from pydantic import Field

server = FastMCP("typed-trips")


@server.prompt
def plan_trip(
    topic: Annotated[str, Field(min_length=3, description="Where to go")],
    days: int = 3,
    budget: float = 100.0,
    detailed: bool = False,
    tone: Literal["formal", "casual"] = "casual",
    tags: list[str] | None = None,
) -> str:
    """Plan a trip."""
    return f"Plan {topic} for {days} days on {budget:g} euros, detailed={detailed}, tone={tone}, tags={tags}."


if __name__ == "__main__":
    server.run(show_banner=False)
