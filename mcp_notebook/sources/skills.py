"""Skills of a served folder (the Skills extension, `io.modelcontextprotocol/skills`): folders and notebooks.

A folder holding a `SKILL.md` is a skill, served as it is: every file below
it is one of its files (hidden files and folders, checkpoints and caches
left out, as everywhere). A notebook, or a section of one, tagged as a
skill becomes one too (`notebook_skills.py`): those are found when the folder
source builds the notebook, and taken from its loaded notebooks here, never
read again. `SkillCatalog.scan` finds the folders' skills and publishes them
with the notebooks' in the registry's snapshot, where the protocol answers
`skills/list`, `skills/get` and `skill://` reads from.

Every file is read through `sandbox` like any other file the server reads:
a symlink that leads out of the served folder is refused (the file is left
out of its skill, and a warning says so). A skill is served only when it is
valid by the Agent Skills format: its `SKILL.md` starts with YAML
frontmatter holding `name` and `description`, the name follows the naming
rules and is its folder's name, and it keeps to the extension's limits (512
files, 16 MiB in all). Otherwise a warning says what to change, and the
rest is served. Digests and sizes are of the bytes read; a file read again
is read again (a save announces a new manifest).

What reading a file found (a skill file's digest and a `SKILL.md`'s
frontmatter) is kept while the file keeps its identity
(modification and status-change times, size, inode), in this process and in
the persistent notebook index (`index.py`, where the prompts are kept), so
that neither a rescan nor a restart reads or digests a file that is as it
was. A file changed in the last two seconds is not trusted by its identity
(the index's rule). A file read for a client is digested again, and bytes
that no longer match the digest listed are never served: the skill is looked
at again, the new listing announced, and the client told to list again.
"""

from __future__ import annotations

import functools
import logging
import operator
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..models import SKILL_FILE, Skill, SkillFile
from ..registry import PromptRegistry
from .embeds import is_hidden_part
from .finding import Listed
from .index import NotebookIndex, SkillEntry, Stamp, settled, stored_value
from .sandbox import FileRefusal, look_inside, read_inside, resolve_inside
from .skill_format import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SEGMENT,
    SkillFormatError,
    digest_of_bytes,
    mime_type_of,
    parse_skill_md,
    valid_skill_name,
)

if TYPE_CHECKING:
    from .folder import NotebookFolderSource

__all__ = ["SkillCatalog"]

_NAME = operator.attrgetter("name")
_mime_type_of = functools.lru_cache(maxsize=4096)(mime_type_of)  # the same few paths in skill after skill

# The folder's logger: a server's start summary says each of these once (`start_report.py`).
log = logging.getLogger(__name__.rpartition(".")[0] + ".folder")


NotebookSkills = Mapping[str, tuple[tuple[Skill, ...], tuple[str, ...]]]
"""The skills the served notebooks declare and the warnings about them, by notebook key (those with any)."""


class _Read(NamedTuple):
    """A file read for a skill: its bytes' digest and size, and the stamp of the file they were read from."""

    stamp: Stamp
    digest: str
    size: int
    frontmatter: dict[str, Any] | None = None  # of a SKILL.md
    settled: bool = True  # the file had not changed for a while when read: its stamp says it is unchanged

    def holds(self, stamp: Stamp) -> bool:
        """Whether this is what the file of `stamp` holds, known without reading it."""
        return self.settled and self.stamp == stamp


class SkillCatalog:
    """Finds the skills of the served folders and publishes them in the registry (module docstring).

    `folders` and `root` are the folder source's, asked on each scan (a
    symlink on the way may have been swapped since); `notebooks` are the
    skills its loaded notebooks declare (`NotebookFolderSource.notebook_skills`),
    asked on each publication.
    """

    def __init__(
        self,
        registry: PromptRegistry,
        folders: Callable[[], tuple[Path, ...]],
        root: Callable[[], Path],
        *,
        notebooks: Callable[[], NotebookSkills] = dict,
        index: Callable[[], NotebookIndex | None] = lambda: None,
    ) -> None:
        self._registry = registry
        self._folders = folders
        self._root = root
        self._notebooks = notebooks
        # What reading files found, kept in the folder source's notebook index for the next start (None: none).
        self._index_of = index
        self._index: NotebookIndex | None = None
        self._looked_up: NotebookIndex | None = None
        self._stored: dict[tuple[str, str], SkillEntry] = {}  # the index's entries, looked up by a first scan
        self._writers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._reads: dict[str, _Read] = {}  # digests kept while the file is unchanged (by its resolved path)
        self._folder_skills: tuple[tuple[Skill, ...], tuple[str, ...]] = ((), ())
        self._skill_folders: tuple[str, ...] = ()  # the folders of the skills, as the walk spelled them
        self.warnings: tuple[str, ...] = ()

    @classmethod
    def of_source(cls, registry: PromptRegistry, source: NotebookFolderSource) -> SkillCatalog:
        """The catalog of `source`'s served folders and notebooks, publishing in `registry`, set as the source's
        own: before its first scan, so that building each notebook finds the skills it declares."""
        catalog = cls(
            registry,
            lambda: source.served_folders,
            lambda: source.root,
            notebooks=source.notebook_skills,
            index=lambda: source.index,
        )
        source.skills = catalog
        return catalog

    # --- finding and publishing ---------------------------------------------------------------------------

    def listing(self) -> Listed:
        """The served folders' tree as it is now: what `scan` looks in (and the folder source finds notebooks in,
        at a start, rather than walking the tree again)."""
        tree: dict[str, list[os.DirEntry[str]]] = {}
        for served in self._folders():
            tree.update(_listed_below(str(served)))
        return tree

    def scan(self, listed: Listed | None = None, *, publish: bool = True) -> None:
        """Find every skill of the served folders now (in `listed`, a `listing` just made) and publish them with
        the notebooks' as one change (not `publish`: `publish` follows, once the notebooks are loaded)."""
        with self._lock:
            root = self._root()
            warnings: list[str] = []
            folders: list[str] = []  # those holding a SKILL.md, as the walk spells them
            tree = listed if listed is not None else self.listing()
            self._look_up(root)
            for directory, entries in sorted(tree.items()):
                for entry in entries:
                    if entry.name == SKILL_FILE:
                        folders.append(directory)
            skills: list[Skill] = []
            for folder in folders:
                try:
                    skills.append(self._folder_skill(root, folder, tree, warnings))
                except SkillFormatError as problem:
                    shown = _relative(root, folder) or root.name
                    warnings.append(f"skill {shown}/{SKILL_FILE} is not served: {problem}")
            self._folder_skills = (tuple(skills), tuple(warnings))
            self._skill_folders = tuple(folders)
            live = {
                f"{s.folder}/{f.path}" if s.folder else f.path
                for s in skills
                if s.folder is not None
                for f in s.files or ()
            }
            self._reads = {path: read for path, read in self._reads.items() if path in live}
            self._stored = {}
            if publish:
                self._publish()
            self._store({("file", path) for path in self._reads})

    def publish(self) -> None:
        """Publish the folders' skills as last found with the notebooks' as loaded now, as one change."""
        with self._lock:
            self._publish()

    def _publish(self) -> None:
        """The folders' skills, then the notebooks' (a URI a folder has is theirs), and every warning: one change."""
        folder_skills, folder_warnings = self._folder_skills
        skills = list(folder_skills)
        warnings = list(folder_warnings)
        taken = {skill.path for skill in skills}
        notebooks = self._notebooks()
        for key in sorted(notebooks):
            made, said = notebooks[key]
            for skill in made:
                if skill.path in taken:
                    warnings.append(
                        f"skill {skill.name!r} of {skill.origin} is not served: the skill folder "
                        f"{skill.path} has its URI; rename one"
                    )
                    continue
                taken.add(skill.path)
                skills.append(skill)
            warnings.extend(said)
        names: dict[str, list[str]] = {}
        for skill in skills:
            names.setdefault(skill.name, []).append(skill.uri)
        warnings.extend(
            f"several skills are named {name!r} ({', '.join(sorted(uris))}): clients tell them apart by URI "
            "only; rename all but one"
            for name, uris in sorted(names.items())
            if len(uris) > 1
        )
        known = set(self.warnings)
        self.warnings = tuple(warnings)
        for warning in warnings:
            if warning not in known:  # each problem once, not again on every save
                log.warning("%s", warning)
        self._registry.set_skills(skills, warnings)

    def concerns(self, changed: Iterable[Path]) -> bool:
        """Whether a change at any of `changed` may change the skills of the folders (then `scan` again)."""
        for path in changed:
            if path.name == SKILL_FILE or path.suffix == "":
                return True
            text = str(path)
            if any(text == folder or text.startswith(os.path.join(folder, "")) for folder in self._skill_folders):
                return True
        return False

    def wants(self, name: str) -> bool:
        """Whether a watch that polls should look at files named `name`: a SKILL.md (a new skill), and any file
        once there is a skill folder (a skill's script may change); else polling costs what it did."""
        return name == SKILL_FILE or bool(self._skill_folders)

    def refresh(self, changed: Iterable[Path]) -> None:
        """After a save (in the watch's worker thread, once the folder source reloaded it): look again where what
        changed may change a skill folder; otherwise the notebooks' skills as reloaded are published with the
        folders' as they were (a folder of many notebooks is not walked for each save; an unchanged set of skills
        announces nothing)."""
        changed = list(changed)
        if self.concerns(changed):
            self.scan()
        elif changed:
            self.publish()

    # --- the index ----------------------------------------------------------------------------------------

    def _look_up(self, root: Path) -> None:
        """The index of `root` (the folder source's); at its first scan (at start, or after a swap), what the
        index holds for it, in one query."""
        index = self._index_of()
        self._index = index if index is not None and index.root == str(root) else None
        if self._index is not None and self._index is not self._looked_up:
            self._looked_up = self._index
            self._stored = self._index.skill_entries()

    def _stored_read(self, key: str, stamp: Stamp, skill_md: bool) -> _Read | None:
        """What the index holds for the skill file `key` if its file is exactly the one it was read from."""
        entry = self._stored.get(("file", key))
        if entry is None or entry[0] != stamp:
            return None
        whole, frontmatter = stored_value(entry[2])
        if not whole or (skill_md and not isinstance(frontmatter, dict)):
            return None
        return _Read(stamp, entry[1], stamp[1], frontmatter if skill_md else None)

    def _store(self, keep: set[tuple[str, str]] | None) -> None:
        """Write what was read since the last write to the index, off the caller's thread; with `keep` (after a
        whole scan) the index forgets every other file of this folder read for skills."""
        index = self._index
        if index is not None:
            writer = threading.Thread(target=index.flush, kwargs={"keep_skills": keep}, name="skill-index", daemon=True)
            self._writers = [*(w for w in self._writers if w.is_alive()), writer]
            writer.start()

    def close(self, timeout: float | None = 10.0) -> None:
        """When serving ends: what was read is written to the index (waiting at most `timeout`; the folder source
        closes the index)."""
        for writer in list(self._writers):
            writer.join(timeout)

    # --- folders ------------------------------------------------------------------------------------------

    def _folder_skill(self, root: Path, folder: str, tree: Listed, warnings: list[str]) -> Skill:
        relative = _relative(root, folder)
        path = relative or root.name
        segments = path.split("/")
        if not all(SEGMENT.match(segment) for segment in segments):
            raise SkillFormatError(
                f"its path {path!r} has characters a skill:// URI cannot hold as they are: use letters, digits, "
                "'-', '_', '.' and '~' in folder names"
            )
        resolved_folder = relative  # the walk followed no link to reach it: it is its own resolution
        files: list[SkillFile] = []
        total = 0
        found = self._files_below(root, folder, relative, tree, warnings)
        if len(found) > MAX_SKILL_FILES:
            raise SkillFormatError(f"it has {len(found)} files, over the limit of {MAX_SKILL_FILES} per skill")
        for inside, resolved, looked in found:
            try:
                stamp = looked if looked is not None else look_inside(root, resolved)
            except FileRefusal as refusal:
                warnings.append(f"{path}/{inside} is left out of skill {segments[-1]!r}: {refusal}")
                continue
            total += stamp[1]
            if total > MAX_SKILL_BYTES:
                raise SkillFormatError(
                    f"its files pass the limit of {MAX_SKILL_BYTES // (1024 * 1024)} MiB per skill "
                    f"({path}/{inside} is {stamp[1]} bytes); move large data out of the skill folder"
                )
            read = self._reads.get(resolved)
            if read is None or not read.holds(stamp):
                read = self._stored_read(resolved, stamp, inside == SKILL_FILE)
            if read is None:
                try:
                    read = self._read(root, resolved, inside == SKILL_FILE)
                except FileRefusal as refusal:
                    if inside == SKILL_FILE:
                        raise SkillFormatError(str(refusal)) from None
                    warnings.append(f"{path}/{inside} is left out of skill {segments[-1]!r}: {refusal}")
                    continue
            self._reads[resolved] = read
            if inside == SKILL_FILE:
                frontmatter = read.frontmatter or {}
            files.append(SkillFile(inside, read.digest, read.size, _mime_type_of(inside)))
        if not files or files[0].path != SKILL_FILE:
            raise SkillFormatError("its SKILL.md cannot be read")
        name = frontmatter["name"]
        if not valid_skill_name(name):
            raise SkillFormatError(
                f"its name {name!r} breaks the Agent Skills naming rules: 1 to 64 lowercase letters, digits and "
                "single hyphens, not at either end"
            )
        if name != segments[-1]:
            raise SkillFormatError(f"its name {name!r} is not its folder's name {segments[-1]!r}: rename one")
        return Skill(Skill.uri_at(path), frontmatter, tuple(files), origin=path, folder=resolved_folder)

    def _read(self, root: Path, resolved: str, skill_md: bool) -> _Read:
        """Skill file `resolved` read and digested (and parsed, a SKILL.md), kept in the index for the next start."""
        file = read_inside(root, resolved, limit=MAX_SKILL_BYTES)
        stamp = (*file.stamp, file.ctime_ns)
        frontmatter = parse_skill_md(file.data) if skill_md else None
        read = _Read(stamp, digest_of_bytes(file.data), len(file.data), frontmatter, settled(stamp))
        if self._index is not None:
            self._index.put_skill("file", resolved, stamp, read.digest, frontmatter)
        return read

    @staticmethod
    def _files_below(
        root: Path, folder: str, relative: str, tree: Listed, warnings: list[str]
    ) -> list[tuple[str, str, Stamp | None]]:
        """(path in the skill, resolved path in the served folder, its file's stamp when known) of every file
        below `folder`, SKILL.md first. A file that is no link is where the walk found it (no link was followed
        to reach it), so only links are resolved, and only they need another look."""
        found: list[tuple[str, str, Stamp | None]] = []
        pending = [(folder, "")]
        while pending:
            directory, prefix = pending.pop()
            for entry in tree.get(directory, ()):
                inside = prefix + entry.name
                in_root = f"{relative}/{inside}" if relative else inside
                try:
                    if entry.is_symlink():
                        if os.path.isdir(entry.path):
                            warnings.append(f"{in_root} is a link to a folder: skills do not follow those")
                            continue
                        found.append((inside, resolve_inside(root, in_root), None))
                    elif entry.is_dir(follow_symlinks=False):
                        pending.append((entry.path, inside + "/"))
                    else:
                        looked = entry.stat(follow_symlinks=False)
                        stamp = (looked.st_mtime_ns, looked.st_size, looked.st_ino, looked.st_ctime_ns)
                        found.append((inside, in_root, stamp))
                except FileRefusal as refusal:
                    warnings.append(f"{in_root} is left out of its skill: {refusal}")
                except OSError as error:
                    warnings.append(f"{in_root} is left out of its skill: {error.strerror}")
        found.sort(key=lambda item: (item[0] != SKILL_FILE, item[0]))
        return found

    # --- reading ------------------------------------------------------------------------------------------

    def read_bytes(self, skill: Skill, path: str) -> bytes:
        """The bytes of the file at `path` of `skill`, which are those its listed digest covers; raises
        `FileRefusal` when it cannot be read, or no longer holds those bytes (then the skills are looked at
        again, and the new listing announced)."""
        if skill.contents is not None:
            try:
                return skill.contents[path]
            except KeyError:
                raise FileRefusal("missing", "no such file in this skill") from None
        listed = next((file.digest for file in skill.files or () if file.path == path), None)
        if listed is None:
            raise FileRefusal("missing", "no such file in this skill")
        root = self._root()
        in_root = f"{skill.folder}/{path}" if skill.folder else path
        resolved = resolve_inside(root, in_root)
        data = read_inside(root, resolved, limit=MAX_SKILL_BYTES).data
        if digest_of_bytes(data) == listed:
            return data
        with self._lock:
            self._reads.pop(resolved, None)  # whatever said it was unchanged: it is read again
        self.scan()
        raise FileRefusal(
            "changed", "it changed since the skills were listed: list them again (the new listing is announced)"
        )


def _listed_below(top: str) -> dict[str, list[os.DirEntry[str]]]:
    """Every folder below `top` (links to folders not followed) with its entries, hidden ones left out, by name.

    One listing of the tree serves every look at a start: which folders hold a SKILL.md, each skill's files, and
    the folder source's notebooks."""
    tree: dict[str, list[os.DirEntry[str]]] = {}
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = [entry for entry in listing if not is_hidden_part(entry.name)]
            entries.sort(key=_NAME)
        except OSError:
            continue  # gone meanwhile, or not ours to read: nothing of it is served
        tree[directory] = entries
        pending.extend(entry.path for entry in entries if entry.is_dir(follow_symlinks=False))
    return tree


def _relative(root: Path, path: str) -> str:
    """`path` (below the served folder `root`, no link followed on the way) relative to it, posix; "" for itself."""
    inside = os.path.join(root, "")
    if path.startswith(inside):
        return path[len(inside) :].replace(os.sep, "/")
    return "" if path == str(root) else os.path.relpath(path, root).replace(os.sep, "/")
