"""The Skills extension (SEP-2640) served from a folder: entries, digests, reads, directories, errors, in both eras.

The server is the one every host builds (`NotebookService`), over the in-memory wire, so what is checked is what
goes on the wire. Hostile folders (a link out of the tree, a huge file, a SKILL.md without frontmatter, a name that
clashes with a prompt) leave the server serving the rest, with a warning that says what to change.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from notebook_files import write_skill as skill
from wire_harness import MODERN, RawWire, modern_meta

from mcp_notebook.service import NotebookService, ServiceSettings

SKILLS = "io.modelcontextprotocol/skills"
HANDSHAKE = "2025-11-25"

REVIEW = """---
name: code-review
description: Review a change with the team's checklist.
license: MIT
metadata:
  version: "1.0"
  released: 2026-01-02
---

# Code review

Read `references/checklist.md`, then review the diff.
"""


def write_notebook(
    path: Path, cells: list[tuple[str, str, dict[str, Any]]], metadata: dict[str, Any] | None = None
) -> None:
    """A notebook of (kind, source, cell metadata) cells; `metadata` adds to the notebook's own."""
    made = [
        {"cell_type": kind, "id": f"c{n}", "metadata": meta, "source": source}
        | ({"outputs": [], "execution_count": None} if kind == "code" else {})
        for n, (kind, source, meta) in enumerate(cells)
    ]
    notebook = {
        "cells": made,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
        | (metadata or {}),
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook), encoding="utf-8")


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def service_of(folder: Path, **options: Any) -> NotebookService:
    service = NotebookService(ServiceSettings(paths=(str(folder),), cache=False, watch=False, **options))
    service.start(report=False)
    return service


pytestmark = pytest.mark.usefixtures("unfrozen")


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "served"
    skill(
        root,
        "code-review",
        REVIEW,
        {"references/checklist.md": b"# Checklist\n\n- tests\n", "scripts/run.py": b"print(1)\n"},
    )
    skill(root, "team/deploy")
    yield root


def error_code(reply: dict[str, Any]) -> int:
    assert "error" in reply, reply
    code: int = reply["error"]["code"]
    return code


@pytest.mark.parametrize("revision", [HANDSHAKE, MODERN])
async def test_the_extension_is_declared_with_directory_reads_and_resources(folder: Path, revision: str) -> None:
    async with RawWire(service_of(folder).server, revision) as wire:
        if revision == MODERN:
            capabilities = (await wire.request("server/discover"))["result"]["capabilities"]
        else:
            capabilities = wire.initialize_result["result"]["capabilities"]
    assert capabilities["extensions"][SKILLS] == {"directoryRead": True}
    assert isinstance(capabilities["resources"], dict)


async def test_skills_off_declares_nothing_and_knows_no_skills_method(folder: Path) -> None:
    async with RawWire(service_of(folder, skills=False).server, MODERN) as wire:
        capabilities = (await wire.request("server/discover"))["result"]["capabilities"]
        listed = await wire.request("skills/list")
        resources = (await wire.request("resources/list"))["result"]["resources"]
    assert SKILLS not in (capabilities.get("extensions") or {})
    assert error_code(listed) == -32601
    assert not [r for r in resources if r["uri"].startswith("skill://")]


@pytest.mark.parametrize("revision", [HANDSHAKE, MODERN])
async def test_each_entry_carries_verbatim_frontmatter_and_the_digest_and_size_of_every_file(
    folder: Path, revision: str
) -> None:
    async with RawWire(service_of(folder).server, revision) as wire:
        result = (await wire.request("skills/list"))["result"]
    entries = {entry["uri"]: entry for entry in result["skills"]}
    assert sorted(entries) == ["skill://code-review/SKILL.md", "skill://team/deploy/SKILL.md"]
    review = entries["skill://code-review/SKILL.md"]
    # As YAML wrote it: the date stays the text it was (JSON has no date), nested fields pass through.
    assert review["frontmatter"] == {
        "name": "code-review",
        "description": "Review a change with the team's checklist.",
        "license": "MIT",
        "metadata": {"version": "1.0", "released": "2026-01-02"},
    }
    on_disk = {
        "SKILL.md": (folder / "code-review/SKILL.md").read_bytes(),
        "references/checklist.md": b"# Checklist\n\n- tests\n",
        "scripts/run.py": b"print(1)\n",
    }
    assert review["resources"] == [
        {"uri": f"skill://code-review/{path}", "digest": sha(data), "size": len(data)} for path, data in on_disk.items()
    ]
    if revision == MODERN:
        assert result["ttlMs"] >= 0 and result["cacheScope"] == "public"
        assert result["resultType"] == "complete"
    else:
        assert "ttlMs" not in result and "cacheScope" not in result


async def test_the_listing_pages_with_sealed_cursors_and_never_splits_an_entry(folder: Path) -> None:
    skill(folder, "third")
    async with RawWire(service_of(folder, page_size=1).server, MODERN) as wire:
        seen: list[str] = []
        cursor = None
        for _ in range(5):
            result = (await wire.request("skills/list", {"cursor": cursor} if cursor else {}))["result"]
            assert len(result["skills"]) == 1
            seen.extend(entry["uri"] for entry in result["skills"])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        forged = await wire.request("skills/list", {"cursor": "not-a-cursor"})
    assert seen == ["skill://code-review/SKILL.md", "skill://team/deploy/SKILL.md", "skill://third/SKILL.md"]
    assert error_code(forged) == -32602


@pytest.mark.parametrize("revision", [HANDSHAKE, MODERN])
async def test_get_answers_a_served_skill_and_refuses_any_other_uri(folder: Path, revision: str) -> None:
    async with RawWire(service_of(folder).server, revision) as wire:
        got = (await wire.request("skills/get", {"uri": "skill://team/deploy/SKILL.md"}))["result"]
        listed = (await wire.request("skills/list"))["result"]["skills"]
        unknown = await wire.request("skills/get", {"uri": "skill://nope/SKILL.md"})
        a_file = await wire.request("skills/get", {"uri": "skill://code-review/scripts/run.py"})
        no_uri = await wire.request("skills/get", {})
    assert got["skill"] == next(entry for entry in listed if entry["uri"] == "skill://team/deploy/SKILL.md")
    assert "nextCursor" not in got
    assert (revision == MODERN) == ("ttlMs" in got and "cacheScope" in got)
    assert error_code(unknown) == error_code(a_file) == error_code(no_uri) == -32602
    assert "skill://nope/SKILL.md" in unknown["error"]["message"]


@pytest.mark.parametrize("revision", [HANDSHAKE, MODERN])
async def test_skill_files_are_read_as_resources_with_the_bytes_the_digest_covers(folder: Path, revision: str) -> None:
    async with RawWire(service_of(folder).server, revision) as wire:
        entry = (await wire.request("skills/get", {"uri": "skill://code-review/SKILL.md"}))["result"]["skill"]
        for item in entry["resources"]:
            contents = (await wire.request("resources/read", {"uri": item["uri"]}))["result"]["contents"]
            data = contents[0]["text"].encode("utf-8")
            assert (sha(data), len(data)) == (item["digest"], item["size"])
        skill_md = (await wire.request("resources/read", {"uri": "skill://code-review/SKILL.md"}))["result"]
        missing = await wire.request("resources/read", {"uri": "skill://code-review/nothing.md"})
    assert skill_md["contents"][0]["mimeType"] == "text/markdown"
    assert error_code(missing) == (-32602 if revision == MODERN else -32002)


async def test_resources_list_names_and_describes_each_skill_md_from_its_frontmatter(folder: Path) -> None:
    async with RawWire(service_of(folder).server, MODERN) as wire:
        resources = (await wire.request("resources/list"))["result"]["resources"]
    by_uri = {r["uri"]: r for r in resources}
    assert by_uri["skill://code-review/SKILL.md"]["name"] == "code-review"
    assert by_uri["skill://code-review/SKILL.md"]["description"] == "Review a change with the team's checklist."
    assert by_uri["skill://code-review/SKILL.md"]["mimeType"] == "text/markdown"
    assert "skill://code-review/scripts/run.py" in by_uri


async def test_a_directory_read_lists_direct_children_and_refuses_what_is_no_directory(folder: Path) -> None:
    async with RawWire(service_of(folder).server, MODERN) as wire:
        root = (await wire.request("resources/directory/read", {"uri": "skill://code-review"}))["result"]
        scripts = (await wire.request("resources/directory/read", {"uri": "skill://code-review/scripts"}))["result"]
        a_file = await wire.request("resources/directory/read", {"uri": "skill://code-review/SKILL.md"})
        nowhere = await wire.request("resources/directory/read", {"uri": "skill://code-review/none"})
    assert [(r["uri"], r["mimeType"]) for r in root["resources"]] == [
        ("skill://code-review/SKILL.md", "text/markdown"),
        ("skill://code-review/references", "inode/directory"),
        ("skill://code-review/scripts", "inode/directory"),
    ]
    assert [r["name"] for r in scripts["resources"]] == ["run.py"]
    assert error_code(a_file) == error_code(nowhere) == -32602


def test_a_link_out_of_the_tree_is_left_out_of_its_skill_with_a_warning(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password", encoding="utf-8")
    root = tmp_path / "served"
    where = skill(root, "linked")
    os.symlink(secret, where / "notes.txt")
    snapshot = service_of(root).registry.snapshot()
    (served,) = snapshot.skills
    assert [f.path for f in served.files] == ["SKILL.md"]
    assert any("linked/notes.txt" in w and "outside" in w.lower() for w in snapshot.warnings), snapshot.warnings


def test_a_skill_over_the_size_limit_is_not_served_and_the_others_are(tmp_path: Path) -> None:
    root = tmp_path / "served"
    huge = skill(root, "huge")
    with open(huge / "data.bin", "wb") as file:
        file.truncate(17 * 1024 * 1024)  # sparse: the size is what is checked, before anything is read
    skill(root, "small")
    snapshot = service_of(root).registry.snapshot()
    assert [s.name for s in snapshot.skills] == ["small"]
    assert any("huge/SKILL.md is not served" in w and "16 MiB" in w for w in snapshot.warnings), snapshot.warnings


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("# Just Markdown\n\nNo frontmatter here.\n", "does not begin with YAML frontmatter"),
        ("---\nname: bare\n---\n\nNo description.\n", "no 'description'"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        (
            "---\nname: bare\ndescription: d\na: &a [x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(24)
            )
            + "---\n",
            "far larger than its text (YAML aliases repeat them)",
        ),
        ("---\nname: other-name\ndescription: A skill.\n---\n", "is not its folder's name"),
        ("---\nname: Bad_Name\ndescription: A skill.\n---\n", "naming rules"),
    ],
)
def test_an_invalid_skill_md_is_not_served_and_a_warning_says_what_to_change(
    tmp_path: Path, text: str, says: str
) -> None:
    root = tmp_path / "served"
    name = "Bad_Name" if "Bad_Name" in text else "bare"
    skill(root, name, text)
    skill(root, "good")
    snapshot = service_of(root).registry.snapshot()
    assert [s.name for s in snapshot.skills] == ["good"]
    assert any(f"{name}/SKILL.md is not served" in w and says in w for w in snapshot.warnings), snapshot.warnings


def test_a_skill_named_like_a_prompt_is_served_beside_it_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "served"
    skill(root, "summarize")
    write_notebook(root / "prompts.ipynb", [("markdown", "Summarize {{text}}.", {"mcp": {"prompt": "summarize"}})])
    snapshot = service_of(root).registry.snapshot()
    assert [s.name for s in snapshot.skills] == ["summarize"]
    assert snapshot.get("summarize") is not None
    assert any("skill 'summarize'" in w and "name of a prompt" in w for w in snapshot.warnings), snapshot.warnings


async def test_tagged_notebook_cells_become_a_skill_with_their_code_as_scripts(tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    cells = [
        ("markdown", "# Clean data\n\nDrop empty rows from a table before it is used.", {"tags": ["skill:clean-data"]}),
        ("code", "frame = frame.dropna()", {"tags": ["skill:clean-data"]}),
        ("markdown", "Not part of it.", {}),
    ]
    write_notebook(
        root / "tools" / "cleaning.ipynb", cells, metadata={"mcp": {"skills": {"clean-data": {"license": "MIT"}}}}
    )
    async with RawWire(service_of(root).server, MODERN) as wire:
        entry = (await wire.request("skills/get", {"uri": "skill://tools/clean-data/SKILL.md"}))["result"]["skill"]
        text = (await wire.request("resources/read", {"uri": entry["uri"]}))["result"]["contents"][0]["text"]
        script = await wire.request("resources/read", {"uri": "skill://tools/clean-data/scripts/step-1.py"})
    assert entry["frontmatter"] == {
        "name": "clean-data",
        "license": "MIT",
        "description": "Drop empty rows from a table before it is used.",
    }
    assert text.startswith("---\nname: clean-data\n")
    assert (
        "# Clean data" in text and "[`scripts/step-1.py`](scripts/step-1.py)" in text and "Not part of it" not in text
    )
    assert script["result"]["contents"][0]["text"] == "frame = frame.dropna()\n"
    digests = {r["uri"]: r["digest"] for r in entry["resources"]}
    assert digests[entry["uri"]] == sha(text.encode("utf-8"))


async def test_a_changed_skill_is_announced_as_a_resource_list_change(folder: Path) -> None:
    service = service_of(folder)
    assert service.skills is not None
    async with RawWire(service.server, HANDSHAKE) as wire:
        await wire.request("skills/list")  # the connection is tracked once it has asked something
        (folder / "code-review" / "scripts" / "run.py").write_bytes(b"print(2)\n")
        service.skills.refresh([folder / "code-review" / "scripts" / "run.py"])
        # A change of skills alone is a change of resources: the prompts' would come first, and none comes.
        first = await wire.next_notification()
        entry = (await wire.request("skills/get", {"uri": "skill://code-review/SKILL.md"}))["result"]["skill"]
    assert first["method"] == "notifications/resources/list_changed"
    assert {"uri": "skill://code-review/scripts/run.py", "digest": sha(b"print(2)\n"), "size": 9} in entry["resources"]


def test_entries_serialize_as_json(folder: Path) -> None:
    snapshot = service_of(folder).registry.snapshot()
    json.dumps([dict(s.frontmatter) for s in snapshot.skills])


async def test_a_changed_skill_reaches_a_2026_listen_stream_as_a_resource_list_change(folder: Path) -> None:
    service = service_of(folder)
    assert service.skills is not None
    async with RawWire(service.server, MODERN) as wire:
        await wire.send(
            {
                "jsonrpc": "2.0",
                "id": "listen-1",
                "method": "subscriptions/listen",
                "params": {"notifications": {"resourcesListChanged": True}, "_meta": modern_meta()},
            }
        )
        ack = await wire.receive()
        skill(folder, "fresh")
        service.skills.refresh([folder / "fresh" / "SKILL.md"])
        change = await wire.receive()
    assert ack["params"]["notifications"] == {"resourcesListChanged": True}
    assert change == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}},
    }


def test_an_edited_skill_md_is_read_again_and_a_broken_edit_withdraws_the_skill(folder: Path) -> None:
    service = service_of(folder)
    assert service.skills is not None
    skill_md = folder / "team" / "deploy" / "SKILL.md"
    skill_md.write_text("---\nname: deploy\ndescription: Deploy it, carefully.\n---\n\nCarefully.\n", encoding="utf-8")
    service.skills.refresh([skill_md])
    (deploy,) = [s for s in service.registry.snapshot().skills if s.name == "deploy"]
    assert deploy.description == "Deploy it, carefully."
    assert deploy.files[0].digest == sha(skill_md.read_bytes())
    skill_md.write_text("no frontmatter any more\n", encoding="utf-8")
    service.skills.refresh([skill_md])
    snapshot = service.registry.snapshot()
    assert [s.name for s in snapshot.skills] == ["code-review"]
    assert any("team/deploy/SKILL.md is not served" in w for w in snapshot.warnings)


async def test_a_whole_notebook_is_a_skill_with_its_attachments_as_assets(tmp_path: Path) -> None:
    root = tmp_path / "served"
    png = b"\x89PNG\r\n\x1a\nnot really"
    attachment = {"chart.png": {"image/png": base64.b64encode(png).decode()}}
    cells = [("markdown", "# Chart\n\nDraw the chart like this one: ![chart](attachment:chart.png)", {})]
    write_notebook(root / "charts.ipynb", cells, {"mcp": {"skill": {"name": "chart-it", "license": "MIT"}}})
    notebook = json.loads((root / "charts.ipynb").read_text(encoding="utf-8"))
    notebook["cells"][0]["attachments"] = attachment
    (root / "charts.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    async with RawWire(service_of(root).server, MODERN) as wire:
        entry = (await wire.request("skills/get", {"uri": "skill://chart-it/SKILL.md"}))["result"]["skill"]
        text = (await wire.request("resources/read", {"uri": entry["uri"]}))["result"]["contents"][0]["text"]
        image = (await wire.request("resources/read", {"uri": "skill://chart-it/assets/chart.png"}))["result"]
    assert entry["frontmatter"] == {
        "name": "chart-it",
        "license": "MIT",
        "description": "Draw the chart like this one:",
    }
    assert "![chart](assets/chart.png)" in text
    assert base64.b64decode(image["contents"][0]["blob"]) == png
    assert {"uri": "skill://chart-it/assets/chart.png", "digest": sha(png), "size": len(png)} in entry["resources"]


def test_a_saved_notebook_alone_is_read_again_for_its_skills(folder: Path) -> None:
    service = service_of(folder)
    assert service.skills is not None
    notebook = folder / "notes.ipynb"

    def saved() -> None:  # what the watch does for a save: the notebook reloaded, then the skills looked at again
        service.source.reload([notebook])
        assert service.skills is not None
        service.skills.refresh([notebook])

    write_notebook(notebook, [("markdown", "Keep notes short.", {"tags": ["skill:short-notes"]})])
    saved()
    names = [s.name for s in service.registry.snapshot().skills]
    assert names == ["code-review", "short-notes", "deploy"]
    write_notebook(notebook, [("markdown", "No skill any more.", {})])
    saved()
    notebook.unlink()
    saved()
    assert [s.name for s in service.registry.snapshot().skills] == ["code-review", "deploy"]
