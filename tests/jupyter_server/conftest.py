"""The Jupyter Server extension tests reuse the checks every `mcp-notebook serve` client must pass (tests/e2e)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
