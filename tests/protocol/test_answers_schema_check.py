"""`Answers` checks a stateless request's params against the revision's schema exactly as the SDK's
`validate_client_request` does (it calls the same schema without that function's own argument checks)."""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import methods as sdk_methods
from pydantic import ValidationError

from mcp_notebook.protocol.answers import STATELESS_METHODS
from mcp_notebook.protocol.revisions import MODERN_REVISIONS
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
PARAMS: list[Any] = [
    None,
    {},
    {"_meta": META},
    {"_meta": {"io.modelcontextprotocol/protocolVersion": 7}},
    {"_meta": "not an object"},
    {"name": "p", "_meta": META},
    {"name": "p", "arguments": {"a": "1"}, "_meta": META},
    {"name": "p", "arguments": {"a": 1}, "_meta": META},
    {"name": 3, "_meta": META},
    {"cursor": "c", "_meta": META},
    {"cursor": 5, "_meta": META},
    {"uri": "notebook:///a.ipynb", "_meta": META},
    {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x"}, "_meta": META},
    {"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": "x"}, "_meta": META},
    {"unexpected": True, "_meta": META},
]


def _sdk_refuses(method: str, revision: str, params: Any) -> bool:
    try:
        sdk_methods.validate_client_request(method, revision, params)
    except ValidationError:
        return True
    return False


def test_the_params_refused_are_the_ones_the_sdk_refuses() -> None:
    answers = create_server(PromptRegistry(), resources=None).answers
    answers.methods = STATELESS_METHODS  # every method, whatever this server serves
    for method, revision, params in (
        (m, r, p) for m in sorted(STATELESS_METHODS) for r in MODERN_REVISIONS for p in PARAMS
    ):
        try:
            answers._checked(method, params, revision)
            refused = False
        except MCPError as error:
            refused = error.error.code == -32602
        assert refused == _sdk_refuses(method, revision, params), (method, params)
