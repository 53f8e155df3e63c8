"""Loading notebook files as a served folder does: clear errors for what is not a notebook, old versions upgraded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.exceptions import NotebookFormatError
from mcp_notebook.models import Annotations, TextContent
from mcp_notebook.sources.cells import NotebookPrompts
from mcp_notebook.sources.loading import build


def load(path: Path) -> NotebookPrompts:
    """The notebook at `path` read and built as the folder holding it serves it."""
    return build(path.parent, path.name)[1]


def test_a_notebook_file_loads_with_its_origin_and_root(tmp_path: Path) -> None:
    path = write(tmp_path / "nb.ipynb", notebook(markdown("Hi {{who}}", {"prompt": "greet"})))
    result = load(path)
    spec = result.prompts[0]
    assert (spec.name, spec.origin, spec.root) == ("greet", "nb.ipynb", str(tmp_path))
    assert [a.name for a in spec.arguments] == ["who"]


def test_a_notebook_written_by_nbformat_loads(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("Hello", metadata={"mcp": {"prompt": "hello"}})
    nb.cells.append(cell)
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(path))
    result = load(path)
    assert [c.key for c in result.cells] == [cell.id]


@pytest.fixture
def notebook_file(tmp_path: Path) -> Path:
    return tmp_path / "broken.ipynb"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty (a notebook still being written?)"),
        (b'{"nbformat": 4, "cells": [', "is not valid JSON at line 1"),
        (b"[1, 2]", "is JSON but not a Jupyter notebook"),
        (b'{"cells": []}', "is JSON but not a Jupyter notebook"),
        (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "without a list of cells"),
        (b'{"nbformat": 5, "cells": []}', "uses nbformat 5"),
        (b"\xff\xfe\x00binary", "is not UTF-8 text"),
    ],
)
def test_a_file_that_is_not_a_notebook_raises_a_format_error_saying_why(
    notebook_file: Path, content: bytes, message: str
) -> None:
    notebook_file.write_bytes(content)
    with pytest.raises(NotebookFormatError) as caught:
        load(notebook_file)
    assert caught.value.path == "broken.ipynb"  # the notebook's key in its folder
    assert message in str(caught.value)


def test_a_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(NotebookFormatError, match="cannot be read"):
        load(tmp_path / "gone.ipynb")


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(notebook(markdown("x", {"prompt": "p"}))).encode())
    assert [p.name for p in load(path).prompts] == ["p"]


def test_an_nbformat_3_notebook_is_upgraded_and_keyed_by_position(tmp_path: Path) -> None:
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": "old"},
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "level": 1, "metadata": {}, "source": "Old"},
                    {"cell_type": "markdown", "metadata": {"mcp": {"prompt": "old"}}, "source": "From 2014."},
                ]
            }
        ],
    }
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(v3))
    result = load(path)
    assert result.prompts[0].messages[0].content == TextContent(text="From 2014.")
    assert [c.key for c in result.cells] == ["2"]


def test_last_modified_of_annotated_cells_comes_from_the_file_time(tmp_path: Path) -> None:
    path = write(tmp_path / "nb.ipynb", notebook(markdown("x", {"prompt": "p", "annotations": {"priority": 1}})))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    spec = load(path).prompts[0]
    assert spec.messages[0].content.annotations == Annotations(priority=1.0, last_modified="2023-11-14T22:13:20Z")
