"""The prompt registry: groups, immutable snapshots, the clash rule and listeners."""

from __future__ import annotations

import random
import threading
from dataclasses import fields, replace

from mcp_notebook.models import PromptSpec, Skill, SkillFile
from mcp_notebook.naming import plan_renames
from mcp_notebook.registry import PromptRegistry, RegistrySnapshot


def spec(name: str, origin: str = "a.ipynb", description: str | None = None) -> PromptSpec:
    return PromptSpec(name=name, origin=origin, description=description)


def test_a_new_registry_is_empty_at_version_zero() -> None:
    snapshot = PromptRegistry().snapshot()
    assert (snapshot.version, snapshot.prompts, snapshot.warnings) == (0, (), ())
    assert snapshot.get("anything") is None


def test_setting_a_group_publishes_its_prompts_in_order() -> None:
    registry = PromptRegistry()
    registry.set_group("a.ipynb", [spec("review"), spec("explain")])

    snapshot = registry.snapshot()
    assert [p.name for p in snapshot.prompts] == ["review", "explain"]
    assert snapshot.get("explain") == spec("explain")
    assert snapshot.version == 1


def test_a_snapshot_taken_earlier_does_not_change_afterwards() -> None:
    registry = PromptRegistry()
    registry.set_group("a.ipynb", [spec("review")])
    before = registry.snapshot()

    registry.set_group("a.ipynb", [spec("explain")])

    assert [p.name for p in before.prompts] == ["review"]
    assert [p.name for p in registry.snapshot().prompts] == ["explain"]


def test_the_same_name_in_two_notebooks_is_served_under_qualified_names_and_reported() -> None:
    registry = PromptRegistry()
    registry.update(
        {
            "review.ipynb": ([spec("summarize", "review.ipynb")], ()),
            "notes.ipynb": ([spec("summarize", "notes.ipynb"), spec("todo", "notes.ipynb")], ()),
        }
    )

    snapshot = registry.snapshot()
    assert sorted(p.name for p in snapshot.prompts) == ["notes.summarize", "review.summarize", "todo"]
    assert snapshot.get("summarize") is None
    [warning] = snapshot.warnings
    assert "'summarize'" in warning and "notes.summarize (notes.ipynb)" in warning


def test_notebooks_with_the_same_stem_are_told_apart_by_their_folder() -> None:
    registry = PromptRegistry()
    registry.update(
        {
            "team/prompts.ipynb": ([spec("review", "team/prompts.ipynb")], ()),
            "me/prompts.ipynb": ([spec("review", "me/prompts.ipynb")], ()),
        }
    )
    assert sorted(p.name for p in registry.snapshot().prompts) == ["me.prompts.review", "team.prompts.review"]


def test_removing_one_of_two_clashing_notebooks_gives_the_name_back() -> None:
    registry = PromptRegistry()
    registry.update({"a.ipynb": ([spec("x", "a.ipynb")], ()), "b.ipynb": ([spec("x", "b.ipynb")], ())})

    registry.remove_group("b.ipynb")

    snapshot = registry.snapshot()
    assert [p.name for p in snapshot.prompts] == ["x"]
    assert snapshot.warnings == ()


def test_listeners_hear_each_change_once_with_the_new_snapshot() -> None:
    registry = PromptRegistry()
    heard: list[RegistrySnapshot] = []
    registry.add_listener(heard.append)

    registry.update({"a.ipynb": ([spec("one")], ()), "b.ipynb": ([spec("two", "b.ipynb")], ())})

    assert len(heard) == 1
    assert heard[0] is registry.snapshot()
    assert [p.name for p in heard[0].prompts] == ["one", "two"]


def test_an_update_that_changes_nothing_is_not_announced() -> None:
    registry = PromptRegistry()
    registry.set_group("a.ipynb", [spec("one")])
    heard: list[RegistrySnapshot] = []
    registry.add_listener(heard.append)

    registry.set_group("a.ipynb", [spec("one")])
    registry.set_group("empty.ipynb", [])

    assert heard == []
    assert registry.snapshot().version == 1


def test_a_changed_description_is_a_change() -> None:
    registry = PromptRegistry()
    registry.set_group("a.ipynb", [spec("one", description="old")])
    before = registry.snapshot().fingerprint

    registry.set_group("a.ipynb", [spec("one", description="new")])

    assert registry.snapshot().fingerprint != before


def test_new_warnings_alone_make_a_new_snapshot() -> None:
    registry = PromptRegistry()
    registry.set_group("a.ipynb", [spec("one")])

    registry.set_group("a.ipynb", [spec("one")], ["cell 3: unknown field 'rol'"])

    assert registry.snapshot().warnings == ("cell 3: unknown field 'rol'",)


def test_a_removed_listener_hears_nothing_more() -> None:
    registry = PromptRegistry()
    heard: list[RegistrySnapshot] = []
    remove = registry.add_listener(heard.append)
    remove()
    remove()  # removing twice is harmless

    registry.set_group("a.ipynb", [spec("one")])

    assert heard == []


def test_a_failing_listener_does_not_stop_the_others() -> None:
    registry = PromptRegistry()
    heard: list[RegistrySnapshot] = []

    def broken(_: RegistrySnapshot) -> None:
        raise RuntimeError("listener bug")

    registry.add_listener(broken)
    registry.add_listener(heard.append)

    registry.set_group("a.ipynb", [spec("one")])

    assert len(heard) == 1


def test_concurrent_writers_never_lose_a_group() -> None:
    registry = PromptRegistry()
    start = threading.Barrier(8)

    def write(n: int) -> None:
        start.wait()
        for i in range(50):
            registry.set_group(f"nb{n}.ipynb", [spec(f"p{n}_{i}", f"nb{n}.ipynb")])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(p.name for p in registry.snapshot().prompts) == sorted(f"p{n}_49" for n in range(8))


def _reference(groups: dict[str, tuple[PromptSpec, ...]]) -> tuple[list[PromptSpec], list[str]]:
    """The whole set rebuilt from scratch with the clash rule, first of a repeated name winning."""
    owners: dict[str, list[str]] = {}
    for key in sorted(groups):
        for item in groups[key]:
            if key not in owners.setdefault(item.name, []):
                owners[item.name].append(key)
    clashing = {name: keys for name, keys in owners.items() if len(keys) > 1}
    renamed, warnings = plan_renames(clashing, lambda name: len(owners.get(name, ())) == 1)
    merged = [
        replace(item, name=renamed.get((key, item.name), item.name)) for key in sorted(groups) for item in groups[key]
    ]
    kept: dict[str, PromptSpec] = {}
    hidden: list[str] = []
    for item in merged:
        if item.name in kept:
            hidden.append(f"prompt {item.name!r} from {item.origin} is hidden by an earlier one")
        else:
            kept[item.name] = item
    return list(kept.values()), [*warnings, *hidden]


def test_changes_applied_one_at_a_time_give_the_set_a_full_rebuild_gives() -> None:
    # The registry only redoes what a change touches; any sequence of changes must still give exactly
    # what resolving every group from scratch gives: clashes appearing and going, stems that clash,
    # qualified names that would take a published name, a name repeated inside one group.
    rng = random.Random(20261201)
    keys = ["a.ipynb", "b.ipynb", "x/a.ipynb", "y/a.ipynb", "a.a.ipynb", "c.ipynb", "d/e/c.ipynb"]
    names = ["review", "explain", "a.review", "x.a.review", "summary", "c.summary"]
    registry = PromptRegistry()
    groups: dict[str, tuple[PromptSpec, ...]] = {}
    for round_ in range(600):
        key = rng.choice(keys)
        if rng.random() < 0.2:
            groups.pop(key, None)
            registry.remove_group(key)
        else:
            chosen = rng.choices(names, k=rng.randint(0, 4))
            group = tuple(spec(n, origin=key, description=f"{n} r{round_ % 3}") for n in chosen)
            groups[key] = group
            registry.set_group(key, group, [f"note {key}"] if rng.random() < 0.1 else [])
        expected, clash_warnings = _reference(groups)
        snapshot = registry.snapshot()
        assert list(snapshot.prompts) == expected, f"round {round_}"
        assert dict(snapshot.by_name) == {p.name: p for p in expected}, f"round {round_}"
        assert [w for w in snapshot.warnings if not w.startswith("note ")] == clash_warnings, f"round {round_}"


def _skill(**changes: object) -> Skill:
    base = Skill(
        "skill://refunds/SKILL.md",
        {"name": "refunds", "description": "Refund a charge."},
        (SkillFile("SKILL.md", "sha256:" + "0" * 64, 40, "text/markdown"),),
        origin="refunds",
        folder="refunds",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_the_skills_fingerprint_changes_with_everything_a_skill_shows_and_only_then() -> None:
    registry = PromptRegistry()
    registry.set_skills([_skill()])
    first = registry.snapshot().fingerprint
    registry.set_skills([_skill()])
    assert registry.snapshot().fingerprint == first  # an equal set: no new snapshot, the same fingerprint
    other_file = SkillFile("SKILL.md", "sha256:" + "1" * 64, 40, "text/markdown")
    variants = [
        _skill(frontmatter={"name": "refunds", "description": "Refund a charge!"}),
        _skill(files=(other_file,)),
        _skill(files=(replace(other_file, digest="sha256:" + "0" * 64, size=41),)),
        _skill(files=None),
        _skill(origin="elsewhere"),
        _skill(folder="elsewhere/refunds"),
        _skill(meta={"note": 1}),
        _skill(server="another"),
    ]
    seen = {first}
    for variant in variants:
        registry.set_skills([variant])
        fingerprint = registry.snapshot().fingerprint
        assert fingerprint not in seen, variant
        seen.add(fingerprint)


def test_the_skills_fingerprint_covers_every_field_a_skill_and_its_files_show() -> None:
    # The fingerprint digests these fields in plain values (`registry._skills_digest`): a new shown field must
    # be digested there too, or a change of it would not be announced.
    assert [f.name for f in fields(Skill) if f.repr] == [
        "uri",
        "frontmatter",
        "files",
        "server",
        "origin",
        "folder",
        "meta",
    ]
    assert [f.name for f in fields(SkillFile) if f.repr] == ["path", "digest", "size", "mime_type", "uri"]
