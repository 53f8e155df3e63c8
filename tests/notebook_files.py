"""Writing small notebooks and skill folders for tests (importable from any test: `from notebook_files import
write_notebook`).

Import helpers from here, not from `conftest`: several folders have a
conftest.py, and `import conftest` finds whichever was loaded last.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat

__all__ = ["write_notebook", "write_skill"]


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


def write_skill(folder: Path, name: str, text: str | None = None, files: dict[str, bytes] | None = None) -> Path:
    """A skill folder `folder/name` with its `SKILL.md` (`text`, else valid frontmatter naming it) and `files`."""
    where = folder / name
    where.mkdir(parents=True)
    body = (
        text if text is not None else f"---\nname: {where.name}\ndescription: The {where.name} skill.\n---\n\nDo it.\n"
    )
    (where / "SKILL.md").write_text(body, encoding="utf-8")
    for path, data in (files or {}).items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_bytes(data)
    return where
