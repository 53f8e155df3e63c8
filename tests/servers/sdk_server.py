"""An MCP server built on the SDK's low-level `Server`: both protocol eras, stdio or HTTP.

Prompts (listed two per page): ``greet`` (``name`` required, ``lang`` optional),
``slow`` (sleeps an hour), ``grow`` (adds a prompt and announces it: on
``subscriptions/listen`` streams for 2026-07-28 clients and as a handshake
notification otherwise), ``ask`` (2026-07-28: answers with an
``InputRequiredResult`` holding an elicitation, then renders the answer).

``--http`` serves Streamable HTTP on 127.0.0.1 at a free port and prints
``MCP_NOTEBOOK_URL=http://127.0.0.1:PORT/mcp`` on stderr; with ``--token T`` it
answers 401 unless the request carries ``Authorization: Bearer T``.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

PAGE_SIZE = 2


def create_server() -> Server[Any]:
    bus = InMemorySubscriptionBus()
    handshake_sessions: set[Any] = set()
    prompts: list[types.Prompt] = [
        types.Prompt(
            name="greet",
            title="Greeting",
            description="Say hello to someone.",
            arguments=[
                types.PromptArgument(name="name", description="who to greet", required=True),
                types.PromptArgument(name="lang", description="a programming language"),
            ],
        ),
        types.Prompt(name="slow", description="Takes an hour."),
        types.Prompt(name="grow", description="Adds a prompt and announces it."),
        types.Prompt(name="ask", description="Asks the user for a colour first."),
    ]

    def remember(ctx: Any) -> None:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            handshake_sessions.add(ctx.session)

    async def on_list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        remember(ctx)
        cursor = params.cursor if params is not None else None
        if cursor is not None and not cursor.isdigit():
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor")
        start = int(cursor) if cursor else 0
        end = start + PAGE_SIZE
        return types.ListPromptsResult(prompts=prompts[start:end], next_cursor=str(end) if end < len(prompts) else None)

    def text(role: str, body: str) -> types.PromptMessage:
        return types.PromptMessage(role=role, content=types.TextContent(type="text", text=body))  # type: ignore[arg-type]

    async def on_get_prompt(
        ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        remember(ctx)
        arguments = params.arguments or {}
        if params.name == "greet":
            if "name" not in arguments:
                raise MCPError(code=types.INVALID_PARAMS, message="Missing required arguments: ['name']")
            lang = arguments.get("lang", "plain words")
            return types.GetPromptResult(
                description="A greeting",
                messages=[text("user", f"Say hello to {arguments['name']} in {lang}.")],
            )
        if params.name == "slow":
            await anyio.sleep(3600)
        if params.name == "grow":
            prompts.append(types.Prompt(name=f"grown_{len(prompts)}", description="Added at run time."))
            await bus.publish(PromptsListChanged())
            for session in list(handshake_sessions):
                try:
                    await session.send_prompt_list_changed()
                except Exception:
                    handshake_sessions.discard(session)
            return types.GetPromptResult(messages=[text("user", "grew")])
        if params.name == "ask":
            if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                raise MCPError(code=types.INVALID_PARAMS, message="ask needs a 2026-07-28 client")
            answer = (params.input_responses or {}).get("colour")
            if answer is None:
                schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
                request = types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message="Which colour?", requested_schema=schema)
                )
                return types.InputRequiredResult(input_requests={"colour": request}, request_state="asked")
            assert isinstance(answer, types.ElicitResult)
            colour = (answer.content or {}).get("colour") if answer.action == "accept" else "(declined)"
            return types.GetPromptResult(messages=[text("user", f"Paint it {colour}.")])
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}", data={"name": params.name})

    async def on_completion(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        values = [v for v in ("python", "rust", "ruby") if v.startswith(params.argument.value)]
        return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))

    return Server(
        "sdk-test",
        version="1.0",
        title="SDK test server",
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_completion=on_completion,
        on_subscriptions_listen=ListenHandler(bus),
    )


async def serve_stdio() -> None:
    server = create_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions(prompts_changed=True)))


def serve_http(token: str | None) -> None:
    import uvicorn
    from starlette.responses import PlainTextResponse

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.listen(128)  # connections wait in the backlog from now on, so the URL is usable at once
    mcp_app = create_server().streamable_http_app()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        # With --token, behave like a protected remote server: 401 without the right bearer token.
        if token is not None and scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
                return
        await mcp_app(scope, receive, send)

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"MCP_NOTEBOOK_URL=http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--token", help="require `Authorization: Bearer TOKEN` (HTTP only)")
    options = parser.parse_args()
    if options.http:
        serve_http(options.token)
    else:
        anyio.run(serve_stdio)


if __name__ == "__main__":
    main()
