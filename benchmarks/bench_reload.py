"""Save-to-notification latency: from saving a notebook to `notifications/prompts/list_changed`.

Starts `mcp-notebook serve CORPUS` over stdio and subscribes the way a client
does (handshake era: open a session and list once, then read the notification
lines; modern era: `subscriptions/listen` with `promptsListChanged`). Then,
`--saves` times, saves a notebook with one prompt's description changed (an
atomic save, as Jupyter does: write elsewhere, rename over the file) and times
from the save to the notification. After each notification it checks with
`prompts/get` that the server already serves the new description, and counts
duplicate notifications for the same save.

Target: under 500 ms. Example: `python -m benchmarks.bench_reload --saves 10`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from .corpus import Corpus, create_corpus, prompt_arguments_for, prompt_name, revise_notebook
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command
from .stdio_rpc import Era, RawStdioClient, ServerStalledError

__all__ = ["main", "measure_saves", "subscribe"]

LIST_CHANGED = "notifications/prompts/list_changed"
RELOAD_TARGET_MS = 500.0
# After a notification, how long to keep listening for a duplicate from the same save.
_QUIET_SECONDS = 0.3


def subscribe(client: RawStdioClient) -> None:
    """Become a client that receives `list_changed`, in the client's era."""
    if client.era == "handshake":
        client.open_session()
        client.request("prompts/list", {})  # a session that has asked for prompts is one that wants updates
        return
    client.send(
        {
            "jsonrpc": "2.0",
            "id": "listen",
            "method": "subscriptions/listen",
            "params": {**(client.with_meta({}) or {}), "notifications": {"promptsListChanged": True}},
        }
    )
    client.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged", timeout=30)


def _is_list_changed(message: dict[str, Any]) -> bool:
    return message.get("method") == LIST_CHANGED


def _wait_until_watching(client: RawStdioClient, corpus: Corpus, scratch: Path, attempts: int = 20) -> int:
    # The protocol does not say when the watcher is ready; save until a notification comes back.
    for revision in range(1, attempts + 1):
        revise_notebook(corpus, 0, -revision, scratch=scratch)  # negative revisions: warm-up saves
        try:
            client.wait_for(_is_list_changed, timeout=2.0)
        except ServerStalledError:
            continue
        client.drain(_QUIET_SECONDS)
        return revision
    raise SystemExit("the server never sent prompts/list_changed after a save; is it watching the folder?")


def measure_saves(client: RawStdioClient, corpus: Corpus, saves: int, scratch: Path) -> tuple[list[float], int, int]:
    """Seconds from each save to its notification; plus duplicate notifications and stale answers seen."""
    samples: list[float] = []
    duplicates = 0
    stale = 0
    notebooks = len(corpus.notebooks)
    for revision in range(saves):
        notebook = revision % notebooks
        began = time.perf_counter()
        revise_notebook(corpus, notebook, revision, scratch=scratch)
        client.wait_for(_is_list_changed, timeout=10.0)
        samples.append(time.perf_counter() - began)
        name = prompt_name(notebook, 0, notebooks=notebooks, prompts=corpus.prompts_per_notebook)
        result = client.request("prompts/get", {"name": name, "arguments": prompt_arguments_for(name)})
        if f"Rev {revision}." not in (result.get("description") or ""):
            stale += 1
        duplicates += sum(1 for m in client.drain(_QUIET_SECONDS) if _is_list_changed(m))
    return samples, duplicates, stale


def run(args: argparse.Namespace, corpus: Corpus, scratch: Path) -> FigureTable:
    era: Era = args.era
    argv = ours_command("serve", str(corpus.folder), *args.serve_args)
    with RawStdioClient(argv, era=era, cwd=ROOT) as client:
        subscribe(client)
        warmups = _wait_until_watching(client, corpus, scratch)
        samples, duplicates, stale = measure_saves(client, corpus, args.saves, scratch)
    summary = summarize(samples)
    table = FigureTable(
        f"Save-to-notification ({era} era, {corpus.size} prompts served, {args.saves} saves; "
        f"watcher ready after {warmups} warm-up save(s))"
    )
    table.add("save -> notifications/prompts/list_changed, median", summary.median, target=RELOAD_TARGET_MS)
    table.add("save -> notifications/prompts/list_changed, max", summary.maximum, target=RELOAD_TARGET_MS)
    table.add("duplicate notifications for one save", duplicates, unit="total")
    table.add("prompts/get right after the notification still served the old prompt", stale, unit="times")
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Time from saving a notebook to the list_changed notification.")
    parser.add_argument("--notebooks", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=10, help="prompt cells per notebook")
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--era", choices=("handshake", "modern"), default="handshake")
    parser.add_argument("--serve-args", nargs=argparse.REMAINDER, default=[], help="extra `mcp-notebook serve` options")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        table = run(args, corpus, Path(scratch))
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
