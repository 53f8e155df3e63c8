"""Fixtures of the interop tests: the installed tools, and a recorder that turns each test into a table row."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import replace

import pytest
from interop_harness import CompatRecorder, InteropTools, locate_tools, write_compat_row

REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # Keep each phase's report on the item so the recorder can tell, at teardown, how the test went.
    report = yield
    item.stash.setdefault(REPORTS, {})[report.when] = report
    return report


@pytest.fixture(scope="session")
def tools() -> InteropTools:
    return locate_tools()


@pytest.fixture
def compat(request: pytest.FixtureRequest) -> Iterator[CompatRecorder]:
    recorder = CompatRecorder(request.node.nodeid)
    yield recorder
    if recorder.row is None:
        return
    reports = request.node.stash.get(REPORTS, {})
    failed = any(r.failed for r in reports.values())
    skipped = any(r.skipped for r in reports.values())
    result = "fail" if failed else "skip" if skipped else "pass"
    row = replace(recorder.row, result=result)
    path = write_compat_row(row)
    print(f"\n[interop] {row.client} | {row.protocol} | {row.transport} | {row.check}: {result} -> {path}")
