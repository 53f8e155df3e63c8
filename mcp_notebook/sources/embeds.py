"""Which files a prompt's embedded `path` may name: a fixed path as written, a templated one only below its folder.

A fixed path (`data/notes.txt`, even `../shared/x.txt`) is the notebook
author's choice and names exactly one file inside the served folder. A path
with placeholders (`data/{{f}}`) lets the client's argument choose the file,
so the value may only select a file below the template's own folder (the
literal folder before the first placeholder: `data/` here, the notebook's
folder for `{{f}}.txt`), never a hidden file or folder, never a checkpoint
or cache folder, never a notebook. The rule holds both for the path as
written and for the path with its symlinks resolved.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..rendering import PLACEHOLDER_PATTERN, substitute

__all__ = ["EmbedRule", "is_hidden_part"]

_SKIPPED_FOLDERS = frozenset({".ipynb_checkpoints", "__pycache__", "node_modules"})


def is_hidden_part(part: str) -> bool:
    """Whether a path component is never served: hidden, or a checkpoint, cache or package folder."""
    return part.startswith(".") or part in _SKIPPED_FOLDERS


def _pattern(path: str) -> re.Pattern[str]:
    """A regex for the paths a template may become: each `{{placeholder}}` stands for any text."""
    pieces: list[str] = []
    position = 0
    for match in PLACEHOLDER_PATTERN.finditer(path):
        pieces.append(re.escape(path[position : match.start()]))
        pieces.append(".+" if match.group(1) else re.escape("{{"))
        position = match.end()
    pieces.append(re.escape(path[position:]))
    return re.compile("".join(pieces))


def _below(folder: str, path: str) -> str | None:
    """`path` relative to `folder` (both normalized posix, "." for the root), or None when not below it."""
    if folder == ".":
        return path
    return path.removeprefix(folder + "/") if path.startswith(folder + "/") else None


@dataclass(frozen=True, slots=True)
class EmbedRule:
    """The files one embedded `path` template may name, as paths relative to the served folder."""

    template: str  # the template joined to the notebook's folder, normalized ("data/{{f}}")
    folder: str  # the literal folder a templated path selects below ("data", "." for the root)
    pattern: re.Pattern[str] | None  # None for a fixed path

    @classmethod
    def of(cls, notebook: str, path: str) -> EmbedRule:
        """The rule for `path` as written in a cell of `notebook` (its key, relative to the served folder)."""
        template = posixpath.normpath(posixpath.join(posixpath.dirname(notebook), path))
        first = next((m for m in PLACEHOLDER_PATTERN.finditer(template) if m.group(1) is not None), None)
        if first is None:  # escapes (`\\{{`) at most: one file, named with literal braces
            template = substitute(template, {})
            return cls(template, posixpath.dirname(template) or ".", None)
        folder = posixpath.normpath(posixpath.dirname(template[: first.start()]) or ".")
        return cls(template, folder, _pattern(template))

    @property
    def fixed(self) -> bool:
        """Whether the path has no placeholders, so it names one file."""
        return self.pattern is None

    def refusal(self, path: str) -> str | None:
        """Why this rule does not let `path` (normalized, relative to the served folder) be read; None: it does."""
        if self.pattern is None:
            return None if path == self.template else f"is not the file {self.template!r}"
        if "\x00" in path or "\\" in path:
            return "holds a NUL or a backslash, which no embedded file name may"
        outside = self.below_folder(path, self.folder)
        if outside is not None:
            return outside
        return None if self.pattern.fullmatch(path) else f"is not a file the template {self.template!r} names"

    @staticmethod
    def below_folder(path: str, folder: str) -> str | None:
        """Why `path` is not a file a value may select below `folder`; None when it is."""
        shown = "the served folder" if folder == "." else repr(folder + "/")
        rest = _below(folder, path)
        if not rest or rest == ".":
            return f"is not below {shown}, the folder this prompt's path selects files from"
        parts = rest.split("/")
        if any(is_hidden_part(part) for part in parts):
            return "names a hidden file or folder, which a prompt's argument may not select"
        if parts[-1].casefold().endswith(".ipynb"):
            return "names a notebook, which a prompt's argument may not select"
        return None
