"""`mcp-notebook list` and `serve` over a folder of hostile notebooks: deep JSON, deep `_meta`, a FIFO.

Neither command may crash or hang; both serve the good notebook and name
each refused one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_processes import DEADLINE, StdioServer, write_notebook

pytestmark = pytest.mark.slow


def _meta_notebook(depth: int) -> str:
    meta = '{"a":' * depth + "{}" + "}" * depth
    cell = {"cell_type": "markdown", "id": "c1", "metadata": {"mcp": {"prompt": f"meta{depth}", "_meta": "@@"}}}
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{**cell, "source": "x"}]}
    return json.dumps(document).replace('"@@"', meta)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_notebook(tmp_path / "good.ipynb", [("Good.", {"prompt": "good"})])
    for depth in (1_000, 100_000):
        (tmp_path / f"deep{depth}.ipynb").write_text('{"nbformat": 4, "cells": [' + "[" * depth + "]" * depth + "]}")
    for depth in (40, 254, 300):
        (tmp_path / f"meta{depth}.ipynb").write_text(_meta_notebook(depth))
    os.mkfifo(tmp_path / "pipe.ipynb")
    return tmp_path


REFUSED = ["deep1000.ipynb", "deep100000.ipynb", "meta254.ipynb", "meta300.ipynb", "pipe.ipynb"]


def test_list_reports_each_hostile_notebook_and_lists_the_good_ones(folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "list", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 1, done.stderr  # a notebook could not be read
    document = json.loads(done.stdout)
    assert sorted(p["name"] for p in document["prompts"]) == ["good", "meta40"]
    assert sorted(document["errors"]) == REFUSED
    assert any("_meta nests more than" in warning for warning in document["warnings"])


def test_serve_starts_lists_and_keeps_serving_beside_hostile_notebooks(folder: Path) -> None:
    with StdioServer([str(folder)]) as server:
        server.initialize("2025-11-25")
        for _ in range(2):
            listed = server.request("prompts/list")
            assert sorted(p["name"] for p in listed["result"]["prompts"]) == ["good", "meta40"], listed
        got = server.request("prompts/get", {"name": "meta40"})
        assert got["result"]["messages"][0]["content"]["text"] == "x"
        server.stderr_line("mcp-notebook: 2 prompts")
        for name in REFUSED:
            assert name in server.stderr_line(f"mcp-notebook: warning: {name}")


def test_serve_keeps_watching_a_folder_deleted_and_created_again(tmp_path: Path) -> None:
    served = tmp_path / "served"
    write_notebook(served / "first.ipynb", [("First.", {"prompt": "first"})])
    with StdioServer([str(served)]) as server:
        server.initialize("2025-11-25")
        assert [p["name"] for p in server.request("prompts/list")["result"]["prompts"]] == ["first"]
        shutil.rmtree(served)
        server.notification("notifications/prompts/list_changed")
        assert server.request("prompts/list")["result"]["prompts"] == []
        write_notebook(served / "again.ipynb", [("Again.", {"prompt": "again"})])
        server.notification("notifications/prompts/list_changed")
        assert [p["name"] for p in server.request("prompts/list")["result"]["prompts"]] == ["again"]
        write_notebook(served / "later.ipynb", [("Later.", {"prompt": "later"})])  # the new folder is watched
        server.notification("notifications/prompts/list_changed")
        assert [p["name"] for p in server.request("prompts/list")["result"]["prompts"]] == ["again", "later"]
