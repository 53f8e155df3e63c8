"""Side by side over stdio: `mcp-notebook serve CORPUS` vs a bare SDK `MCPServer` serving the same prompts.

Measured in one run, on the same generated corpus, with the servers taking
turns so that neither gets a quieter machine:

* process start to the first `prompts/list` answer (spawn, handshake, list);
* `prompts/get` round trip on one connection (median and p99);
* the full listing, following `nextCursor` to the end (the SDK server sends
  one page, ours pages: the total time to get every prompt is compared);
* optionally (`--sdk-client`) process start to the first list through the SDK's
  own `Client`, the path real Python clients take.

Before measuring, both listings are compared so the figures are known to be
about the same prompts. Servers take turns throughout (starts alternate; on
open connections, runs of 25 requests alternate), since the machine's load
drifts during a run. Example:
`python -m benchmarks.bench_server --notebooks 50 --prompts 10 --round-trips 500`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .corpus import Corpus, create_corpus, prompt_arguments_for
from .report import ComparisonTable, summarize, write_json
from .servers import ROOT, baseline_command, describe_environment, ours_command, warm_index
from .stdio_rpc import Era, RawStdioClient

__all__ = ["ServerUnderTest", "compare_listings", "main", "measure_round_trips", "measure_start", "run"]


@dataclass(frozen=True, slots=True)
class ServerUnderTest:
    label: str
    argv: tuple[str, ...]
    round_trips: bool = True  # False: only its listing is measured

    def connect(self, era: Era) -> RawStdioClient:
        return RawStdioClient(self.argv, era=era, cwd=ROOT)


@dataclass(frozen=True, slots=True)
class StartSample:
    to_session: float  # process start → initialize (or server/discover) answer, seconds
    to_first_list: float  # process start → first prompts/list answer, seconds
    cpu: float | None  # CPU seconds the server used up to that answer


def measure_start(server: ServerUnderTest, era: Era) -> StartSample:
    """Spawn the server, open a session and ask for the first page of prompts; time both answers."""
    with server.connect(era) as client:
        client.open_session()
        to_session = time.perf_counter() - client.started_at
        client.request("prompts/list", {})
        to_first_list = time.perf_counter() - client.started_at
        cpu = client.cpu_seconds()
    return StartSample(to_session, to_first_list, cpu)


def measure_round_trips(
    client: RawStdioClient, names: Sequence[str], count: int, warmup: int = 20, start: int = 0
) -> list[float]:
    """`prompts/get` one after another on one connection, cycling through `names` from `start`; seconds each."""
    samples: list[float] = []
    for index in range(warmup + count):
        name = names[(start + index) % len(names)]
        began = time.perf_counter()
        client.request("prompts/get", {"name": name, "arguments": prompt_arguments_for(name)})
        if index >= warmup:
            samples.append(time.perf_counter() - began)
    return samples


def measure_full_listing(client: RawStdioClient, repeats: int) -> tuple[list[float], int]:
    """Seconds to follow `nextCursor` to the end, `repeats` times; and the number of pages."""
    samples: list[float] = []
    pages = 0
    for _ in range(repeats):
        began = time.perf_counter()
        _, pages = client.list_all_prompts()
        samples.append(time.perf_counter() - began)
    return samples, pages


def _listing_key(prompt: dict[str, Any]) -> tuple[Any, ...]:
    arguments = tuple(
        (a["name"], a.get("description"), bool(a.get("required", False))) for a in prompt.get("arguments") or ()
    )
    return (prompt.get("title"), prompt.get("description"), arguments)


def compare_listings(ours: Sequence[dict[str, Any]], sdk: Sequence[dict[str, Any]]) -> list[str]:
    """Differences between two `prompts/list` results (names, titles, descriptions, arguments)."""
    ours_by_name = {p["name"]: p for p in ours}
    sdk_by_name = {p["name"]: p for p in sdk}
    problems: list[str] = []
    if missing := sorted(set(sdk_by_name) - set(ours_by_name)):
        problems.append(f"{len(missing)} prompts only the SDK server lists, e.g. {missing[:3]}")
    if extra := sorted(set(ours_by_name) - set(sdk_by_name)):
        problems.append(f"{len(extra)} prompts only mcp-notebook lists, e.g. {extra[:3]}")
    differing = [
        n
        for n in sorted(set(ours_by_name) & set(sdk_by_name))
        if _listing_key(ours_by_name[n]) != _listing_key(sdk_by_name[n])
    ]
    if differing:
        name = differing[0]
        problems.append(
            f"{len(differing)} prompts differ, e.g. {name}: ours {_listing_key(ours_by_name[name])} "
            f"vs SDK {_listing_key(sdk_by_name[name])}"
        )
    return problems


def _texts(result: dict[str, Any]) -> list[str]:
    return [m["content"].get("text", "") for m in result.get("messages", [])]


@dataclass
class ConnectionFigures:
    prompts: list[dict[str, Any]]
    sample_render: list[str]
    round_trips: list[float] = field(default_factory=list)
    listing: list[float] = field(default_factory=list)
    pages: int = 0
    round_trip_cpu: float | None = 0.0  # server CPU seconds over all measured round trips
    listing_cpu: float | None = 0.0  # server CPU seconds over all measured listings


def _add_cpu(total: float | None, before: float | None, after: float | None) -> float | None:
    return None if total is None or before is None or after is None else total + after - before


# Requests per turn when servers take turns on open connections: short turns, so that drift in
# machine load (other processes) hits every server alike.
_TURN = 25


def _turns(labels: Sequence[str], turn: int) -> Sequence[str]:
    return labels if turn % 2 == 0 else list(reversed(labels))


def _measure_connections(
    servers: Sequence[ServerUnderTest], era: Era, names: Sequence[str], args: argparse.Namespace
) -> dict[str, ConnectionFigures]:
    """Open one connection per server, then let them take turns: round trips in short runs, then listings."""
    with ExitStack() as stack:
        clients: dict[str, RawStdioClient] = {}
        figures: dict[str, ConnectionFigures] = {}
        for server in servers:
            client = stack.enter_context(server.connect(era))
            client.open_session()
            prompts, _ = client.list_all_prompts()  # also warms the server's listing path
            first = names[0]
            sample = client.request("prompts/get", {"name": first, "arguments": prompt_arguments_for(first)})
            measure_round_trips(client, names, 0)  # warm-up
            clients[server.label] = client
            figures[server.label] = ConnectionFigures(prompts, _texts(sample))
        trippers = [s.label for s in servers if s.round_trips]
        done = 0
        for turn in itertools.count():
            if done >= args.round_trips:
                break
            count = min(_TURN, args.round_trips - done)
            for label in _turns(trippers, turn):
                figure, before = figures[label], clients[label].cpu_seconds()
                figure.round_trips += measure_round_trips(clients[label], names, count, 0, done)
                figure.round_trip_cpu = _add_cpu(figure.round_trip_cpu, before, clients[label].cpu_seconds())
            done += count
        for turn in range(args.listings):
            for label in _turns(list(clients), turn):
                figure, before = figures[label], clients[label].cpu_seconds()
                samples, figure.pages = measure_full_listing(clients[label], 1)
                figure.listing += samples
                figure.listing_cpu = _add_cpu(figure.listing_cpu, before, clients[label].cpu_seconds())
    return figures


def _measure_sdk_client_start(server: ServerUnderTest) -> float:
    """Process start → first `prompts/list` through the SDK's `Client` (auto mode: discover, then fallback)."""
    from mcp import Client, StdioServerParameters  # heavy; only this optional path needs it

    async def connect_and_list() -> float:
        params = StdioServerParameters(command=server.argv[0], args=list(server.argv[1:]), cwd=str(ROOT))
        began = time.perf_counter()
        async with Client(params) as client:
            await client.list_prompts(cache_mode="bypass")
            return time.perf_counter() - began

    return asyncio.run(connect_and_list())


def _alternating(
    servers: Sequence[ServerUnderTest], repeats: int, measure: Callable[[ServerUnderTest], Any]
) -> dict[str, list[Any]]:
    # Take turns, and swap who goes first each round, so drift in machine load hits both alike.
    results: dict[str, list[Any]] = {s.label: [] for s in servers}
    for round_index in range(repeats):
        order = servers if round_index % 2 == 0 else list(reversed(servers))
        for server in order:
            results[server.label].append(measure(server))
    return results


def _add_cpu_rows(
    table: ComparisonTable,
    starts: dict[str, list[StartSample]],
    figures: dict[str, ConnectionFigures],
    args: argparse.Namespace,
) -> None:
    """Server CPU time, which other load on the machine barely disturbs (Linux only)."""
    start_cpu = {label: [s.cpu for s in samples if s.cpu is not None] for label, samples in starts.items()}
    if start_cpu["ours"] and start_cpu["sdk"]:
        table.add(
            "server CPU, start to first prompts/list answer (median)",
            summarize(start_cpu["ours"]).median,
            summarize(start_cpu["sdk"]).median,
        )
    ours_gets, sdk_gets = figures["ours"].round_trip_cpu, figures["sdk"].round_trip_cpu
    if ours_gets is not None and sdk_gets is not None and args.round_trips:
        table.add("server CPU per prompts/get", 1000 * ours_gets / args.round_trips, 1000 * sdk_gets / args.round_trips)
    paged, one_page, sdk = (figures[label].listing_cpu for label in ("ours", "ours-one-page", "sdk"))
    if paged is not None and one_page is not None and sdk is not None and args.listings:
        sdk_ms = 1000 * sdk / args.listings
        table.add("server CPU per full listing (ours paged)", 1000 * paged / args.listings, sdk_ms)
        table.add("server CPU per full listing (ours in one page)", 1000 * one_page / args.listings, sdk_ms)


def run(args: argparse.Namespace, corpus: Corpus) -> ComparisonTable:
    """Measure both servers on `corpus` and return the table (also printed by `main`)."""
    # Ours starts from its notebook index, kept beside the corpus, as every start after the first does.
    index = warm_index(corpus.folder)
    serve = ours_command("serve", str(corpus.folder), "--cache-dir", str(index), *args.serve_args)
    ours = ServerUnderTest("ours", tuple(serve))
    sdk = ServerUnderTest("sdk", tuple(baseline_command([corpus.folder])))
    servers = [ours, sdk]
    era: Era = args.era

    for server in servers:  # warm-up: bytecode caches, page cache
        measure_start(server, era)

    # The same listing from ours in one page separates the cost of paging from the cost per prompt.
    one_page = ServerUnderTest("ours-one-page", (*ours.argv, "--page-size", str(max(corpus.size, 1))), False)
    figures = _measure_connections([*servers, one_page], era, corpus.prompt_names, args)
    problems = compare_listings(figures["ours"].prompts, figures["sdk"].prompts)
    if figures["ours"].sample_render != figures["sdk"].sample_render:
        problems.append(
            f"rendered {corpus.prompt_names[0]} differs: ours {figures['ours'].sample_render!r} "
            f"vs SDK {figures['sdk'].sample_render!r}"
        )
    for problem in problems:
        print(f"warning: the servers do not serve the same prompts: {problem}")
    if any("only" in p for p in problems):
        raise SystemExit("the two servers publish different prompt names; the comparison would be meaningless")

    starts = _alternating(servers, args.starts, lambda s: measure_start(s, era))
    table = ComparisonTable(
        f"Server side by side ({era} era): {len(corpus.notebooks)} notebooks x {corpus.prompts_per_notebook} "
        f"prompts = {corpus.size} prompts; times in ms"
    )
    start_ours = summarize([s.to_first_list for s in starts["ours"]])
    start_sdk = summarize([s.to_first_list for s in starts["sdk"]])
    table.add(
        f"process start -> first prompts/list answer (median of {args.starts})",
        start_ours.median,
        start_sdk.median,
        1.0,
    )
    table.add(
        "process start -> session open (median)",
        summarize([s.to_session for s in starts["ours"]]).median,
        summarize([s.to_session for s in starts["sdk"]]).median,
    )
    trips_ours = summarize(figures["ours"].round_trips)
    trips_sdk = summarize(figures["sdk"].round_trips)
    table.add(f"prompts/get round trip, median (n={args.round_trips})", trips_ours.median, trips_sdk.median, 1.0)
    table.add(f"prompts/get round trip, p99 (n={args.round_trips})", trips_ours.p99, trips_sdk.p99, 1.0)
    sdk_listing = summarize(figures["sdk"].listing).median
    table.add(
        f"full listing, median of {args.listings} (ours {figures['ours'].pages} pages, SDK {figures['sdk'].pages})",
        summarize(figures["ours"].listing).median,
        sdk_listing,
    )
    one_page_listing = summarize(figures["ours-one-page"].listing).median
    table.add("full listing, ours in one page (--page-size = all)", one_page_listing, sdk_listing)
    _add_cpu_rows(table, starts, figures, args)
    if args.sdk_client:
        client_starts = _alternating(servers, max(1, args.starts // 2), _measure_sdk_client_start)
        table.add(
            "process start -> first list via SDK Client (auto mode, median)",
            summarize(client_starts["ours"]).median,
            summarize(client_starts["sdk"]).median,
        )
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10, help="prompt cells per notebook")
    parser.add_argument("--starts", type=int, default=15, help="process starts per server")
    parser.add_argument("--round-trips", type=int, default=500, help="prompts/get requests per server")
    parser.add_argument("--listings", type=int, default=20, help="full paginated listings per server")
    parser.add_argument("--era", choices=("handshake", "modern"), default="handshake")
    parser.add_argument("--sdk-client", action="store_true", help="also time start-to-list through the SDK Client")
    parser.add_argument("--serve-args", nargs=argparse.REMAINDER, default=[], help="extra `mcp-notebook serve` options")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        table = run(args, corpus)
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
