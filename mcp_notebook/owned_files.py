"""Files of the user's own that readers may open at any moment: connection files, the trust record, stored lists.

Each is written whole to a temporary file beside it (mode 0600, as `mkstemp` makes it: some hold a token) and
renamed over it in one step, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["write_json"]


def write_json(path: Path, document: object, *, indent: int | None = None) -> None:
    """Replace the file at `path` (its folder exists) with `document` as JSON, on disk when this returns."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=indent)
            out.write("\n" if indent is not None else "")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
