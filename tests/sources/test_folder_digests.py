"""A served notebook's prompts are told apart by its file (bytes and modification time), not by the prompts."""

from __future__ import annotations

import os
from pathlib import Path

from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources.folder import NotebookFolderSource


def _served(folder: Path) -> tuple[PromptRegistry, NotebookFolderSource, list[RegistrySnapshot]]:
    registry = PromptRegistry()
    source = NotebookFolderSource([folder], registry)
    source.scan()
    published: list[RegistrySnapshot] = []
    registry.add_listener(published.append)
    return registry, source, published


def test_a_touch_that_changes_a_prompt_only_through_its_modification_time_is_published(tmp_path: Path) -> None:
    # Annotations without lastModified take the file's modification time: same bytes, other prompts.
    target = write(tmp_path / "n.ipynb", notebook(markdown("Hi {{who}}", {"prompt": "p", "annotations": {}})))
    os.utime(target, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    registry, source, published = _served(tmp_path)
    before = registry.snapshot()

    os.utime(target, ns=(1_800_000_000_000_000_000, 1_800_000_000_000_000_000))
    assert source.reload([target])

    assert len(published) == 1 and published[0].fingerprint != before.fingerprint
    spec = registry.snapshot().get("p")
    assert spec is not None and spec.messages[0].content.annotations is not None
    assert spec.messages[0].content.annotations.last_modified == "2027-01-15T08:00:00Z"


def test_other_bytes_with_the_very_same_prompts_announce_nothing(tmp_path: Path) -> None:
    cells = [markdown("Hi {{who}}", {"prompt": "p"}), markdown("not a prompt")]
    target = write(tmp_path / "n.ipynb", notebook(*cells))
    registry, source, published = _served(tmp_path)
    before = registry.snapshot()

    write(target, notebook(cells[0], markdown("not a prompt, edited")))  # another cell: other bytes
    source.reload([target])
    write(target, notebook(*cells))  # and back
    source.reload([target])

    assert published == [] and registry.snapshot().fingerprint == before.fingerprint


def test_two_servers_of_the_same_files_agree_on_the_fingerprint(tmp_path: Path) -> None:
    for index in range(3):
        write(tmp_path / f"n{index}.ipynb", notebook(markdown(f"Prompt {index} {{{{x}}}}", {"prompt": f"p{index}"})))
    first, _, _ = _served(tmp_path)
    second, _, _ = _served(tmp_path)
    assert first.snapshot().fingerprint == second.snapshot().fingerprint
