"""docs/architecture.md names every module of `mcp_notebook` and `lsp_bridge`, so none is left undescribed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mcp_notebook", "lsp_bridge")


def _named(text: str) -> set[str]:
    """Every name in backticks, as written (`sources/cells.py`), without `.py`, and each of its path's tails."""
    names: set[str] = set()
    for quoted in re.findall(r"`([^`\n]+)`", text):
        for word in re.split(r"[\s,()+]+", quoted):
            word = word.strip("./")
            if word.endswith(".py"):
                word = word[:-3]
            parts = [part for part in word.split("/") if part]
            for start in range(len(parts)):
                names.add("/".join(parts[start:]))
    return names


def _modules() -> list[str]:
    """Each module as `package/sub/stem` (packages' `__init__` and `__main__` aside)."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name in ("__init__.py", "__main__.py"):
                continue
            found.append(path.relative_to(ROOT).with_suffix("").as_posix())
    return found


def test_every_module_is_named_in_the_architecture() -> None:
    named = _named((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    missing = []
    for module in _modules():
        parts = module.split("/")[1:]  # its path inside its package, which the document writes
        # Named by its path inside the package, or by its stem (the document lists a folder's modules after it).
        if "/".join(parts) not in named and parts[-1] not in named:
            missing.append(module)
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"


def test_a_module_left_out_is_reported() -> None:
    named = _named("`sources/cells.py` + `fields.py`")
    assert {"sources/cells", "cells", "fields"} <= named and "outputs" not in named
