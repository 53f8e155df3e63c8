"""Notebook cells → prompts: the notebook prompt format (docs/notebook-format.md).

A cell takes part in a prompt named by `metadata.mcp.prompt` or by a tag
`prompt:NAME`; all cells naming the same prompt form it, in notebook order.
Prompt-level fields (title, description, arguments, icons, `_meta`) come from
the first cell that sets them; cell-level fields (role, outputs, source,
resource, link, annotations) shape that cell's messages. Anything malformed is
reported in `NotebookPrompts.warnings` and skipped, never raised, so one bad
cell leaves the rest of the notebook served.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from ..models import (
    ContentBlock,
    EmbeddedResource,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    Role,
    Skill,
    TextContent,
)
from ..naming import is_valid_name
from ..rendering import placeholders
from ..transcript import fence
from .fields import (
    KNOWN_FIELDS,
    PROMPT_FIELDS,
    to_annotations,
    to_arguments,
    to_flag,
    to_icons,
    to_link,
    to_meta,
    to_resource,
    to_role,
    to_text,
)
from .outputs import text_of, to_attachment_blocks, to_output_blocks
from .summaries import DESCRIPTION_LIMIT, to_description, to_title
from .test_cells import PromptTest, is_test_cell, read_test_cell
from .uris import to_file_uri_template

__all__ = [
    "DESCRIPTION_LIMIT",
    "NOTEBOOK_META_KEY",
    "NotebookPrompts",
    "PublishedCell",
    "notebook_language",
    "prompts_from_notebook",
]

NOTEBOOK_META_KEY = "dev.mcp-notebook/notebook"


@dataclass(frozen=True, slots=True)
class PublishedCell:
    """A cell that takes part in a prompt, as `resources/read` serves it."""

    key: str  # the cell id, or its position counting from 1 when the notebook has no ids
    number: int  # position counting from 1
    cell_type: str
    prompts: tuple[str, ...]
    source: str | None  # None when the cell's source is not published (`source: false`)
    mime_type: str
    media: tuple[ContentBlock, ...] = ()  # published outputs and attachments, unsubstituted


@dataclass(frozen=True, slots=True)
class NotebookPrompts:
    """What one notebook publishes: its prompts, what was wrong with it, its published cells, its prompt tests,
    and the skills it declares."""

    prompts: tuple[PromptSpec, ...]
    warnings: tuple[str, ...] = ()
    cells: Sequence[PublishedCell] = ()  # a tuple, or a `Deferred` one when taken from the index
    tests: tuple[PromptTest, ...] = ()  # its test cells (`test_cells.py`), which are never part of a prompt
    # The kinds of content other than text in each prompt that has any, by name (what a check of clients that
    # forward only text needs, known without reading the messages of a prompt taken from the index).
    media: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The skills it declares (`notebook_skills.py`), found when it was built; None: not looked for (skills off).
    skills: tuple[Skill, ...] | None = None
    skill_warnings: tuple[str, ...] = ()  # why a skill it declares is not served


@dataclass(frozen=True, slots=True)
class _CellPart:
    """One cell's contribution to the prompts it names."""

    number: int
    cell_type: str
    fields: Mapping[str, Any]
    templates: tuple[MessageTemplate, ...]
    text: str  # markdown or raw source, for the default title and description
    published: PublishedCell


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    # Parsed JSON holds plain dicts: tell them without the abstract-class machinery, which a large
    # folder would otherwise go through a million times.
    return type(value) is dict or isinstance(value, Mapping)


def notebook_language(nb: Mapping[str, Any]) -> str | None:
    """The notebook's language (for code fences): `kernelspec.language`, else `language_info.name`."""
    metadata = nb.get("metadata")
    if not _is_mapping(metadata):
        return None
    for section, key in (("kernelspec", "language"), ("language_info", "name")):
        block = metadata.get(section)
        if _is_mapping(block) and isinstance(block.get(key), str) and block[key]:
            return str(block[key])
    return None


def _fenced(source: str, language: str | None) -> str:
    return fence(source.rstrip(), language)  # code that holds ``` stays one block


def _cell_names(cell: Mapping[str, Any], where: str, warn: Callable[[str], None]) -> tuple[list[str], Role | None]:
    """The prompts a cell names (metadata first, then tags) and the role its tags give."""
    metadata = cell.get("metadata")
    metadata = metadata if _is_mapping(metadata) else {}
    names: list[str] = []
    mcp = metadata.get("mcp")
    if _is_mapping(mcp) and "prompt" in mcp:
        if isinstance(mcp["prompt"], str) and mcp["prompt"].strip():
            names.append(mcp["prompt"].strip())
        else:
            warn(f"{where}: metadata.mcp.prompt must be a prompt name (a string), ignored")
    tag_role: Role | None = None
    tags = metadata.get("tags")
    for tag in tags if isinstance(tags, list) else []:
        if not isinstance(tag, str):
            continue
        if tag.startswith("prompt:"):
            name = tag.removeprefix("prompt:").strip()
            if not name:
                warn(f"{where}: tag {tag!r} names no prompt, ignored")
            elif name not in names:
                names.append(name)
        elif tag.startswith("role:"):
            role = to_role(tag.removeprefix("role:").strip(), f"{where}: tag {tag!r}", warn)
            if role is not None and tag_role is not None and role != tag_role:
                warn(f"{where}: tags give two roles; {tag_role!r} is kept")
            elif role is not None:
                tag_role = role
    return names, tag_role


def _cell_mime_type(cell: Mapping[str, Any], language: str | None) -> str:
    kind = cell.get("cell_type")
    if kind == "markdown":
        return "text/markdown"
    if kind == "code":
        return f"text/x-{language.lower()}" if language else "text/plain"
    metadata = cell.get("metadata")
    if _is_mapping(metadata):
        for key in ("raw_mimetype", "format"):
            if isinstance(metadata.get(key), str) and "/" in metadata[key]:
                return str(metadata[key])
    return "text/plain"


def _cell_part(
    cell: Mapping[str, Any],
    *,
    number: int,
    key: str,
    origin: str,
    language: str | None,
    last_modified: str | None,
    warn: Callable[[str], None],
) -> _CellPart | PromptTest | None:
    """The message templates of one cell (None when it names no prompt), or the test a test cell declares."""
    metadata = cell.get("metadata")
    if type(metadata) is dict and "mcp" not in metadata and "tags" not in metadata:
        return None  # most cells of a notebook: nothing names a prompt, nothing to warn about
    if _is_mapping(metadata) and is_test_cell(metadata):
        return read_test_cell(cell, metadata, number)
    where = f"{origin}: cell {number}"
    names, tag_role = _cell_names(cell, where, warn)
    mcp = metadata.get("mcp") if _is_mapping(metadata) else None
    if mcp is not None and not _is_mapping(mcp):
        warn(f"{where}: metadata.mcp must be an object, ignored")
        mcp = None
    fields: Mapping[str, Any] = mcp or {}
    if not names:
        if set(fields) - {"prompt", "skill"}:  # a cell of a skill alone (notebook_skills.py) names no prompt
            warn(f"{where}: has metadata.mcp fields but names no prompt (metadata.mcp.prompt or a prompt:NAME tag)")
        return None
    unknown = [] if KNOWN_FIELDS.issuperset(fields) else sorted(str(k) for k in fields if k not in KNOWN_FIELDS)
    if unknown:
        warn(f"{where}: unknown metadata.mcp fields {', '.join(unknown)} ignored")

    role = to_role(fields.get("role"), where, warn)
    if role is not None and tag_role is not None and role != tag_role:
        warn(f"{where}: metadata.mcp.role {role!r} and a role tag {tag_role!r} disagree; the metadata wins")
    role = role or tag_role or "user"
    kind = str(cell.get("cell_type"))
    source = text_of(cell.get("source"))
    show_source = to_flag(fields.get("source"), "source", True, where, warn)
    show_outputs = to_flag(fields.get("outputs"), "outputs", True, where, warn)
    if kind != "code" and ("source" in fields or "outputs" in fields):
        warn(f"{where}: source and outputs only apply to code cells, ignored")

    text_blocks: list[ContentBlock] = []
    media: list[ContentBlock] = []
    text = ""
    if kind in ("markdown", "raw"):
        text = source
        if source.strip():
            text_blocks.append(TextContent(text=source))
        if kind == "markdown" and "attachment:" in source:  # no reference, no attachment to look at
            media = to_attachment_blocks(source, cell.get("attachments"), describe=where, warn=warn)
    elif kind == "code":
        if show_source and source.strip():
            text_blocks.append(TextContent(text=_fenced(source, language)))
        if show_outputs:
            outputs = cell.get("outputs")
            media = to_output_blocks(outputs if isinstance(outputs, list) else [], describe=where, warn=warn)
    else:
        warn(f"{where}: unknown cell type {kind!r}, its content is skipped")

    resource = to_resource(fields["resource"], where, warn) if "resource" in fields else None
    link = to_link(fields["link"], where, warn) if "link" in fields else None
    annotations = to_annotations(fields["annotations"], where, warn, last_modified) if "annotations" in fields else None

    templates = [MessageTemplate(role=role, content=block) for block in text_blocks]
    templates += [MessageTemplate(role=role, content=block, substitute=False) for block in media]
    if resource is not None:
        content, path = resource
        if path is not None and not content.uri:
            content = replace(
                content, uri=to_file_uri_template(posixpath.normpath(posixpath.join(posixpath.dirname(origin), path)))
            )
        templates.append(MessageTemplate(role=role, content=content, path=path))
    if link is not None:
        templates.append(MessageTemplate(role=role, content=link))
    if annotations is not None:
        templates = [replace(t, content=replace(t.content, annotations=annotations)) for t in templates]

    published = PublishedCell(
        key=key,
        number=number,
        cell_type=kind,
        prompts=tuple(names),
        source=source if (kind != "code" or show_source) else None,
        mime_type=_cell_mime_type(cell, language),
        media=tuple(t.content for t in templates if not t.substitute),
    )
    return _CellPart(number, kind, fields, tuple(templates), text, published)


def _substituted_texts(templates: Sequence[MessageTemplate]) -> list[str]:
    """Every string that placeholders may fill, in message order."""
    texts: list[str] = []
    for template in templates:
        if not template.substitute:
            continue
        content = template.content
        if isinstance(content, TextContent):
            texts.append(content.text)
        elif isinstance(content, EmbeddedResource):
            texts += [content.uri, template.path or "", content.text or ""]
        elif content.type == "resource_link":
            texts += [content.uri, content.name, content.title or "", content.description or ""]
    return texts


def _prompt_fields(name: str, parts: Sequence[_CellPart], origin: str, warn: Callable[[str], None]) -> dict[str, Any]:
    """Prompt-level fields from the first cell that sets each; later different values are reported."""
    chosen: dict[str, Any] = {}
    for part in parts:
        for field in PROMPT_FIELDS:
            if field not in part.fields:
                continue
            if field not in chosen:
                chosen[field] = part.fields[field]
            elif part.fields[field] != chosen[field]:
                warn(
                    f"{origin}: prompt {name!r}: cell {part.number} sets {field} differently from an earlier "
                    "cell of the prompt; the first value is kept"
                )
    return chosen


def _declared_arguments(
    value: Any, where: str, warn: Callable[[str], None], memo: dict[str, tuple[PromptArgument, ...]]
) -> tuple[PromptArgument, ...] | None:
    """`to_arguments`, once per distinct declaration in a notebook: prompts often declare the same
    arguments, and then share the very same objects. Only declarations without warnings are
    remembered (a warning names its prompt)."""
    try:
        key = repr(value)  # JSON values: the same text, the same declaration (`true` and `1` differ)
    except RecursionError:
        key = None
    if key is not None and key in memo:
        return memo[key]
    found: list[str] = []
    arguments = to_arguments(value, where, found.append)
    for warning in found:
        warn(warning)
    if key is not None and arguments is not None and not found:
        memo[key] = arguments
    return arguments


def _build_prompt(
    name: str,
    parts: Sequence[_CellPart],
    *,
    origin: str,
    root: str | None,
    warn: Callable[[str], None],
    memo: dict[str, tuple[PromptArgument, ...]],
    shared_meta: Mapping[str, Any],
) -> PromptSpec:
    fields = _prompt_fields(name, parts, origin, warn)
    where = f"{origin}: prompt {name!r}"
    templates = tuple(t for part in parts for t in part.templates)
    used = placeholders("\n".join(_substituted_texts(templates)))
    declared = _declared_arguments(fields["arguments"], where, warn, memo) if "arguments" in fields else None
    if declared is None:
        arguments = tuple(PromptArgument(name=placeholder) for placeholder in used)
    else:
        arguments = declared
        known = {argument.name for argument in declared}
        for placeholder in used:
            if placeholder not in known:
                warn(f"{where}: {{{{{placeholder}}}}} is not a declared argument, so it stays as written")
    meta: Mapping[str, Any] = shared_meta  # the notebook's own, shared by its prompts that add nothing to it
    if "_meta" in fields:
        meta = {**(to_meta(fields["_meta"], where, warn) or {}), NOTEBOOK_META_KEY: origin}
    title = to_text(fields.get("title"), "title", where, warn) if "title" in fields else None
    description = to_text(fields.get("description"), "description", where, warn) if "description" in fields else None
    return PromptSpec(
        name=name,
        title=title or (to_title(parts[0].text) if parts[0].cell_type == "markdown" else None),
        description=description or to_description(part.text for part in parts),
        arguments=arguments,
        icons=to_icons(fields["icons"], where, warn) if "icons" in fields else (),
        meta=meta,
        messages=templates,
        origin=origin,
        root=root,
    )


def prompts_from_notebook(
    nb: Mapping[str, Any],
    *,
    origin: str,
    root: str | None = None,
    language: str | None = None,
    last_modified: str | None = None,
) -> NotebookPrompts:
    """The prompts a notebook (an nbformat v4 dict) publishes, with warnings for what is malformed.

    `origin` names the notebook (its path relative to the served folder) in
    warnings and in each prompt's `_meta`; `root` is the folder that embedded
    files must stay inside; `language` overrides the notebook's own for code
    fences; `last_modified` (ISO 8601) fills `annotations.lastModified` on
    cells that declare annotations without one.
    """
    found: list[str] = []
    warn = found.append
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return NotebookPrompts(prompts=(), warnings=(f"{origin}: the notebook has no list of cells",))
    language = language or notebook_language(nb)
    with_ids = all(_is_mapping(cell) and isinstance(cell.get("id"), str) and cell["id"] for cell in cells)
    by_prompt: dict[str, list[_CellPart]] = {}
    tests: list[PromptTest] = []
    for number, cell in enumerate(cells, 1):
        if not _is_mapping(cell):
            warn(f"{origin}: cell {number} is not a cell object, skipped")
            continue
        key = str(cell["id"]) if with_ids else str(number)
        part = _cell_part(
            cell, number=number, key=key, origin=origin, language=language, last_modified=last_modified, warn=warn
        )
        if part is None:
            continue
        if isinstance(part, PromptTest):
            tests.append(part)
            continue
        for name in part.published.prompts:
            by_prompt.setdefault(name, []).append(part)
    prompts: list[PromptSpec] = []
    memo: dict[str, tuple[PromptArgument, ...]] = {}
    shared_meta = {NOTEBOOK_META_KEY: origin}
    # Each cell as first found, and the names it ends up publishing: one copy per cell, made at the end.
    published: dict[int, tuple[PublishedCell, list[str]]] = {}
    media: dict[str, tuple[str, ...]] = {}
    for name, parts in by_prompt.items():
        if not is_valid_name(name):
            warn(
                f"{origin}: prompt name {name!r} is refused: names are 1 to 64 letters, digits, '_', '.' or '-' "
                "so that every client can show them as a slash command"
            )
            continue
        prompts.append(
            _build_prompt(name, parts, origin=origin, root=root, warn=warn, memo=memo, shared_meta=shared_meta)
        )
        for part in parts:
            published.setdefault(part.number, (part.published, []))[1].append(name)
        kinds = tuple(dict.fromkeys(t.content.type for t in prompts[-1].messages if t.content.type != "text"))
        if kinds:
            media[name] = kinds
    return NotebookPrompts(
        prompts=tuple(prompts),
        warnings=tuple(dict.fromkeys(found)),
        cells=tuple(
            cell if cell.prompts == tuple(names) else replace(cell, prompts=tuple(names))
            for cell, names in (published[number] for number in sorted(published))
        ),
        tests=tuple(tests),
        media=tuple(media.items()),
    )
