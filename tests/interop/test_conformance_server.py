"""The MCP conformance suite, server mode, against `mcp-notebook serve --http` serving a fixture notebook.

`fixtures/conformance.ipynb` publishes the prompts the suite calls by name, written in the notebook prompt
format only. Everything a prompts server cannot offer (tools, resource subscriptions, logging, ...) is listed,
with the reason, in `expected-failures.yml`; the suite itself fails the run on any unlisted failure and on any
listed entry that passes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conformance_runs import HANDSHAKE_SERVER_SCENARIOS, SuiteRun, load_baseline, run_server_suite
from interop_harness import FIXTURES, CompatRecorder, InteropTools, serve_http

pytestmark = [pytest.mark.interop, pytest.mark.slow]

FIXTURE = str(FIXTURES / "conformance.ipynb")

# What a notebook prompts server must pass at the handshake revisions (conformance 0.1.16) ...
REQUIRED_2025 = HANDSHAKE_SERVER_SCENARIOS
# ... and at the stateless revision 2026-07-28 (conformance 0.2.0-alpha.12, `--requirements 2026-07-28`).
# Checks listed one by one (`scenario:check-id`) in the baseline are exempt; every other check must pass.
REQUIRED_2026 = (
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
    "caching",
    "server-stateless",
    "input-required-result-unsupported-methods",
    "input-required-result-non-tool-request",
    "dns-rebinding-protection",
)

# The compatibility-table rows these tests record, one per suite run.
ROW_2025 = {"client": "MCP conformance 0.1.16 (server suite)", "protocol": "2025-11-25", "transport": "Streamable HTTP"}
ROW_2026 = {
    "client": "MCP conformance 0.2.0-alpha.12 (server suite)",
    "protocol": "2026-07-28",
    "transport": "Streamable HTTP",
}


@pytest.fixture(scope="module")
def suite_2025(tools: InteropTools) -> Iterator[SuiteRun]:
    with serve_http(FIXTURE) as url:
        yield run_server_suite(tools, url, modern=False, output="conformance-0.1.16-server")


@pytest.fixture(scope="module")
def suite_2026(tools: InteropTools) -> Iterator[SuiteRun]:
    with serve_http(FIXTURE) as url:
        yield run_server_suite(tools, url, modern=True, output="conformance-0.2.0-alpha.12-server")


def test_conformance_0_1_16_fails_nothing_outside_the_baseline(suite_2025: SuiteRun, compat: CompatRecorder) -> None:
    compat.describe(**ROW_2025, check="active suite against the baseline")
    compat.note(suite_2025.summary())
    suite_2025.assert_nothing_fails_outside_the_baseline()


@pytest.mark.parametrize("scenario", REQUIRED_2025)
def test_conformance_0_1_16_scenario_passes(scenario: str, suite_2025: SuiteRun, compat: CompatRecorder) -> None:
    compat.describe(**ROW_2025, check=scenario)
    suite_2025.assert_scenario_passes(scenario)


def test_conformance_2026_requirements_fail_nothing_outside_the_baseline(
    suite_2026: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(**ROW_2026, check="--requirements 2026-07-28 against the baseline")
    compat.note(suite_2026.summary())
    suite_2026.assert_nothing_fails_outside_the_baseline()


@pytest.mark.parametrize("scenario", REQUIRED_2026)
def test_conformance_2026_scenario_passes_but_for_baselined_checks(
    scenario: str, suite_2026: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(**ROW_2026, check=scenario)
    suite_2026.assert_scenario_passes_but_for_baselined_checks(scenario, load_baseline("server"))
