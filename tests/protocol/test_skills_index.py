"""Skills in the persistent notebook index: a restart neither reads nor digests a skill's file that is as it was,
notices any change (in place at the same size too), and never serves bytes that contradict the digest listed."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_skills import skill, write_notebook
from wire_harness import MODERN, RawWire

from mcp_notebook.models import Skill
from mcp_notebook.service import NotebookService, ServiceSettings
from mcp_notebook.sources import index as index_module
from mcp_notebook.sources import loading as loading_module
from mcp_notebook.sources import skills as skills_module
from mcp_notebook.sources.index import FILE_NAME

GUIDE = b"# Guide\n\nSome guidance.\n"


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# Files a test has just written count as settled (the rule has a test of its own below).
pytestmark = pytest.mark.usefixtures("unfrozen", "settled_files")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    for name in ("alpha", "beta", "gamma"):
        skill(root, name, files={"references/guide.md": GUIDE, "scripts/run.py": f"print({name!r})\n".encode()})
    write_notebook(root / "plain.ipynb", [("markdown", "Nothing here.", {})])
    write_notebook(root / "tools.ipynb", [("markdown", "Keep notes short.", {"tags": ["skill:short-notes"]})])
    return root


class Reads:
    """The files the skill catalog and the notebooks' builds read from disk and the bytes the catalog digests, by
    path in the served folder."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        self.digests = 0
        real_read, real_digest = skills_module.read_inside, skills_module.digest_of_bytes

        def read_inside(root: Path, resolved: str, *, limit: int) -> Any:
            self.paths.append(resolved)
            return real_read(root, resolved, limit=limit)

        def digest_of_bytes(data: bytes) -> str:
            self.digests += 1
            return real_digest(data)

        monkeypatch.setattr(skills_module, "read_inside", read_inside)
        monkeypatch.setattr(loading_module, "read_inside", read_inside)
        monkeypatch.setattr(skills_module, "digest_of_bytes", digest_of_bytes)


def started(folder: Path, cache: Path | None) -> NotebookService:
    where = str(cache) if cache is not None else None
    settings = ServiceSettings(paths=(str(folder),), cache=cache is not None, cache_dir=where, watch=False)
    service = NotebookService(settings)
    service.start(report=False)
    return service


def restarted(folder: Path, cache: Path) -> tuple[tuple[Skill, ...], tuple[str, ...]]:
    """The skills and warnings of a server started on `folder` with the index at `cache`, then stopped."""
    service = started(folder, cache)
    snapshot = service.registry.snapshot()
    service.close()
    return snapshot.skills, snapshot.warnings


def digests(skills: tuple[Skill, ...]) -> dict[str, str]:
    return {f"{s.path}/{f.path}": f.digest for s in skills for f in s.files}


def stored_keys(cache: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(cache / FILE_NAME) as db:
        return set(db.execute("SELECT kind, key FROM skill_files").fetchall())


def test_a_restart_neither_reads_nor_digests_an_unchanged_skill_file(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first, _ = restarted(folder, cache)
    reads = Reads(monkeypatch)

    again, warnings = restarted(folder, cache)

    assert reads.paths == [] and reads.digests == 0
    assert again == first and [s.name for s in again] == ["alpha", "beta", "gamma", "short-notes"]
    assert [f.path for f in again[0].files] == ["SKILL.md", "references/guide.md", "scripts/run.py"]
    assert again[0].frontmatter == {"name": "alpha", "description": "The alpha skill."}
    assert ("file", "alpha/references/guide.md") in stored_keys(cache)
    assert {kind for kind, _ in stored_keys(cache)} == {"file"}  # a notebook's skills are in its own entry
    assert warnings == ()


_START = """
import sys
from mcp_notebook.sources import index
index.RACY_SECONDS = -1.0  # the files were written just now
from mcp_notebook.service import NotebookService, ServiceSettings
service = NotebookService(ServiceSettings(paths=(sys.argv[1],), cache_dir=sys.argv[2], watch=False))
service.start(report=False)
print(sorted(s.name for s in service.registry.snapshot().skills), "yaml" in sys.modules)
service.close()
"""


@pytest.mark.slow
def test_a_restart_with_every_skill_in_the_index_imports_no_yaml(folder: Path, tmp_path: Path) -> None:
    def start() -> str:
        done = subprocess.run(
            [sys.executable, "-c", _START, str(folder), str(tmp_path / "cache")],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip()

    names = "['alpha', 'beta', 'gamma', 'short-notes']"
    assert start() == f"{names} True"  # the first start parses every SKILL.md (and the tagged notebook)
    assert start() == f"{names} False"  # the next takes them all from the index


@pytest.mark.parametrize(
    "change",
    [
        "rewrite",  # new bytes, new size
        "same size, same mtime",  # the same length written in place, the mtime put back
        "atomic save",  # written elsewhere and renamed over it, as editors save
        "touch",  # only the times change: read again all the same, to the same digest
    ],
)
def test_a_skill_file_changed_in_any_way_is_read_again_alone_and_listed_with_its_new_digest(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    cache = tmp_path / "cache"
    restarted(folder, cache)
    target = folder / "beta" / "references" / "guide.md"
    before = target.stat()
    new = {
        "rewrite": b"# Guide\n\nEntirely new guidance, longer than before.\n",
        "same size, same mtime": GUIDE.replace(b"Some", b"More"),
        "atomic save": b"# Guide\n\nSaved atomically.\n",
        "touch": GUIDE,
    }[change]
    if change == "same size, same mtime":
        assert len(new) == len(GUIDE) and new != GUIDE
        target.write_bytes(new)  # in place: the same inode
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = target.stat()
        assert (after.st_size, after.st_ino, after.st_mtime_ns) == (before.st_size, before.st_ino, before.st_mtime_ns)
    elif change == "atomic save":
        staged = tmp_path / "staged.md"
        staged.write_bytes(new)
        os.replace(staged, target)
    elif change == "touch":
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    else:
        target.write_bytes(new)
    reads = Reads(monkeypatch)

    skills, _ = restarted(folder, cache)

    assert reads.paths == ["beta/references/guide.md"] and reads.digests == 1
    assert digests(skills)["beta/references/guide.md"] == sha(new)
    assert digests(skills)["alpha/references/guide.md"] == sha(GUIDE)
    reads.paths.clear()
    restarted(folder, cache)  # and the index now holds the new digest
    assert reads.paths == []


def test_a_skill_md_changed_in_place_at_the_same_size_gives_its_new_frontmatter(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    restarted(folder, cache)
    skill_md = folder / "gamma" / "SKILL.md"
    before = skill_md.stat()
    text = skill_md.read_bytes().replace(b"The gamma skill.", b"The GAMMA skill.")
    skill_md.write_bytes(text)
    os.utime(skill_md, ns=(before.st_atime_ns, before.st_mtime_ns))
    reads = Reads(monkeypatch)

    skills, _ = restarted(folder, cache)

    assert reads.paths == ["gamma/SKILL.md"]
    (gamma,) = [s for s in skills if s.name == "gamma"]
    assert gamma.description == "The GAMMA skill." and gamma.files[0].digest == sha(text)


def test_added_and_removed_files_and_skills_are_noticed_and_the_index_forgets_what_is_gone(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    restarted(folder, cache)
    (folder / "alpha" / "scripts" / "run.py").unlink()
    (folder / "alpha" / "notes.txt").write_bytes(b"notes\n")
    skill(folder, "delta")
    for path in sorted((folder / "gamma").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (folder / "gamma").rmdir()
    (folder / "tools.ipynb").unlink()
    reads = Reads(monkeypatch)

    skills, _ = restarted(folder, cache)

    assert sorted(reads.paths) == ["alpha/notes.txt", "delta/SKILL.md"]
    assert [s.name for s in skills] == ["alpha", "beta", "delta"]
    assert [f.path for f in skills[0].files] == ["SKILL.md", "notes.txt", "references/guide.md"]
    assert digests(skills)["alpha/notes.txt"] == sha(b"notes\n")
    kept = stored_keys(cache)
    assert ("file", "alpha/scripts/run.py") not in kept and ("file", "gamma/SKILL.md") not in kept
    assert ("file", "delta/SKILL.md") in kept


def test_a_notebook_is_not_read_again_for_its_skills_until_it_changes(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    restarted(folder, cache)
    write_notebook(folder / "plain.ipynb", [("markdown", "Now a skill.", {"tags": ["skill:now-one"]})])
    reads = Reads(monkeypatch)

    skills, _ = restarted(folder, cache)

    assert reads.paths == ["plain.ipynb"]
    assert [s.name for s in skills] == ["alpha", "beta", "gamma", "now-one", "short-notes"]
    (notes,) = [s for s in skills if s.name == "short-notes"]
    assert notes.contents is not None and sha(notes.contents["SKILL.md"]) == notes.files[0].digest


async def test_bytes_that_contradict_the_listed_digest_are_never_served(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever told a digest that the bytes no longer have (here: the index itself, altered), a read of the
    file refuses them, the skill is looked at again, and the next listing and read agree with the bytes."""
    cache = tmp_path / "cache"
    restarted(folder, cache)
    wrong = sha(b"not these bytes")
    with sqlite3.connect(cache / FILE_NAME) as db:
        db.execute("UPDATE skill_files SET digest = ? WHERE key = ?", (wrong, "alpha/references/guide.md"))
    service = started(folder, cache)
    uri = "skill://alpha/references/guide.md"
    try:
        async with RawWire(service.server, MODERN) as wire:
            listed = (await wire.request("skills/get", {"uri": "skill://alpha/SKILL.md"}))["result"]["skill"]
            assert {"uri": uri, "digest": wrong, "size": len(GUIDE)} in listed["resources"]
            refused = await wire.request("resources/read", {"uri": uri})
            entry = (await wire.request("skills/get", {"uri": "skill://alpha/SKILL.md"}))["result"]["skill"]
            read = (await wire.request("resources/read", {"uri": uri}))["result"]["contents"][0]["text"]
    finally:
        service.close()
    assert "error" in refused and "changed since the skills were listed" in refused["error"]["message"]
    assert {"uri": uri, "digest": sha(GUIDE), "size": len(GUIDE)} in entry["resources"]
    assert sha(read.encode()) == sha(GUIDE)
    with sqlite3.connect(cache / FILE_NAME) as db:
        stored = db.execute("SELECT digest FROM skill_files WHERE key = ?", ("alpha/references/guide.md",)).fetchall()
    assert stored == [(sha(GUIDE),)]


def test_a_skill_file_changed_within_the_last_two_seconds_is_neither_stored_nor_trusted(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "RACY_SECONDS", 2.0)
    cache = tmp_path / "cache"
    # The status-change time cannot be put back, so every file here counts as just changed.
    service = started(folder, cache)
    assert service.skills is not None
    reads = Reads(monkeypatch)
    service.skills.scan()  # a second look in the same process reads them again too (not the notebooks)
    service.close()
    assert len(reads.paths) == 3 * 3
    assert stored_keys(cache) == set()


def test_without_an_index_nothing_is_stored_and_skills_are_served(folder: Path, tmp_path: Path) -> None:
    service = started(folder, None)
    assert [s.name for s in service.registry.snapshot().skills] == ["alpha", "beta", "gamma", "short-notes"]
    service.close()
    assert not any(tmp_path.rglob(FILE_NAME))


def test_hostile_skills_are_refused_again_on_a_restart_with_the_index(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    secret = tmp_path / "secret.txt"
    secret.write_text("password", encoding="utf-8")
    root = tmp_path / "served"
    os.symlink(secret, skill(root, "linked") / "notes.txt")
    with open(skill(root, "huge") / "data.bin", "wb") as file:
        file.truncate(17 * 1024 * 1024)
    skill(root, "bare", "# Just Markdown\n")
    restarted(root, cache)

    skills, warnings = restarted(root, cache)

    assert [s.name for s in skills] == ["linked"] and [f.path for f in skills[0].files] == ["SKILL.md"]
    assert any("linked/notes.txt" in w and "outside" in w.lower() for w in warnings), warnings
    assert any("huge/SKILL.md is not served" in w and "16 MiB" in w for w in warnings), warnings
    assert any("bare/SKILL.md is not served" in w for w in warnings), warnings
    assert not any("data.bin" in key or "notes.txt" in key for _, key in stored_keys(cache))
    json.dumps(warnings)


def test_a_start_finds_the_notebooks_in_the_one_listing_of_the_tree_as_a_walk_finds_them(tmp_path: Path) -> None:
    from mcp_notebook.registry import PromptRegistry
    from mcp_notebook.sources.finding import ServedPaths
    from mcp_notebook.sources.skills import SkillCatalog

    root = tmp_path / "served"
    for key in ["z.ipynb", "a/n.ipynb", "a-c/n.ipynb", "a/b/n.ipynb", "a/b/c/n.ipynb", "b/m.ipynb", "b/a.ipynb"]:
        write_notebook(root / key, [("markdown", "Text.", {})])
    for hidden in [".hidden/n.ipynb", "a/.ipynb_checkpoints/n-checkpoint.ipynb", "node_modules/n.ipynb"]:
        write_notebook(root / hidden, [("markdown", "Text.", {})])
    (root / "a" / ".dot.ipynb").write_text("{}", encoding="utf-8")
    outside = tmp_path / "outside"
    write_notebook(outside / "o.ipynb", [("markdown", "Text.", {})])
    os.symlink(outside, root / "linked-folder")
    os.symlink(root / "z.ipynb", root / "b" / "link.ipynb")
    os.symlink(tmp_path / "nowhere.ipynb", root / "b" / "dangling.ipynb")
    served = ServedPaths.at((root.resolve(),))
    catalog = SkillCatalog(PromptRegistry(), lambda: served.folders, lambda: served.root)

    walked = served.discover()
    listed = served.discover(listed=catalog.listing())

    assert list(listed.items()) == list(walked.items())
    assert list(walked) == [
        "z.ipynb",
        "a/n.ipynb",
        "a/b/n.ipynb",
        "a/b/c/n.ipynb",
        "a-c/n.ipynb",
        "b/a.ipynb",
        "b/dangling.ipynb",
        "b/link.ipynb",
        "b/m.ipynb",
    ]
