"""Prompt names: validity, qualified names for clashes, and suggestions for typos."""

from __future__ import annotations

import pytest

from mcp_notebook.models import PromptSpec
from mcp_notebook.naming import is_valid_name, qualify, suggest_names
from mcp_notebook.registry import PromptRegistry, RegistrySnapshot


@pytest.mark.parametrize("name", ["review", "code_review", "magic.cell.bash", "a-b", "A" * 64, "0"])
def test_slash_command_friendly_names_are_valid(name: str) -> None:
    assert is_valid_name(name)


@pytest.mark.parametrize("name", ["", "a b", "review!", "ré", "a/b", "A" * 65, "x:y"])
def test_names_a_client_cannot_show_as_a_slash_command_are_invalid(name: str) -> None:
    assert not is_valid_name(name)


def test_a_qualified_name_is_the_notebook_stem_then_the_name() -> None:
    assert qualify("reviews/code.ipynb", "summarize") == "code.summarize"
    assert qualify("reviews/code.ipynb", "summarize", depth=2) == "reviews.code.summarize"


def test_a_qualified_name_is_made_valid_and_short() -> None:
    name = qualify("my notebooks/Ünïcode stuff!.ipynb", "p" * 60)
    assert is_valid_name(name)
    assert len(name) <= 64
    assert qualify("my notebooks/Ünïcode stuff!.ipynb", "p" * 60) == name  # deterministic


def _served(groups: dict[str, list[PromptSpec]]) -> RegistrySnapshot:
    registry = PromptRegistry()
    for key, prompts in groups.items():
        registry.set_group(key, prompts)
    return registry.snapshot()


def test_names_published_once_are_never_rewritten() -> None:
    snapshot = _served({"a.ipynb": [PromptSpec(name="one", origin="a.ipynb")], "b.ipynb": [PromptSpec(name="two")]})
    assert [p.name for p in snapshot.prompts] == ["one", "two"]
    assert snapshot.warnings == ()


def test_a_qualified_name_never_takes_a_name_another_notebook_publishes() -> None:
    groups = {
        "a.ipynb": [PromptSpec(name="x")],
        "b.ipynb": [PromptSpec(name="x")],
        "c.ipynb": [PromptSpec(name="a.x")],  # already owns what would be a's qualified name
    }
    names = [p.name for p in _served(groups).prompts]
    assert len(set(names)) == 3
    assert "a.x" in names and names.count("a.x") == 1


def test_close_names_are_suggested_for_a_typo() -> None:
    known = ["code_review", "code_explain", "summarize", "docs:code_review"]
    assert suggest_names("code_reveiw", known)[0] in ("code_review", "docs:code_review")
    assert suggest_names("zzz", known) == ()


def test_a_bare_name_suggests_its_qualified_forms() -> None:
    assert suggest_names("summarize", ["notes.summarize", "review.summarize", "other"]) == (
        "notes.summarize",
        "review.summarize",
    )


def test_a_typo_at_the_start_of_a_long_name_is_suggested() -> None:
    assert suggest_names("clasify", ["classify_sentiment", "code_review"]) == ("classify_sentiment",)
