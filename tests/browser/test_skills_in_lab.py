"""What `%mcp skills` and `%mcp skill` show in JupyterLab: the table of skills, one skill rendered, one file."""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, run_all_cells
from lab_harness import ARTIFACTS, EXAMPLES, Lab
from test_prompts_extension import shoot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "skills_in_lab.ipynb"
REVIEW = EXAMPLES / "skills" / "code-review"
FILES = ["SKILL.md", "references/checklist.md", "scripts/lint.py"]
# The notebook's `index`-th code cell (from 0), and its output.
CELL = ".jp-CodeCell >> nth={}"
OUTPUT = CELL + " >> .jp-OutputArea-output"


def test_skills_show_as_a_table_then_one_skill_rendered_with_its_files_then_one_file(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/{NOTEBOOK}?reset", NOTEBOOK)
        script = page.locator(OUTPUT.format(4))
        script.wait_for(timeout=STEP)  # the last cell's output: every cell before it ran

        # `%mcp skills`: a row each, the description whole, a name or a size never broken across lines.
        table = page.locator(OUTPUT.format(2))
        rows = [row.split("\t") for row in table.locator("tbody tr").all_inner_texts()]
        assert [row[0] for row in rows] == ["docs:plot-csv", "docs:skills/code-review"], rows
        assert rows[1][1:] == [
            "Review a change with the team's checklist, then run the linter on the files it touches.",
            "3 (1105 bytes)",
        ]
        lines = table.locator("tbody tr >> nth=1 >> td").evaluate_all(
            "(cells) => cells.map((cell) => Math.round(cell.getBoundingClientRect().height))"
        )
        assert lines[0] == lines[2] < lines[1] * 2, lines  # one line each, beside the description's lines
        assert table.locator("tbody code").evaluate_all("(names) => names.map((n) => n.getClientRects().length)") == [
            1,
            1,
        ]

        # `%mcp skill docs:code-review`: its SKILL.md rendered (no YAML shown), then its files, each openable.
        skill = page.locator(OUTPUT.format(3))
        shown = skill.inner_text()
        assert shown.startswith("Skill docs:skills/code-review — Review a change with the team's checklist")
        assert "skill://skills/code-review/SKILL.md (402 bytes, checked against its digest)" in shown
        assert "name: code-review" not in shown and "---" not in shown
        assert skill.locator("h1").inner_text() == "Code review"
        steps = skill.locator("ol > li").all_inner_texts()
        assert len(steps) == 3 and steps[1].startswith("Run scripts/lint.py on the files the change touches")
        files = [row.split("\t") for row in skill.locator("table >> nth=-1 >> tbody tr").all_inner_texts()]
        assert [row[0] for row in files] == FILES
        assert [row[1] for row in files] == [f"{(REVIEW / name).stat().st_size} bytes" for name in FILES]
        assert [row[2] for row in files] == [f"%mcp skill docs:skills/code-review {name}" for name in FILES]

        # `%mcp skill docs:code-review scripts/lint.py`: the file, checked, as highlighted Python.
        assert script.inner_text().startswith("scripts/lint.py of skill docs:skills/code-review — from MCP server docs")
        code = script.locator("pre > code.language-python")
        assert code.inner_text().strip() == (REVIEW / "scripts" / "lint.py").read_text(encoding="utf-8").strip()
        assert code.locator("span").count() > 20, code.inner_html()[:2000]  # JupyterLab highlighted it

        page.locator(CELL.format(2)).evaluate("(cell) => cell.scrollIntoView({block: 'start'})")
        shoot(page, "lab-skills.png", CELL.format(2), CELL.format(3))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "skills-failure.png"), full_page=True)
        raise
