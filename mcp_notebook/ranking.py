"""A sorted index of slash commands, ranked against what the user typed.

Every command is keyed `server:prompt`. A query matches in one of these tiers,
best first (each command appears once, in its best tier):

1. exact: the key or the prompt name equals the query;
2. prefix: the key or the prompt name starts with the query;
3. word start: a word inside the key starts with the query (words are split at
   `:`, `.`, `_`, `-`, `/`, spaces and camelCase humps);
4. substring: the query appears anywhere in the key;
5. fuzzy: the query's characters appear in order in the key.

Matching ignores case. Inside a tier, commands are ordered by their entry's
`priority` (the user's configured servers before kernels, a kernel's own
prompts before its generated `magic` and `magic.*` ones), then by key (fuzzy ones by how
tightly they match first), so hundreds of magics never push a configured
server's prompts out of a capped list. The index is built once per change of the
prompt lists; the exact, prefix and word-start tiers are binary searches in
sorted arrays, and the slower tiers are only scanned when the better ones did
not fill the requested number of results.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from .models import PromptSpec

__all__ = ["CommandEntry", "CommandIndex", "CommandMatch", "MatchTier", "SearchResult", "is_magic", "word_starts"]

_SEPARATORS = frozenset(":._-/ ")
_MAX_CHAR = chr(0x10FFFF)


class MatchTier(IntEnum):
    """How well a command matches a query; lower is better."""

    EXACT = 0
    PREFIX = 1
    WORD_START = 2
    SUBSTRING = 3
    FUZZY = 4


@dataclass(frozen=True, slots=True)
class CommandEntry:
    """One prompt of one server, as a slash command; or one skill, whose `spec` describes it (`skill_spec`)."""

    server: str
    spec: PromptSpec
    # Among equally good matches, lower comes first (see the module's docstring).
    priority: int = 0
    # A skill's command (its SKILL.md is inserted): the skill is the snapshot's `skills[key]`.
    is_skill: bool = False

    @property
    def key(self) -> str:
        """`server:prompt`, what follows the trigger character."""
        return f"{self.server}:{self.spec.name}"


@dataclass(frozen=True, slots=True)
class CommandMatch:
    entry: CommandEntry
    tier: MatchTier


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The best matches, and whether more matches were left out."""

    matches: tuple[CommandMatch, ...]
    truncated: bool


def word_starts(text: str) -> tuple[int, ...]:
    """The positions where a word of `text` starts (0 included)."""
    starts = [0] if text else []
    for i in range(1, len(text)):
        prev, ch = text[i - 1], text[i]
        if ch in _SEPARATORS:
            continue
        if prev in _SEPARATORS or (prev.islower() and ch.isupper()) or (prev.isalpha() and ch.isdigit()):
            starts.append(i)
    return tuple(starts)


def is_magic(spec: PromptSpec) -> bool:
    """Whether a prompt documents a kernel's magics (`magic`, `magic.<name>`): generated, not written by the user."""
    return spec.name == "magic" or spec.name.startswith("magic.")


class CommandIndex:
    """An immutable, searchable set of slash commands."""

    def __init__(self, entries: Iterable[CommandEntry] = ()) -> None:
        unique = {entry.key: entry for entry in entries}
        ordered = sorted(unique.values(), key=lambda e: (e.key.lower(), e.key))
        self._entries: tuple[CommandEntry, ...] = tuple(ordered)
        # Positions in key order (what the binary searches need) and in the order results are given.
        ranked = sorted(range(len(ordered)), key=lambda i: (ordered[i].priority, i))
        self._by_rank = tuple(ordered[i] for i in ranked)
        self._rank = [0] * len(ordered)
        for position, i in enumerate(ranked):
            self._rank[i] = position
        self._by_key = {entry.key: entry for entry in ordered}
        self.magics = sum(1 for entry in ordered if is_magic(entry.spec))  # how many are a kernel's magics
        self._keys = [entry.key.lower() for entry in ordered]
        names = sorted((entry.spec.name.lower(), i) for i, entry in enumerate(ordered))
        self._names = [name for name, _ in names]
        self._name_ids = [i for _, i in names]
        words: list[tuple[str, int]] = []
        for i, key in enumerate(self._keys):
            original = ordered[i].key
            words.extend((key[pos:], i) for pos in word_starts(original) if pos > 0)
        words.sort()
        self._words = [word for word, _ in words]
        self._word_ids = [i for _, i in words]
        # Keys cannot hold a newline (prompt names are single tokens); a stray one is only fuzzy-searched wrong.
        self._joined = "\n".join(key.replace("\n", " ") for key in self._keys)
        self._line_starts: list[int] = []
        offset = 0
        for key in self._keys:
            self._line_starts.append(offset)
            offset += len(key) + 1

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> tuple[CommandEntry, ...]:
        """Every command, ordered by key."""
        return self._entries

    @property
    def ranked(self) -> tuple[CommandEntry, ...]:
        """Every command, in the order an empty query lists them (priority, then key)."""
        return self._by_rank

    def get(self, key: str) -> CommandEntry | None:
        """The command `server:prompt`, if it exists."""
        return self._by_key.get(key)

    def with_name(self, name: str) -> tuple[CommandEntry, ...]:
        """Every command whose prompt is called exactly `name` (on any server)."""
        lowered = name.lower()
        start = bisect_left(self._names, lowered)
        found: list[CommandEntry] = []
        for pos in range(start, len(self._names)):
            if self._names[pos] != lowered:
                break
            entry = self._entries[self._name_ids[pos]]
            if entry.spec.name == name:
                found.append(entry)
        return tuple(found)

    def search(self, query: str, limit: int = 100) -> SearchResult:
        """The best `limit` commands for `query`, best first."""
        if limit <= 0:
            return SearchResult((), bool(self._entries))
        q = query.lower()
        if not q:
            chosen = self._by_rank[:limit]
            return SearchResult(tuple(CommandMatch(e, MatchTier.PREFIX) for e in chosen), len(self._entries) > limit)
        rank = self._rank.__getitem__
        seen: set[int] = set()
        out: list[CommandMatch] = []

        def take(tier: MatchTier, ids: Iterable[int]) -> bool:
            """Append unseen ids in order; True once one more than `limit` exists."""
            for i in ids:
                if i in seen:
                    continue
                if len(out) >= limit:
                    return True
                seen.add(i)
                out.append(CommandMatch(self._entries[i], tier))
            return False

        def smallest(ids: Iterable[int]) -> list[int]:
            # Only the first ones (by rank) can still make it into the result.
            return heapq.nsmallest(limit - len(out) + 1, set(ids) - seen, key=rank)

        key_lo, key_hi = _prefix_range(self._keys, q)
        name_lo, name_hi = _prefix_range(self._names, q)
        exact = [i for i in range(key_lo, key_hi) if self._keys[i] == q]
        exact += [self._name_ids[p] for p in range(name_lo, name_hi) if self._names[p] == q]
        if take(MatchTier.EXACT, sorted(set(exact), key=rank)):
            return SearchResult(tuple(out), True)
        prefixed = smallest([*range(key_lo, key_hi), *self._name_ids[name_lo:name_hi]])
        if take(MatchTier.PREFIX, prefixed):
            return SearchResult(tuple(out), True)
        word_lo, word_hi = _prefix_range(self._words, q)
        if take(MatchTier.WORD_START, smallest(self._word_ids[word_lo:word_hi])):
            return SearchResult(tuple(out), True)
        if take(MatchTier.SUBSTRING, smallest(i for i, key in enumerate(self._keys) if q in key)):
            return SearchResult(tuple(out), True)
        truncated = take(MatchTier.FUZZY, self._fuzzy(q, seen))
        return SearchResult(tuple(out), truncated)

    def _fuzzy(self, q: str, seen: set[int]) -> list[int]:
        """Ids whose key holds the query's characters in order, tightest match first.

        One regular-expression scan over all keys joined by newlines keeps the
        loop in C; a match never crosses a line, so it belongs to one key. Each
        gap excludes the character that follows it (`a[^b\\n]*b`), so the scan
        never backtracks and takes the earliest occurrence of every character.
        """
        gaps = [f"[^{re.escape(ch)}\\n]*" for ch in q[1:]]
        pattern = re.compile(re.escape(q[0]) + "".join(g + re.escape(ch) for g, ch in zip(gaps, q[1:], strict=True)))
        spans: dict[int, int] = {}
        for found in pattern.finditer(self._joined):
            i = bisect_right(self._line_starts, found.start()) - 1
            if i not in seen and i not in spans:
                spans[i] = found.end() - found.start()
        return [i for _, _, i in sorted((span, self._rank[i], i) for i, span in spans.items())]


def _prefix_range(sorted_keys: list[str], q: str) -> tuple[int, int]:
    """The slice of `sorted_keys` holding the keys that start with `q`."""
    return bisect_left(sorted_keys, q), bisect_left(sorted_keys, q + _MAX_CHAR)
