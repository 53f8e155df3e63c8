"""Ranking slash commands: prefix > word start > substring > fuzzy, ignoring case."""

from __future__ import annotations

from mcp_notebook.models import PromptSpec
from mcp_notebook.ranking import CommandEntry, CommandIndex, MatchTier, word_starts


def _index(*keys: str) -> CommandIndex:
    entries = []
    for key in keys:
        server, _, name = key.partition(":")
        entries.append(CommandEntry(server, PromptSpec(name=name)))
    return CommandIndex(entries)


def _keys(index: CommandIndex, query: str, limit: int = 100) -> list[str]:
    return [m.entry.key for m in index.search(query, limit).matches]


def test_empty_query_lists_every_command_by_key() -> None:
    index = _index("b:two", "a:one", "c:three")
    assert _keys(index, "") == ["a:one", "b:two", "c:three"]


def test_tiers_rank_prefix_then_word_start_then_substring_then_fuzzy() -> None:
    index = _index("nb:xsumy", "nb:s_u_m", "nb:sum_up", "nb:cell_summary", "sum:other", "nb:sum")
    matches = index.search("sum").matches
    assert [(m.entry.key, m.tier) for m in matches] == [
        ("nb:sum", MatchTier.EXACT),
        ("nb:sum_up", MatchTier.PREFIX),
        ("sum:other", MatchTier.PREFIX),
        ("nb:cell_summary", MatchTier.WORD_START),
        ("nb:xsumy", MatchTier.SUBSTRING),
        ("nb:s_u_m", MatchTier.FUZZY),
    ]


def test_query_with_server_matches_the_whole_key() -> None:
    index = _index("nb:greet", "nb:grade", "kernel-1:greet")
    assert _keys(index, "nb:gr") == ["nb:grade", "nb:greet"]


def test_matching_ignores_case() -> None:
    index = _index("NB:SummarizeCell", "nb:other")
    assert _keys(index, "summ") == ["NB:SummarizeCell"]
    assert _keys(index, "cell") == ["NB:SummarizeCell"]  # a camelCase hump is a word start


def test_fuzzy_prefers_tight_matches() -> None:
    index = _index("x:a_long_bc", "x:abc_", "x:ab_c")
    assert [(m.entry.key, m.tier) for m in index.search("abc").matches] == [
        ("x:abc_", MatchTier.PREFIX),
        ("x:ab_c", MatchTier.FUZZY),
        ("x:a_long_bc", MatchTier.FUZZY),
    ]


def test_non_matching_commands_are_left_out() -> None:
    assert _keys(_index("nb:greet", "nb:plot"), "zzz") == []


def test_limit_truncates_and_says_so() -> None:
    index = _index(*(f"nb:p{i:03d}" for i in range(50)))
    result = index.search("p", limit=10)
    assert [m.entry.key for m in result.matches] == [f"nb:p{i:03d}" for i in range(10)]
    assert result.truncated
    assert not index.search("p", limit=50).truncated


def test_a_command_appears_once_in_its_best_tier() -> None:
    index = _index("sum:sum_sum")
    assert [(m.entry.key, m.tier) for m in index.search("sum").matches] == [("sum:sum_sum", MatchTier.PREFIX)]


def test_lookup_by_key_and_by_bare_name() -> None:
    index = _index("nb:greet", "k:greet", "nb:plot")
    entry = index.get("nb:greet")
    assert entry is not None and entry.spec.name == "greet"
    assert index.get("nb:nope") is None
    assert [e.key for e in index.with_name("greet")] == ["k:greet", "nb:greet"]
    assert index.with_name("gree") == ()


def test_word_starts_split_at_separators_and_humps() -> None:
    assert word_starts("nb:cell_summary") == (0, 3, 8)
    assert word_starts("kernel-1:magic.timeIt") == (0, 7, 9, 15, 19)


def test_ranking_ten_thousand_commands_keeps_the_best_hundred() -> None:
    # How fast this is, is measured by benchmarks/bench_lsp_completion.py, not here.
    entries = [
        CommandEntry(f"server{s}", PromptSpec(name=f"prompt_{i}_topic{i % 7}")) for s in range(10) for i in range(1000)
    ]
    index = CommandIndex(entries)
    assert len(index) == 10_000
    for query in ("", "topic", "t6"):
        result = index.search(query, limit=100)
        assert (len(result.matches), result.truncated) == (100, True), query
    narrowed = index.search("server3:prompt_12", limit=100)
    keys = [match.entry.key for match in narrowed.matches]
    # The eleven prefix matches come first, before any weaker match.
    assert sorted(keys[:11]) == sorted(
        ["server3:prompt_12_topic5", *(f"server3:prompt_12{d}_topic{(120 + d) % 7}" for d in range(10))]
    )
    assert not narrowed.truncated
    assert index.search("zq", limit=100).matches == ()


def _ranked(*entries: tuple[str, int]) -> CommandIndex:
    built = []
    for key, priority in entries:
        server, _, name = key.partition(":")
        built.append(CommandEntry(server, PromptSpec(name=name), priority))
    return CommandIndex(built)


def test_priority_orders_equally_good_matches_before_the_key_does() -> None:
    index = _ranked(*[(f"k:magic.m{i:03d}", 2) for i in range(300)], ("k:magic", 2), ("k:scratch", 1), ("nb:sum", 0))
    assert _keys(index, "", 3) == ["nb:sum", "k:scratch", "k:magic"]
    assert index.search("", 3).truncated
    # Within each tier too: the prefix tier, the word-start tier, the fuzzy tier.
    assert _keys(index, "s", 2) == ["nb:sum", "k:scratch"]
    assert _keys(index, "m", 1) == ["k:magic"]
    assert _keys(index, "sm", 1) == ["nb:sum"]


def test_without_priorities_the_order_is_the_keys() -> None:
    index = _ranked(("b:x", 0), ("a:x", 0), ("c:x", 0))
    assert _keys(index, "x") == ["a:x", "b:x", "c:x"]
