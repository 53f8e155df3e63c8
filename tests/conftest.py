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

import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from notebook_files import write_notebook

__all__ = ["NotebookFactory", "write_notebook"]

NotebookFactory = Callable[..., Path]


def _keep_state_private(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels leave their discovery pointers, servers their notebook index and their stored prompt lists, and
    trusted project files their record, in folders of the suite's, never the user's."""
    monkeypatch.setenv("MCP_NOTEBOOK_STATE_DIR", str(tmp_path_factory.mktemp("mcp-notebook-state")))
    monkeypatch.setenv("MCP_NOTEBOOK_CACHE_DIR", str(tmp_path_factory.mktemp("mcp-notebook-cache")))
    # What the user trusts is theirs: a test trusts project files in a record of its own.
    monkeypatch.setenv("MCP_NOTEBOOK_TRUST_FILE", str(tmp_path_factory.mktemp("mcp-notebook-trust") / "trust.json"))


@pytest.fixture(scope="session", autouse=True)
def _private_state_for_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """For what fixtures wider than one test start (a module's bridge, editor or served folder), which are
    set up before any test's own folders."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _keep_state_private(tmp_path_factory, monkeypatch)
        yield


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's own folders: what one test leaves there, the next never finds."""
    _keep_state_private(tmp_path_factory, monkeypatch)


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home folder, so the user's real MCP configuration never leaks into a test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("MCP_NOTEBOOK_CONFIG", raising=False)
    return home


@pytest.fixture
def notebook_factory(tmp_path: Path) -> NotebookFactory:
    """`notebook_factory("a.ipynb", [{"source": "Hi {{who}}", "mcp": {"prompt": "greet"}}])` → the path."""

    def make(name: str, cells: Sequence[dict[str, Any]], **options: Any) -> Path:
        return write_notebook(tmp_path / name, cells, **options)

    return make


# Third-party software and browsers are real processes too: `-m "not slow"` must leave them out on a
# checkout where `.ci/*-setup.sh` never ran.
_NEEDS_INSTALLED_TOOLS = ("interop", "browser")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in _NEEDS_INSTALLED_TOOLS) and not item.get_closest_marker(
            "slow"
        ):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def sigint_raises_keyboard_interrupt() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt in this test, even where SIGINT is ignored (a background job, nohup)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
