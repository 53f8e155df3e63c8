"""The TypeScript MCP SDK 1.x, as a stdio client of `mcp-notebook serve`, sees what our own side sees.

`ts_client.mjs` lists (following every cursor: the server pages by two), renders, completes and provokes the
two -32602 errors; the Python SDK's `mcp.Client` (same revision) and our own `PromptClient` (which reaches
2026-07-28) do the same against other server processes, and what they see must agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from interop_harness import FIXTURES, CompatRecorder, InteropTools, run_tool, server_command
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import PromptReference

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerError
from mcp_notebook.protocol.convert import to_mcp_prompt_entry

pytestmark = [pytest.mark.interop, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parent / "ts_client.mjs"
SERVE = ("serve", "--page-size", "2", str(FIXTURES / "clients.ipynb"))
# clients.ipynb publishes these five prompts, in notebook order: three pages of at most two.
PROMPTS = ["greet", "summarize", "review_code", "explain_plot", "read_notes"]
PLAN: dict[str, Any] = {
    "get": {"name": "greet", "arguments": {"name": "Ada", "lang": "rust"}},
    "complete": {"prompt": "greet", "argument": "lang", "value": "PY"},
    "errors": [
        {"label": "unknown prompt", "name": "no_such_prompt", "arguments": {}},
        {"label": "missing argument", "name": "greet", "arguments": {"lang": "go"}},
    ],
}


def _wire(model: Any) -> Any:
    """A pydantic result as it travelled on the wire (camelCase, no unset defaults)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)


async def _python_report() -> dict[str, Any]:
    """What the Python SDK's client sees of the same server, in the shape of `ts_client.mjs`'s report."""
    command, *args = server_command(*SERVE)
    report: dict[str, Any] = {"pages": [], "prompts": [], "errors": {}}
    async with Client(StdioServerParameters(command=command, args=args), mode="legacy") as client:
        report["protocolVersion"] = client.session.protocol_version
        cursor: str | None = None
        while True:
            page = await client.list_prompts(cursor=cursor, cache_mode="bypass")
            report["pages"].append([p.name for p in page.prompts])
            report["prompts"].extend(_wire(p) for p in page.prompts)
            cursor = page.next_cursor
            if cursor is None:
                break
        report["get"] = _wire(await client.get_prompt(PLAN["get"]["name"], PLAN["get"]["arguments"]))
        completion = PLAN["complete"]
        report["complete"] = _wire(
            await client.complete(
                PromptReference(type="ref/prompt", name=completion["prompt"]),
                {"name": completion["argument"], "value": completion["value"]},
            )
        )
        for case in PLAN["errors"]:
            try:
                await client.get_prompt(case["name"], case["arguments"])
            except MCPError as error:
                report["errors"][case["label"]] = {
                    "code": error.error.code,
                    "message": error.error.message,
                    "data": error.error.data,
                }
    return report


@pytest.fixture(scope="module")
def ts_report(tools: InteropTools, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    plan = tmp_path_factory.mktemp("ts-client") / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    run = run_tool(
        [tools.node, SCRIPT, plan, *server_command(*SERVE)],
        env={"MCP_TS_SDK_HOME": str(tools.ts_sdk_home)},
        timeout=60,
    )
    assert run.returncode == 0, run.describe()
    report: dict[str, Any] = json.loads(run.stdout)
    print(f"[interop] TypeScript SDK {report['sdkVersion']} negotiated {report['protocolVersion']}")
    return report


@pytest.fixture
def ts_check(ts_report: dict[str, Any], compat: CompatRecorder) -> Callable[[str], None]:
    """Names the compatibility-table row of a test about the TypeScript client."""

    def describe(check: str) -> None:
        compat.describe(
            client=f"TypeScript SDK {ts_report['sdkVersion']} (Client)",
            protocol=str(ts_report["protocolVersion"]),
            transport="stdio",
            check=check,
        )

    return describe


def test_typescript_client_negotiates_the_newest_handshake_revision(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("initialize")
    assert ts_report["protocolVersion"] == "2025-11-25"
    assert ts_report["serverVersion"]["name"] == "mcp-notebook"
    assert ts_report["capabilities"]["prompts"] == {"listChanged": True}
    assert "completions" in ts_report["capabilities"]


def test_typescript_client_follows_every_cursor_to_the_end_of_the_list(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("prompts/list, paged")
    assert ts_report["pages"] == [PROMPTS[0:2], PROMPTS[2:4], PROMPTS[4:]]


async def test_typescript_and_python_clients_see_the_same_prompts(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("same view as the Python SDK")
    python = await _python_report()
    assert ts_report["protocolVersion"] == python["protocolVersion"]
    assert ts_report["pages"] == python["pages"]
    assert ts_report["prompts"] == python["prompts"]
    assert ts_report["get"] == python["get"]
    assert ts_report["complete"] == python["complete"]
    assert {label: e["code"] for label, e in ts_report["errors"].items()} == {
        label: e["code"] for label, e in python["errors"].items()
    }
    assert {label: e["data"] for label, e in ts_report["errors"].items()} == {
        label: e["data"] for label, e in python["errors"].items()
    }


async def test_typescript_client_and_our_prompt_client_agree_across_eras(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("same view as mcp-notebook's PromptClient")
    command, *args = server_command(*SERVE)
    # PromptClient probes and so speaks 2026-07-28 to our server: the prompts must not depend on the era.
    async with PromptClient(ServerConfig(name="interop", command=command, args=tuple(args))) as client:
        assert client.protocol_version == "2026-07-28"
        prompts = await client.list_prompts()
        rendered = await client.get_prompt(PLAN["get"]["name"], PLAN["get"]["arguments"])
        completion = await client.complete(PLAN["complete"]["prompt"], PLAN["complete"]["argument"], "PY")
        errors: dict[str, tuple[int | None, Any]] = {}
        for case in PLAN["errors"]:
            with pytest.raises(ServerError) as caught:
                await client.get_prompt(case["name"], case["arguments"])
            errors[case["label"]] = (caught.value.code, caught.value.data)
    # The wire tells a default in the description's words too; our client moves it onto the argument.
    seen = [
        (
            p.name,
            p.title,
            p.description,
            [(a["name"], a["required"], a.get("description")) for a in to_mcp_prompt_entry(p).get("arguments", [])],
        )
        for p in prompts
    ]
    assert any(a.default is not None for p in prompts for a in p.arguments)
    assert seen == [
        (
            p["name"],
            p.get("title"),
            p.get("description"),
            [(a["name"], a.get("required", False), a.get("description")) for a in p.get("arguments", [])],
        )
        for p in ts_report["prompts"]
    ]
    assert [(m.role, m.content.type, getattr(m.content, "text", None)) for m in rendered.messages] == [
        (m["role"], m["content"]["type"], m["content"].get("text")) for m in ts_report["get"]["messages"]
    ]
    assert list(completion.values) == ts_report["complete"]["completion"]["values"]
    assert errors == {label: (e["code"], e["data"]) for label, e in ts_report["errors"].items()}


def test_typescript_client_renders_a_prompt_with_its_arguments(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("prompts/get")
    greet = next(p for p in ts_report["prompts"] if p["name"] == "greet")
    assert greet["title"] == "Greet someone"
    assert [(a["name"], a.get("required", False)) for a in greet["arguments"]] == [("name", True), ("lang", False)]
    assert ts_report["get"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Say hello to Ada in rust."}}
    ]


def test_typescript_client_completes_an_argument_by_case_insensitive_prefix(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("completion/complete")
    assert ts_report["complete"]["completion"] == {"values": ["python", "pypy"], "total": 2, "hasMore": False}


def test_typescript_client_gets_invalid_params_for_an_unknown_prompt(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("-32602 unknown prompt")
    error = ts_report["errors"]["unknown prompt"]
    assert error["code"] == -32602
    assert "no_such_prompt" in error["message"]


def test_typescript_client_gets_invalid_params_for_a_missing_argument(
    ts_report: dict[str, Any], ts_check: Callable[[str], None]
) -> None:
    ts_check("-32602 missing argument")
    error = ts_report["errors"]["missing argument"]
    assert error["code"] == -32602
    assert "name" in error["message"]
    assert error["data"]["missing"] == ["name"]
