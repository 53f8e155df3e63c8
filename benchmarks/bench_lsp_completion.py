"""Slash-command completion speed: `mcp-notebook-lsp` with 10,000 prompts, through a real LSP client.

The bridge is started the way an editor starts it (its console script over
stdio), with an MCP configuration naming several `mcp-notebook serve` processes
that publish the prompts of a generated notebook corpus. Once every prompt is
in the bridge's cache, a pytest-lsp `LanguageClient` (VS Code's capabilities)
asks for completions and times each round trip:

* `/` on an empty slash line: the whole catalogue, cut to the best 100;
* typed queries that hit each ranking tier (prefix, word start, substring, fuzzy);
* for reference, a completion request away from any slash position: the cost
  of an LSP round trip that does no work, so `ratio` shows what ranking adds.

Targets: `/` median under 20 ms and p99 under 50 ms.

Start-up, measured first, from fresh bridges (`--starts` of them) with one
local `mcp-notebook serve` of 10 prompts, as an editor meets it: the time from
spawning the bridge to its answer to `initialize`, then from that answer to
the first `/` that lists something (the "connecting to 1 server…" item), and
to the first `/` that lists the server's prompts. The client sends its first
`/` right after `initialized`, and asks again after each status line the
bridge logs (as an editor asks again while the user types). Target: prompts
within 1 s of the answer to `initialize`. The same from a bridge started again
(the server's list stored by the earlier start, as the bridge keeps it in the
user's cache folder): target 300 ms. Each bridge here keeps its stored lists in
the benchmark's own folder, never the user's.

Example: `python -m benchmarks.bench_lsp_completion --servers 4 --prompts 10000 --requests 500`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

from .corpus import create_corpus
from .report import FigureTable, summarize, write_json
from .servers import describe_environment, ours_command

__all__ = ["bridge_command", "main"]

MEDIAN_TARGET_MS = 20.0
P99_TARGET_MS = 50.0
FIRST_PROMPTS_TARGET_MS = 1000.0  # after the answer to initialize
WARM_PROMPTS_TARGET_MS = 300.0  # the same, when the bridge stored the server's list at an earlier start
STARTUP_PROMPTS = 10
URI = "file:///bench/notes.md"
# Line 0 is the slash line; the others are typed queries, then a plain line for the empty round trip.
QUERIES = {
    "`/`": "/",
    "prefix `/s1:nb0`": "/s1:nb0",
    "word start `/p07`": "/p07",
    "substring `/12_p0`": "/12_p0",
    "fuzzy `/s2n3p1`": "/s2n3p1",
}
_READY = re.compile(r"(\S+) ready \((\d+) prompts\)")


def bridge_command(config: Path) -> list[str]:
    """`mcp-notebook-lsp` through the console script next to this interpreter (or `-m lsp_bridge`)."""
    script = Path(sys.executable).parent / "mcp-notebook-lsp"
    launcher = [str(script)] if script.exists() else [sys.executable, "-m", "lsp_bridge"]
    return [*launcher, "--config", str(config), "--no-default-config", "--no-kernels", "--timeout", "300"]


def _write_config(folder: Path, servers: int, prompts: int) -> Path:
    """`servers` corpora of `prompts / servers` prompts each, and an mcp.json serving each one."""
    per_server = max(1, prompts // servers)
    per_notebook = min(20, per_server)
    entries = {}
    for index in range(servers):
        corpus = create_corpus(folder / f"s{index}", notebooks=max(1, per_server // per_notebook), prompts=per_notebook)
        command, *args = ours_command("serve", str(corpus.folder), "--no-watch", "--page-size", "500")
        entries[f"s{index}"] = {"command": command, "args": args}
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return config


async def _wait_until_loaded(client: LanguageClient, servers: int, deadline: float) -> int:
    """Wait for the status line that shows every server ready; returns the number of prompts."""

    def loaded() -> int | None:
        for message in reversed(client.log_messages):
            ready = _READY.findall(message.message)
            if len(ready) == servers:
                return sum(int(count) for _, count in ready)
        return None

    async def wait() -> int:
        while (total := loaded()) is None:
            await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)
        return total

    return await asyncio.wait_for(wait(), deadline)


async def _complete(client: LanguageClient, line: int, character: int) -> tuple[float, int]:
    params = types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=line, character=character)
    )
    began = time.perf_counter()
    result = await client.text_document_completion_async(params)
    elapsed = time.perf_counter() - began
    items = result.items if isinstance(result, types.CompletionList) else (result or [])
    return elapsed, len(items)


async def _measure(config: Path, servers: int, requests: int) -> tuple[FigureTable, dict[str, float]]:
    client = make_test_lsp_client()
    began = time.perf_counter()
    await client.start_io(*bridge_command(config), env=_with_cache(config.parent / "stored-lists"))
    try:
        await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
        initialized = time.perf_counter()
        total = await _wait_until_loaded(client, servers, deadline=600)
        loaded = time.perf_counter()
        lines = [*QUERIES.values(), "plain text"]
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=URI, language_id="markdown", version=1, text="\n".join(lines))
            )
        )
        empty_line = len(lines) - 1
        for _ in range(20):  # warm-up: first requests pay for lazy work on both sides
            for number, query in enumerate(QUERIES.values()):
                await _complete(client, number, len(query))
            await _complete(client, empty_line, 3)
        samples: dict[str, list[float]] = {name: [] for name in QUERIES}
        empty: list[float] = []
        counts: dict[str, int] = {}
        for _ in range(requests):
            for number, (name, query) in enumerate(QUERIES.items()):
                elapsed, counts[name] = await _complete(client, number, len(query))
                samples[name].append(elapsed)
            empty.append((await _complete(client, empty_line, 3))[0])
        await client.shutdown_session()
    finally:
        await client.stop()  # type: ignore[no-untyped-call]

    baseline = summarize(empty)
    table = FigureTable(f"Completion through a real LSP client, {total} prompts on {servers} servers")
    table.add("empty completion (no slash): median", baseline.median)
    for name, values in samples.items():
        summary = summarize(values)
        slash = name == "`/`"
        table.add(f"{name}: median ({counts[name]} items)", summary.median, target=MEDIAN_TARGET_MS if slash else None)
        table.add(f"{name}: p99", summary.p99, target=P99_TARGET_MS if slash else None)
        table.add(f"{name}: median / empty median", summary.median / baseline.median, unit="x")
    table.add("initialize answered after spawn", (initialized - began) * 1000)
    table.add("every prompt in the cache after spawn", (loaded - began), unit="s")
    return table, {"prompts": float(total), "servers": float(servers), "requests": float(requests)}


def _with_cache(cache: Path) -> dict[str, str]:
    """The bridge's environment: its stored prompt lists in `cache`, never in the user's cache folder."""
    return {**os.environ, "MCP_NOTEBOOK_CACHE_DIR": str(cache)}


async def _start_once(config: Path, cache: Path) -> tuple[float, float, float]:
    """One fresh bridge: seconds to `initialize` answered, then from there to the first item and the first prompt.

    With the server's list stored in `cache` by an earlier start, the first `/` lists it at once.
    """
    client = make_test_lsp_client()
    began = time.perf_counter()
    await client.start_io(*bridge_command(config), env=_with_cache(cache))
    try:
        await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
        initialized = time.perf_counter()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=URI, language_id="markdown", version=1, text="/")
            )
        )
        first_item: float | None = None
        while True:
            seen = len(client.log_messages)
            _, count = await _complete(client, 0, 1)
            answered = time.perf_counter()
            if count and first_item is None:
                first_item = answered
            if count > 1 or (count == 1 and not _connecting_only(client)):
                break
            # Asked again once the bridge logs a status change (a server ready), as an editor asks while typing.
            while len(client.log_messages) == seen:
                await asyncio.wait_for(client.wait_for_notification(types.WINDOW_LOG_MESSAGE), 120)
        await client.shutdown_session()
    finally:
        await client.stop()  # type: ignore[no-untyped-call]
    assert first_item is not None
    return initialized - began, first_item - initialized, answered - initialized


def _connecting_only(client: LanguageClient) -> bool:
    """Whether no server is ready yet (by the bridge's last status line)."""
    lines = [m.message for m in client.log_messages if m.message.startswith("MCP servers:")]
    return not lines or not _READY.search(lines[-1])


async def _measure_startup(config: Path, starts: int, scratch: Path) -> FigureTable:
    initialize, first_item, first_prompts, total, warm = [], [], [], [], []
    stored = scratch / "stored-lists"
    # Unmeasured: bytecode and page cache warm, as after any earlier start; the server's list is stored.
    await _start_once(config, stored)
    for start in range(starts):
        answered, item, prompts = await _start_once(config, scratch / f"nothing-stored-{start}")
        initialize.append(answered)
        first_item.append(item)
        first_prompts.append(prompts)
        total.append(answered + prompts)
        warm.append((await _start_once(config, stored))[2])
    table = FigureTable(f"Editor start-up, one local server ({STARTUP_PROMPTS} prompts), median of {starts} starts")
    table.add("spawn -> initialize answered", summarize(initialize).median)
    table.add("initialize answered -> first `/` with an item", summarize(first_item).median)
    table.add(
        "initialize answered -> first `/` with prompts",
        summarize(first_prompts).median,
        target=FIRST_PROMPTS_TARGET_MS,
    )
    table.add("spawn -> first `/` with prompts", summarize(total).median)
    table.add(
        "initialize answered -> first `/` with prompts, a later start (the stored list)",
        summarize(warm).median,
        target=WARM_PROMPTS_TARGET_MS,
    )
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time slash-command completion in mcp-notebook-lsp.")
    parser.add_argument("--servers", type=int, default=4, help="mcp-notebook serve processes behind the bridge")
    parser.add_argument("--prompts", type=int, default=10_000, help="prompts in total, split between the servers")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per query")
    parser.add_argument("--starts", type=int, default=9, help="fresh bridges timed for the start-up figures")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: proves the script works")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.servers, args.prompts, args.requests, args.starts = 2, 40, 10, 1
    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as scratch:
        (Path(scratch) / "startup").mkdir()
        startup_config = _write_config(Path(scratch) / "startup", 1, STARTUP_PROMPTS)
        startup = asyncio.run(_measure_startup(startup_config, args.starts, Path(scratch) / "startup"))
        config = _write_config(Path(scratch), args.servers, args.prompts)
        table, facts = asyncio.run(_measure(config, args.servers, args.requests))
    print(startup)
    print(table)
    if args.json:
        write_json(args.json, [table, startup], {"environment": describe_environment(), **facts})


if __name__ == "__main__":
    main()
