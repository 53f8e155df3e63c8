"""Serving notebook files and folders: discovery, registry groups, clashes, reload, bad notebooks."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources.folder import NotebookFolderSource


def _prompt_notebook(path: Path, *names: str, text: str = "text") -> Path:
    return write(path, notebook(*(markdown(f"{text} {name}", {"prompt": name}) for name in names)))


def _names(registry: PromptRegistry) -> list[str]:
    return [p.name for p in registry.snapshot().prompts]


@pytest.fixture
def registry() -> PromptRegistry:
    return PromptRegistry()


@pytest.fixture
def snapshots(registry: PromptRegistry) -> list[RegistrySnapshot]:
    seen: list[RegistrySnapshot] = []
    registry.add_listener(seen.append)
    return seen


def test_a_folder_is_searched_recursively_and_each_notebook_is_a_group(
    tmp_path: Path, registry: PromptRegistry
) -> None:
    _prompt_notebook(tmp_path / "a.ipynb", "alpha")
    _prompt_notebook(tmp_path / "sub" / "deeper" / "b.ipynb", "beta", "gamma")
    (tmp_path / "notes.txt").write_text("not a notebook")
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    assert _names(registry) == ["alpha", "beta", "gamma"]
    assert set(registry.groups()) == {"a.ipynb", "sub/deeper/b.ipynb"}
    assert source.root == tmp_path.resolve()
    assert sorted(source.notebooks) == ["a.ipynb", "sub/deeper/b.ipynb"]
    assert registry.snapshot().get("beta").origin == "sub/deeper/b.ipynb"  # type: ignore[union-attr]


def test_checkpoints_and_hidden_folders_and_files_are_ignored(tmp_path: Path, registry: PromptRegistry) -> None:
    _prompt_notebook(tmp_path / "a.ipynb", "real")
    _prompt_notebook(tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb", "checkpoint")
    _prompt_notebook(tmp_path / "sub" / ".ipynb_checkpoints" / "b-checkpoint.ipynb", "nested_checkpoint")
    _prompt_notebook(tmp_path / ".hidden" / "c.ipynb", "hidden")
    _prompt_notebook(tmp_path / ".d.ipynb", "dotfile")
    NotebookFolderSource([tmp_path], registry).scan()
    assert _names(registry) == ["real"]


def test_scan_publishes_everything_as_one_registry_change(
    tmp_path: Path, registry: PromptRegistry, snapshots: list[RegistrySnapshot]
) -> None:
    for index in range(5):
        _prompt_notebook(tmp_path / f"n{index}.ipynb", f"p{index}")
    NotebookFolderSource([tmp_path], registry).scan()
    assert len(snapshots) == 1
    assert len(snapshots[0].prompts) == 5


def test_the_same_name_in_two_notebooks_is_served_under_qualified_names(
    tmp_path: Path, registry: PromptRegistry
) -> None:
    _prompt_notebook(tmp_path / "review.ipynb", "summarize", "only_here")
    _prompt_notebook(tmp_path / "docs" / "notes.ipynb", "summarize")
    NotebookFolderSource([tmp_path], registry).scan()
    snapshot = registry.snapshot()
    assert sorted(p.name for p in snapshot.prompts) == ["notes.summarize", "only_here", "review.summarize"]
    assert any("'summarize' is published by 2 notebooks" in w for w in snapshot.warnings)


def test_names_within_one_notebook_are_never_rewritten(tmp_path: Path, registry: PromptRegistry) -> None:
    write(tmp_path / "nb.ipynb", notebook(markdown("a", {"prompt": "p"}), markdown("b", tags=["prompt:p"])))
    NotebookFolderSource([tmp_path], registry).scan()
    assert _names(registry) == ["p"]


def test_files_given_directly_are_served_relative_to_their_common_folder(
    tmp_path: Path, registry: PromptRegistry
) -> None:
    first = _prompt_notebook(tmp_path / "x" / "one.ipynb", "one")
    second = _prompt_notebook(tmp_path / "y" / "two.ipynb", "two")
    _prompt_notebook(tmp_path / "x" / "unrelated.ipynb", "unrelated")
    source = NotebookFolderSource([first, str(second)], registry)
    source.scan()
    assert source.root == tmp_path.resolve()
    assert set(registry.groups()) == {"x/one.ipynb", "y/two.ipynb"}


def test_a_single_file_is_served_from_its_folder(tmp_path: Path, registry: PromptRegistry) -> None:
    source = NotebookFolderSource([_prompt_notebook(tmp_path / "solo.ipynb", "solo")], registry)
    source.scan()
    assert (source.root, list(registry.groups())) == (tmp_path.resolve(), ["solo.ipynb"])


def test_a_path_that_does_not_exist_is_refused(tmp_path: Path, registry: PromptRegistry) -> None:
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        NotebookFolderSource([tmp_path / "nothing-here"], registry)


def test_notebook_warnings_reach_the_source_and_the_snapshot(tmp_path: Path, registry: PromptRegistry) -> None:
    write(tmp_path / "nb.ipynb", notebook(markdown("x", {"prompt": "bad name"})))
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    assert len(source.warnings) == 1 and "'bad name' is refused" in source.warnings[0]
    assert registry.snapshot().warnings == source.warnings


# -- reload ---------------------------------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path, registry: PromptRegistry) -> NotebookFolderSource:
    _prompt_notebook(tmp_path / "a.ipynb", "alpha")
    _prompt_notebook(tmp_path / "b.ipynb", "beta")
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    return source


def test_reloading_a_modified_notebook_updates_only_its_group(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry, snapshots: list[RegistrySnapshot]
) -> None:
    before_b = registry.groups()["b.ipynb"]
    _prompt_notebook(tmp_path / "a.ipynb", "alpha", "alpha2")
    assert served.reload([tmp_path / "a.ipynb"]) is True
    assert _names(registry) == ["alpha", "alpha2", "beta"]
    assert registry.groups()["b.ipynb"] is before_b
    assert len(snapshots) == 1


def test_reloading_an_unchanged_notebook_reports_no_change(
    served: NotebookFolderSource, tmp_path: Path, snapshots: list[RegistrySnapshot]
) -> None:
    assert served.reload([tmp_path / "a.ipynb"]) is False
    assert snapshots == []


def test_added_and_deleted_notebooks_are_picked_up(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    _prompt_notebook(tmp_path / "c.ipynb", "gamma")
    (tmp_path / "a.ipynb").unlink()
    assert served.reload([tmp_path / "c.ipynb", tmp_path / "a.ipynb"]) is True
    assert _names(registry) == ["beta", "gamma"]
    assert sorted(served.notebooks) == ["b.ipynb", "c.ipynb"]


def test_a_renamed_notebook_moves_to_its_new_key(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    (tmp_path / "a.ipynb").rename(tmp_path / "renamed.ipynb")
    served.reload([tmp_path / "a.ipynb", tmp_path / "renamed.ipynb"])
    assert registry.snapshot().get("alpha").origin == "renamed.ipynb"  # type: ignore[union-attr]
    assert "a.ipynb" not in registry.groups()


def test_a_moved_or_deleted_folder_is_looked_at_again_as_a_whole(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    _prompt_notebook(tmp_path / "sub" / "deep" / "c.ipynb", "gamma")
    served.reload([tmp_path / "sub"])
    assert "sub/deep/c.ipynb" in registry.groups()
    (tmp_path / "sub").rename(tmp_path / "moved")
    served.reload([tmp_path / "sub", tmp_path / "moved"])
    assert "moved/deep/c.ipynb" in registry.groups()
    assert "sub/deep/c.ipynb" not in registry.groups()


def test_relative_paths_are_taken_from_the_served_folder(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    _prompt_notebook(tmp_path / "a.ipynb", "changed")
    assert served.reload([Path("a.ipynb")]) is True
    assert "changed" in _names(registry)


def test_changes_outside_the_served_notebooks_are_ignored(
    served: NotebookFolderSource, tmp_path: Path, snapshots: list[RegistrySnapshot]
) -> None:
    _prompt_notebook(tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb", "checkpoint")
    (tmp_path / "data.csv").write_text("a,b\n")
    assert served.reload([tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb", tmp_path / "data.csv"]) is False
    assert served.reload([tmp_path.parent / "elsewhere.ipynb"]) is False
    assert snapshots == []


def test_a_corrupt_notebook_keeps_its_last_good_prompts_and_reports_the_error(
    served: NotebookFolderSource,
    tmp_path: Path,
    registry: PromptRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    write(tmp_path / "a.ipynb", '{"nbformat": 4, "cells": [')  # half-written
    with caplog.at_level(logging.WARNING, logger="mcp_notebook"):
        assert served.reload([tmp_path / "a.ipynb"]) is True
    assert _names(registry) == ["alpha", "beta"]
    assert list(served.errors) == ["a.ipynb"]
    assert "is not valid JSON" in served.errors["a.ipynb"]
    assert "last good prompts stay served" in served.errors["a.ipynb"]
    assert any("a.ipynb" in w and "not valid JSON" in w for w in registry.snapshot().warnings)
    assert any(r.name.startswith("mcp_notebook") and "a.ipynb" in r.getMessage() for r in caplog.records)

    _prompt_notebook(tmp_path / "a.ipynb", "alpha_fixed")
    served.reload([tmp_path / "a.ipynb"])
    assert _names(registry) == ["alpha_fixed", "beta"]
    assert served.errors == {}
    assert registry.snapshot().warnings == ()


def test_a_notebook_that_never_loaded_publishes_nothing_but_its_error(tmp_path: Path, registry: PromptRegistry) -> None:
    _prompt_notebook(tmp_path / "good.ipynb", "good")
    write(tmp_path / "bad.ipynb", "not json")
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    assert _names(registry) == ["good"]
    assert list(source.errors) == ["bad.ipynb"]
    assert "last good" not in source.errors["bad.ipynb"]
    assert source.warnings == (source.errors["bad.ipynb"],)


def test_deleting_a_broken_notebook_clears_its_error(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    write(tmp_path / "a.ipynb", "")
    served.reload([tmp_path / "a.ipynb"])
    (tmp_path / "a.ipynb").unlink()
    served.reload([tmp_path / "a.ipynb"])
    assert (served.errors, _names(registry)) == ({}, ["beta"])


def test_scanning_again_forgets_notebooks_that_are_gone(
    served: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    (tmp_path / "b.ipynb").unlink()
    served.scan()
    assert _names(registry) == ["alpha"]
