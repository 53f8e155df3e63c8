"""Fixtures shared by the whole suite.

* `notebook_factory(name, cells)`: writes a small nbformat v4 notebook under
  `tmp_path` and returns its path. Each cell is a dict with `source`,
  optional `cell_type` ("markdown" by default, or "code"/"raw"), optional
  `mcp` (the cell's `metadata.mcp`, e.g. `{"prompt": "greet"}`), `tags` and,
  for code cells, `outputs` (nbformat output dicts).

The same writer is `notebook_files.write_notebook`; import it from there
(`from notebook_files import write_notebook`), not from `conftest`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from notebook_files import write_notebook

__all__ = ["NotebookFactory", "write_notebook"]

NotebookFactory = Callable[..., Path]


@pytest.fixture
def notebook_factory(tmp_path: Path) -> NotebookFactory:
    """`notebook_factory("a.ipynb", [{"source": "Hi {{who}}", "mcp": {"prompt": "greet"}}])` → the path."""

    def make(name: str, cells: Sequence[dict[str, Any]], **options: Any) -> Path:
        return write_notebook(tmp_path / name, cells, **options)

    return make
