"""Small builders of nbformat v4 notebook dicts for the notebook-source tests.

Plain dicts (as `json.load` gives them), so tests show exactly what a
notebook file holds. `write(path, nb)` saves one atomically (write + rename,
as Jupyter does), so a file watcher never sees half a file.
"""

from __future__ import annotations

import json
import os
from itertools import count
from pathlib import Path
from typing import Any

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WAV_SILENCE = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA=="

_ids = count(1)


def _metadata(mcp: dict[str, Any] | None, tags: list[str] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if mcp is not None:
        metadata["mcp"] = mcp
    if tags is not None:
        metadata["tags"] = tags
    return metadata


def markdown(
    source: str,
    mcp: dict[str, Any] | None = None,
    *,
    tags: list[str] | None = None,
    attachments: dict[str, Any] | None = None,
) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "id": f"md{next(_ids)}",
        "cell_type": "markdown",
        "metadata": _metadata(mcp, tags),
        "source": source,
    }
    if attachments is not None:
        cell["attachments"] = attachments
    return cell


def code(
    source: str,
    mcp: dict[str, Any] | None = None,
    *,
    tags: list[str] | None = None,
    outputs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "id": f"code{next(_ids)}",
        "cell_type": "code",
        "metadata": _metadata(mcp, tags),
        "source": source,
        "execution_count": None,
        "outputs": outputs or [],
    }


def raw(source: str, mcp: dict[str, Any] | None = None, *, tags: list[str] | None = None) -> dict[str, Any]:
    return {"id": f"raw{next(_ids)}", "cell_type": "raw", "metadata": _metadata(mcp, tags), "source": source}


def notebook(*cells: dict[str, Any], language: str | None = "python") -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if language is not None:
        metadata["kernelspec"] = {"name": language, "display_name": language, "language": language}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": list(cells)}


def display(data: dict[str, Any], kind: str = "display_data") -> dict[str, Any]:
    output: dict[str, Any] = {"output_type": kind, "data": data, "metadata": {}}
    if kind == "execute_result":
        output["execution_count"] = 1
    return output


def stream(text: str, name: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def error(ename: str, evalue: str, traceback: list[str]) -> dict[str, Any]:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}


def write(path: Path, nb: dict[str, Any] | str) -> Path:
    """Save `nb` (a dict, or raw text for corrupt files) at `path`, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".~{path.name}")
    tmp.write_text(nb if isinstance(nb, str) else json.dumps(nb, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path
