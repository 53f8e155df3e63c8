"""`mcp-notebook list` shows the skills beside the prompts, and warns about broken ones as it warns about notebooks."""

from __future__ import annotations

import gc
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

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
