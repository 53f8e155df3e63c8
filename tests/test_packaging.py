"""The distribution: its licence, and an sdist from which the test suite runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_license_file_is_the_declared_bsd_3_clause() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = " ".join((ROOT / "LICENSE").read_text(encoding="utf-8").split())
    assert text.startswith("BSD 3-Clause License Copyright (c) ")
    for clause in (  # the three conditions and the disclaimer, word for word
        "1. Redistributions of source code must retain the above copyright notice, this list of conditions and "
        "the following disclaimer.",
        "2. Redistributions in binary form must reproduce the above copyright notice, this list of conditions and "
        "the following disclaimer in the documentation and/or other materials provided with the distribution.",
        "3. Neither the name of the copyright holder nor the names of its contributors may be used to endorse or "
        "promote products derived from this software without specific prior written permission.",
        'THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"',
        "EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.",
    ):
        assert clause in text, clause


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (archive,) = out.glob("mcp_notebook-*.tar.gz")
    return archive


@pytest.mark.slow
def test_the_sdist_carries_tests_examples_docs_and_license(sdist: Path) -> None:
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for wanted in (
        "LICENSE",
        "README.md",
        "tests/conftest.py",
        "tests/test_layers.py",
        "tests/interop/expected-failures.yml",
        "tests/interop/fixtures/conformance.ipynb",
        "tests/interop/npm/mcp-node/package-lock.json",
        "examples/code_review.ipynb",
        "examples/data/sales.csv",
        "docs/architecture.md",
        "benchmarks/run_all.py",
        ".ci/test",
    ):
        assert wanted in names, wanted
    leaked = sorted(n for n in names if n.startswith((".venv/", ".tools/", "test-artifacts/")) or "__pycache__" in n)
    assert leaked == []
    with tarfile.open(sdist) as tar:
        (info,) = [
            member for member in tar.getmembers() if member.name.count("/") == 1 and member.name.endswith("/PKG-INFO")
        ]
        extracted = tar.extractfile(info)
        assert extracted is not None
        metadata = extracted.read().decode()
    assert "License-Expression: BSD-3-Clause" in metadata and "License-File: LICENSE" in metadata


def _as_a_background_job() -> None:
    """Start the child as `cmd &` or `nohup` would: SIGINT ignored (the Ctrl-C tests must not rely on it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# The fast suite takes about 100 s on two busy cores; a run past these deadlines is stuck, not slow.
COLLECT_DEADLINE = 300
RUN_DEADLINE = 900
# Each fast test ends within seconds: one past this fails on its own, with its stack, and the run goes on.
FAST_TEST_TIMEOUT = 120


def _pytest_from(top: Path, env: dict[str, str], *args: str, deadline: float) -> subprocess.CompletedProcess[str]:
    """Run pytest in `top` as a background job with no stdin, in a process group of its own. If it outlives
    `deadline`, it gets SIGABRT, on which faulthandler (on from the start, so also once pytest is done) writes
    every thread's stack, then its group is killed, and the test fails with the stacks and the output."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    with subprocess.Popen(
        command,
        cwd=top,
        env={**env, "PYTHONFAULTHANDLER": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_a_background_job,
        start_new_session=True,  # a group of its own, which ends with it if it gets stuck
    ) as child:
        try:
            out, err = child.communicate(timeout=deadline)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGABRT)
            try:
                out, err = child.communicate(timeout=60)
            except subprocess.TimeoutExpired:  # what it started still holds its output open
                os.killpg(child.pid, signal.SIGKILL)
                out, err = child.communicate()
            pytest.fail(f"{command} did not end within {deadline} s:\n{out[-4000:]}\n{err[-8000:]}")
    return subprocess.CompletedProcess(command, child.returncode, out, err)


@pytest.mark.slow
@pytest.mark.timeout(COLLECT_DEADLINE + RUN_DEADLINE + 120)
def test_the_fast_suite_runs_from_the_unpacked_sdist_without_tools_and_with_sigint_ignored(
    sdist: Path, tmp_path: Path
) -> None:
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (top,) = tmp_path.iterdir()
    assert not (top / ".tools").exists()  # as on a fresh checkout where no .ci/*-setup.sh ran
    env = {key: value for key, value in os.environ.items() if key != "MCP_NOTEBOOK_TOOLS"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    collected = _pytest_from(top, env, "--collect-only", deadline=COLLECT_DEADLINE)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-2000:]  # every module, slow too
    run = _pytest_from(top, env, "-m", "not slow", "-o", f"timeout={FAST_TEST_TIMEOUT}", deadline=RUN_DEADLINE)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
    # The tests ran against the sdist's own copy of the package, not this checkout's.
    probe = subprocess.run(
        [sys.executable, "-c", "import mcp_notebook, sys; print(mcp_notebook.__file__)"],
        cwd=top,
        env={**env, "PYTHONPATH": str(top)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(probe.stdout.strip()).is_relative_to(top)
