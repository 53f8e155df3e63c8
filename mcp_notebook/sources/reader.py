"""Reading a notebook file's bytes into an nbformat v4 dict, with clear errors for anything else.

JSON nested deeper than `MAX_NESTING` is refused: no notebook needs it, and
deep input would make recursive code (comparisons, serializers, converters)
fail with `RecursionError` far from here. The depth is measured iteratively.
"""

from __future__ import annotations

import json
import warnings as pywarnings
from collections.abc import Callable
from typing import Any

from ..exceptions import NotebookFormatError

__all__ = ["MAX_NESTING", "exceeds_nesting", "parse_notebook"]

MAX_NESTING = 100  # objects and arrays inside one another; notebooks with deep JSON outputs use about 20


def exceeds_nesting(value: object, limit: int) -> bool:
    """Whether `value` (parsed JSON) nests objects and arrays more than `limit` deep; never recursive."""
    # One level at a time: a list of the containers at this depth, no (item, depth) pair per container.
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                kind = type(child)
                if kind is dict or kind is list or (kind is not str and isinstance(child, dict | list)):
                    below.append(child)
        level = below
        depth += 1
    return False


def _parse_json(raw: bytes, path: str) -> dict[str, Any]:
    if not raw.strip():
        raise NotebookFormatError(str(path), "is empty (a notebook still being written?)")
    too_deep = False
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise NotebookFormatError(str(path), "is not UTF-8 text, so it is not a notebook") from error
    except json.JSONDecodeError as error:
        raise NotebookFormatError(
            str(path),
            f"is not valid JSON at line {error.lineno}, column {error.colno} (a notebook still being written?)",
        ) from error
    except RecursionError:  # the parser itself gave up: far deeper than any limit
        too_deep = True
    if too_deep or exceeds_nesting(data, MAX_NESTING):
        raise NotebookFormatError(path, f"nests JSON more than {MAX_NESTING} levels deep, so it is refused")
    if not isinstance(data, dict) or not isinstance(data.get("nbformat"), int):
        raise NotebookFormatError(str(path), "is JSON but not a Jupyter notebook (no 'nbformat' version)")
    return data


def _upgraded(data: dict[str, Any], path: str) -> dict[str, Any]:
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


def parse_notebook(raw: bytes, name: str) -> dict[str, Any]:
    """The notebook in `raw` (a file's bytes) as an nbformat v4 dict; `name` says which file in errors.

    Raises `NotebookFormatError` saying what is wrong for bytes that are not a notebook: empty, half-written,
    corrupt JSON, or another JSON document. The notebook is not validated against the nbformat schema: the
    prompt reader skips and reports malformed cells itself.
    """
    return _upgraded(_parse_json(raw, name), name)
