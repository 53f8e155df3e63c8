"""Canary for the SDK touchpoint the prepared listing relies on: `sdk_seam.shape_result` (`ServerRunner._serialize`).

It must shape a handler's result exactly as the SDK's request pipeline does
for the same server; if a release moves or changes it, this fails naming the
SDK version and the touchpoint.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.server.lowlevel import Server
from wire_harness import ALL_REVISIONS, MODERN, RawWire

from mcp_notebook.protocol import sdk_seam
from mcp_notebook.protocol.server import CachePolicy

RESULT = {
    "prompts": [{"name": "a", "title": "A", "arguments": [{"name": "x", "required": True}], "_meta": {"k": 1}}],
    "nextCursor": "c",
    "resultType": "complete",
}


def moved(detail: str) -> str:
    return (
        f"mcp {sdk_seam.sdk_version()} (tested: {', '.join(sdk_seam.TESTED_MINORS)}): "
        f"the SDK touchpoint ServerRunner._serialize (shape_result) changed: {detail}"
    )


def _server() -> Server[Any]:
    async def list_prompts(ctx: Any, params: Any) -> dict[str, Any]:
        return dict(RESULT)

    return Server("canary", version="1", cache_hints=CachePolicy(ttl_ms=777).hints(), on_list_prompts=list_prompts)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_shape_result_shapes_as_the_request_pipeline_does(revision: str) -> None:
    server = _server()
    try:
        shaped = sdk_seam.shape_result(server, "prompts/list", revision, dict(RESULT))
    except (AttributeError, TypeError) as error:
        pytest.fail(moved(f"{type(error).__name__}: {error}"))
    async with RawWire(server, revision) as wire:
        answered = (await wire.request("prompts/list"))["result"]
    assert json.loads(json.dumps(shaped)) == answered, moved("its result differs from the served one")
    if revision == MODERN:
        assert shaped["ttlMs"] == 777 and "io.modelcontextprotocol/serverInfo" in shaped["_meta"], moved("no hints")
    else:
        assert "ttlMs" not in shaped and "resultType" not in shaped, moved("hints at a handshake revision")
