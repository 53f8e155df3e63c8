"""What one notebook of this Jupyter server publishes, as of its last save: the JupyterLab panel's confirmation.

The notebook is read by the served folder's own source (the one parser of
the notebook format), brought up to date first: a notebook saved a moment
ago is reloaded now rather than when the folder watch gets to it. Each
prompt is given under the name it is served as (a clash between notebooks
renames it), with the cell that starts it; each warning with the cell it is
about. Runs in a worker thread: reading and parsing never happen on the loop.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from .host import NotebookHost

__all__ = ["notebook_report"]

_CELL = re.compile(r"\bcell (\d+)\b")


def notebook_report(host: NotebookHost, server_root: Path, contents_path: str, served_as: str) -> dict[str, Any]:
    """The `GET notebook` answer for `contents_path` (a path as the contents API has it, relative to `server_root`).

    LookupError says why the path names no notebook to report on."""
    relative = PurePosixPath(contents_path.replace("\\", "/").strip("/"))
    if not relative.parts or ".." in relative.parts or relative.suffix != ".ipynb":
        raise LookupError(f"{contents_path!r} is not the path of a notebook (.ipynb) under the server's root")
    path = Path(os.path.abspath(server_root / relative))
    if not path.is_file():
        raise LookupError(f"no notebook at {contents_path!r}: save it first")
    source = host.service.source
    if not source.accepts(path):
        return _report(contents_path, None, [], [_outside(source.root, server_root)])
    key = source.catch_up(path)
    state = source.state(key) if key is not None else None
    if key is None or state is None:
        why = "this notebook is not served: notebooks in hidden folders and checkpoints are not"
        return _report(contents_path, None, [], [{"cell_id": None, "cell_number": None, "message": why}])
    loaded = state.loaded
    by_number = {cell.number: cell.key for cell in loaded.cells} if loaded is not None else {}
    served = _served_names(host, key, {spec.name for spec in loaded.prompts} if loaded is not None else set())
    prompts: list[dict[str, Any]] = []
    if loaded is not None:
        first_cell: dict[str, int] = {}
        for cell in loaded.cells:
            for name in cell.prompts:
                first_cell.setdefault(name, cell.number)
        for spec in loaded.prompts:
            number = first_cell.get(spec.name)
            prompts.append(
                {
                    "name": served.get(spec.name, spec.name),
                    "title": spec.title,
                    "cell_id": by_number.get(number) if number is not None else None,
                    "cell_number": number,
                    "kind": "prompt",
                }
            )
        for test in loaded.tests:
            prompts.append(
                {
                    "name": test.name,
                    "title": None,
                    "cell_id": by_number.get(test.cell),
                    "cell_number": test.cell,
                    "kind": "test",
                }
            )
    warnings = [_warning(line, key, by_number) for line in state.group()[1]]
    return _report(contents_path, served_as, prompts, warnings)


def _report(path: str, served_as: str | None, prompts: list[Any], warnings: list[Any]) -> dict[str, Any]:
    return {"path": path, "served_as": served_as, "prompts": prompts, "warnings": warnings}


def _outside(served: Path, server_root: Path) -> dict[str, Any]:
    try:
        where = served.relative_to(server_root).as_posix() or "."
    except ValueError:
        where = str(served)
    message = (
        f"this notebook is outside the served folder {where!r}: its prompts are not served "
        "(move it there, or set c.MCPNotebook.root)"
    )
    return {"cell_id": None, "cell_number": None, "message": message}


def _warning(line: str, key: str, by_number: dict[int, str]) -> dict[str, Any]:
    message = line.removeprefix(f"{key}: ")
    found = _CELL.search(message)
    number = int(found.group(1)) if found else None
    return {"cell_id": by_number.get(number) if number is not None else None, "cell_number": number, "message": message}


def _served_names(host: NotebookHost, key: str, own: set[str]) -> dict[str, str]:
    """Each of the notebook's prompt names (`own`) → the name it is served under (`<stem>.<name>` on a clash)."""
    mine = {spec.name for spec in host.service.registry.snapshot().prompts if spec.origin == key}
    renamed = sorted(mine - own)
    return {
        name: name if name in mine else next((new for new in renamed if new.endswith("." + name)), name) for name in own
    }
