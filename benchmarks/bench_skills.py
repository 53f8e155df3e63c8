"""1,000 skills against 1,000 prompts: `mcp-notebook serve` over stdio, spawn to the first page, then the listing.

Two folders of the same count: 1,000 prompts (the usual corpus, 50 notebooks x 20 prompt cells) and 1,000
skill folders (a `SKILL.md` of about a kilobyte, a reference and a script each: 3,000 files, every one
digested). Each server is spawned, asked `initialize`, then its whole listing, page by page (`prompts/list`
against `skills/list`); the two take turns, after one unmeasured start each. Measured: spawn to the first page,
a whole listing after it (every page), and the server's CPU from spawn to the end of that listing.
Both start with the notebook index off (`--no-cache`: every notebook and every skill file read, parsed and
digested at every start) and again with it on, warm as after any earlier start (the prompts' listings and the
skill files' digests and frontmatter taken from it: a file that is as it was is neither read nor digested).
A start as a user sees it is the second: only the first start after a change reads what changed.

Target: skills / prompts <= 1.0 for the start and for the listing.

Beside them, two figures that say what the skills' own files cost, whoever serves them:

* the floor: the skills' tree walked and every file's status read (what noticing an edit needs), and the
  client's `json.loads` of the whole listing (what any server's entries with their digests cost to read), both
  measured in this process;
* the peer: FastMCP 4.2 (`fastmcp_skills_server.py`, its `SkillsDirectoryProvider`) serving the same skill
  folders, against ours, both asked at protocol 2026-07-28 (the peer speaks the extension in that era only);
  ours with the index warm, as a user starts it. Left out, and said so, when FastMCP is not installed.

Example: `python -m benchmarks.bench_skills --count 1000 --repeats 5`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from .corpus import create_corpus
from .report import FigureTable, summarize, write_json
from .servers import ROOT, describe_environment, ours_command
from .stdio_rpc import Era, RawStdioClient

__all__ = ["PEER_SCRIPT", "create_skills", "main"]

PEER_SCRIPT = ROOT / "benchmarks" / "fastmcp_skills_server.py"

_BODY = "\n".join(
    f"{n}. Read `references/guide.md`, section {n}, then run `scripts/run.py` with the file in question."
    for n in range(1, 12)
)


def create_skills(folder: Path, count: int, *, files: int = 3) -> Path:
    """`count` skill folders, each a SKILL.md, a reference and a script (`files` 1: the SKILL.md alone)."""
    width = len(str(count))
    for index in range(count):
        name = f"skill-{index:0{width}d}"
        where = folder / name
        where.mkdir(parents=True)
        (where / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Skill number {index}, what it does in one line.\nlicense: MIT\n"
            f'metadata:\n  version: "1.{index}"\n---\n\n# {name}\n\n{_BODY}\n',
            encoding="utf-8",
        )
        if files > 1:
            (where / "references").mkdir()
            (where / "scripts").mkdir()
            guide = f"# Guide {index}\n\n" + "Some guidance.\n" * 20
            (where / "references" / "guide.md").write_text(guide, encoding="utf-8")
            (where / "scripts" / "run.py").write_text(f"print('skill {index}')\n", encoding="utf-8")
    return folder


def _list_all(client: RawStdioClient, method: str, key: str) -> int:
    items, cursor = 0, None
    while True:
        result = client.request(method, {"cursor": cursor} if cursor is not None else {}, timeout=600)
        items += len(result[key])
        cursor = result.get("nextCursor")
        if cursor is None:
            return items


def _ours(folder: Path, cache: Path | None) -> list[str]:
    options = ["--no-watch", *(["--cache-dir", str(cache)] if cache is not None else ["--no-cache"])]
    return ours_command("serve", str(folder), *options)


def _one_start(argv: list[str], method: str, key: str, era: Era = "handshake") -> tuple[float, float, float, int]:
    """(spawn to the first page, a whole listing after it, server CPU) in seconds, and how many items it listed."""
    with RawStdioClient(argv, era=era) as client:
        client.open_session(timeout=600)
        client.request(method, {}, timeout=600)
        first = time.perf_counter() - client.started_at
        began = time.perf_counter()
        items = _list_all(client, method, key)
        listing = time.perf_counter() - began
        cpu = client.cpu_seconds() or 0.0
    return first, listing, cpu, items


def _walk_and_look(top: Path) -> int:
    """Every folder below `top` listed and every file's status read: what noticing any edit needs at least."""
    files, pending = 0, [str(top)]
    while pending:
        with os.scandir(pending.pop()) as listing:
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    entry.stat(follow_symlinks=False)
                    files += 1
    return files


def _listing_bytes(folder: Path, cache: Path) -> list[bytes]:
    """The whole `skills/list` listing of `folder` as the wire carries it, page by page."""
    pages: list[bytes] = []
    with RawStdioClient(_ours(folder, cache)) as client:
        client.open_session(timeout=600)
        cursor = None
        while True:
            result = client.request("skills/list", {"cursor": cursor} if cursor is not None else {}, timeout=600)
            pages.append(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode())
            cursor = result.get("nextCursor")
            if cursor is None:
                return pages


def floor(skills: Path, cache: Path, repeats: int) -> FigureTable:
    """The skills' own cost, whoever serves them (module docstring), in this process."""
    pages = _listing_bytes(skills, cache)
    walks, parses = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        files = _walk_and_look(skills)
        walks.append((time.perf_counter() - began) * 1000.0)
        began = time.perf_counter()
        for page in pages:
            json.loads(page)
        parses.append((time.perf_counter() - began) * 1000.0)
    table = FigureTable(f"The floor of the same skills, in one process (median of {repeats})")
    table.add_runs(f"every folder listed and each of the {files} files' status read", walks)
    size = sum(len(page) for page in pages) / 1024
    shown = f"{len(pages)} page" + ("s" if len(pages) != 1 else "")
    table.add_runs(f"json.loads of the whole listing ({shown}, {size:.0f} KB)", parses)
    return table


def peer(skills: Path, cache: Path, count: int, repeats: int) -> FigureTable | None:
    """Ours against FastMCP 4.2 on the same skill folders at 2026-07-28 (module docstring); None without it."""
    if importlib.util.find_spec("fastmcp") is None:
        print("FastMCP is not installed here: the peer's figures are left out (pip install fastmcp)")
        return None
    servers = {"mcp-notebook": _ours(skills, cache), "FastMCP 4.2": [sys.executable, str(PEER_SCRIPT), str(skills)]}
    for argv in servers.values():
        _, _, _, items = _one_start(argv, "skills/list", "skills", "modern")  # unmeasured, as for the others
        if items != count:
            raise SystemExit(f"{argv[1]} listed {items} skills, expected {count}")
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in servers}
    for turn in range(repeats):
        order = list(servers) if turn % 2 == 0 else list(reversed(servers))
        for name in order:
            first, rest, cpu, _ = _one_start(servers[name], "skills/list", "skills", "modern")
            runs[name].append((first * 1000.0, rest * 1000.0, cpu * 1000.0))
    table = FigureTable(f"{count} skills, ours against the peer, serve over stdio at 2026-07-28 (median of {repeats})")
    for name, measured in runs.items():
        table.add_runs(f"{name}: spawn to the first page", [r[0] for r in measured])
        table.add_runs(f"{name}: a whole listing, every page", [r[1] for r in measured])
        table.add_runs(f"{name}: server CPU, spawn to the end of the listing", [r[2] for r in measured])
    for index, what in enumerate(("start", "listing", "CPU")):
        ours, theirs = (summarize([r[index] for r in runs[name]]).median for name in servers)
        table.add(f"FastMCP / mcp-notebook, {what}", theirs / max(ours, 1e-9), unit="x")
    return table


def run(prompts: Path, skills: Path, count: int, repeats: int, cache: Path | None, shape: str) -> FigureTable:
    kinds = {
        "prompts": (_ours(prompts, cache), "prompts/list", "prompts"),
        "skills": (_ours(skills, cache), "skills/list", "skills"),
    }
    for argv, method, key in kinds.values():
        _, _, _, items = _one_start(argv, method, key)  # unmeasured: bytecode, page cache, the index
        if items != count:
            raise SystemExit(f"{method} listed {items} items, expected {count}")
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in kinds}
    for turn in range(repeats):
        order = list(kinds) if turn % 2 == 0 else list(reversed(kinds))  # who goes first alternates
        for name in order:
            first, rest, cpu, _ = _one_start(*kinds[name])
            runs[name].append((first, rest, cpu))
    how = "with the notebook index" if cache is not None else "no index (--no-cache)"
    title = f"{count} skills against {count} prompts ({shape}), serve over stdio, {how} (median of {repeats})"
    table = FigureTable(title)
    medians: dict[str, tuple[float, float, float]] = {}
    for name in kinds:
        first, rest, cpu = (summarize([r[i] for r in runs[name]]).median for i in range(3))
        medians[name] = (first, rest, cpu)
        ms = [[figure * 1000.0 for figure in r] for r in runs[name]]
        table.add_runs(f"{count} {name}: spawn to the first page", [r[0] for r in ms])
        table.add_runs(f"{count} {name}: a whole listing, every page", [r[1] for r in ms])
        table.add_runs(f"{count} {name}: server CPU, spawn to the end of the listing", [r[2] for r in ms])
    for index, what in enumerate(("start (spawn to the first page)", "listing (every page)", "CPU")):
        prompts_figure = max(medians["prompts"][index], 1e-9)
        table.add(f"skills / prompts, {what}", medians["skills"][index] / prompts_figure, unit="x", target=1.0)
        # The two servers of one turn ran side by side: how far that ratio moves from turn to turn.
        turns = [s[index] / max(p[index], 1e-9) for s, p in zip(runs["skills"], runs["prompts"], strict=True)]
        table.add_runs(f"skills / prompts, {what}, turn by turn", turns, unit="x")
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time 1,000 skills against 1,000 prompts over stdio.")
    parser.add_argument("--count", type=int, default=1000, help="skills, and prompts (a multiple of 20)")
    parser.add_argument("--repeats", type=int, default=5, help="starts of each server")
    parser.add_argument(
        "--files-alike",
        action="store_true",
        help="as many files on each side: one prompt per notebook, skills of a SKILL.md alone",
    )
    parser.add_argument("--no-peer", action="store_true", help="leave out FastMCP's figures (its starts are slow)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        base = Path(scratch)
        notebooks = args.count if args.files_alike else max(1, args.count // 20)
        prompts = create_corpus(base / "prompts", notebooks=notebooks, prompts=args.count // notebooks).folder
        skills = create_skills(base / "skills", args.count, files=1 if args.files_alike else 3)
        shape = (
            f"{notebooks} notebooks, {args.count} SKILL.md files"
            if args.files_alike
            else f"{notebooks} notebooks, {args.count * 3} skill files"
        )
        tables = [
            run(prompts, skills, args.count, args.repeats, None, shape),
            run(prompts, skills, args.count, args.repeats, base / "cache", shape),
            floor(skills, base / "cache", args.repeats),
        ]
        compared = None if args.no_peer else peer(skills, base / "cache", args.count, args.repeats)
        if compared is not None:
            tables.append(compared)
    for table in tables:
        print(table)
    if args.json:
        write_json(args.json, tables, {"environment": describe_environment()})


if __name__ == "__main__":
    main()
