"""Loading one served notebook: its file read inside the served folder, parsed, built into prompts.

These are plain functions of the served folder and a notebook's key (its path
relative to that folder, posix), so that whichever process builds a notebook
(the server, a forked child of a first scan, the process that builds large
notebooks, `offload.py`) builds it the very same way. Where skills are served, a notebook's skills
(`notebook_skills.py`) are found in the same build, from the same read of its
file, and travel with its prompts (`NotebookPrompts.skills`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ..exceptions import NotebookFormatError
from ..models import PromptSpec
from .cells import NotebookPrompts, prompts_from_notebook
from .index import body_bytes
from .parallel import Built
from .reader import parse_notebook
from .sandbox import FileRefusal, SandboxedFile, read_inside, resolve_inside
from .stored import listing_of

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "NotebookState",
    "build",
    "build_stored",
    "digest",
    "failure_reason",
    "read_notebook_inside",
]

MAX_NOTEBOOK_BYTES = 256_000_000  # a notebook larger than this is refused rather than held in memory


@dataclass(frozen=True, slots=True)
class NotebookState:
    """One served notebook: its file, its last good load, and why it fails to load now, if it does."""

    path: Path
    loaded: NotebookPrompts | None  # the last good load
    error: str | None = None
    stamp: tuple[int, int, int] | None = None  # (mtime_ns, size, inode) of the file that was loaded
    digest: bytes | None = None  # of the bytes of that file: what the registry tells this group's prompts by

    def group(self) -> tuple[tuple[PromptSpec, ...], tuple[str, ...]]:
        prompts = self.loaded.prompts if self.loaded else ()
        warnings = self.loaded.warnings if self.loaded else ()
        return prompts, (*warnings, self.error) if self.error else warnings


def read_notebook_inside(root: Path, key: str) -> SandboxedFile:
    """The file of notebook `key`, read inside `root`; raises `NotebookFormatError` saying why it cannot be."""
    try:  # no symlink on the way (the walk refuses any): the path is its own resolution
        return read_inside(root, key, limit=MAX_NOTEBOOK_BYTES)
    except FileRefusal:
        pass  # resolved and read again below, which says why
    try:
        return read_inside(root, resolve_inside(root, key), limit=MAX_NOTEBOOK_BYTES)
    except FileRefusal as refusal:
        if refusal.kind == "outside":
            reason = "is a symlink to a file outside the served folder, so it is refused"
        elif refusal.kind == "special":
            reason = f"is skipped: {refusal}"
        else:
            reason = f"cannot be read: {refusal}"
        raise NotebookFormatError(key, reason) from None


def _iso(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def build(root: Path, key: str, *, skills: bool = False) -> tuple[SandboxedFile, NotebookPrompts]:
    """Notebook `key` of the folder `root`, read and built (with `skills`, the skills it declares too); raises
    (`NotebookFormatError` for a file at fault)."""
    file = read_notebook_inside(root, key)
    data = parse_notebook(file.data, key)
    loaded = prompts_from_notebook(data, origin=key, root=str(root), last_modified=_iso(file.stamp[0] or 0))
    if not skills:
        return file, loaded
    from .notebook_skills import skills_of_notebook  # YAML and the skill format: only where skills are served

    # Most notebooks declare none: those without the word are not looked through.
    declared, warnings = skills_of_notebook(data, key) if b'"skill' in file.data else ((), ())
    return file, replace(loaded, skills=declared, skill_warnings=warnings)


def failure_reason(error: NotebookFormatError) -> str:
    """What is wrong with a notebook's file, without its name (the key already names it)."""
    return str(error).removeprefix(f"{error.path}: ")


def digest(file: SandboxedFile) -> bytes:
    """What tells a notebook's prompts apart, far more cheaply than the prompts themselves: its file's bytes
    and modification time (which annotations may show)."""
    salt = file.stamp[0].to_bytes(16, "little", signed=True)
    return hashlib.blake2b(file.data, digest_size=16, salt=salt).digest()


def build_stored(root: Path, key: str, *, skills: bool = False) -> Built | None:
    """Notebook `key` built into the index's stored form; None when it has none. Raises as `build` does."""
    file, loaded = build(root, key, skills=skills)
    listing = listing_of(loaded, origin=key, root=str(root))
    if listing is None:
        return None
    return (*file.stamp, file.ctime_ns), digest(file), listing, body_bytes(loaded)
