"""Notebooks as skills: a notebook, or the cells of one tagged with a skill's name, made into a skill's files.

The format (docs/notebook-format.md, "Skills"):

* the whole notebook: notebook metadata `{"mcp": {"skill": {"name": ..., "description": ..., ...}}}`; the
  object is the skill's frontmatter, as written (or `{"mcp": {"skill": "NAME"}}`, the name alone);
* a section: cells with the tag `skill:NAME` or cell metadata `{"mcp": {"skill": "NAME"}}`; the
  frontmatter is `name` and the notebook metadata's `mcp.skills.NAME` object, if any.

`description` defaults to the first sentence of the skill's Markdown. The
Markdown (and raw) cells, in order, are the `SKILL.md` body; each code cell
becomes `scripts/step-N.EXT` (EXT from the notebook's language), named in
the body where the cell stood; each Markdown attachment becomes
`assets/NAME`, and the body's `attachment:NAME` links point there. The
skill's path is the notebook's folder, then its name:
`skill://FOLDER/NAME/SKILL.md`.

A notebook's skills are found when it is built (`loading.build`), from the
very notebook its prompts are built from, and travel with its prompts
(`NotebookPrompts.skills`, and the index's stored form); the skill catalog
(`skills.py`) takes them from the folder source's loaded notebooks.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import yaml

from ..models import SKILL_FILE, Skill, SkillFile
from .skill_format import SEGMENT, SkillFormatError, digest_of_bytes, mime_type_of, parse_skill_md, valid_skill_name
from .summaries import to_description

__all__ = ["skills_of_notebook"]

_EXTENSIONS = {"python": "py", "r": "r", "julia": "jl", "bash": "sh", "javascript": "js", "typescript": "ts"}


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source or "")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cell_skill_names(cell: Mapping[str, Any]) -> list[str]:
    metadata = _mapping(cell.get("metadata"))
    names: list[str] = []
    mcp = _mapping(metadata.get("mcp"))
    if isinstance(mcp.get("skill"), str):
        names.append(mcp["skill"])
    tags = metadata.get("tags")
    for tag in tags if isinstance(tags, list) else ():
        if isinstance(tag, str) and tag.startswith("skill:") and tag[6:] not in names:
            names.append(tag[6:])
    return names


def skills_of_notebook(notebook: Mapping[str, Any], key: str) -> tuple[tuple[Skill, ...], tuple[str, ...]]:
    """The skills the notebook at `key` (parsed: an nbformat v4 dict) declares, and a warning for each it cannot
    serve."""
    if not isinstance(notebook.get("cells"), list):
        return (), ()  # the folder source says why the notebook does not load
    cells = [cell for cell in notebook["cells"] if isinstance(cell, dict)]
    metadata = _mapping(notebook.get("metadata"))
    mcp = _mapping(metadata.get("mcp"))
    language = str(_mapping(metadata.get("kernelspec")).get("language") or "python").lower()
    extension = _EXTENSIONS.get(language, "txt")
    wanted: dict[str, tuple[dict[str, Any], list[dict[str, Any]], str]] = {}
    whole = mcp.get("skill")
    if isinstance(whole, str):  # the whole notebook, by its name alone
        whole = {"name": whole}
    if isinstance(whole, dict):
        if not isinstance(whole.get("name"), str):
            return (), (f"{key}: the notebook's metadata mcp.skill has no 'name': add one (a skill's name)",)
        wanted[whole["name"]] = (dict(whole), cells, key)
    elif whole is not None:
        return (), (f"{key}: metadata mcp.skill must be a name or an object of frontmatter fields (name, ...)",)
    sections = _mapping(mcp.get("skills"))
    for cell in cells:
        for name in _cell_skill_names(cell):
            if name in wanted and wanted[name][2] == key:
                continue
            extra = sections.get(name)
            fields = dict(extra) if isinstance(extra, dict) else {}
            fields = {"name": name, **{k: v for k, v in fields.items() if k != "name"}}
            entry = wanted.setdefault(name, (fields, [], f"{key} (cells tagged skill:{name})"))
            entry[1].append(cell)
    folder = key.rsplit("/", 1)[0] if "/" in key else ""
    made: list[Skill] = []
    warnings: list[str] = []
    if wanted and folder and not all(SEGMENT.match(segment) for segment in folder.split("/")):
        return (), (
            f"the skills of {key} are not served: its folder's name has characters a skill:// URI cannot hold as "
            "they are; use letters, digits, '-', '_', '.' and '~'",
        )
    for name, (frontmatter, chosen, origin) in wanted.items():
        if not valid_skill_name(name):
            warnings.append(
                f"skill {name!r} of {origin} is not served: its name breaks the Agent Skills naming rules (1 to 64 "
                "lowercase letters, digits and single hyphens, not at either end)"
            )
            continue
        contents: dict[str, bytes] = {}
        body: list[str] = []
        step = 0
        for cell in chosen:
            kind = cell.get("cell_type")
            source = _text(cell.get("source"))
            if kind == "code":
                if not source.strip():
                    continue
                step += 1
                script = f"scripts/step-{step}.{extension}"
                contents[script] = source.encode("utf-8") + (b"" if source.endswith("\n") else b"\n")
                body.append(f"Step {step}: [`{script}`]({script})")
                continue
            attachments = _mapping(cell.get("attachments"))
            for file_name, bundle in attachments.items():
                if not isinstance(bundle, dict) or not bundle or "/" in file_name or file_name.startswith("."):
                    continue
                mime, encoded = next(iter(bundle.items()))
                payload = _text(encoded)
                try:
                    raw = base64.b64decode(payload) if not mime.startswith("text/") else payload.encode("utf-8")
                except ValueError:
                    continue
                contents[f"assets/{file_name}"] = raw
                source = source.replace(f"attachment:{file_name}", f"assets/{file_name}")
            if source.strip():
                body.append(source.strip("\n"))
        if "description" not in frontmatter:
            described = to_description(_text(c.get("source")) for c in chosen if c.get("cell_type") != "code")
            if described:
                frontmatter["description"] = described
        try:
            header = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=1_000_000)
        except yaml.YAMLError:
            warnings.append(f"skill {name!r} of {origin} is not served: its frontmatter cannot be written as YAML")
            continue
        text = f"---\n{header}---\n\n" + "\n\n".join(body) + "\n"
        try:
            parsed = parse_skill_md(text)
        except SkillFormatError as problem:
            warnings.append(f"skill {name!r} of {origin} is not served: {problem}")
            continue
        contents = {SKILL_FILE: text.encode("utf-8"), **dict(sorted(contents.items()))}
        files = tuple(
            SkillFile(path, digest_of_bytes(raw), len(raw), mime_type_of(path)) for path, raw in contents.items()
        )
        path = f"{folder}/{name}" if folder else name
        made.append(Skill(Skill.uri_at(path), parsed, files, origin=origin, contents=contents))
    return tuple(made), tuple(warnings)
