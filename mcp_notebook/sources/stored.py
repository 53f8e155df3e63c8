"""A notebook's prompts in the form the persistent index stores: a compact listing, and a body read later.

What a start needs from an unchanged notebook is what `prompts/list` shows:
names, titles, descriptions, arguments, icons and `_meta`. That *listing* is
stored as plain tuples, strings and numbers, which unpickle without calling
any Python code. The messages and published cells (the *body*) are stored
apart and read only when a prompt of the notebook is first asked for or its
cells are listed; until then each prompt holds them as a `Deferred`. The
skills the notebook declares (none, mostly), and the warnings about them, are
in the listing too, as plain values: a start serves them without reading the
notebook. A listing built without looking for skills is a miss for a server
that serves them (the notebook is read again).

The body is taken only from the index entry of the very file the listing came
from. When that entry is gone or replaced (another server stored a newer
version of the file, or it is damaged), the notebook is read from its file
again, so a prompt is never rendered from anything but its file as it is.
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..models import Deferred, Icon, MessageTemplate, PromptArgument, PromptSpec, Skill, SkillFile
from .cells import NOTEBOOK_META_KEY, NotebookPrompts, PublishedCell
from .test_cells import PromptTest

__all__ = ["Interned", "StoredBody", "body_of", "listing_of", "restore"]

log = logging.getLogger(__name__)

Body = tuple[tuple[tuple[MessageTemplate, ...], ...], tuple[PublishedCell, ...]]
_SHARED_META = 0  # in a listing row: `_meta` is the notebook's own and nothing else
# 2: the notebook's prompt tests and its prompts' kinds of media after its rows; 3: then its skills and their warnings
_LISTING_VERSION = 3

# Argument rows and tuples of them, to the one object made for each while restoring (a start reads
# the same few declarations thousands of times).
Interned = dict[tuple[Any, ...], Any]
_lock = threading.Lock()  # bodies are made once, whichever thread asks first


def _argument_row(argument: PromptArgument) -> tuple[Any, ...]:
    a = argument
    return (a.name, a.title, a.description, a.required, a.default, a.completions, a.source, a.ask)


def listing_of(loaded: NotebookPrompts, *, origin: str, root: str) -> bytes | None:
    """The listing of `loaded` (a notebook served as `origin` from `root`), or None when it has no compact form."""
    rows = []
    for spec in loaded.prompts:
        if spec.origin != origin or spec.root != root:
            return None
        meta: object = spec.meta
        if spec.meta is not None and len(spec.meta) == 1 and spec.meta.get(NOTEBOOK_META_KEY) == origin:
            meta = _SHARED_META
        elif spec.meta is not None:
            meta = dict(spec.meta)
        icons = tuple((i.src, i.mime_type, i.sizes, i.theme) for i in spec.icons)
        arguments = tuple(_argument_row(a) for a in spec.arguments)
        rows.append((spec.name, spec.title, spec.description, arguments, icons, meta))
    tests = tuple(dataclasses.astuple(test) for test in loaded.tests)  # plain values, as the rows are
    skills = None if loaded.skills is None else tuple(_skill_row(skill) for skill in loaded.skills)
    listing = (
        _LISTING_VERSION,
        tuple(loaded.warnings),
        tuple(rows),
        tests,
        loaded.media,
        skills,
        loaded.skill_warnings,
    )
    return pickle.dumps(listing, protocol=pickle.HIGHEST_PROTOCOL)


def _skill_row(skill: Skill) -> tuple[Any, ...]:
    """A notebook's skill as plain values (its files' bytes are in `contents`: it has no folder)."""
    files = tuple(dataclasses.astuple(file) for file in skill.files or ())
    return (skill.uri, dict(skill.frontmatter), files, skill.origin, dict(skill.contents or {}))


def _skill(row: tuple[Any, ...]) -> Skill:
    uri, frontmatter, files, origin, contents = row
    return Skill(uri, frontmatter, tuple(SkillFile(*file) for file in files), origin=origin, contents=contents)


def body_of(loaded: NotebookPrompts) -> Body:
    """The messages of each prompt of `loaded`, in order, and its published cells."""
    return tuple(tuple(spec.messages) for spec in loaded.prompts), tuple(loaded.cells)


class StoredBody:
    """The body of one notebook restored from its listing: fetched from the index when first needed.

    `fetch()` reads the stored body of the very file the listing came from (None
    when that entry is gone, replaced or damaged); `rebuild()` loads the
    notebook from its file instead (None when it no longer loads).
    """

    __slots__ = ("_fetch", "_names", "_parts", "_rebuild")

    def __init__(
        self,
        names: tuple[str, ...],
        fetch: Callable[[], Body | None],
        rebuild: Callable[[], NotebookPrompts | None],
    ) -> None:
        self._names = names
        self._fetch = fetch
        self._rebuild = rebuild
        self._parts: Body | None = None

    def part(self, position: int) -> tuple[Any, ...]:
        """The messages of prompt `position`, or (for -1) the published cells."""
        parts = self._parts
        if parts is None:
            with _lock:
                parts = self._parts = self._parts or self._load()
        return parts[1] if position < 0 else parts[0][position]

    def made(self) -> bool:
        return self._parts is not None

    def _load(self) -> Body:
        body = self._fetch()
        if body is not None and len(body[0]) == len(self._names):
            return body
        rebuilt = self._rebuild()
        if rebuilt is None:
            return tuple(() for _ in self._names), ()
        messages = {spec.name: tuple(spec.messages) for spec in rebuilt.prompts}
        return tuple(messages.get(name, ()) for name in self._names), tuple(rebuilt.cells)


def restore(
    listing: bytes,
    body: Callable[[tuple[str, ...]], StoredBody],
    *,
    origin: str,
    root: str,
    interned: Interned,
    skills: bool = False,
) -> NotebookPrompts | None:
    """The notebook `listing` describes, its messages and cells deferred to `body(names)`; None if unreadable,
    or (with `skills`, for a server that serves skills) if its skills were not looked for when it was built."""
    try:
        version, warnings, rows, tests, media, skill_rows, skill_warnings = pickle.loads(listing)
        if version != _LISTING_VERSION or (skills and skill_rows is None):
            return None
        stored = body(tuple(row[0] for row in rows))
        shared: Mapping[str, Any] = {NOTEBOOK_META_KEY: origin}
        make = _prompt_spec
        prompts = tuple(
            [
                make(
                    row[0],
                    row[1],
                    row[2],
                    _arguments(row[3], interned),
                    tuple([Icon(*icon) for icon in row[4]]) if row[4] else (),
                    shared if row[5] == _SHARED_META else row[5],
                    Deferred(stored, position),
                    origin,
                    root,
                )
                for position, row in enumerate(rows)
            ]
        )
        tested = tuple(PromptTest(*test) for test in tests)
        declared = tuple([_skill(row) for row in skill_rows]) if skills else None
        return NotebookPrompts(
            prompts, warnings, Deferred(stored, -1), tested, media, declared, skill_warnings if skills else ()
        )
    except Exception:  # a damaged entry is a miss: the notebook is read from its file
        log.debug("notebook index listing for %s is unreadable", origin, exc_info=True)
        return None


_FIELDS = ("name", "title", "description", "arguments", "icons", "meta", "messages", "origin", "root")


def _fast_prompt_spec() -> Callable[..., PromptSpec]:
    """A maker of `PromptSpec`s from all their field values, in order, that skips the dataclass `__init__`.

    A frozen dataclass sets each field through `object.__setattr__`; setting the slots directly
    makes a start from the index make its hundred thousand prompts three times faster. The
    values are those of a `PromptSpec` built before, so the constructor has nothing to check.
    """
    if tuple(f.name for f in dataclasses.fields(PromptSpec)) != _FIELDS or hasattr(PromptSpec, "__post_init__"):
        return PromptSpec  # the model changed: the plain constructor, always right
    new = object.__new__
    s0, s1, s2, s3, s4, s5, s6, s7, s8 = (getattr(PromptSpec, name).__set__ for name in _FIELDS)

    def make(
        name: Any,
        title: Any,
        description: Any,
        arguments: Any,
        icons: Any,
        meta: Any,
        messages: Any,
        origin: Any,
        root: Any,
    ) -> PromptSpec:
        spec: PromptSpec = new(PromptSpec)
        s0(spec, name)
        s1(spec, title)
        s2(spec, description)
        s3(spec, arguments)
        s4(spec, icons)
        s5(spec, meta)
        s6(spec, messages)
        s7(spec, origin)
        s8(spec, root)
        return spec

    return make


_prompt_spec = _fast_prompt_spec()


def _arguments(rows: tuple[tuple[Any, ...], ...], interned: Interned) -> tuple[PromptArgument, ...]:
    found = interned.get(rows)
    if found is None:
        found = interned[rows] = tuple(_argument(row, interned) for row in rows)
    return found


def _argument(row: tuple[Any, ...], interned: Interned) -> PromptArgument:
    found = interned.get(row)
    if found is None:
        found = interned[row] = PromptArgument(*row)
    return found
