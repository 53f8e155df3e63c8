"""The client's skills (the Skills extension, SEP-2640) against a real FastMCP 4.2 skills server, stdio and HTTP."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from client_harness import SKILL_FOLDERS, running_skills_http_server, sdk_config, skills_config

from mcp_notebook.client import PromptClient, Skill
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerError, SkillsNotOfferedError

pytestmark = pytest.mark.slow

PDF = SKILL_FOLDERS / "pdf-processing"


def digest(path: Path) -> str:
    return f"sha256:{hashlib.sha256(path.read_bytes()).hexdigest()}"


async def test_the_skills_of_a_fastmcp_server_are_listed_with_their_manifests() -> None:
    async with PromptClient(skills_config()) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.offers_skills is True
        skills = await client.list_skills()

    assert [(s.reference, s.path, s.description) for s in skills] == [
        ("shop:git-workflow", "git-workflow", "Follow this team's Git conventions for branching and commits"),
        ("shop:pdf-processing", "pdf-processing", "Extract, fill, and assemble PDF documents"),
    ]
    pdf = skills[1]
    assert pdf.uri == "skill://pdf-processing/SKILL.md"
    assert pdf.frontmatter["license"] == "Apache-2.0"
    assert pdf.frontmatter["metadata"] == {"version": "2.1.0"}
    assert pdf.files is not None
    assert {(f.path, f.size, f.digest) for f in pdf.files} == {
        (path, (PDF / path).stat().st_size, digest(PDF / path))
        for path in ("SKILL.md", "references/FORMS.md", "scripts/extract.py")
    }


async def test_a_skill_is_got_by_uri_and_its_files_are_read_checked_against_the_entry() -> None:
    async with PromptClient(skills_config()) as client:
        skill = await client.get_skill("skill://pdf-processing/SKILL.md")
        instructions = await client.read_skill_file(skill)
        forms = await client.read_skill_file(skill, "references/FORMS.md")
        script = await client.read_skill_file(skill, "./scripts//extract.py")

    assert skill.server == "shop" and skill.name == "pdf-processing"
    assert instructions.verified and instructions.data == (PDF / "SKILL.md").read_bytes()
    assert instructions.body is not None and instructions.body.startswith("# PDF processing\n")
    assert "name: pdf-processing" not in instructions.body
    assert forms.uri == "skill://pdf-processing/references/FORMS.md"
    assert forms.text == (PDF / "references" / "FORMS.md").read_text()
    assert script.path == "scripts/extract.py" and script.mime_type == "text/x-python"


async def test_only_the_files_an_entry_lists_are_read() -> None:
    async with PromptClient(skills_config()) as client:
        skill = await client.get_skill("skill://pdf-processing/SKILL.md")
        with pytest.raises(ServerError, match=r"has no file notes\.md \(its files: SKILL\.md, references/FORMS\.md"):
            await client.read_skill_file(skill, "notes.md")
        with pytest.raises(ServerError, match="is not a path inside the skill's folder"):
            await client.read_skill_file(skill, "../git-workflow/SKILL.md")
        with pytest.raises(ServerError) as unknown:
            await client.get_skill("skill://no-such-skill/SKILL.md")
        # The server is still there for the next request.
        assert [s.name for s in await client.list_skills()] == ["git-workflow", "pdf-processing"]
    assert unknown.value.code == -32602


async def test_a_skill_edited_after_it_was_listed_is_read_against_its_fresh_entry(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    shutil.copytree(SKILL_FOLDERS, root)
    async with PromptClient(skills_config("--reload", str(root))) as client:
        (listed,) = [s for s in await client.list_skills() if s.name == "pdf-processing"]
        (root / "pdf-processing" / "references" / "FORMS.md").write_text("# Forms\n\nNew rules.\n")
        forms = await client.read_skill_file(listed, "references/FORMS.md")

    assert forms.text == "# Forms\n\nNew rules.\n"
    fresh = forms.skill.file("references/FORMS.md")
    assert fresh is not None and fresh.digest == digest(root / "pdf-processing" / "references" / "FORMS.md")
    assert fresh != listed.file("references/FORMS.md")


async def test_skills_over_http() -> None:
    with running_skills_http_server() as url:
        async with PromptClient(ServerConfig(name="web", url=url)) as client:
            skills = await client.list_skills()
            content = await client.read_skill_file(skills[0])
    assert [s.reference for s in skills] == ["web:git-workflow", "web:pdf-processing"]
    assert content.verified and content.text == (SKILL_FOLDERS / "git-workflow" / "SKILL.md").read_text()


async def test_a_server_without_the_extension_says_it_offers_no_skills() -> None:
    async with PromptClient(sdk_config()) as client:
        assert client.offers_skills is False
        with pytest.raises(SkillsNotOfferedError, match=r"sdk offers no skills: it does not declare the Skills ext"):
            await client.list_skills()
        assert [p.name for p in await client.list_prompts()][:1] == ["greet"]


async def test_a_handshake_era_connection_is_told_why_there_are_no_skills() -> None:
    # FastMCP 4.2 serves the extension to 2026-07-28 clients only.
    async with PromptClient(skills_config(), mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        with pytest.raises(SkillsNotOfferedError, match=r"It speaks protocol 2025-11-25; .* mode 2026-07-28 or auto"):
            await client.get_skill("skill://git-workflow/SKILL.md")


def test_skills_are_identified_by_server_and_uri() -> None:
    entry = {"name": "x", "description": "d"}
    one = Skill(server="a", uri="skill://x/SKILL.md", frontmatter=entry, files=None)
    other = Skill(server="b", uri="skill://x/SKILL.md", frontmatter=entry, files=None)
    assert one != other and one.reference == "a:x"
