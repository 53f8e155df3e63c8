"""The HTTP profile reads py-spy's collapsed stacks by party, and samples a real server under load.

The shares are not judged; that they are read right, and that a real
recording finds our code and the SDK's in the server's busy samples, is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_runs import run_benchmark

from benchmarks.profile_http import owner_of, read_collapsed


def test_each_frame_belongs_to_the_party_whose_package_holds_its_file() -> None:
    assert owner_of("mcp_notebook/transports/http.py") == "ours"
    assert owner_of("/venv/lib/python3.11/site-packages/mcp/server/lowlevel/server.py") == "SDK"
    assert owner_of("mcp/shared/inbound.py") == "SDK"
    assert owner_of("pydantic_core/core_schema.py") == "pydantic"
    assert owner_of("uvicorn/protocols/http/httptools_impl.py") == "uvicorn"
    assert owner_of("asyncio/runners.py") == "asyncio"
    assert owner_of("<string>") == "other"


def test_the_leaf_frame_of_each_stack_gets_its_samples() -> None:
    lines = [
        "<module> (mcp-notebook:8);Server.run (uvicorn/server.py:86);"
        "AccessGate.__call__ (mcp_notebook/transports/http.py:242) 6",
        "<module> (mcp-notebook:8);handle_modern_request (mcp/server/_streamable_http_modern.py:90) 3",
        "<module> (mcp-notebook:8);dumps (json/__init__.py:231) 1",
        "not a stack",
    ]
    profile = read_collapsed(lines)
    assert profile.samples == 10
    assert profile.by_owner == {"ours": 6, "SDK": 3, "json": 1}
    assert profile.by_function["AccessGate.__call__ (mcp_notebook/transports/http.py)"] == 6
    assert profile.owner_lines()[2:] == ["| ours | 60% |", "| SDK | 30% |", "| json | 10% |"]
    assert profile.function_lines(1)[2] == "| `AccessGate.__call__ (mcp_notebook/transports/http.py)` | ours | 60.0% |"


@pytest.mark.slow
@pytest.mark.parametrize("method", ["prompts/get", "completion/complete"])
def test_a_real_recording_of_our_server_under_load_is_reported_as_recorded(method: str, tmp_path: Path) -> None:
    """Which code gets how many samples is the measurement (on a busy machine the server gets few, and the SDK,
    seldom on the stack of a stateless request, may get none): the smoke test checks that requests were recorded
    and that the report says what the recording holds, not what it found."""
    raw = tmp_path / "stacks.txt"
    quick = ["--seconds", "2", "--clients", "4", "--notebooks", "2", "--prompts", "2", "--method", method]
    out = run_benchmark("benchmarks.profile_http", *quick, "--raw", str(raw))
    recorded = read_collapsed(raw.read_text().splitlines())
    assert recorded.samples > 0
    assert f"(4 clients, {recorded.samples} busy samples)" in out
    assert "\n".join(recorded.owner_lines()) in out
    assert "\n".join(recorded.function_lines(10)[:3]) in out
    assert raw.read_text().count("mcp_notebook/transports/gate.py") > 0  # the access gate, in every request
