"""The MCP conformance suite, server mode, against `mcp-notebook serve --http` serving a fixture notebook.

`fixtures/conformance.ipynb` publishes the prompts the suite calls by name, written in the notebook prompt
format only. Everything a prompts server cannot offer (tools, resource subscriptions, logging, ...) is listed,
with the reason, in `expected-failures.yml`; the suite itself fails the run on any unlisted failure and on any
listed entry that passes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conformance_runs import BASELINE, SuiteRun, load_baseline, run_conformance
from interop_harness import FIXTURES, CompatRecorder, InteropTools, serve_http

pytestmark = [pytest.mark.interop, pytest.mark.slow]

FIXTURE = str(FIXTURES / "conformance.ipynb")

# What a notebook prompts server must pass at the handshake revisions (conformance 0.1.16).
REQUIRED_2025 = (
    "server-initialize",
    "ping",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
    "dns-rebinding-protection",
)
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


@pytest.fixture(scope="module")
def suite_2025(tools: InteropTools) -> Iterator[SuiteRun]:
    with serve_http(FIXTURE) as url:
        args = ["server", "--url", url, "--expected-failures", str(BASELINE)]
        yield run_conformance(tools, tools.conformance, args, output="conformance-0.1.16-server")


@pytest.fixture(scope="module")
def suite_2026(tools: InteropTools) -> Iterator[SuiteRun]:
    with serve_http(FIXTURE) as url:
        args = ["server", "--url", url, "--requirements", "2026-07-28", "--expected-failures", str(BASELINE)]
        yield run_conformance(tools, tools.conformance_alpha, args, output="conformance-0.2.0-alpha.12-server")


def test_conformance_0_1_16_fails_nothing_outside_the_baseline(suite_2025: SuiteRun, compat: CompatRecorder) -> None:
    compat.describe(
        client="MCP conformance 0.1.16 (server suite)",
        protocol="2025-11-25",
        transport="Streamable HTTP",
        check="active suite against the baseline",
    )
    compat.note(suite_2025.summary())
    assert suite_2025.run.returncode == 0, suite_2025.run.describe()
    assert "Baseline check passed" in suite_2025.run.stdout, suite_2025.run.describe()


@pytest.mark.parametrize("scenario", REQUIRED_2025)
def test_conformance_0_1_16_scenario_passes(scenario: str, suite_2025: SuiteRun, compat: CompatRecorder) -> None:
    compat.describe(
        client="MCP conformance 0.1.16 (server suite)",
        protocol="2025-11-25",
        transport="Streamable HTTP",
        check=scenario,
    )
    assert scenario in suite_2025.checks, f"scenario {scenario} did not run:\n{suite_2025.run.describe()}"
    assert suite_2025.failing_checks(scenario) == []
    assert suite_2025.passed(scenario) >= 1


def test_conformance_2026_requirements_fail_nothing_outside_the_baseline(
    suite_2026: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(
        client="MCP conformance 0.2.0-alpha.12 (server suite)",
        protocol="2026-07-28",
        transport="Streamable HTTP",
        check="--requirements 2026-07-28 against the baseline",
    )
    compat.note(suite_2026.summary())
    assert suite_2026.run.returncode == 0, suite_2026.run.describe()
    assert "Baseline check passed" in suite_2026.run.stdout, suite_2026.run.describe()


@pytest.mark.parametrize("scenario", REQUIRED_2026)
def test_conformance_2026_scenario_passes_but_for_baselined_checks(
    scenario: str, suite_2026: SuiteRun, compat: CompatRecorder
) -> None:
    compat.describe(
        client="MCP conformance 0.2.0-alpha.12 (server suite)",
        protocol="2026-07-28",
        transport="Streamable HTTP",
        check=scenario,
    )
    baseline = load_baseline("server")
    assert scenario not in baseline.scenarios, f"{scenario} must pass: it may only be baselined check by check"
    assert scenario in suite_2026.checks, f"scenario {scenario} did not run:\n{suite_2026.run.describe()}"
    unexpected = [
        failure
        for failure in suite_2026.failing_checks(scenario)
        if not baseline.covers(scenario, failure.split(":", 1)[0])
    ]
    assert unexpected == []
    assert suite_2026.passed(scenario) >= 1
