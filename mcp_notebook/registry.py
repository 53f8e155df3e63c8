"""The current set of published prompts, shared between threads.

Sources (notebook folders, a kernel's `%%prompt` cells, its magics) each own
one *group* of prompts. Every change builds a new immutable `RegistrySnapshot`
(copy-on-write), so readers on other threads never see a half-made set, and
then tells the listeners.

A change costs work in proportion to what changed, not to the whole set: the
owners of every name are kept up to date group by group, so clashes are
resolved only for the names that several groups publish, and the merged
listing is put together from the groups' own tuples.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from operator import attrgetter
from types import MappingProxyType

from .models import PromptSpec, Skill
from .naming import plan_renames

__all__ = ["PromptRegistry", "RegistrySnapshot", "digest_of"]

log = logging.getLogger(__name__)

Listener = Callable[["RegistrySnapshot"], None]
_NAME = attrgetter("name")


@dataclass(frozen=True, slots=True)
class RegistrySnapshot:
    """An immutable view of every published prompt at one moment."""

    version: int
    prompts: tuple[PromptSpec, ...]
    warnings: tuple[str, ...] = ()
    by_name: Mapping[str, PromptSpec] = field(default_factory=lambda: MappingProxyType({}))
    fingerprint: str = ""  # of the prompts and the skills
    prompts_fingerprint: str = ""  # of the prompts alone
    skills: tuple[Skill, ...] = ()  # in `skill://` URI order
    skills_by_uri: Mapping[str, Skill] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, name: str) -> PromptSpec | None:
        return self.by_name.get(name)


def digest_of(items: Iterable[object]) -> bytes:
    """A short digest of a sequence of value objects (their `repr`): the same items, the same digest."""
    digest = hashlib.blake2b(digest_size=8)
    for item in items:
        digest.update(repr(item).encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.digest()


def _skills_digest(skills: Iterable[Skill]) -> bytes:
    """`digest_of(skills)` by what each skill's `repr` shows, in plain values: the generated `repr` of a skill
    and of each of its files costs four times as much, at every start and every change of a large set."""
    digest = hashlib.blake2b(digest_size=8)
    for s in skills:
        files = None if s.files is None else [(f.path, f.digest, f.size, f.mime_type, f.uri) for f in s.files]
        shown = (s.uri, s.frontmatter, files, s.server, s.origin, s.folder, s.meta)
        digest.update(repr(shown).encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.digest()


def _fingerprint(group_digests: Mapping[str, bytes], skills: bytes = b"") -> str:
    # The merged set (clash renames included) is a function of the groups alone, so digesting
    # each group once, when it is set, identifies the set: a change re-digests one group, not all.
    digest = hashlib.blake2b(digest_size=8)
    if skills:  # the skills are part of what clients are told changed (as resources)
        digest.update(b"skills\0" + skills)
    for key in sorted(group_digests):
        digest.update(key.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
        digest.update(group_digests[key])
    return digest.hexdigest()


class PromptRegistry:
    """Thread-safe holder of prompt groups; publishes snapshots to listeners.

    A group's key is its origin (a notebook path, "kernel", "magics"). A name
    published by several groups is served under a qualified name in each
    (`naming.plan_renames`) and reported in the snapshot's warnings.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._groups: dict[str, tuple[PromptSpec, ...]] = {}
        self._group_warnings: dict[str, tuple[str, ...]] = {}
        self._group_digests: dict[str, bytes] = {}
        # Prompt name -> the key of the one group that publishes it, or the keys of several (a clash);
        # a set only where one is needed, so a hundred thousand names cost a hundred thousand sets less.
        self._owners: dict[str, str | set[str]] = {}
        self._clashing: set[str] = set()  # the names that several groups publish
        self._served: dict[str, tuple[PromptSpec, ...]] = {}  # each group as last published (clashes renamed)
        self._by_name: dict[str, PromptSpec] = {}  # the last snapshot's prompts by name, copied on change
        self._listeners: list[Listener] = []
        self._skills: tuple[Skill, ...] = ()
        self._skill_warnings: tuple[str, ...] = ()
        self._skills_digest = b""
        self._snapshot = RegistrySnapshot(version=0, prompts=(), fingerprint=_fingerprint({}))

    def snapshot(self) -> RegistrySnapshot:
        """The current set. Cheap: no copy, no lock held by the caller afterwards."""
        return self._snapshot

    def groups(self) -> Mapping[str, tuple[PromptSpec, ...]]:
        with self._lock:
            return dict(self._groups)

    def set_group(self, key: str, prompts: Sequence[PromptSpec], warnings: Sequence[str] = ()) -> None:
        """Replace the prompts of one source (a notebook path, "kernel", "magics")."""
        self.update({key: (tuple(prompts), tuple(warnings))})

    def remove_group(self, key: str) -> None:
        self.update({key: None})

    def set_skills(self, skills: Sequence[Skill], warnings: Sequence[str] = ()) -> None:
        """Replace the served skills (every skill of the served folders, as one set) and their warnings."""
        ordered = tuple(sorted(skills, key=lambda skill: skill.uri))
        with self._lock:
            if ordered == self._skills and tuple(warnings) == self._skill_warnings:
                return  # a save that changed no skill: the prompts' snapshot is not built again for it
            self._skills = ordered
            self._skill_warnings = tuple(warnings)
            self._skills_digest = _skills_digest(ordered) if ordered else b""
        self.update({})

    def update(
        self,
        changes: Mapping[str, tuple[Sequence[PromptSpec], Sequence[str]] | None],
        *,
        digests: Mapping[str, bytes] | None = None,
    ) -> None:
        """Apply several group changes at once, as one new snapshot (one notification).

        `digests` may tell a group's prompts by something cheaper than the prompts themselves
        (a notebook's file bytes, digested when read): equal prompts must get equal digests, or
        else a change is announced that changed nothing. Other groups are digested here.
        """
        with self._lock:
            for key, change in changes.items():
                self._forget_names(key)
                if change is None:
                    self._groups.pop(key, None)
                    self._group_warnings.pop(key, None)
                    self._group_digests.pop(key, None)
                else:
                    self._groups[key] = tuple(change[0])
                    self._own_names(key)
                    self._group_warnings[key] = tuple(change[1])
                    if self._groups[key]:  # a notebook without prompts changes nothing clients see
                        given = digests.get(key) if digests is not None else None
                        self._group_digests[key] = given if given is not None else digest_of(self._groups[key])
                    else:
                        self._group_digests.pop(key, None)
            old = self._snapshot
            new = self._build(old.version + 1)
            if new.fingerprint == old.fingerprint and new.warnings == old.warnings and new.skills == old.skills:
                return
            self._snapshot = new
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(new)
            except Exception:  # a broken listener must not stop the others
                log.exception("prompt registry listener failed")

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(snapshot)` after every change; returns a function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def _forget_names(self, key: str) -> None:
        owners = self._owners
        for spec in self._groups.get(key, ()):
            name = spec.name
            held = owners.get(name)
            if held is None:
                continue
            if isinstance(held, str):
                if held == key:
                    del owners[name]
                continue
            held.discard(key)
            if len(held) < 2:
                self._clashing.discard(name)
                if held:
                    owners[name] = next(iter(held))
                else:
                    del owners[name]

    def _own_names(self, key: str) -> None:
        owners = self._owners
        names = list(map(_NAME, self._groups[key]))
        if owners.keys().isdisjoint(names):  # the common case (every start): no clash, all at C speed
            owners.update(dict.fromkeys(names, key))
            return
        for spec in self._groups[key]:
            name = spec.name
            held = owners.setdefault(name, key)
            if held is key or held == key:
                continue
            if isinstance(held, str):
                owners[name] = {held, key}
            else:
                held.add(key)
            self._clashing.add(name)

    def _changed_by_name(self, served: Mapping[str, tuple[PromptSpec, ...]]) -> dict[str, PromptSpec]:
        """The last snapshot's names, copied (cheap: no Python-level loop) and changed only where groups did."""
        by_name = self._by_name.copy()
        before = self._served
        for key, group in before.items():
            if served.get(key) is not group:
                for spec in group:
                    by_name.pop(spec.name, None)  # names are unique across groups once clashes are renamed
        for key, group in served.items():
            if before.get(key) is not group:
                # Last one wins here, first one in `_build`: a name twice makes the sizes differ either way.
                by_name.update(zip(map(_NAME, group), group, strict=True))
        return by_name

    def _build(self, version: int) -> RegistrySnapshot:
        warnings: list[str] = []
        keys = sorted(self._groups)
        for key in sorted(self._group_warnings):
            warnings.extend(self._group_warnings[key])
        groups = [self._groups[key] for key in keys]
        if self._clashing:
            owners = self._owners
            clashing = {name: sorted(owners[name]) for name in self._clashing}
            renamed, clash_warnings = plan_renames(clashing, lambda name: isinstance(owners.get(name), str))
            warnings.extend(clash_warnings)
            touched = {key for key, _ in renamed}
            groups = [
                tuple(replace(s, name=renamed[(key, s.name)]) if (key, s.name) in renamed else s for s in group)
                if key in touched
                else group
                for key, group in zip(keys, groups, strict=True)
            ]
        merged = tuple(chain.from_iterable(groups))
        served = dict(zip(keys, groups, strict=True))
        by_name = self._changed_by_name(served)
        if len(by_name) == len(merged):
            prompts = merged
        else:  # a group that publishes one name twice: the first one wins
            by_name = {}
            kept: list[PromptSpec] = []
            for spec in merged:
                if spec.name in by_name:
                    warnings.append(f"prompt {spec.name!r} from {spec.origin} is hidden by an earlier one")
                    continue
                by_name[spec.name] = spec
                kept.append(spec)
            prompts = tuple(kept)
        self._served, self._by_name = served, by_name
        skills = self._skills
        warnings.extend(self._skill_warnings)
        warnings.extend(
            f"skill {skill.name!r} ({skill.origin}) has the name of a prompt: clients that show both as commands "
            "may confuse them; rename one"
            for skill in skills
            if skill.name in by_name
        )
        return RegistrySnapshot(
            version=version,
            prompts=prompts,
            warnings=tuple(warnings),
            by_name=MappingProxyType(by_name),
            fingerprint=_fingerprint(self._group_digests, self._skills_digest),
            prompts_fingerprint=_fingerprint(self._group_digests),
            skills=skills,
            skills_by_uri=MappingProxyType({skill.uri: skill for skill in skills}),
        )
