"""The MCP conformance suite, client mode, against `PromptClient` (through `tests/conformance_client.py`).

Only the scenarios a prompts client can take part in run: the handshake, and the 2026-07-28 request metadata
and HTTP headers. The others need a client that calls tools (`tools_call`, `sse-retry`, whose mock server only
closes an SSE stream in the middle of a `tools/call`, `elicitation-*`, `sep-2322-*`, `json-schema-*`,
`http-custom-headers`) or signs in with OAuth (`auth/*`), which `PromptClient` does not do.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conformance_runs import BASELINE, load_baseline, run_conformance
from interop_harness import ROOT, CompatRecorder, InteropTools

pytestmark = [pytest.mark.interop, pytest.mark.slow]

WRAPPER = ROOT / "tests" / "conformance_client.py"
SCENARIOS = [
    ("0.1.16", "initialize", "2025-11-25"),
    ("0.2.0-alpha.12", "initialize", "2025-11-25"),
    ("0.2.0-alpha.12", "request-metadata", "2026-07-28"),
    ("0.2.0-alpha.12", "http-standard-headers", "2026-07-28"),
]


@pytest.mark.parametrize(("suite", "scenario", "protocol"), SCENARIOS)
def test_prompt_client_passes_the_conformance_client_scenario(
    suite: str, scenario: str, protocol: str, tools: InteropTools, compat: CompatRecorder
) -> None:
    compat.describe(
        client=f"PromptClient under MCP conformance {suite} (client suite)",
        protocol=protocol,
        transport="Streamable HTTP",
        check=scenario,
    )
    entry: Path = tools.conformance if suite == "0.1.16" else tools.conformance_alpha
    command = f"{sys.executable} {WRAPPER}"
    args = ["client", "--command", command, "--scenario", scenario, "--timeout", "30000"]
    run = run_conformance(
        tools,
        entry,
        [*args, "--expected-failures", str(BASELINE)],
        output=f"conformance-{suite}-client-{scenario}",
    )
    assert run.run.returncode == 0, run.run.describe()
    assert scenario in run.checks, run.run.describe()
    baseline = load_baseline("client")
    unexpected = [
        failure for failure in run.failing_checks(scenario) if not baseline.covers(scenario, failure.split(":", 1)[0])
    ]
    assert unexpected == [], run.run.describe()
    assert run.passed(scenario) >= 1, run.run.describe()
    if failing := run.failing_checks(scenario):
        compat.note("baselined: " + ", ".join(f.split(":", 1)[0] for f in failing))
