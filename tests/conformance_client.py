"""`PromptClient` as the client under test of the MCP conformance suite (client mode).

    conformance client --command "python tests/conformance_client.py" --scenario initialize

The suite starts a mock server and runs this command with the server's URL as the last argument; it says
which scenario runs in `$MCP_CONFORMANCE_SCENARIO` and, from 0.2 on, the revision it expects in
`$MCP_CONFORMANCE_PROTOCOL_VERSION`. Whatever the scenario, the client does what a prompts client does
(connect in its default mode, which probes `server/discover` and falls back to `initialize`; list every
prompt; render the first one; complete its first argument) and exits 0 when the server let it; the suite
judges the wire traffic.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerError


async def exercise(url: str) -> None:
    """Connect (probing the revision, as users' clients do), list, render the first prompt, complete its argument."""
    config = ServerConfig(name="conformance", url=url)
    async with PromptClient(config, request_timeout=20, connect_timeout=20) as client:
        print(f"connected at {client.protocol_version}", file=sys.stderr)
        prompts = await client.list_prompts()
        print(f"{len(prompts)} prompts: {[p.name for p in prompts]}", file=sys.stderr)
        if not prompts:
            return
        first = prompts[0]
        arguments = {a.name: "value" for a in first.arguments}
        try:
            rendered = await client.get_prompt(first.name, arguments)
            print(f"{first.name}: {len(rendered.messages)} messages", file=sys.stderr)
            if first.arguments:
                await client.complete(first.name, first.arguments[0].name, "")
        except ServerError as error:
            # A mock server may refuse what it does not implement; the suite judges the request itself.
            print(f"{first.name}: the server refused: {error}", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: conformance_client.py URL (the conformance suite appends it)", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "?")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "?")
    print(f"scenario {scenario} (suite expects {revision}), server {argv[-1]}", file=sys.stderr)
    asyncio.run(exercise(argv[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
