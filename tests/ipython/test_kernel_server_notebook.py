"""A notebook that serves its kernel, executed by nbclient and saved: the token is in none of its outputs.

Cell outputs are saved into the .ipynb (and shared, committed, published),
so whatever `%mcp serve` and its neighbours print must never hold the
bearer token. The notebook copies the connection file aside (silently) so
the test knows the token to look for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from kernel_harness import jupyter_folders
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

CELLS = [
    "%load_ext mcp_notebook",
    "%%prompt kn_review --arg code\nReview {{code}}.",
    "%mcp serve --live who,timeit",
    "%mcp serve",  # refused: already serving; the error names the URL only
    "%mcp help serve",
    "import glob, os, shutil\n"
    "[kn_file] = glob.glob(os.path.join(os.environ['JUPYTER_RUNTIME_DIR'], 'mcp-notebook-kernel-*.json'))\n"
    "shutil.copy(kn_file, os.environ['KN_TOKEN_COPY'])",
    "%mcp servers",
    "%mcp stop",
    "%mcp serve --stdio-proxy --all-magics --new-token",  # a fresh token: neither may be in the outputs
    "import shutil\n"
    "[kn_file] = glob.glob(os.path.join(os.environ['JUPYTER_RUNTIME_DIR'], 'mcp-notebook-kernel-*.json'))\n"
    "shutil.copy(kn_file, os.environ['KN_TOKEN_COPY'] + '.second')",
    "%mcp stop",
]


def test_no_saved_output_of_a_serving_notebook_holds_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in jupyter_folders(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    copy = tmp_path / "connection-copy.json"
    monkeypatch.setenv("KN_TOKEN_COPY", str(copy))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.cells[3].metadata["tags"] = ["raises-exception"]
    resources = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources=resources).execute()
    saved = tmp_path / "served.ipynb"
    nbformat.write(notebook, saved)

    tokens = [json.loads(path.read_text(encoding="utf-8"))["token"] for path in (copy, Path(f"{copy}.second"))]
    assert all(tokens) and tokens[0] != tokens[1]
    text = saved.read_text(encoding="utf-8")
    assert "MCP server of this kernel: http://127.0.0.1:" in text  # the outputs were saved
    assert "--print-token" in text and "already serving" in text
    for token in tokens:
        assert token not in text
    assert os.listdir(tmp_path / "runtime") == []  # and both servers removed their connection files
