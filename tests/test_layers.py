"""The layering rules of the architecture, checked on the source: each layer imports only downward."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mcp_notebook", "lsp_bridge")

SDK = {"mcp", "mcp_types", "pydantic"}
IPYTHON = {"IPython", "ipywidgets", "ipykernel", "traitlets"}
LSP = {"pygls", "lsprotocol"}
# Modules (relative to mcp_notebook/) allowed to import the SDK: the protocol seam and the edges.
SDK_ALLOWED = ("protocol/", "transports/", "client.py", "kernel_proxy.py", "cli.py")


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_module_imports_respect_the_layers(path: Path) -> None:
    rel = _rel(path)
    roots = _imported_roots(path)
    if rel.startswith("mcp_notebook/"):
        inner = rel.removeprefix("mcp_notebook/")
        assert "lsp_bridge" not in roots, f"{rel} imports lsp_bridge"
        assert not roots & LSP, f"{rel} imports pygls/lsprotocol"
        if not inner.startswith("ipython/"):
            assert not roots & IPYTHON, f"{rel} imports IPython outside mcp_notebook/ipython/"
        if not inner.startswith(SDK_ALLOWED):
            assert not roots & SDK, f"{rel} imports the MCP SDK outside the protocol seam and the edges"
        if inner in ("models.py", "exceptions.py"):
            assert roots <= set(sys.stdlib_module_names) | {"__future__"}, f"{rel} must use the stdlib only"
    else:
        assert not roots & IPYTHON, f"{rel} imports IPython"


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, mcp_notebook; heavy = sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'IPython', "
        "'ipywidgets', 'pygls', 'nbformat', 'anyio') if m in sys.modules); print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
