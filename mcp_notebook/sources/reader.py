"""Reading a notebook file into an nbformat v4 dict, with clear errors for anything else."""

from __future__ import annotations

import json
import warnings as pywarnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..exceptions import NotebookFormatError

__all__ = ["read_notebook"]


def _read_notebook_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise NotebookFormatError(str(path), f"cannot be read: {error.strerror or error}") from error
    if not raw.strip():
        raise NotebookFormatError(str(path), "is empty (a notebook still being written?)")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise NotebookFormatError(str(path), "is not UTF-8 text, so it is not a notebook") from error
    except json.JSONDecodeError as error:
        raise NotebookFormatError(
            str(path),
            f"is not valid JSON at line {error.lineno}, column {error.colno} (a notebook still being written?)",
        ) from error
    if not isinstance(data, dict) or not isinstance(data.get("nbformat"), int):
        raise NotebookFormatError(str(path), "is JSON but not a Jupyter notebook (no 'nbformat' version)")
    return data


def _upgraded(data: dict[str, Any], path: Path) -> dict[str, Any]:
    version = data["nbformat"]
    if version == 4:
        if not isinstance(data.get("cells"), list):
            raise NotebookFormatError(str(path), "is an nbformat 4 notebook without a list of cells")
        return data
    if version > 4 or version < 1:
        raise NotebookFormatError(str(path), f"uses nbformat {version}; only versions 1 to 4 are understood")
    import nbformat  # only old notebooks need the converter

    try:
        with pywarnings.catch_warnings():
            pywarnings.simplefilter("ignore")  # conversion warns about things it fixes itself
            convert: Callable[..., Any] = nbformat.convert
            from_dict: Callable[[Any], Any] = nbformat.from_dict
            upgraded = convert(from_dict(data), 4)
    except Exception as error:  # nbformat raises many kinds for malformed old notebooks
        raise NotebookFormatError(str(path), f"nbformat {version} notebook could not be upgraded: {error}") from error
    result: dict[str, Any] = json.loads(json.dumps(upgraded))
    for cell in result.get("cells", []):
        # Ids invented by the upgrade change at every load; positions are stabler.
        if isinstance(cell, dict):
            cell.pop("id", None)
    return result


def read_notebook(path: Path) -> dict[str, Any]:
    """The notebook at `path` as an nbformat v4 dict (older versions upgraded).

    Raises `NotebookFormatError` saying what is wrong for a file that cannot be
    read or is not a notebook: empty, half-written, corrupt JSON, or another
    JSON document. The notebook is not validated against the nbformat schema:
    the prompt reader skips and reports malformed cells itself.
    """
    return _upgraded(_read_notebook_json(path), path)
