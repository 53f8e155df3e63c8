"""The suite keeps to folders of its own: no process it starts writes the user's index, pointers or trust."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PRIVATE = ("MCP_NOTEBOOK_STATE_DIR", "MCP_NOTEBOOK_CACHE_DIR", "MCP_NOTEBOOK_TRUST_FILE")


@pytest.fixture(scope="module")
def seen_by_a_module_fixture() -> dict[str, str | None]:
    # What a module's bridge, editor or served folder would inherit: it starts before any test's own fixtures.
    return {name: os.environ.get(name) for name in PRIVATE}


def test_fixtures_wider_than_a_test_start_processes_in_the_suites_folders(
    seen_by_a_module_fixture: dict[str, str | None], tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp()
    for name, value in seen_by_a_module_fixture.items():
        assert value is not None and Path(value).is_relative_to(base), f"{name}={value!r}"


def test_each_test_has_folders_of_its_own(
    seen_by_a_module_fixture: dict[str, str | None], tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp()
    for name in PRIVATE:
        assert Path(os.environ[name]).is_relative_to(base)
        assert os.environ[name] != seen_by_a_module_fixture[name]  # not the folders the wider fixtures share
