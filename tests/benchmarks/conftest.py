"""Makes the `benchmarks` package (at the project root, not installed) importable from these tests."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# `python -m pytest` from the root already has it on sys.path; `.venv/bin/pytest` does not.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
