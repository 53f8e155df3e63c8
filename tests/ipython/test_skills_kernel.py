"""`%mcp skills` and `%mcp skill` in a real ipykernel, against a real FastMCP 4.2 skills server (stdio and HTTP)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from client_harness import SDK_SERVER, SKILL_FOLDERS, SKILLS_SERVER, running_skills_http_server
from kernel_harness import RealKernel

pytestmark = pytest.mark.slow

PDF = SKILL_FOLDERS / "pdf-processing"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    base = tmp_path_factory.mktemp("skills-kernel")
    (base / "home").mkdir()
    env = {
        "HOME": str(base / "home"),  # the user's own MCP configuration stays out
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MCP_NOTEBOOK_CONFIG": None,
    }
    with RealKernel(base, env=env) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute(f"%mcp connect shop -- {sys.executable} {SKILLS_SERVER}")
        kernel.execute(f"%mcp connect plain -- {sys.executable} {SDK_SERVER}")
        yield kernel


def test_skills_lists_every_connected_server_and_names_those_without_skills(kernel: RealKernel) -> None:
    table = kernel.execute("%mcp skills").result

    plain = table["text/plain"]
    assert "shop:git-workflow" in plain and "shop:pdf-processing" in plain
    assert "Extract, fill, and assemble PDF documents" in plain
    assert "plain: offers no skills: it does not declare the Skills extension (io.modelcontextprotocol/skills)" in plain
    assert '<code style="white-space: nowrap">shop:pdf-processing</code>' in table["text/html"]
    names = kernel.execute("_t = %mcp skills shop\nprint([s.name for s in _t.skills])").text
    assert names.strip() == "['git-workflow', 'pdf-processing']"


def test_skill_renders_its_instructions_and_lists_its_files_each_openable(kernel: RealKernel) -> None:
    shown = kernel.execute("%mcp skill shop:pdf-processing").result

    markdown = shown["text/markdown"]
    assert "**Skill `shop:pdf-processing`** — Extract, fill, and assemble PDF documents" in markdown
    assert "from MCP server shop, skill://pdf-processing/SKILL.md" in markdown
    assert "# PDF processing\n\n1. Read [the forms guide](references/FORMS.md)" in markdown
    assert "name: pdf-processing" not in markdown  # the frontmatter is shown as fields, not as YAML
    assert "| `license` | Apache-2.0 |" in markdown
    assert "| `references/FORMS.md` |" in markdown
    assert "`%mcp skill shop:pdf-processing references/FORMS.md`" in markdown
    plain = shown["text/plain"].splitlines()  # a terminal: the same files, in aligned columns
    files = plain[plain.index("Files:") + 1 :]
    assert files[0].split() == ["file", "size", "open", "it", "with"] and set(files[1]) == {"-", " "}
    commands = [line.index("%mcp skill shop:pdf-processing") for line in files[2:]]
    assert len(commands) == 3 and len(set(commands)) == 1

    opened = kernel.execute("%mcp skill shop:pdf-processing references/FORMS.md").result
    assert (PDF / "references" / "FORMS.md").read_text().split("\n", 1)[1].strip() in opened["text/markdown"]
    script = kernel.execute("%mcp skill pdf-processing scripts/extract.py").result
    assert "```python\n" + (PDF / "scripts" / "extract.py").read_text() in script["text/markdown"]


def test_the_result_is_the_object_the_python_api_returns(kernel: RealKernel) -> None:
    printed = kernel.execute(
        "import mcp_notebook\n"
        "view = %mcp skill shop:git-workflow\n"
        f"api = mcp_notebook.connect(command={sys.executable!r}, args=[{str(SKILLS_SERVER)!r}], name='shop')\n"
        "same = api.read_skill('git-workflow')\n"
        "print(view.data == same.data, view.skill == same.skill, view.verified, type(view).__mro__[1].__name__)\n"
        "api.close()"
    ).text
    assert printed.split() == ["True", "True", "True", "SkillContent"]


def test_mistakes_get_errors_that_say_what_to_do(kernel: RealKernel) -> None:
    unknown = kernel.execute("%mcp skill shop:pdf-procesing", check=False).error
    assert unknown is not None and unknown["ename"] == "UsageError"
    assert (
        "Unknown skill: pdf-procesing; did you mean shop:pdf-processing? (%mcp skills shop lists them)"
        in (unknown["evalue"])
    )
    missing = kernel.execute("%mcp skill shop:pdf-processing notes.md", check=False).error
    assert missing is not None and "has no file notes.md (its files: SKILL.md" in missing["evalue"]
    none = kernel.execute("%mcp skill plain:anything", check=False).error
    assert none is not None and "plain offers no skills" in none["evalue"]


def test_skills_over_http(kernel: RealKernel) -> None:
    with running_skills_http_server() as url:
        kernel.execute(f"%mcp connect web {url}")
        shown = kernel.execute("%mcp skill web:git-workflow").result
        kernel.execute("%mcp disconnect web")
    assert "Branch from `main`, one topic per branch" in shown["text/markdown"]
    assert "from MCP server web, skill://git-workflow/SKILL.md" in shown["text/markdown"]
