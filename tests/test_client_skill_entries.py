"""Skill entries off the wire and the checks a host makes on what it reads (the Skills extension's rules)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from mcp_notebook.client.skill_wire import skill_from_entry, verify_content
from mcp_notebook.client.skills import find_skill
from mcp_notebook.exceptions import UnknownSkillError
from mcp_notebook.sources.skill_format import SkillFormatError, parse_skill_md

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
    assert parse_skill_md(text) == {"name": "a", "description": "b", "created": "2026-01-02"}


BOMB = "---\nname: refunds\ndescription: d\nk0: &k0 [x, x, x]\n" + "".join(
    f"k{i + 1}: &k{i + 1} [*k{i}, *k{i}, *k{i}]\n" for i in range(24)
)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("# Refunds\n", "SKILL.md does not begin with YAML frontmatter"),
        ("---\nname: [refunds\n---\n", "its frontmatter is not valid YAML"),
        (BOMB + "---\n", "far larger than its text (YAML aliases repeat them)"),
        ("---\nname: refunds\ndescription: d\nn: " + "9" * 5000 + "\n---\n", "a value too large to read"),
        ("---\nname: refunds\ndescription: d\n1: x\n---\n", "JSON cannot carry (keys must be text)"),
    ],
)
def test_a_skill_md_the_server_refuses_is_refused_by_the_client_in_the_same_words(text: str, says: str) -> None:
    # One parser on both sides: what a server warns about is what a client says when it reads such a SKILL.md.
    with pytest.raises(SkillFormatError, match=re.escape(says)) as refused:
        parse_skill_md(text)
    dynamic = skill_from_entry(entry(resources="dynamic"), "billing")
    assert (
        verify_content(dynamic, "SKILL.md", None, text.encode()) == f"its frontmatter cannot be read: {refused.value}"
    )


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
    # Of several servers' skills (`%mcp skill` with no server named), one path on two servers must be told apart.
    with pytest.raises(UnknownSkillError, match="say which, as s:acme/billing/refunds or t:acme/billing/refunds"):
        find_skill([*skills, skill_from_entry(entry(), "t")], "acme/billing/refunds")
