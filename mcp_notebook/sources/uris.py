"""Stable URIs for served notebook cells and files: `notebook:///<path>#cell=<key>`.

`<path>` is the notebook's (or file's) path relative to the served folder,
with `/` separators and percent-encoding. `<key>` is the cell's id, or its
position counting from 1 when the notebook has no cell ids. The empty host
(three slashes) keeps the first folder name from being read as a host name.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from ..exceptions import PathRefusedError, ResourceError
from ..rendering import PLACEHOLDER_PATTERN

__all__ = [
    "NOTEBOOK_URI_SCHEME",
    "NotebookLocation",
    "is_absolute_path",
    "normalize_relative_path",
    "parse_notebook_uri",
    "to_cell_uri",
    "to_file_uri",
    "to_file_uri_template",
]

NOTEBOOK_URI_SCHEME = "notebook"
_CELL_FRAGMENT = "cell="


@dataclass(frozen=True, slots=True)
class NotebookLocation:
    """What a `notebook:` URI points at: a path under the served folder, and maybe a cell."""

    path: str  # posix, relative to the served folder, normalized
    cell: str | None = None


def to_cell_uri(notebook: str, cell: str) -> str:
    """The URI of one cell of `notebook` (a posix path relative to the served folder)."""
    return f"{to_file_uri(notebook)}#{_CELL_FRAGMENT}{quote(cell, safe='')}"


def to_file_uri(path: str) -> str:
    """The URI of a file (posix path relative to the served folder)."""
    return f"{NOTEBOOK_URI_SCHEME}:///{quote(path, safe='/')}"


def to_file_uri_template(path: str) -> str:
    """Like `to_file_uri`, but `{{placeholders}}` in `path` stay as written, to be filled at render time."""
    pieces: list[str] = []
    position = 0
    for match in PLACEHOLDER_PATTERN.finditer(path):
        pieces.append(quote(path[position : match.start()], safe="/"))
        pieces.append(match.group(0))
        position = match.end()
    pieces.append(quote(path[position:], safe="/"))
    return f"{NOTEBOOK_URI_SCHEME}:///{''.join(pieces)}"


def is_absolute_path(path: str) -> bool:
    """Whether `path` is absolute on any system (`/x`, `\\server\\x`, `C:/x`), so it cannot be relative."""
    drive = len(path) > 1 and path[0].isalpha() and path[1] == ":" and path[2:3] in ("", "/", "\\")
    return path.startswith(("/", "\\")) or drive


def normalize_relative_path(path: str, *, root: str) -> str:
    """`path` (posix, relative) without `.` and `..` parts; refuses absolute paths and escapes from `root`.

    The refusal (`PathRefusedError`) names `path` only: `root` is where the
    served folder is on the server, which clients are never told.
    """
    if not path:
        raise ResourceError(path, "An empty path names no file")
    if is_absolute_path(path):
        raise PathRefusedError(path, "is outside the served folder")
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        raise PathRefusedError(path, "is outside the served folder")
    return normal


def parse_notebook_uri(uri: str, *, root: str) -> NotebookLocation:
    """The location named by a `notebook:///…` URI; refuses other schemes and paths escaping `root`."""
    parts = urlsplit(uri)
    if parts.scheme != NOTEBOOK_URI_SCHEME:
        raise ResourceError(uri, f"Unknown resource {uri!r}: served resources start with {NOTEBOOK_URI_SCHEME}:///")
    if parts.netloc or parts.query:
        raise ResourceError(uri, f"Unknown resource {uri!r}: expected {NOTEBOOK_URI_SCHEME}:///<path>[#cell=<id>]")
    path = normalize_relative_path(unquote(parts.path).removeprefix("/"), root=root)
    cell: str | None = None
    if parts.fragment:
        if not parts.fragment.startswith(_CELL_FRAGMENT):
            raise ResourceError(uri, f"Unknown resource {uri!r}: a cell is named as #cell=<id>")
        cell = unquote(parts.fragment.removeprefix(_CELL_FRAGMENT))
    return NotebookLocation(path=path, cell=cell)
