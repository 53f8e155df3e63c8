"""Skills of a served folder (the Skills extension, `io.modelcontextprotocol/skills`): folders and notebooks.

A folder holding a `SKILL.md` is a skill, served as it is: every file below
it is one of its files (hidden files and folders, checkpoints and caches
left out, as everywhere). A notebook, or a section of one, tagged as a
skill becomes one too (`notebook_skills.py`). `SkillCatalog.scan` finds them
all and publishes them in the registry's snapshot, where the protocol
answers `skills/list`, `skills/get` and `skill://` reads from.

Every file is read through `sandbox` like any other file the server reads:
a symlink that leads out of the served folder is refused (the file is left
out of its skill, and a warning says so). A skill is served only when it is
valid by the Agent Skills format: its `SKILL.md` starts with YAML
frontmatter holding `name` and `description`, the name follows the naming
rules and is its folder's name, and it keeps to the extension's limits (512
files, 16 MiB in all). Otherwise a warning says what to change, and the
rest is served. Digests and sizes are of the bytes read; a file read again
is read again (a save announces a new manifest).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models import SKILL_FILE, SkillFile, SkillSpec
from ..registry import PromptRegistry
from .embeds import is_hidden_part
from .finding import is_notebook_name
from .notebook_skills import MAX_NOTEBOOK_BYTES, skills_of_notebook
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

__all__ = ["SkillCatalog"]

# The folder's logger: a server's start summary says each of these once (`start_report.py`).
log = logging.getLogger(__name__.rpartition(".")[0] + ".folder")


_NotebookSkills = tuple[tuple[int, int, int], tuple[SkillSpec, ...], tuple[str, ...]]
"""A notebook's stamp when read, the skills it declares, the warnings about them."""


@dataclass(frozen=True, slots=True)
class _Read:
    """A file read for a skill: its bytes' digest and size, and the stamp they were read at."""

    stamp: tuple[int, int, int]
    digest: str
    size: int
    frontmatter: dict[str, Any] | None = None  # of a SKILL.md


class SkillCatalog:
    """Finds the skills of the served folders and publishes them in the registry (module docstring).

    `folders`, `root` and `files` (notebooks served by name) are the folder
    source's, asked on each scan (a symlink on the way may have been swapped
    since).
    """

    def __init__(
        self,
        registry: PromptRegistry,
        folders: Callable[[], tuple[Path, ...]],
        root: Callable[[], Path],
        files: Callable[[], tuple[Path, ...]] = tuple,
        *,
        index_folder: Path | None = None,
    ) -> None:
        self._registry = registry
        self._folders = folders
        self._root = root
        self._files = files  # notebooks served one by one (a kernel's own notebook)
        # Which notebooks held no skill when last read, kept beside the notebook index so that a restart reads
        # only the notebooks that changed (`_Clean`); None: no index.
        self._clean = _Clean(index_folder, root) if index_folder is not None else None
        self._lock = threading.Lock()
        self._reads: dict[str, _Read] = {}  # digests kept while the file is unchanged (by its resolved path)
        self._notebooks: dict[str, _NotebookSkills] = {}  # every served notebook's skills, kept by its stamp
        self._folder_skills: tuple[tuple[SkillSpec, ...], tuple[str, ...]] = ((), ())
        self._skill_folders: tuple[Path, ...] = ()
        self.warnings: tuple[str, ...] = ()

    # --- finding and publishing ---------------------------------------------------------------------------

    def scan(self) -> None:
        """Find every skill of the served folders now and publish them as one change."""
        with self._lock:
            root = self._root()
            warnings: list[str] = []
            folders: list[Path] = []
            notebooks: list[tuple[str, tuple[int, int, int] | None]] = []
            tree: dict[str, list[os.DirEntry[str]]] = {}
            for served in self._folders():
                tree.update(_listed_below(str(served)))
            for directory, entries in sorted(tree.items()):
                if any(entry.name == SKILL_FILE for entry in entries):
                    folders.append(Path(directory))
                for entry in entries:
                    if is_notebook_name(entry.name) and not entry.is_dir(follow_symlinks=False):
                        notebooks.append((os.path.relpath(entry.path, root).replace(os.sep, "/"), _stamp_of(entry)))
            notebooks.extend(
                (os.path.relpath(file, root).replace(os.sep, "/"), None)
                for file in self._files()
                if is_notebook_name(file.name)
            )
            skills: list[SkillSpec] = []
            for folder in folders:
                try:
                    skills.append(self._folder_skill(root, folder, tree, warnings))
                except SkillFormatError as problem:
                    warnings.append(f"skill {_shown(root, folder)}/{SKILL_FILE} is not served: {problem}")
            self._folder_skills = (tuple(skills), tuple(warnings))
            self._skill_folders = tuple(folders)
            seen: dict[str, _NotebookSkills] = {}
            for key, stamp in notebooks:
                self._notebook_skills(root, key, seen, stamp)
            self._notebooks = seen
            if self._clean is not None:
                self._clean.keep({key: kept[0] for key, kept in seen.items() if not kept[1] and not kept[2]})
            live = {
                f"{s.folder}/{f.path}" if s.folder else f.path for s in skills if s.folder is not None for f in s.files
            }
            self._reads = {path: read for path, read in self._reads.items() if path in live}
            self._publish()

    def _reread_notebooks(self, changed: Iterable[Path]) -> None:
        """After saves of notebooks only: their skills read again, the folders' kept as they are."""
        with self._lock:
            root = self._root()
            seen = dict(self._notebooks)
            for path in changed:
                key = os.path.relpath(path, root).replace(os.sep, "/")
                seen.pop(key, None)
                if os.path.lexists(path) and not key.startswith("../"):
                    self._notebook_skills(root, key, seen)
            self._notebooks = seen
            self._publish()

    def _publish(self) -> None:
        """The folders' skills, then the notebooks' (a URI a folder has is theirs), and every warning: one change."""
        folder_skills, folder_warnings = self._folder_skills
        skills = list(folder_skills)
        warnings = list(folder_warnings)
        taken = {skill.path for skill in skills}
        for key in sorted(self._notebooks):
            _, made, said = self._notebooks[key]
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
            if any(path.is_relative_to(folder) for folder in self._skill_folders):
                return True
        return False

    def wants(self, name: str) -> bool:
        """Whether a watch that polls should look at files named `name`: a SKILL.md (a new skill), and any file
        once there is a skill folder (a skill's script may change); else polling costs what it did."""
        return name == SKILL_FILE or bool(self._skill_folders)

    def refresh(self, changed: Iterable[Path]) -> None:
        """After a save (in the watch's worker thread): look again where what changed may change a skill; saved
        notebooks alone are read again alone (a folder of many notebooks is not walked for each save)."""
        changed = list(changed)
        if self.concerns(changed):
            self.scan()
            return
        notebooks = [path for path in changed if is_notebook_name(path.name)]
        if notebooks:
            self._reread_notebooks(notebooks)

    # --- folders ------------------------------------------------------------------------------------------

    def _folder_skill(
        self, root: Path, folder: Path, tree: dict[str, list[os.DirEntry[str]]], warnings: list[str]
    ) -> SkillSpec:
        relative = folder.relative_to(root).as_posix() if folder != root else ""
        path = relative or root.name
        segments = path.split("/")
        if not all(SEGMENT.match(segment) for segment in segments):
            raise SkillFormatError(
                f"its path {path!r} has characters a skill:// URI cannot hold as they are: use letters, digits, "
                "'-', '_', '.' and '~' in folder names"
            )
        resolved_folder = resolve_inside(root, relative) if relative else ""
        files: list[SkillFile] = []
        total = 0
        found = self._files_below(root, folder, relative, tree, warnings)
        if len(found) > MAX_SKILL_FILES:
            raise SkillFormatError(f"it has {len(found)} files, over the limit of {MAX_SKILL_FILES} per skill")
        for inside, resolved, stamp in found:
            try:
                mtime, size, inode = stamp if stamp is not None else look_inside(root, resolved)[:3]
            except FileRefusal as refusal:
                warnings.append(f"{path}/{inside} is left out of skill {segments[-1]!r}: {refusal}")
                continue
            total += size
            if total > MAX_SKILL_BYTES:
                raise SkillFormatError(
                    f"its files pass the limit of {MAX_SKILL_BYTES // (1024 * 1024)} MiB per skill "
                    f"({path}/{inside} is {size} bytes); move large data out of the skill folder"
                )
            read = self._reads.get(resolved)
            if read is None or read.stamp != (mtime, size, inode):
                try:
                    data = read_inside(root, resolved, limit=MAX_SKILL_BYTES).data
                except FileRefusal as refusal:
                    if inside == SKILL_FILE:
                        raise SkillFormatError(str(refusal)) from None
                    warnings.append(f"{path}/{inside} is left out of skill {segments[-1]!r}: {refusal}")
                    continue
                parsed = _frontmatter_of(data) if inside == SKILL_FILE else None
                read = _Read((mtime, len(data), inode), digest_of_bytes(data), len(data), parsed)
                self._reads[resolved] = read
            if inside == SKILL_FILE:
                frontmatter = read.frontmatter or {}
            files.append(SkillFile(inside, read.digest, read.size, mime_type_of(inside)))
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
        return SkillSpec(path, frontmatter, tuple(files), origin=path, folder=resolved_folder)

    @staticmethod
    def _files_below(
        root: Path, folder: Path, relative: str, tree: dict[str, list[os.DirEntry[str]]], warnings: list[str]
    ) -> list[tuple[str, str, tuple[int, int, int] | None]]:
        """(path in the skill, resolved path in the served folder, (mtime, size, inode) when known) of every file
        below `folder`, SKILL.md first. A file that is no link is where the walk found it (no link was followed
        to reach it), so only links are resolved, and only they need another look."""
        found: list[tuple[str, str, tuple[int, int, int] | None]] = []
        pending = [(str(folder), "")]
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
                        found.append((inside, in_root, (looked.st_mtime_ns, looked.st_size, looked.st_ino)))
                except FileRefusal as refusal:
                    warnings.append(f"{in_root} is left out of its skill: {refusal}")
                except OSError as error:
                    warnings.append(f"{in_root} is left out of its skill: {error.strerror}")
        found.sort(key=lambda item: (item[0] != SKILL_FILE, item[0]))
        return found

    # --- notebooks ----------------------------------------------------------------------------------------

    def _notebook_skills(
        self,
        root: Path,
        key: str,
        seen: dict[str, _NotebookSkills],
        stamp: tuple[int, int, int] | None = None,
    ) -> tuple[tuple[SkillSpec, ...], tuple[str, ...]]:
        """The skills of the notebook at `key`, kept in `seen`; `stamp`: it is where the walk found it (no link)."""
        key = key.replace(os.sep, "/")
        try:
            resolved = resolve_inside(root, key) if stamp is None else key
            mtime, size, inode = look_inside(root, resolved)[:3] if stamp is None else stamp
        except FileRefusal:
            return (), ()  # the folder source says why it does not serve this notebook
        kept = self._notebooks.get(key)
        if kept is not None and kept[0] == (mtime, size, inode):
            seen[key] = kept
            return kept[1], kept[2]
        if self._clean is not None and self._clean.holds(key, (mtime, size, inode)):
            seen[key] = ((mtime, size, inode), (), ())  # unchanged since it was read and held no skill
            return (), ()
        try:
            data = read_inside(root, resolved, limit=MAX_NOTEBOOK_BYTES).data
        except FileRefusal:
            return (), ()
        made, said = skills_of_notebook(data, key) if b'"skill' in data else ((), ())
        seen[key] = ((mtime, size, inode), made, said)
        return made, said

    # --- reading ------------------------------------------------------------------------------------------

    def read_bytes(self, skill: SkillSpec, path: str) -> bytes:
        """The bytes of the file at `path` of `skill` as it is now; raises `FileRefusal` when it cannot be read."""
        if skill.contents is not None:
            try:
                return skill.contents[path]
            except KeyError:
                raise FileRefusal("missing", "no such file in this skill") from None
        root = self._root()
        in_root = f"{skill.folder}/{path}" if skill.folder else path
        return read_inside(root, resolve_inside(root, in_root), limit=MAX_SKILL_BYTES).data


class _Clean:
    """The notebooks that held no skill when last read, by key and stamp, in a file beside the notebook index.

    Written by this user only (0600, in the index's own folder), read only when it is theirs and no one
    else may write it; a file that does not parse is as good as none. At worst a notebook is read again."""

    def __init__(self, folder: Path, root: Callable[[], Path]) -> None:
        self._folder = folder
        self._root = root
        self._known: dict[str, list[int]] | None = None

    def _path(self) -> Path:
        digest = hashlib.blake2b(str(self._root()).encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
        return self._folder / f"skill-free-notebooks-{digest}.json"

    def _load(self) -> dict[str, list[int]]:
        if self._known is None:
            self._known = {}
            try:
                path = self._path()
                looked = path.stat()
                if looked.st_uid == os.getuid() and not looked.st_mode & 0o022:
                    loaded = json.loads(path.read_text(encoding="utf-8"))
                    if isinstance(loaded, dict) and all(isinstance(v, list) for v in loaded.values()):
                        self._known = loaded
            except (OSError, ValueError):
                pass
        return self._known

    def holds(self, key: str, stamp: tuple[int, int, int]) -> bool:
        return self._load().get(key) == list(stamp)

    def keep(self, clean: dict[str, tuple[int, int, int]]) -> None:
        known = {key: list(stamp) for key, stamp in clean.items()}
        if known == self._load():
            return
        self._known = known
        path = self._path()
        partial = path.with_name(path.name + f".{os.getpid()}.tmp")
        try:
            self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(known, file, separators=(",", ":"))
            os.replace(partial, path)
        except OSError:
            log.debug("the list of notebooks without skills could not be written to %s", self._folder)
            with contextlib.suppress(OSError):
                partial.unlink()


def _stamp_of(entry: os.DirEntry[str]) -> tuple[int, int, int] | None:
    """(mtime, size, inode) of a regular file the walk found, as `look_inside` gives them; None: look again."""
    try:
        if entry.is_symlink():
            return None
        looked = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return (looked.st_mtime_ns, looked.st_size, looked.st_ino)


def _listed_below(top: str) -> dict[str, list[os.DirEntry[str]]]:
    """Every folder below `top` (links to folders not followed) with its entries, hidden ones left out, by name.

    One listing of the tree serves both looks: which folders hold a SKILL.md, and each skill's files."""
    tree: dict[str, list[os.DirEntry[str]]] = {}
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted((e for e in listing if not is_hidden_part(e.name)), key=lambda e: e.name)
        except OSError:
            continue  # gone meanwhile, or not ours to read: nothing of it is served
        tree[directory] = entries
        pending.extend(entry.path for entry in entries if entry.is_dir(follow_symlinks=False))
    return tree


def _frontmatter_of(data: bytes) -> dict[str, Any]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFormatError("its SKILL.md is not UTF-8 text") from None
    return parse_skill_md(text)


def _shown(root: Path, folder: Path) -> str:
    return folder.relative_to(root).as_posix() if folder != root else root.name
