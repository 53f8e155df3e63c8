"""Skills as `/` commands: a skill's command inserts its `SKILL.md` instructions, as Claude Code's `/skill` does.

A server that declares the Skills extension (SEP-2640) lists skills beside
its prompts. Each becomes a slash command, `/server:name` (or `/name` when
only one server has it), ranked and completed like a prompt, with no
arguments. Rendering it inserts the skill's instructions, not a link to them:
in Claude Code, `/name` puts the skill's `SKILL.md` into the conversation,
where the model reads it; a link would leave the reader (person or model) to
fetch a `skill://` URI no editor opens. What is inserted is the body of the
`SKILL.md` (its frontmatter is the entry's, shown in the menu) under one line
naming the skill, the MCP server it came from and the URI its relative paths
(`references/FORMS.md`) resolve against, as Claude Code names a skill's base
directory: the extension requires a host to tag a skill's content with its
origin. The supporting files are listed, not inserted: they are read when
needed, and the file is checked against the digest the server listed before
anything is inserted.

A skill's command is named after the skill; when that name is taken on its
server (by a prompt, or by another skill: names need not be unique), after
its path instead (`acme.billing.refunds`), and `.skill` is added if that is
taken too. A skill never hides a prompt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..models import PromptSpec
from ..ranking import CommandEntry

if TYPE_CHECKING:
    from ..client.skills import Skill, SkillContent

__all__ = ["skill_entries", "to_skill_text"]


def skill_entries(
    server: str, skills: Sequence[Skill], prompts: Iterable[PromptSpec], priority: int
) -> list[tuple[CommandEntry, Skill]]:
    """The commands of one server's skills (each with its skill), named so that none hides a prompt or a skill."""
    taken = {spec.name for spec in prompts}
    counts = Counter(skill.name for skill in skills)
    entries = []
    for skill in skills:
        name = skill.name if counts[skill.name] == 1 and skill.name not in taken else skill.path.replace("/", ".")
        if name in taken:
            name += ".skill"
        if name in taken:
            continue  # the same path listed twice: the extension forbids it; the first one stands
        taken.add(name)
        entries.append((CommandEntry(server, _spec(skill, name), priority, is_skill=True), skill))
    return entries


def _spec(skill: Skill, name: str) -> PromptSpec:
    """What the menu, hover and ranking show of a skill: its description, said to be a skill's."""
    files = [f.path for f in skill.files or () if f.path != "SKILL.md"]
    more = f" Its files: {', '.join(files)}." if files else ""
    description = (
        f"Skill: {skill.description.strip()}\n\n"
        f"Inserts the instructions of its SKILL.md ({skill.uri}) from MCP server {skill.server}.{more}"
    )
    return PromptSpec(name=name, description=description, origin=skill.server)


def to_skill_text(content: SkillContent) -> str:
    """What a skill's command is replaced with: one line naming the skill and its origin, then its instructions."""
    skill = content.skill
    files = [f.path for f in skill.files or () if f.path != "SKILL.md"]
    listed = f"; its files: {', '.join(files)}" if files else ""
    head = (
        f"> Skill `{skill.name}` from MCP server `{skill.server}` ({skill.uri}). "
        f"Relative paths below resolve against {skill.base}/{listed}."
    )
    body = (content.body or "").strip()
    return f"{head}\n\n{body}" if body else head
