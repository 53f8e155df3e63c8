"""A notebook's skills come with its build: a start reads each notebook once, a restart from the index reads none
that is unchanged, and a save that adds or removes a skill tag is announced as a change of resources."""

from __future__ import annotations

import os
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_skills import HANDSHAKE, skill, write_notebook
from wire_harness import MODERN, RawWire, modern_meta

from mcp_notebook.service import NotebookService, ServiceSettings
from mcp_notebook.sources.loading import build, build_stored
from mcp_notebook.sources.stored import StoredBody, restore

TAGGED = [("markdown", "Keep notes short.", {"tags": ["skill:short-notes"]}), ("code", "print(1)", {})]


pytestmark = pytest.mark.usefixtures("unfrozen", "settled_files")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    skill(root, "deploy")
    write_notebook(root / "plain.ipynb", [("markdown", "Nothing here.", {}), ("code", "x = 1", {})])
    write_notebook(root / "notes" / "tools.ipynb", TAGGED)
    write_notebook(root / "whole.ipynb", [("markdown", "# Charts\n\nDraw charts.", {})], {"mcp": {"skill": "chart-it"}})
    # A notebook skill at a folder skill's URI, one with a name the rules refuse, and one named as another.
    write_notebook(root / "clash.ipynb", [("markdown", "Deploy.", {"tags": ["skill:deploy"]})])
    write_notebook(root / "bad.ipynb", [("markdown", "Bad.", {"tags": ["skill:Not_Valid"]})])
    write_notebook(root / "again" / "tools.ipynb", [("markdown", "Again.", {"tags": ["skill:short-notes"]})])
    (root / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    return root


class NotebookOpens:
    """Every open of a notebook file in this process (the sandbox's read path opens each file it reads)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: Counter[str] = Counter()
        real_open = os.open

        def counting_open(path: Any, *args: Any, **kwargs: Any) -> int:
            name = os.fsdecode(path)
            if name.endswith(".ipynb"):
                self.names[name.rsplit("/", 1)[-1]] += 1
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", counting_open)


def started(folder: Path, cache: Path | None, **options: Any) -> NotebookService:
    settings = ServiceSettings(
        paths=(str(folder),), cache=cache is not None, cache_dir=str(cache) if cache else None, watch=False, **options
    )
    service = NotebookService(settings)
    service.start(report=False)
    return service


def served(service: NotebookService) -> tuple[list[tuple[str, str, str]], tuple[str, ...]]:
    """(URI, name, origin) of every skill served, and the warnings."""
    snapshot = service.registry.snapshot()
    return [(s.uri, s.name, s.origin) for s in snapshot.skills], snapshot.warnings


EXPECTED = [
    ("skill://again/short-notes/SKILL.md", "short-notes", "again/tools.ipynb (cells tagged skill:short-notes)"),
    ("skill://chart-it/SKILL.md", "chart-it", "whole.ipynb"),
    ("skill://deploy/SKILL.md", "deploy", "deploy"),
    ("skill://notes/short-notes/SKILL.md", "short-notes", "notes/tools.ipynb (cells tagged skill:short-notes)"),
]


def assert_expected_warnings(warnings: tuple[str, ...]) -> None:
    assert any("clash.ipynb" in w and "skill folder deploy has its URI" in w for w in warnings), warnings
    assert any("'Not_Valid' of bad.ipynb" in w and "naming rules" in w for w in warnings), warnings
    assert any("several skills are named 'short-notes'" in w for w in warnings), warnings


def test_a_cold_start_reads_each_notebook_once_and_serves_their_skills(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opens = NotebookOpens(monkeypatch)
    service = started(folder, tmp_path / "cache")
    skills, warnings = served(service)
    service.close()

    assert skills == EXPECTED
    assert_expected_warnings(warnings)
    assert any("broken.ipynb" in w for w in warnings), warnings  # it does not load, and hides no other
    # Each notebook is opened once (the broken one to be found broken): two of them are named tools.ipynb.
    assert opens.names == Counter(path.name for path in folder.rglob("*.ipynb"))
    assert opens.names["tools.ipynb"] == 2 and opens.names["whole.ipynb"] == 1


def test_a_warm_start_serves_the_notebooks_skills_without_reading_a_notebook(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first = started(folder, cache)
    before = served(first)
    first.close()
    (folder / "broken.ipynb").unlink()  # a notebook that fails to load is read again at every start
    opens = NotebookOpens(monkeypatch)

    again = started(folder, cache)
    skills, warnings = served(again)
    again.close()

    assert sum(opens.names.values()) == 0, opens.names
    assert skills == before[0] == EXPECTED
    assert warnings == tuple(w for w in before[1] if "broken.ipynb" not in w)
    assert_expected_warnings(warnings)


def test_an_index_built_without_skills_is_read_again_for_a_server_that_serves_them(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    off = started(folder, cache, skills=False)
    assert off.registry.snapshot().skills == ()
    off.close()
    opens = NotebookOpens(monkeypatch)

    on = started(folder, cache)
    skills, _ = served(on)
    on.close()
    assert skills == EXPECTED
    assert opens.names["whole.ipynb"] == opens.names["clash.ipynb"] == 1
    opens.names.clear()

    off_again = started(folder, cache, skills=False)  # and the other way round: the entry serves, skills are off
    assert off_again.registry.snapshot().skills == ()
    off_again.close()
    assert opens.names["whole.ipynb"] == 0


def test_the_stored_form_a_forked_child_sends_restores_the_same_skills(folder: Path) -> None:
    root = folder.resolve()
    _, loaded = build(root, "notes/tools.ipynb", skills=True)
    built = build_stored(root, "notes/tools.ipynb", skills=True)
    assert built is not None and loaded.skills
    _, _, listing, _ = built

    def body(names: tuple[str, ...]) -> StoredBody:
        return StoredBody(names, lambda: None, lambda: None)

    restored = restore(listing, body, origin="notes/tools.ipynb", root=str(root), interned={}, skills=True)
    assert restored is not None and restored.skills == loaded.skills
    assert restored.skills[0].contents == loaded.skills[0].contents
    unlooked = build_stored(root, "notes/tools.ipynb")
    assert unlooked is not None
    assert restore(unlooked[2], body, origin="notes/tools.ipynb", root=str(root), interned={}, skills=True) is None
    without = restore(listing, body, origin="notes/tools.ipynb", root=str(root), interned={})
    assert without is not None and without.skills is None


async def _next_resources_change(wire: RawWire) -> dict[str, Any]:
    while True:
        message = await wire.next_notification()
        if message.get("method") == "notifications/resources/list_changed":
            return message


@pytest.mark.parametrize("revision", [HANDSHAKE, MODERN])
async def test_a_save_that_adds_or_removes_a_skill_tag_is_announced_and_listed(folder: Path, revision: str) -> None:
    service = NotebookService(ServiceSettings(paths=(str(folder),), cache=False, watch=True))
    service.start(report=False)
    notebook = folder / "plain.ipynb"
    ready = anyio.Event()
    try:
        with anyio.fail_after(60):  # a hang guard: each wait below is on an event
            async with RawWire(service.server, revision) as wire, anyio.create_task_group() as tasks:
                tasks.start_soon(partial(service.watch, ready=ready.set))
                await ready.wait()
                if revision == MODERN:
                    params = {"notifications": {"resourcesListChanged": True}, "_meta": modern_meta()}
                    await wire.send({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": params})
                    await wire.receive()  # the acknowledgement
                listed = (await wire.request("skills/list"))["result"]["skills"]
                assert "skill://plain-notes/SKILL.md" not in [s["uri"] for s in listed]

                write_notebook(notebook, [("markdown", "Plain notes.", {"tags": ["skill:plain-notes"]})])
                await _next_resources_change(wire)
                added = (await wire.request("skills/list"))["result"]["skills"]

                write_notebook(notebook, [("markdown", "Nothing here.", {})])
                await _next_resources_change(wire)
                removed = (await wire.request("skills/list"))["result"]["skills"]
                tasks.cancel_scope.cancel()  # the watch ends; the connection closes after it
    finally:
        service.close()
    assert "skill://plain-notes/SKILL.md" in [s["uri"] for s in added]
    assert [s["uri"] for s in removed] == [s["uri"] for s in listed]


def test_a_moved_folder_of_tagged_notebooks_moves_their_skills(tmp_path: Path) -> None:
    """A folder renamed (here to a name with a dot, which looks like no folder) takes its notebooks' skills
    along: the catalog publishes what the folder source reloaded, whatever the paths that changed."""
    root = tmp_path / "served"
    write_notebook(root / "v1.0" / "tools.ipynb", TAGGED)
    service = started(root, None)
    assert service.skills is not None
    assert [uri for uri, _, _ in served(service)[0]] == ["skill://v1.0/short-notes/SKILL.md"]

    (root / "v1.0").rename(root / "v2.0")
    moved = [root / "v1.0", root / "v2.0"]
    service.source.reload(moved)  # what the watch does for the move: the folder source reloads, then the skills
    service.skills.refresh(moved)

    assert [uri for uri, _, _ in served(service)[0]] == ["skill://v2.0/short-notes/SKILL.md"]
    service.close()
