"""`mcp-notebook serve` lists a prompt's default title and description with its arguments' names, not `{{…}}`.

The text a client shows in its menu (Claude Code: `/server:goodbye  Say goodbye
to [name].`) comes from the cell; the raw template is for rendering only.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from e2e_processes import StdioServer

pytestmark = pytest.mark.slow


def test_a_tagged_cell_is_listed_with_its_arguments_names(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("# Goodbye {{name}}\nSay goodbye to {{name}}.")
    cell.metadata["tags"] = ["prompt:goodbye"]
    notebook.cells.append(cell)
    (tmp_path / "prompts").mkdir()
    nbformat.write(notebook, str(tmp_path / "prompts" / "goodbye.ipynb"))
    with StdioServer([str(tmp_path / "prompts")]) as server:
        server.initialize("2025-11-25")
        (listed,) = server.request("prompts/list")["result"]["prompts"]
    assert (listed["name"], listed["title"], listed["description"]) == (
        "goodbye",
        "Goodbye [name]",
        "Say goodbye to [name].",
    )
    assert listed["arguments"] == [{"name": "name", "required": True}]
