"""The conformance suite's Skills extension scenarios (SEP-2640) against `mcp-notebook serve --http` on a folder of
skills (`examples/skills`), in both eras, with one process and with `--workers 2`.

The extension's scenarios are not on the spec timeline, so they run one by one with `--force`. Against a server
that does not declare the extension every check is SKIPPED and the scenario "passes": here each scenario must show
its checks EXECUTED (SUCCESS), none failing, and the only skipped ones the cache attributes a handshake revision
does not have.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conformance_runs import SuiteRun, run_conformance
from interop_harness import ROOT, CompatRecorder, InteropTools, serve_http

pytestmark = [pytest.mark.interop, pytest.mark.slow]

FOLDER = str(ROOT / "examples" / "skills")
SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-directory", "sep-2640-skills-manifest")
ERAS = ("2025-11-25", "2026-07-28")
# The checks each scenario must have run (and passed): the ones that read entries, digests, files and folders.
MUST_PASS = {
    "sep-2640-skills-enumeration": {
        "sep-2640-capability-requires-resources",
        "sep-2640-skills-list-implemented",
        "sep-2640-resources-complete",
        "sep-2640-resources-digest-format",
        "sep-2640-resources-size-required",
        "sep-2640-entry-uri-matches-frontmatter-name",
        "sep-2640-skills-get-entry-shape",
        "sep-2640-skills-get-unknown-uri-invalid-params",
        "sep-2640-entry-frontmatter-identical",
    },
    "sep-2640-skills-directory": {
        "sep-2640-capability-directory-read-flag",
        "sep-2640-directory-read-method-registered",
        "sep-2640-directory-read-subdir-mimetype",
        "sep-2640-directory-read-invalid-params",
    },
    "sep-2640-skills-manifest": {
        "sep-2640-skillmd-mimetype",
        "sep-2640-skillmd-metadata-name",
        "sep-2640-skillmd-metadata-description",
        "sep-2640-final-segment-equals-name",
    },
}
# Defined from 2026-07-28 only: skipped at a handshake revision, by the suite itself.
CACHE_CHECKS = {"sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"}


def run_skill_scenarios(tools: InteropTools, url: str, era: str, output: str) -> dict[str, SuiteRun]:
    runs: dict[str, SuiteRun] = {}
    for scenario in SCENARIOS:
        args = ["server", "--url", url, "--scenario", scenario, "--spec-version", era, "--force"]
        runs[scenario] = run_conformance(tools, tools.conformance_alpha, args, output=f"{output}-{scenario}-{era}")
    return runs


@pytest.fixture(scope="module", params=["one process", "--workers 2"])
def suites(request: pytest.FixtureRequest, tools: InteropTools) -> Iterator[tuple[str, dict[str, dict[str, SuiteRun]]]]:
    extra = ("--workers", "2") if request.param == "--workers 2" else ()
    with serve_http(FOLDER, "--no-cache", *extra) as url:
        name = "workers" if extra else "single"
        yield request.param, {era: run_skill_scenarios(tools, url, era, f"conformance-skills-{name}") for era in ERAS}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_skills_scenario_executes_every_check_and_fails_none(
    suites: tuple[str, dict[str, dict[str, SuiteRun]]], scenario: str, era: str, compat: CompatRecorder
) -> None:
    how, runs = suites
    run = runs[era][scenario]
    compat.describe(
        client="MCP conformance 0.2.0-alpha.12 (server suite)",
        protocol=era,
        transport=f"Streamable HTTP ({how})",
        check=scenario,
    )
    assert run.run.returncode == 0, run.run.describe()
    checks = run.checks.get(scenario)
    assert checks, f"scenario {scenario} did not run:\n{run.run.describe()}"
    statuses = {str(c["id"]): str(c["status"]) for c in checks}
    assert run.failing_checks(scenario) == []
    skipped = {check for check, status in statuses.items() if status == "SKIPPED"}
    assert skipped <= (CACHE_CHECKS if era != "2026-07-28" else set()), statuses
    missing = {check for check in MUST_PASS[scenario] if statuses.get(check) != "SUCCESS"}
    assert missing == set(), statuses
    compat.note(f"{run.passed(scenario)} checks executed and passed")
