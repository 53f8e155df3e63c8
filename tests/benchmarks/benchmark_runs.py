"""Running a benchmark script the way its smoke tests do: `python -m MODULE ARGS` from the project root."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_benchmark(module: str, *args: str, timeout: float = 240, env: Mapping[str, str] | None = None) -> str:
    """The standard output of `python -m module args` (in `env`, else this environment); the test fails, with its
    output, if it does not exit 0."""
    out = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert out.returncode == 0, f"{module} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout
