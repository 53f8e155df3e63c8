"""How `%mcp skills` lists skills: the whole description in Jupyter, its first line in a terminal."""

from __future__ import annotations

import html
import re

from mcp_notebook.ipython.skill_views import SkillTable
from mcp_notebook.models import Skill, SkillFile

DIGEST = "sha256:" + "0" * 64
LONG = "Review a change with the team's checklist, then run the linter on the files it touches & quote <what> it says."


def _skill(path: str, description: str, sizes: tuple[int, ...]) -> Skill:
    files = tuple(SkillFile(f"file{n}.md", DIGEST, size) for n, size in enumerate(sizes))
    name = path.rsplit("/", 1)[-1]
    return Skill(f"skill://{path}/SKILL.md", {"name": name, "description": description}, files, server="docs")


def test_a_long_description_is_whole_in_jupyter_and_one_short_line_in_a_terminal() -> None:
    table = SkillTable(
        {"docs": [_skill("skills/code-review", LONG, (402, 703)), _skill("plot-csv", "Plot a CSV.", (684,))]},
        unavailable={"plain": "offers no skills"},
    )

    lines = repr(table).splitlines()
    row = next(line for line in lines if line.startswith("docs:skills/code-review"))
    assert LONG[:79] + "…" in row and LONG not in row  # 80 characters at most, and the cut is shown
    assert lines[-2:] == ["plain: offers no skills", "%mcp skill SERVER:SKILL shows one."]

    shown = table._repr_html_()
    assert "then run the linter on the files it touches &amp; quote &lt;what&gt; it says." in shown  # escaped, whole
    assert "…" not in shown
    cells = re.findall(r'<td style="([^"]*)">(.*?)</td>', shown)
    assert cells[:3] == [
        ("text-align: left", '<code style="white-space: nowrap">docs:skills/code-review</code>'),  # never broken
        ("text-align: left", html.escape(LONG)),
        ("text-align: left; white-space: nowrap", "2 (1105 bytes)"),
    ]
    assert "<div>plain: offers no skills</div>" in shown
