"""Save-to-notification latency: from saving a notebook to `notifications/prompts/list_changed`.

Starts `mcp-notebook serve CORPUS` over stdio and subscribes the way a client
does (handshake era: open a session and list once, then read the notification
lines; modern era: `subscriptions/listen` with `promptsListChanged`). Then,
`--saves` times, saves a notebook with one prompt's description changed (an
atomic save, as Jupyter does: write elsewhere, rename over the file) and times
from the save to the notification after which `prompts/get` serves the new
description (notifications that came before it, and duplicates after it, are
counted). First, it probes how long `prompts/get` can wait right after the
session opened, while the watcher starts.

Target: under 500 ms. Example: `python -m benchmarks.bench_reload --saves 10`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .corpus import Corpus, create_corpus, prompt_arguments_for, prompt_name, revise_notebook
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command, warm_index
from .stdio_rpc import Era, RawStdioClient, ServerStalledError

__all__ = ["SaveFigures", "main", "measure_saves", "probe_responsiveness", "subscribe"]

LIST_CHANGED = "notifications/prompts/list_changed"
RELOAD_TARGET_MS = 500.0
# After a notification, how long to keep listening for a duplicate from the same save.
_QUIET_SECONDS = 0.3
_SAVE_TIMEOUT = 10.0


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


def _serves(client: RawStdioClient, corpus: Corpus, notebook: int, revision: int) -> bool:
    """Whether the server already serves `revision` of the first prompt of `notebook`."""
    name = prompt_name(notebook, 0, notebooks=len(corpus.notebooks), prompts=corpus.prompts_per_notebook)
    result = client.request("prompts/get", {"name": name, "arguments": prompt_arguments_for(name)})
    return f"Rev {revision}." in (result.get("description") or "")


@dataclass
class SaveFigures:
    latencies: list[float] = field(default_factory=list)  # save -> the notification after which it is served
    early: int = 0  # notifications after which the save was not served yet (an earlier change's, or too soon)
    duplicates: int = 0  # further notifications for a save already served


def _save_and_wait(
    client: RawStdioClient, corpus: Corpus, notebook: int, revision: int, scratch: Path, figures: SaveFigures
) -> float:
    """Save, then read notifications until the save is served; seconds to that notification."""
    began = time.perf_counter()
    revise_notebook(corpus, notebook, revision, scratch=scratch)
    while True:
        client.wait_for(_is_list_changed, timeout=_SAVE_TIMEOUT)
        elapsed = time.perf_counter() - began
        # A notification still in flight from an earlier change must not be taken for this save's.
        if _serves(client, corpus, notebook, revision):
            figures.duplicates += sum(1 for m in client.drain(_QUIET_SECONDS) if _is_list_changed(m))
            return elapsed
        figures.early += 1


def _wait_until_watching(client: RawStdioClient, corpus: Corpus, scratch: Path, attempts: int = 20) -> int:
    # The protocol does not say when the watcher is ready; save until a save is announced and served.
    for attempt in range(1, attempts + 1):
        try:
            _save_and_wait(client, corpus, 0, -attempt, scratch, SaveFigures())  # negative: warm-up revisions
        except ServerStalledError:
            continue
        return attempt
    raise SystemExit("the server never sent prompts/list_changed after a save; is it watching the folder?")


def measure_saves(client: RawStdioClient, corpus: Corpus, saves: int, scratch: Path, first: int = 0) -> SaveFigures:
    """Save `saves` notebooks in turn and time each save to the notification that announces it.

    Each save writes revision `first`, `first + 1`, ... of its notebook: another series of saves of the
    same corpus starts where the last one ended, so that every save changes something.
    """
    figures = SaveFigures()
    for revision in range(first, first + saves):
        notebook = revision % len(corpus.notebooks)
        figures.latencies.append(_save_and_wait(client, corpus, notebook, revision, scratch, figures))
    return figures


def probe_responsiveness(client: RawStdioClient, corpus: Corpus, seconds: float) -> list[float]:
    """Back-to-back `prompts/get` for `seconds` right after the session opened; seconds per request.

    A server that re-reads its notebooks on the event loop (when its watcher
    starts, say) shows here as one very long wait.
    """
    name = corpus.prompt_names[0]
    samples: list[float] = []
    until = time.perf_counter() + seconds
    while time.perf_counter() < until or not samples:
        began = time.perf_counter()
        client.request("prompts/get", {"name": name, "arguments": prompt_arguments_for(name)}, timeout=60)
        samples.append(time.perf_counter() - began)
    return samples


def run(args: argparse.Namespace, corpus: Corpus, scratch: Path) -> FigureTable:
    era: Era = args.era
    # From its notebook index beside the corpus (as every start after the first), never the user's own.
    argv = ours_command("serve", str(corpus.folder), "--cache-dir", str(warm_index(corpus.folder)), *args.serve_args)
    with RawStdioClient(argv, era=era, cwd=ROOT) as client:
        subscribe(client)
        probe = probe_responsiveness(client, corpus, args.probe_seconds)
        warmups = _wait_until_watching(client, corpus, scratch)
        figures = measure_saves(client, corpus, args.saves, scratch)
    summary = summarize(figures.latencies)
    table = FigureTable(
        f"Save-to-notification ({era} era, {corpus.size} prompts served, {args.saves} saves; "
        f"watcher ready after {warmups} warm-up save(s))"
    )
    table.add("save -> notifications/prompts/list_changed, median", summary.median, target=RELOAD_TARGET_MS)
    table.add("save -> notifications/prompts/list_changed, max", summary.maximum, target=RELOAD_TARGET_MS)
    table.add("notifications that came before the save was served", figures.early, unit="total")
    table.add("duplicate notifications for a save already served", figures.duplicates, unit="total")
    table.add(
        f"longest prompts/get wait in the first {args.probe_seconds:g} s after the session opened",
        summarize(probe).maximum,
    )
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Time from saving a notebook to the list_changed notification.")
    parser.add_argument("--notebooks", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=10, help="prompt cells per notebook")
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--probe-seconds", type=float, default=3.0, help="how long to probe responsiveness at start")
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
