"""Running the MCP conformance suite (`@modelcontextprotocol/conformance`) and reading what it found.

The suite writes one `<mode>-<scenario>-<timestamp>/checks.json` per scenario into its output folder; a
`SuiteRun` gathers them by scenario so a test can ask which checks of which scenario failed.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop_harness import RESULTS, InteropTools, ToolRun, load_json, run_tool

__all__ = [
    "BASELINE",
    "HANDSHAKE_SERVER_SCENARIOS",
    "Baseline",
    "SuiteRun",
    "load_baseline",
    "run_conformance",
    "run_server_suite",
]

BASELINE = Path(__file__).resolve().parent / "expected-failures.yml"

# What any notebook prompts server (files or a kernel) must pass at the handshake revisions (conformance 0.1.16).
HANDSHAKE_SERVER_SCENARIOS = (
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

_RESULT_DIR = re.compile(r"^(?:server-|client-)?(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")
FAILING = frozenset({"FAILURE", "WARNING"})


@dataclass(frozen=True)
class SuiteRun:
    """One run of the conformance CLI: its exit status and output, and the checks of every scenario it ran."""

    run: ToolRun
    checks: Mapping[str, tuple[Mapping[str, Any], ...]]

    def failing_checks(self, scenario: str) -> list[str]:
        """`check-id: message` of each failed (or warned) check of `scenario`."""
        return [
            f"{c.get('id')}: {c.get('errorMessage') or c.get('status')}"
            for c in self.checks.get(scenario, ())
            if c.get("status") in FAILING
        ]

    def passed(self, scenario: str) -> int:
        return sum(1 for c in self.checks.get(scenario, ()) if c.get("status") == "SUCCESS")

    def assert_scenario_passes(self, scenario: str) -> None:
        """Every check of `scenario` passed, and at least one ran."""
        assert scenario in self.checks, f"scenario {scenario} did not run:\n{self.run.describe()}"
        assert self.failing_checks(scenario) == []
        assert self.passed(scenario) >= 1

    def assert_scenario_passes_but_for_baselined_checks(self, scenario: str, baseline: Baseline) -> None:
        """`scenario` ran and every failed check of it is one baselined check by check (never the whole scenario)."""
        assert scenario not in baseline.scenarios, f"{scenario} must pass: it may only be baselined check by check"
        assert scenario in self.checks, f"scenario {scenario} did not run:\n{self.run.describe()}"
        unexpected = [
            failure
            for failure in self.failing_checks(scenario)
            if not baseline.covers(scenario, failure.split(":", 1)[0])
        ]
        assert unexpected == []
        assert self.passed(scenario) >= 1

    def assert_nothing_fails_outside_the_baseline(self) -> None:
        """The suite's own verdict: every failure is baselined, and no baselined entry has gone stale."""
        assert self.run.returncode == 0, self.run.describe()
        assert "Baseline check passed" in self.run.stdout, self.run.describe()

    def summary(self) -> str:
        """ "N of M scenarios pass" over every scenario that ran (the others are left to the baseline)."""
        passing = sum(1 for name in self.checks if not self.failing_checks(name))
        return f"{passing} of {len(self.checks)} scenarios pass, the others are in expected-failures.yml"


@dataclass(frozen=True)
class Baseline:
    """The expected failures: whole scenarios, and single checks as `scenario:check-id` (0.2.x only)."""

    scenarios: frozenset[str]
    checks: Mapping[str, frozenset[str]]

    def covers(self, scenario: str, check_id: str) -> bool:
        return scenario in self.scenarios or check_id in self.checks.get(scenario, frozenset())


def load_baseline(mode: str = "server", path: Path = BASELINE) -> Baseline:
    """The entries of `mode` ("server" or "client") in the expected-failures file."""
    entries = _baseline_entries(path.read_text(encoding="utf-8")).get(mode, [])
    scenarios = frozenset(e for e in entries if ":" not in e)
    checks: dict[str, set[str]] = {}
    for entry in entries:
        if ":" in entry:
            scenario, check_id = entry.split(":", 1)
            checks.setdefault(scenario, set()).add(check_id)
    return Baseline(scenarios, {k: frozenset(v) for k, v in checks.items()})


def _baseline_entries(text: str) -> dict[str, list[str]]:
    """The lists of the expected-failures file: the YAML subset it uses (`key:` then `- item` lines, comments)."""
    lists: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line[0].isspace() and line.endswith((":", ": []")):
            current = lists.setdefault(line.split(":", 1)[0].strip(), [])
        elif line.lstrip().startswith("- ") and current is not None:
            current.append(line.lstrip()[2:].strip().strip("'\""))
        else:
            raise ValueError(f"unexpected line in the expected-failures file: {raw!r}")
    return lists


def run_conformance(
    tools: InteropTools,
    entry: Path,
    args: Sequence[str],
    *,
    output: str,
    timeout: float = 240,
    env: Mapping[str, str] | None = None,
) -> SuiteRun:
    """Run `conformance ARGS... -o .tools/results/OUTPUT` on Node 22 and collect its `checks.json` files."""
    folder = RESULTS / output
    shutil.rmtree(folder, ignore_errors=True)  # only this run's scenarios, never a stale one
    run = run_tool([tools.node, entry, *args, "-o", folder], timeout=timeout, env=env)
    checks: dict[str, tuple[Mapping[str, Any], ...]] = {}
    for checks_file in sorted(folder.glob("*/checks.json")):
        match = _RESULT_DIR.match(checks_file.parent.name)
        if match:
            checks[match.group("scenario")] = tuple(load_json(checks_file))
    return SuiteRun(run, checks)


def run_server_suite(tools: InteropTools, url: str, *, modern: bool, output: str) -> SuiteRun:
    """The server suite against `url`, baselined: conformance 0.1.16, or with `modern` 0.2.0-alpha.12's
    `--requirements 2026-07-28`."""
    entry = tools.conformance_alpha if modern else tools.conformance
    requirements = ["--requirements", "2026-07-28"] if modern else []
    args = ["server", "--url", url, *requirements, "--expected-failures", str(BASELINE)]
    return run_conformance(tools, entry, args, output=output)
