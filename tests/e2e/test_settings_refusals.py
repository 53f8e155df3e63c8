"""A bad setting, from any source, is one line that names it and says the rule, the value cut short.

Real processes: `uvicorn --factory mcp_notebook.asgi:create_app` with hostile `MCP_NOTEBOOK_*`
variables, and `mcp-notebook serve` given the same values as variables and as flags. The factory
exits 3 (uvicorn's and gunicorn's code for a worker that cannot start, which they do not restart),
the command 2 (a usage error), each after one line and no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_processes import DEADLINE, write_corpus

pytestmark = pytest.mark.slow

HUGE = "9" * 5000
SHOWN_HUGE = f"{HUGE[:40]!r}… (5,000 characters)"

# (variable, value, the refusal after the variable's or the flag's name)
HOSTILE = [
    ("HEADER_TIMEOUT", "nan", "must be a finite number of seconds, got 'nan'"),
    ("BODY_TIMEOUT", "-inf", "must be a finite number of seconds, got '-inf'"),
    ("MAX_CONNECTIONS", "-5", "must be at least 1, got '-5'"),
    ("POLL", "1e-300", "must be at least 0.1 seconds, got '1e-300'"),
    ("SESSION_EVICT_AFTER", "0", "must be at least 1 second, got '0'"),
    ("DRAIN_TIMEOUT", "1e9", "must be at most 2.592e+06 seconds (30 days), got '1e9'"),
    ("PAGE_SIZE", HUGE, f"must be at most 1000000000, got {SHOWN_HUGE}"),
    ("MAX_SESSIONS", "-" + HUGE, f"must be at least 1, got {'-' + HUGE[:39]!r}… (5,001 characters)"),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("refusals") / "prompts"
    write_corpus(path)
    return path


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


@pytest.mark.parametrize(("name", "value", "refusal"), HOSTILE, ids=[name for name, _, _ in HOSTILE])
def test_the_asgi_factory_refuses_a_hostile_variable_in_one_line(
    folder: Path, name: str, value: str, refusal: str
) -> None:
    variable = f"MCP_NOTEBOOK_{name}"
    run = _run(
        ["-m", "uvicorn", "--factory", "mcp_notebook.asgi:create_app", "--port", "0"],
        {"MCP_NOTEBOOK_PATHS": str(folder), variable: value},
    )
    assert run.stderr.splitlines() == [f"mcp-notebook: {variable} {refusal}"]
    assert run.returncode == 3


@pytest.mark.parametrize(("name", "value", "refusal"), HOSTILE, ids=[name for name, _, _ in HOSTILE])
def test_serve_refuses_the_same_value_as_a_flag_in_the_same_words(
    folder: Path, name: str, value: str, refusal: str
) -> None:
    flag = "--session-timeout" if name == "SESSION_IDLE_TIMEOUT" else "--" + name.lower().replace("_", "-")
    run = _run(["-m", "mcp_notebook", "serve", str(folder), "--http", f"{flag}={value}"], {})
    assert run.stderr.splitlines() == [f"mcp-notebook: {flag} {refusal}"]
    assert run.returncode == 2


def test_serve_refuses_a_variable_it_reads_in_the_same_words(folder: Path) -> None:
    run = _run(["-m", "mcp_notebook", "serve", str(folder)], {"MCP_NOTEBOOK_POLL": "1e-300"})
    assert run.stderr.splitlines() == ["mcp-notebook: MCP_NOTEBOOK_POLL must be at least 0.1 seconds, got '1e-300'"]
    assert run.returncode == 2
