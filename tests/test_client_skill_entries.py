"""Skill entries off the wire and the checks a host makes on what it reads (the Skills extension's rules)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from mcp_notebook.client.skill_wire import parse_frontmatter, skill_from_entry, verify_content
from mcp_notebook.client.skills import find_skill
from mcp_notebook.exceptions import UnknownSkillError

SKILL_MD = b"---\nname: refunds\ndescription: Refund requests\nmetadata:\n  version: '2'\n---\n\n# Refunds\n"


def entry(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "Refund requests", "metadata": {"version": "2"}},
        "resources": [
            {
                "uri": "skill://acme/billing/refunds/SKILL.md",
                "digest": f"sha256:{hashlib.sha256(SKILL_MD).hexdigest()}",
                "size": len(SKILL_MD),
            },
            {"uri": "skill://acme/billing/refunds/examples/email.md", "digest": "sha256:" + "0" * 64, "size": 3},
        ],
    }
    return {**base, **changes}


def test_an_entry_becomes_a_skill_with_its_path_and_files() -> None:
    skill = skill_from_entry(entry(), "billing")
    assert (skill.name, skill.path, skill.base) == ("refunds", "acme/billing/refunds", "skill://acme/billing/refunds")
    assert skill.files is not None and [f.path for f in skill.files] == ["SKILL.md", "examples/email.md"]
    assert skill.uri_of("examples/email.md") == "skill://acme/billing/refunds/examples/email.md"
    assert skill_from_entry(entry(resources="dynamic"), "billing").dynamic


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"resources": None}, 'neither a list of files nor "dynamic"'),
        ({"uri": "skill://acme/billing/refunds/README.md"}, "is not the URI of a SKILL.md"),
        ({"frontmatter": {"name": "refunds"}}, "lacks a name or a description"),
        ({"frontmatter": {"name": "other", "description": "d"}}, "is not its name 'other'"),
        ({"resources": [{"uri": "skill://acme/billing/refunds/SKILL.md", "digest": "md5:x", "size": 1}]}, "digest"),
        (
            {"resources": [{"uri": "skill://acme/other/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 1}]},
            "not inside the skill's folder",
        ),
        (
            {"resources": [{"uri": "skill://acme/billing/refunds/x.md", "digest": "sha256:" + "0" * 64, "size": 1}]},
            "do not list its SKILL.md",
        ),
    ],
)
def test_an_invalid_entry_is_refused_saying_why(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        skill_from_entry(entry(**changes), "billing")


def test_content_must_match_the_size_the_digest_and_the_frontmatter_of_the_entry() -> None:
    skill = skill_from_entry(entry(), "billing")
    listed = skill.file("SKILL.md")
    assert verify_content(skill, "SKILL.md", listed, SKILL_MD) is None
    assert "bytes; the skill's entry says" in str(verify_content(skill, "SKILL.md", listed, SKILL_MD + b"!"))
    tampered = SKILL_MD.replace(b"Refunds\n", b"Refundz\n")
    assert "SHA-256 digest" in str(verify_content(skill, "SKILL.md", listed, tampered))
    # A dynamic skill has no digests, but its SKILL.md must still say what its entry said.
    dynamic = skill_from_entry(entry(resources="dynamic"), "billing")
    other = SKILL_MD.replace(b"version: '2'", b"version: '3'")
    problem = verify_content(dynamic, "SKILL.md", None, other)
    assert problem == "its frontmatter differs from the skill's entry in metadata"


def test_frontmatter_is_read_as_json_values() -> None:
    text = "---\nname: a\ndescription: b\ncreated: 2026-01-02\n---\nbody"
    assert parse_frontmatter(text) == {"name": "a", "description": "b", "created": "2026-01-02"}
    with pytest.raises(ValueError, match="does not begin with a --- frontmatter block"):
        parse_frontmatter("# no frontmatter")


def test_names_are_found_by_path_and_shared_names_must_be_told_apart() -> None:
    support = entry(
        uri="skill://acme/support/refunds/SKILL.md",
        resources=[{"uri": "skill://acme/support/refunds/SKILL.md", "digest": "sha256:" + "1" * 64, "size": 1}],
    )
    skills = [skill_from_entry(entry(), "s"), skill_from_entry(support, "s")]
    assert find_skill(skills, "acme/support/refunds") is skills[1]
    with pytest.raises(UnknownSkillError, match="say which, as s:acme/billing/refunds or s:acme/support/refunds"):
        find_skill(skills, "refunds")
    with pytest.raises(UnknownSkillError, match="Unknown skill: refund; did you mean s:refunds"):
        find_skill(skills[:1], "refund")
