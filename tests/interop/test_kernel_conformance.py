"""The MCP conformance suite, server mode, against a live kernel's server (`%mcp serve`).

A real kernel (jupyter_client) runs every code cell of `fixtures/kernel_conformance.ipynb` as "Run all" would:
`%load_ext mcp_notebook`, two `%%prompt` cells for the text prompts the suite calls by name, and `%mcp serve
--no-token` (the suite sends no bearer token). The kernel finds its notebook through `JPY_SESSION_NAME`, as
under jupyter-server, and serves the notebook's own prompts (an embedded resource, an image) beside the cells'
and the kernel's magics. Failures a prompts server must have are baselined in `expected-failures.yml`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from conformance_runs import HANDSHAKE_SERVER_SCENARIOS, SuiteRun, load_baseline, run_server_suite
from interop_harness import FIXTURES, CompatRecorder, InteropTools
from kernel_harness import RealKernel

pytestmark = [pytest.mark.interop, pytest.mark.slow]

FIXTURE = FIXTURES / "kernel_conformance.ipynb"

# The scenarios of the brief: prompts, completion, lifecycle and DNS-rebinding protection.
REQUIRED_2025 = HANDSHAKE_SERVER_SCENARIOS
REQUIRED_2026 = (
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
    "server-stateless",
    "dns-rebinding-protection",
    "input-required-result-non-tool-request",
)

# The compatibility-table rows these tests record, one per suite run.
ROW_2025 = {
    "client": "MCP conformance 0.1.16 (server suite), kernel server",
    "protocol": "2025-11-25",
    "transport": "Streamable HTTP (%mcp serve)",
}
ROW_2026 = {
    "client": "MCP conformance 0.2.0-alpha.12 (server suite), kernel server",
    "protocol": "2026-07-28",
    "transport": "Streamable HTTP (%mcp serve)",
}


@pytest.fixture(scope="module")
def kernel_url(tools: InteropTools, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("kernel-conformance")
    notebook = base / FIXTURE.name
    shutil.copy(FIXTURE, notebook)
    with RealKernel(base, env={"JPY_SESSION_NAME": str(notebook)}) as kernel:
        for cell in nbformat.read(notebook, as_version=4).cells:
            if cell.cell_type == "code":
                kernel.execute(cell.source)
        connection = kernel.connection()
        assert connection.token is None
        assert connection.notebook_path == str(Path(notebook).resolve())
        yield connection.url


@pytest.fixture(scope="module")
def suite_2025(tools: InteropTools, kernel_url: str) -> SuiteRun:
    return run_server_suite(tools, kernel_url, modern=False, output="conformance-0.1.16-kernel")


@pytest.fixture(scope="module")
def suite_2026(tools: InteropTools, kernel_url: str) -> SuiteRun:
    return run_server_suite(tools, kernel_url, modern=True, output="conformance-0.2.0-alpha.12-kernel")


@pytest.mark.parametrize("scenario", REQUIRED_2025)
def test_the_kernel_server_passes_conformance_0_1_16_scenario(
    scenario: str, suite_2025: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(**ROW_2025, check=scenario)
    suite_2025.assert_scenario_passes(scenario)


def test_the_kernel_server_fails_no_0_1_16_scenario_outside_the_baseline(
    suite_2025: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(**ROW_2025, check="active suite against the baseline")
    compat.note(suite_2025.summary())
    suite_2025.assert_nothing_fails_outside_the_baseline()


@pytest.mark.parametrize("scenario", REQUIRED_2026)
def test_the_kernel_server_passes_conformance_2026_scenario_but_for_baselined_checks(
    scenario: str, suite_2026: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(**ROW_2026, check=scenario)
    suite_2026.assert_scenario_passes_but_for_baselined_checks(scenario, load_baseline("server"))


def test_the_kernel_server_fails_no_2026_requirement_outside_the_baseline(
    suite_2026: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(**ROW_2026, check="--requirements 2026-07-28 against the baseline")
    compat.note(suite_2026.summary())
    suite_2026.assert_nothing_fails_outside_the_baseline()
