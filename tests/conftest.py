"""Fixtures shared by the whole suite.

* `notebook_factory(name, prompts_cells)`: writes a small nbformat v4 notebook
  under `tmp_path` and returns its path. Each cell is a dict with `source`,
  optional `cell_type` ("markdown" by default, or "code"/"raw") and optional
  `mcp` (the cell's `metadata.mcp`, e.g. `{"prompt": "greet"}`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import nbformat
import pytest

NotebookFactory = Callable[..., Path]


def write_notebook(path: Path, cells: Sequence[dict[str, Any]], *, language: str = "python") -> Path:
    """Write `cells` (see the module docstring) as a notebook at `path`."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": language}
    notebook.metadata["language_info"] = {"name": language}
    for cell in cells:
        kind = cell.get("cell_type", "markdown")
        make = {
            "markdown": nbformat.v4.new_markdown_cell,
            "code": nbformat.v4.new_code_cell,
            "raw": nbformat.v4.new_raw_cell,
        }[kind]
        new = make(cell["source"])
        if "mcp" in cell:
            new.metadata["mcp"] = cell["mcp"]
        if "tags" in cell:
            new.metadata["tags"] = list(cell["tags"])
        if kind == "code" and "outputs" in cell:
            new.outputs = [nbformat.from_dict(output) for output in cell["outputs"]]
        notebook.cells.append(new)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write to a temporary name and rename, so a watcher never sees half a file.
    tmp = path.with_name(f".{path.name}.tmp")
    nbformat.write(notebook, str(tmp))
    tmp.replace(path)
    return path


@pytest.fixture
def notebook_factory(tmp_path: Path) -> NotebookFactory:
    """`notebook_factory("a.ipynb", [{"source": "Hi {{who}}", "mcp": {"prompt": "greet"}}])` → the path."""

    def make(name: str, cells: Sequence[dict[str, Any]], **options: Any) -> Path:
        return write_notebook(tmp_path / name, cells, **options)

    return make
