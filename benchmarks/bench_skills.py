"""1,000 skills against 1,000 prompts: `mcp-notebook serve` over stdio, spawn to the first page, then the listing.

Two folders of the same count: 1,000 prompts (the usual corpus, 50 notebooks x 20 prompt cells) and 1,000
skill folders (a `SKILL.md` of about a kilobyte, a reference and a script each: 3,000 files, every one
digested). Each server is spawned, asked `initialize`, then its whole listing, page by page (`prompts/list`
against `skills/list`); the two take turns, after one unmeasured start each. Measured: spawn to the first page,
a whole listing after it (every page), and the server's CPU from spawn to the end of that listing.
Both start with the notebook index off (`--no-cache`) and again with it on (the prompts' index warm, as after
any earlier start: skills have no index, they are read each time).

Target: skills / prompts <= 1.0 for the start and for the listing.
Example: `python -m benchmarks.bench_skills --count 1000 --repeats 5`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from .corpus import create_corpus
from .report import FigureTable, summarize, write_json
from .servers import describe_environment, ours_command
from .stdio_rpc import RawStdioClient

__all__ = ["create_skills", "main"]

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
        result = client.request(method, {"cursor": cursor} if cursor is not None else {}, timeout=120)
        items += len(result[key])
        cursor = result.get("nextCursor")
        if cursor is None:
            return items


def _one_start(folder: Path, method: str, key: str, cache: Path | None) -> tuple[float, float, float, int]:
    """(spawn to the first page, a whole listing after it, server CPU) in seconds, and how many items it listed."""
    options = ["--no-watch", *(["--cache-dir", str(cache)] if cache is not None else ["--no-cache"])]
    with RawStdioClient(ours_command("serve", str(folder), *options)) as client:
        client.open_session(timeout=120)
        client.request(method, {}, timeout=120)
        first = time.perf_counter() - client.started_at
        began = time.perf_counter()
        items = _list_all(client, method, key)
        listing = time.perf_counter() - began
        cpu = client.cpu_seconds() or 0.0
    return first, listing, cpu, items


def run(prompts: Path, skills: Path, count: int, repeats: int, cache: Path | None, shape: str) -> FigureTable:
    kinds = {"prompts": (prompts, "prompts/list", "prompts"), "skills": (skills, "skills/list", "skills")}
    for folder, method, key in kinds.values():
        _, _, _, items = _one_start(folder, method, key, cache)  # unmeasured: bytecode, page cache, the index
        if items != count:
            raise SystemExit(f"{method} listed {items} items, expected {count}")
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in kinds}
    for turn in range(repeats):
        order = list(kinds) if turn % 2 == 0 else list(reversed(kinds))  # who goes first alternates
        for name in order:
            first, rest, cpu, _ = _one_start(*kinds[name], cache)
            runs[name].append((first, rest, cpu))
    how = "with the notebook index" if cache is not None else "no index (--no-cache)"
    title = f"{count} skills against {count} prompts ({shape}), serve over stdio, {how} (median of {repeats})"
    table = FigureTable(title)
    medians: dict[str, tuple[float, float, float]] = {}
    for name in kinds:
        first, rest, cpu = (summarize([r[i] for r in runs[name]]).median for i in range(3))
        medians[name] = (first, rest, cpu)
        table.add(f"{count} {name}: spawn to the first page", first)
        table.add(f"{count} {name}: a whole listing, every page", rest)
        table.add(f"{count} {name}: server CPU, spawn to the end of the listing", cpu)
    for index, what in enumerate(("start (spawn to the first page)", "listing (every page)", "CPU")):
        prompts_figure = max(medians["prompts"][index], 1e-9)
        table.add(f"skills / prompts, {what}", medians["skills"][index] / prompts_figure, unit="x", target=1.0)
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
        ]
    for table in tables:
        print(table)
    if args.json:
        write_json(args.json, tables, {"environment": describe_environment()})


if __name__ == "__main__":
    main()
