"""`Answers.answer`, a whole stateless request, gives what the SDK's path puts on the wire for the same request.

The SDK's path is the handler's result (the same `Answers`) shaped by the SDK's own shaping
(`sdk_seam.shape_result`): hints, the revision's fields, the `serverInfo` stamp. Each method's result must
parse to the same object, with and without a prompt's own `_meta`; its errors are the client's errors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from mcp_notebook.models import EmbeddedResource, MessageTemplate, PromptArgument, PromptSpec, ResourceInfo, TextContent
from mcp_notebook.protocol.prepared import plain_result
from mcp_notebook.protocol.sdk_seam import shape_result
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
URI = "notebook:///g.ipynb#cell=one"


class OneResource:
    def list_resources(self) -> Sequence[ResourceInfo]:
        return (ResourceInfo(uri=URI, name="one", mime_type="text/markdown"),)

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        return (EmbeddedResource(uri=uri, text="the cell", mime_type="text/markdown"),)


def _server() -> PromptServer:
    registry = PromptRegistry()
    who = PromptArgument("who", description="whom", completions=("Ada", "Alan"))
    plain = PromptSpec(name="greet", arguments=(who,), messages=(MessageTemplate("user", TextContent("Hi {{who}}")),))
    tagged = PromptSpec(
        name="tagged",
        description="with its own _meta",
        meta={"example.com/tag": "x"},
        messages=(MessageTemplate("user", TextContent("Tagged")),),
    )
    registry.set_group("g.ipynb", [plain, tagged])
    return create_server(registry, resources=OneResource())


async def _sdk_path(server: PromptServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answers = server.answers
    if method == "prompts/get":
        typed = types.GetPromptRequestParams.model_validate(params, by_name=False)
        result: Any = await answers.get_prompt(MODERN, typed, None)
    elif method == "completion/complete":
        result = await answers.complete(types.CompleteRequestParams.model_validate(params, by_name=False))
    elif method == "prompts/list":
        result = plain_result(answers.list_prompts(MODERN, None))  # as the handler answers it
    elif method == "resources/list":
        result = await answers.list_resources(MODERN, None)
    elif method == "resources/templates/list":
        result = answers.list_resource_templates(None)
    elif method == "server/discover":
        result = answers.discover(MODERN)
    else:
        result = await answers.read_resource(MODERN, params["uri"])
    return shape_result(server, method, MODERN, result)


CASES = [
    ("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}}),
    ("prompts/get", {"name": "tagged"}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
    ),
    ("prompts/list", {}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": URI}),
    ("server/discover", {}),
]


@pytest.mark.parametrize(("method", "params"), CASES, ids=lambda case: str(case)[:40])
async def test_each_answer_is_the_sdk_paths_result(method: str, params: dict[str, Any]) -> None:
    server = _server()
    ours = json.loads(await server.answers.answer(method, {**params, "_meta": META}, MODERN, {}))
    assert ours == await _sdk_path(server, method, params)


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("prompts/get", {"name": "nobody"}, types.INVALID_PARAMS),
        ("prompts/get", {"name": 7}, types.INVALID_PARAMS),
        ("prompts/get", {"name": "greet", "arguments": {"whom": "x"}}, types.INVALID_PARAMS),
        ("tools/list", {}, types.METHOD_NOT_FOUND),
    ],
)
async def test_errors_are_the_clients_errors(method: str, params: dict[str, Any], code: int) -> None:
    with pytest.raises(MCPError) as raised:
        await _server().answers.answer(method, {**params, "_meta": META}, MODERN)
    assert raised.value.error.code == code


async def test_discover_says_what_the_sdks_own_discovery_says() -> None:
    """`Answers.discover` took over from the SDK's default handler: the same revisions, capabilities, instructions."""
    registry = PromptRegistry()
    server = create_server(registry, resources=OneResource(), instructions="Use the prompts.")
    context = SimpleNamespace(protocol_version=MODERN)
    sdk = await Server._handle_discover(server, cast(Any, context), None)
    assert server.answers.discover(MODERN) == sdk
    assert sdk.instructions == "Use the prompts." and sdk.capabilities.prompts is not None


def test_ping_is_empty() -> None:
    assert _server().answers.ping() == types.EmptyResult()
