"""`mcp-notebook list` shows the skills beside the prompts, and warns about broken ones as it warns about notebooks."""

from __future__ import annotations

import gc
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    """A first scan in this process freezes what it built: let the collector have it back afterwards."""
    yield
    gc.unfreeze()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    served = tmp_path / "served"
    shutil.copytree(EXAMPLES / "skills", served)
    shutil.copy(EXAMPLES / "code_review.ipynb", served)
    broken = served / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("# No frontmatter\n", encoding="utf-8")
    return served


def test_list_shows_each_skill_with_its_uri_and_warns_about_a_broken_one(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert "code_review — Review code  (code_review.ipynb)" in out
    assert "skill code-review  (skill://code-review/SKILL.md, from code-review)" in out
    assert "3 files" in out
    assert "1 skill: skill://code-review/SKILL.md" in err
    assert "warning: skill broken/SKILL.md is not served: SKILL.md does not begin with YAML frontmatter" in err


def test_list_json_carries_the_skills_with_their_files(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(folder), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (skill,) = document["skills"]
    assert skill["uri"] == "skill://code-review/SKILL.md"
    assert skill["frontmatter"]["license"] == "MIT"
    assert [f["path"] for f in skill["files"]] == ["SKILL.md", "references/checklist.md", "scripts/lint.py"]
    assert any("broken/SKILL.md is not served" in warning for warning in document["warnings"])


def test_list_walks_the_served_folder_once_for_its_notebooks_and_skills(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    listed: list[str] = []
    scandir = os.scandir

    def counted(path: Any) -> Any:
        listed.append(os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counted)
    assert main(["list", str(folder)]) == 0
    assert "skill://" in capsys.readouterr().out
    walked = [path for path in listed if Path(path).resolve() == folder.resolve()]
    assert len(walked) == 1, listed
