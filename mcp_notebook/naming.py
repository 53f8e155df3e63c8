"""Prompt names: what is valid, and how clashes between notebooks are resolved."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import TypeVar

from .models import PromptSpec

__all__ = [
    "NAME_PATTERN",
    "closest_names",
    "command_server_names",
    "fit_name",
    "is_valid_name",
    "kernel_server_name",
    "plan_renames",
    "qualify",
    "resolve_clashes",
    "suggest_names",
]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_T = TypeVar("_T")


def kernel_server_name(notebook_path: str | None, kernel_id: str) -> str:
    """What every client calls a kernel's MCP server: its notebook's stem, else `kernel-<first 8 of its id>`.

    The same for the bridge and for the configurations `%mcp serve` prints,
    and the same after `%mcp stop` and `%mcp serve` again (the kernel and its
    notebook stay). The bridge falls back to `kernel-<id>` only where two
    kernels, or a kernel and a configured server, would share a name.
    """
    stem = _UNSAFE.sub("_", PurePath(notebook_path).stem).strip("._") if notebook_path else ""
    return stem or f"kernel-{_UNSAFE.sub('_', kernel_id[:8])}"


def command_server_names(servers: Mapping[str, _T]) -> dict[str, _T]:
    """Configured servers keyed by a name that fits in `/server:prompt` (no `:` or spaces), in every client."""
    named: dict[str, _T] = {}
    for name, server in servers.items():
        safe = _UNSAFE.sub("_", name).strip("_") or "server"
        while safe in named:
            safe += "_"
        named[safe] = server
    return named


def closest_names(unknown: Iterable[str], known: Iterable[str]) -> tuple[str, ...]:
    """For each unknown name the known one most likely meant (if any is close), without repeats."""
    choices = tuple(known)
    return tuple(dict.fromkeys(found for name in unknown for found in suggest_names(name, choices, limit=1)))


def is_valid_name(name: str) -> bool:
    """True when every client can show `name` as a slash command."""
    return bool(NAME_PATTERN.match(name))


def fit_name(name: str) -> str:
    """A valid name for what was typed: every run of other characters as '_', cut to 64 (`NAME_PATTERN`)."""
    return _fit(name.strip())


def _fit(name: str) -> str:
    name = _UNSAFE.sub("_", name).strip(".") or "_"
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: 64 - 9]}~{digest}".replace("~", "-")


def qualify(origin: str, name: str, depth: int = 1) -> str:
    """The qualified name `<notebook-stem>.<name>`, using `depth` path parts of the origin."""
    path = PurePath(origin)
    parts = [*path.parent.parts[-(depth - 1) :], path.stem] if depth > 1 else [path.stem]
    parts = [p for p in parts if p not in ("", "/", ".")]
    return _fit(".".join([*parts, name]))


def plan_renames(
    clashing: Mapping[str, Sequence[str]], is_taken: Callable[[str], bool]
) -> tuple[dict[tuple[str, str], str], tuple[str, ...]]:
    """The qualified name of each clashing prompt, and a warning per clash.

    `clashing` maps each name published by several sources to those sources'
    keys, in sorted order; `is_taken(name)` says whether a source publishes
    `name` alone (a qualified name must not take it). Returns
    `{(key, name): qualified}` and one warning per clashing name.
    """
    added: set[str] = set()
    renamed: dict[tuple[str, str], str] = {}
    warnings: list[str] = []
    for name in sorted(clashing):
        keys = clashing[name]
        depth = 1
        while True:
            candidates = {key: qualify(key, name, depth) for key in keys}
            unique = len(set(candidates.values())) == len(keys)
            if unique and not any(c in added or is_taken(c) for c in candidates.values()):
                break
            if depth > 32:
                candidates = {key: _fit(f"{qualify(key, name)}-{i}") for i, key in enumerate(keys, 1)}
                break
            depth += 1
        for key, qualified in candidates.items():
            renamed[(key, name)] = qualified
            added.add(qualified)
        listing = ", ".join(f"{candidates[k]} ({k})" for k in keys)
        warnings.append(f"prompt name {name!r} is published by {len(keys)} notebooks; served as {listing}")
    return renamed, tuple(warnings)


def resolve_clashes(groups: Mapping[str, Sequence[PromptSpec]]) -> tuple[tuple[PromptSpec, ...], tuple[str, ...]]:
    """Merge prompts from several sources; rename clashing names deterministically.

    `groups` maps a source key (a notebook path) to its prompts. A name that
    only one source publishes is kept. A name published by several sources is
    replaced, in each of them, by `<notebook-stem>.<name>` (with more of the
    path when stems clash too). Returns the merged prompts, sorted by source
    key then notebook order, and a warning per clash.
    """
    owners: dict[str, list[str]] = defaultdict(list)
    for key in sorted(groups):
        for spec in groups[key]:
            if key not in owners[spec.name]:
                owners[spec.name].append(key)
    clashing = {name: keys for name, keys in owners.items() if len(keys) > 1}
    renamed, warnings = plan_renames(clashing, lambda name: len(owners.get(name, ())) == 1)
    merged: list[PromptSpec] = []
    for key in sorted(groups):
        for spec in groups[key]:
            new = renamed.get((key, spec.name))
            merged.append(replace(spec, name=new) if new else spec)
    return tuple(merged), warnings


def suggest_names(name: str, known: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    """Close matches for an unknown prompt name, best first.

    A name matches when it is close as a whole, when its start is close to what
    was typed (a typo in a long name: `clasify` for `classify_sentiment`), or
    when it is the qualified form of it (`notes.summarize` for `summarize`).
    """
    typed = name.lower()
    exact: list[str] = []
    # Cheap upper bounds first (SequenceMatcher caches what it learns about `typed`, its second
    # sequence); the full ratio only for the most promising few, so a typo costs milliseconds
    # even among tens of thousands of names.
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(typed)
    bounds: list[tuple[float, str, str, float]] = []
    for candidate in known:
        lowered = candidate.lower()
        if lowered.endswith(("." + typed, ":" + typed)):
            exact.append(candidate)
            continue
        for text, cutoff in ((lowered, 0.6), (lowered[: len(typed) + 1], 0.8)):
            matcher.set_seq1(text)
            if matcher.real_quick_ratio() >= cutoff and (bound := matcher.quick_ratio()) >= cutoff:
                bounds.append((bound, candidate, text, cutoff))
    bounds.sort(key=lambda item: -item[0])
    best: dict[str, float] = {}
    for _, candidate, text, cutoff in bounds[:_FULL_RATIOS]:
        matcher.set_seq1(text)
        if (ratio := matcher.ratio()) >= cutoff:
            best[candidate] = max(ratio, best.get(candidate, 0.0))
    ranked = sorted(best, key=lambda candidate: (-best[candidate], candidate))
    return tuple([*sorted(exact), *ranked][:limit])


# How many candidates, best bounds first, get a full similarity ratio.
_FULL_RATIOS = 64
