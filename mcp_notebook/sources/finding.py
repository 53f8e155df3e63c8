"""Finding the notebooks a folder source serves: which paths are served, each notebook's key, which are on disk.

Folders are searched recursively for `*.ipynb`, skipping hidden folders and
`.ipynb_checkpoints`; files given by name are served as they are. A
notebook's key is its path relative to the served root (posix).

Where the watch polls (`polling.py`), what is on disk is what its first look
saw (`Seen`), not a walk taken later: a file that came and went between the
two would be served by the walk, and no later look would ever report it gone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .embeds import is_hidden_part

__all__ = ["Listed", "Seen", "ServedPaths", "SwapBounds", "exists", "is_hidden", "is_notebook_name", "present"]

Listed = Mapping[str, Sequence[os.DirEntry[str]]]
"""Every folder below a served folder (links to folders not followed) with its entries, hidden ones left out,
sorted by name: one listing of the tree that the skills (`skills.py`) and the notebooks are both found in."""


def is_hidden(parts: Iterable[str]) -> bool:
    return any(is_hidden_part(part) for part in parts)


def is_notebook_name(name: str) -> bool:
    """Whether a file named `name`, found in a served folder, is served: a notebook, not hidden."""
    return name.endswith(".ipynb") and not name.startswith(".")


def exists(path: Path) -> bool:
    """Whether something other than a folder is at `path` (a dangling symlink or a FIFO counts)."""
    return os.path.lexists(path) and not path.is_dir()


@dataclass(frozen=True, slots=True)
class Seen:
    """What a watch's first look at the folders it polls found: the folders (with subfolders or not), the files."""

    folders: tuple[tuple[Path, bool], ...]
    files: frozenset[str]

    def covers_file(self, path: Path) -> bool:
        """Whether the look says if file `path` is there: it is in a polled folder, or below one polled deep."""
        return any(path.is_relative_to(folder) if deep else path.parent == folder for folder, deep in self.folders)

    def covers_folder(self, path: Path) -> bool:
        """Whether the look walked all of folder `path`: it is, or is below, a folder polled deep."""
        return any(deep and path.is_relative_to(folder) for folder, deep in self.folders)


def present(path: Path, seen: Seen | None) -> bool:
    """Whether served file `path` is on disk now, and was there when `seen` looked, if it looked there."""
    return exists(path) and (seen is None or not seen.covers_file(path) or str(path) in seen.files)


@dataclass(frozen=True, slots=True)
class ServedPaths:
    """The paths given, as they resolve now: the folders, the files and their common root, in one value."""

    resolution: tuple[Path, ...]
    folders: tuple[Path, ...]
    files: tuple[Path, ...]
    root: Path

    @classmethod
    def at(cls, resolved: tuple[Path, ...]) -> ServedPaths:
        folders = tuple(dict.fromkeys(p for p in resolved if p.is_dir()))
        files = tuple(dict.fromkeys(p for p in resolved if not p.is_dir()))
        root = Path(os.path.commonpath([*folders, *(f.parent for f in files)]))
        return cls(resolved, folders, files, root)

    def key(self, path: Path) -> str | None:
        """The key of a served notebook path, or None when it is not served."""
        if path in self.files:
            return path.relative_to(self.root).as_posix()
        if path.suffix != ".ipynb":
            return None
        for folder in self.folders:
            if path.is_relative_to(folder) and not is_hidden(path.relative_to(folder).parts):
                return path.relative_to(self.root).as_posix()
        return None

    def accepts(self, path: Path) -> bool:
        """Whether a changed path may matter: a served notebook, or anything (a folder) inside a served folder."""
        if self.key(path) is not None:
            return True
        return path.suffix != ".ipynb" and any(
            path.is_relative_to(folder) and not is_hidden(path.relative_to(folder).parts) for folder in self.folders
        )

    def discover(
        self, under: Path | None = None, *, seen: Seen | None = None, listed: Listed | None = None
    ) -> dict[str, Path]:
        """Every served notebook on disk now (only those below `under`, when given), by key.

        Inside the folders `seen` covers, those its look found (a file given by name, if it is still there too);
        inside those `listed` holds, those it lists (the tree is not walked again).
        """
        found: dict[str, Path] = {}
        for file in self.files:
            if (under is None or file.is_relative_to(under)) and present(file, seen):
                found[file.relative_to(self.root).as_posix()] = file
        for folder in self.folders:
            start = folder
            if under is not None:
                if under.is_relative_to(folder):
                    start = under
                elif not folder.is_relative_to(under):
                    continue
            if is_hidden(start.relative_to(folder).parts) or not start.is_dir():
                continue
            if seen is not None and seen.covers_folder(start):
                found.update(self._seen_below(start, folder, seen))
                continue
            root = str(self.root)
            if listed is not None and str(start) in listed:
                found.update(_listed_notebooks(str(start), root, listed))
                continue
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = sorted(d for d in dirnames if not is_hidden([d]))
                # Keys made from strings: pathlib per file is most of a large folder's walk.
                folder_key = Path(os.path.relpath(dirpath, root)).as_posix()
                prefix = "" if folder_key == "." else folder_key + "/"
                for name in sorted(filenames):
                    if is_notebook_name(name):
                        found[prefix + name] = Path(dirpath, name)
        return found

    def _seen_below(self, start: Path, folder: Path, seen: Seen) -> dict[str, Path]:
        """The served notebooks below `start` (in served `folder`) that `seen` found, by key, in key order."""
        inside = os.path.join(start, "")
        found: dict[str, Path] = {}
        for name in seen.files:
            if name.startswith(inside):
                path = Path(name)
                if is_notebook_name(path.name) and not is_hidden(path.relative_to(folder).parent.parts):
                    found[path.relative_to(self.root).as_posix()] = path
        return dict(sorted(found.items()))


def _listed_notebooks(top: str, root: str, listed: Listed) -> dict[str, Path]:
    """The notebooks below `top` that `listed` holds, by key, in the order `os.walk` finds them (a folder's
    files, then each subfolder in name order; a link to a folder is not followed)."""
    found: dict[str, Path] = {}
    pending = [top]
    while pending:
        dirpath = pending.pop()
        prefix: str | None = None  # the folder's key, once it holds a notebook (most folders of a tree hold none)
        folders: list[str] = []
        for entry in listed.get(dirpath, ()):
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if is_folder:
                if not entry.is_symlink():
                    folders.append(entry.path)
            elif is_notebook_name(entry.name):
                if prefix is None:
                    folder_key = Path(os.path.relpath(dirpath, root)).as_posix()
                    prefix = "" if folder_key == "." else folder_key + "/"
                found[prefix + entry.name] = Path(dirpath, entry.name)
        pending.extend(reversed(folders))
    return found


@dataclass(frozen=True, slots=True)
class SwapBounds:
    """Where a swapped symlink on a served path may lead: to a sibling of the link's first target.

    git-sync keeps `root/current -> rev-A` and renames a new link to a checkout beside it,
    `root/rev-B`, over `current`: the target moves among the folders of one parent and nothing
    else changes. A link that now leads anywhere else (an ancestor, `/usr`, another folder's
    checkout) is not followed: it would serve whatever is below its new target.
    """

    first: tuple[Path, ...]  # each path as it resolved at start
    targets: tuple[tuple[Path, ...], ...]  # each path's symlinks (the path's own leading parts), resolved at start

    @classmethod
    def at(cls, spelled: tuple[Path, ...], resolved: tuple[Path, ...]) -> SwapBounds:
        targets = []
        for path, first in zip(spelled, resolved, strict=True):
            prefixes = (Path(*path.parts[:end]) for end in range(2, len(path.parts) + 1))
            found = (prefix.resolve() for prefix in prefixes if os.path.islink(prefix))
            targets.append(tuple(target for target in found if first.is_relative_to(target)))
        return cls(resolved, tuple(targets))

    def refused(self, resolved: tuple[Path, ...]) -> list[int]:
        """The indexes of the paths that now resolve where no swap among siblings leads."""
        return [
            index
            for index, (first, targets, now) in enumerate(zip(self.first, self.targets, resolved, strict=True))
            if now != first and not any(_sibling_of(target, first, now) for target in targets)
        ]


def _sibling_of(target: Path, first: Path, now: Path) -> bool:
    """Whether `now` is `first` with the link's `target` (an ancestor of `first`, or itself) moved to a sibling."""
    below = first.relative_to(target).parts
    if len(now.parts) <= len(below) or now.parts[len(now.parts) - len(below) :] != below:
        return False
    moved = Path(*now.parts[: len(now.parts) - len(below)])
    return moved.parent == target.parent and target.parent != Path(target.anchor)
