"""What every client of every revision must get from `mcp-notebook serve` (the corpus of `write_corpus`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from e2e_processes import MODERN

Request = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]

EXPECTED_NAMES = ["greet", "note0", "note1", "note2", "explain"]
CACHE_KEYS = {"ttlMs", "cacheScope", "resultType"}


async def list_every_page(request: Request) -> tuple[list[dict[str, Any]], int]:
    """Every listed prompt, following `nextCursor` to the end; and the number of pages."""
    prompts: list[dict[str, Any]] = []
    params: dict[str, Any] | None = None
    pages = 0
    while True:
        reply = await request("prompts/list", params)
        result = reply["result"]
        pages += 1
        prompts += result["prompts"]
        if "nextCursor" not in result:
            return prompts, pages
        params = {"cursor": result["nextCursor"]}


async def check_a_client_of(revision: str, request: Request) -> None:
    """List (paged to the end), get, complete, read a resource, and every prompt error, as `revision` sees them."""
    modern = revision == MODERN

    prompts, pages = await list_every_page(request)
    assert [prompt["name"] for prompt in prompts] == EXPECTED_NAMES
    assert pages == 3  # served with --page-size 2
    greet = prompts[0]
    if revision >= "2025-06-18":
        assert greet["title"] == "Greet"
        assert greet["arguments"][0]["title"] == "Who"
    else:
        assert "title" not in greet and "_meta" not in greet
        assert all("title" not in argument for argument in greet["arguments"])
    assert "icons" not in greet or revision >= "2025-11-25"
    assert [(a["name"], a["required"]) for a in greet["arguments"]] == [("who", True), ("style", False)]

    first_page = (await request("prompts/list", None))["result"]
    assert (set(first_page) >= CACHE_KEYS) if modern else not (CACHE_KEYS & set(first_page))

    got = (await request("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}}))["result"]
    assert got["messages"][0]["role"] == "user"
    assert got["messages"][0]["content"]["type"] == "text"
    assert "Greet Ada warmly." in got["messages"][0]["content"]["text"]
    assert ("resultType" in got) == modern

    completion = (
        await request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "style", "value": "w"},
                "context": {"arguments": {"who": "Ada"}},
            },
        )
    )["result"]["completion"]
    assert completion["values"] == ["warmly", "wittily"]
    assert completion["total"] == 2

    resources = (await request("resources/list", None))["result"]["resources"]
    assert resources, "every published cell is a resource"
    uri = resources[0]["uri"]
    contents = (await request("resources/read", {"uri": uri}))["result"]["contents"]
    assert contents[0]["uri"] == uri
    assert "Greet {{who}} {{style}}." in contents[0]["text"]

    await check_errors(revision, request)


async def check_errors(revision: str, request: Request) -> None:
    unknown = (await request("prompts/get", {"name": "gret", "arguments": {}}))["error"]
    assert unknown["code"] == -32602
    assert unknown["message"].startswith("Unknown prompt: gret")
    assert unknown["data"]["name"] == "gret" and "greet" in unknown["data"]["suggestions"]

    missing = (await request("prompts/get", {"name": "greet", "arguments": {"style": "wittily"}}))["error"]
    assert missing["code"] == -32602
    assert missing["data"] == {"prompt": "greet", "missing": ["who"]}

    extra = (await request("prompts/get", {"name": "greet", "arguments": {"who": "Ada", "mood": "odd"}}))["error"]
    assert extra["code"] == -32602
    assert extra["data"] == {"prompt": "greet", "unknown": ["mood"], "expected": ["who", "style"]}

    cursor = (await request("prompts/list", {"cursor": "forged-cursor"}))["error"]
    assert cursor == {"code": -32602, "message": "Invalid cursor", "data": {"cursor": "forged-cursor"}}

    not_found = (await request("resources/read", {"uri": "notebook://nowhere.ipynb#cell=1"}))["error"]
    assert not_found["code"] == (-32602 if revision == MODERN else -32002)

    completion = (
        await request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
        )
    )["error"]
    assert completion["code"] == -32602
