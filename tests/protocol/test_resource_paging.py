"""`resources/list` over a notebook with 50,000 published cells: paged from one listing computed per change.

Paging through all 1,001 pages took minutes when every page rebuilt and
digested the whole listing; the folder source now lists its cells once per
change of the served notebooks and the server pages that listing as it is.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from wire_harness import RawWire

from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.resources import ResourceListing
from mcp_notebook.sources.folder import NotebookFolderSource

CELLS = 50_000
PAGE = 50
WITHIN = 60.0  # seconds for every page; far more than it needs, far less than a rebuild per page


def _big_notebook(path: Path, cells: int) -> None:
    document = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "markdown", "id": f"c{i}", "metadata": {"tags": ["prompt:big"]}, "source": f"Cell {i}."}
            for i in range(cells)
        ],
    }
    path.write_text(json.dumps(document))


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> NotebookFolderSource:
    folder = tmp_path_factory.mktemp("big")
    _big_notebook(folder / "big.ipynb", CELLS)
    source = NotebookFolderSource([folder], PromptRegistry())
    source.scan()
    return source


def test_the_listing_is_computed_once_per_change(source: NotebookFolderSource, tmp_path: Path) -> None:
    first, again = source.list_resources(), source.list_resources()
    assert isinstance(first, ResourceListing)
    assert len(first) == CELLS
    assert first.items[0] is again.items[0] and first.fingerprint == again.fingerprint
    _big_notebook(source.root / "small.ipynb", 3)
    source.reload([source.root / "small.ipynb"])
    changed = source.list_resources()
    assert len(changed) == CELLS + 3 and changed.fingerprint != first.fingerprint
    (source.root / "small.ipynb").unlink()
    source.reload([source.root / "small.ipynb"])
    assert source.list_resources().fingerprint == first.fingerprint


@pytest.mark.slow  # a wall-clock bound (the fast suite keeps the listing-once check above)
async def test_every_page_of_fifty_thousand_cells_is_listed_quickly(source: NotebookFolderSource) -> None:
    registry = PromptRegistry()
    server = create_server(registry, resources=source, page_size=PAGE)
    seen: list[str] = []
    start = time.monotonic()
    async with RawWire(server, "2025-11-25") as wire:
        cursor: str | None = None
        pages = 0
        while True:
            reply = await wire.request("resources/list", {"cursor": cursor} if cursor else {})
            result = reply["result"]
            seen += [resource["uri"] for resource in result["resources"]]
            pages += 1
            cursor = result.get("nextCursor")
            if cursor is None:
                break
    elapsed = time.monotonic() - start
    assert pages == CELLS // PAGE
    assert len(seen) == len(set(seen)) == CELLS
    assert elapsed < WITHIN, f"{pages} pages took {elapsed:.0f} s"
