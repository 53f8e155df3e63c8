"""The `.ci/` scripts that test in a venv of their own (lowest-setup.sh, sdk-newest-setup.sh), run for real.

Each runs from a copy of `.ci/` (and pyproject.toml) in a scratch folder, so this checkout's `test-artifacts/` and
venvs are left alone; only the venv it makes is a stand-in, whose `pip` and `python` (a test's own scripts) answer
as the test says and record what they were asked in the log.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# `python3 -m venv DIR` makes DIR/bin/{pip,python}, stand-ins driven by FAKE_* variables; any other use of
# python3 (lowest-setup.sh reads pyproject.toml with it) is the real interpreter.
PYTHON3 = f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin" && cp "$FAKE_BIN/pip" "$FAKE_BIN/python" "$3/bin/" && exit 0
fi
exec {sys.executable} "$@"
"""


def scratch_checkout(tmp_path: Path, *, pip: str, python: str) -> Path:
    """A checkout in `tmp_path` with `.ci/` and pyproject.toml, and the stand-ins `pip` and `python`."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / ".ci", root / ".ci")
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("python3", PYTHON3), ("pip", pip), ("python", python)):
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    return root


def run_script(
    root: Path, script: str, report: str, *, unset: str, **fake: str
) -> tuple[subprocess.CompletedProcess[str], str, list[str]]:
    """Run `.ci/SCRIPT` in `root` without the variables starting with `unset`: how it ended, its report
    (test-artifacts/REPORT.txt), the calls the stand-ins logged."""
    bin_dir = root.parent / "bin"
    log = root.parent / "calls.log"
    log.touch()
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(unset)},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_BIN": str(bin_dir),
        "FAKE_LOG": str(log),
        **fake,
    }
    done = subprocess.run(["bash", str(root / ".ci" / script)], capture_output=True, text=True, env=env, timeout=120)
    written = root / "test-artifacts" / f"{report}.txt"
    return done, written.read_text(encoding="utf-8") if written.exists() else "", log.read_text().splitlines()
