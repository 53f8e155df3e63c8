"""The in-kernel host (`%mcp serve`) serves its notebook through the one service, as every other host does.

Its notebook goes through the same first scan (collector frozen after it), is
kept in the same index for the next start, and what is wrong in it is said
in the words of every host's summary (tests/test_service_hosts.py for the others).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kernel_server_harness import Kernel, isolate_runtime_dir, running_kernel

import mcp_notebook.sources.index as index
from mcp_notebook.service import NotebookService, ServiceSettings
from mcp_notebook.sources.index import NotebookIndex

pytestmark = pytest.mark.slow  # a real HTTP server (in this process)


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    isolate_runtime_dir(tmp_path, monkeypatch)
    monkeypatch.setenv("MCP_NOTEBOOK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(index, "RACY_SECONDS", 0)  # the notebook was written a moment ago: store it at once
    with running_kernel() as kernel:
        yield kernel
    gc.unfreeze()


def test_the_kernels_notebook_goes_through_the_service(
    kernel: Kernel, notebook_factory: Callable[..., Path], tmp_path: Path
) -> None:
    path = notebook_factory(
        "analysis.ipynb",
        [
            {"source": "Summarise {{topic}}.", "mcp": {"prompt": "ks_service"}},
            {"source": "Not a name.", "mcp": {"prompt": "9 bad name"}},
        ],
    )
    gc.unfreeze()
    server = kernel.serve("--notebook", str(path))
    assert gc.get_freeze_count() > 0
    alone = NotebookService(ServiceSettings(paths=(str(path),), cache=False))
    expected = alone.start()
    alone.close()
    assert len(expected) > 1  # the summary has a warning about the bad name
    assert server.summary is not None and server.summary.lines == expected
    report = server.describe()
    warnings = report.warnings
    assert [line for line in warnings if line in expected] == expected[1:]
    # The notebook by its name: the report is saved in the cell's output, where a full path would tell too much.
    assert "the notebook analysis.ipynb" in report.served and str(path.parent) not in report.served
    kernel.stop()
    stored = NotebookIndex(tmp_path / "cache", path.parent)
    try:
        assert set(stored.entries()) == {"analysis.ipynb"}
    finally:
        stored.close()
