"""Deferred package `__init__`: submodules import alone, and every name of the package still resolves.

Each check runs in a fresh interpreter: deferring only applies to packages
not imported yet, and it changes `sys.modules` for the whole process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def run_fresh(code: str, *, path: Path | None = None) -> dict[str, object]:
    """Run `code` in a new interpreter (with `path` first on `sys.path`); it prints one JSON object last."""
    prelude = f"import sys; sys.path.insert(0, {str(path)!r})\n" if path else ""
    completed = subprocess.run(
        [sys.executable, "-W", "error", "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """`pkg` whose `__init__` counts its runs and imports `pkg.heavy`; `pkg.sub.leaf` needs neither."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text(
        "import builtins\n"
        "builtins.pkg_init_runs = getattr(builtins, 'pkg_init_runs', 0) + 1\n"
        "from .heavy import Heavy\n"
        "from .sub.leaf import Leaf\n"
        "__all__ = ['Heavy', 'Leaf']\n"
    )
    (root / "heavy.py").write_text("class Heavy: pass\n")
    (root / "sub" / "__init__.py").write_text("from ..heavy import Heavy as SubHeavy\n")
    (root / "sub" / "leaf.py").write_text("class Leaf: pass\n")
    (root / "broken").mkdir()
    (root / "broken" / "__init__.py").write_text("raise RuntimeError('broken on purpose')\n")
    (root / "broken" / "part.py").write_text("PART = 1\n")
    return tmp_path


def test_a_submodule_imports_without_its_packages_init(package: Path) -> None:
    result = run_fresh(
        """
        import builtins, json, sys
        from mcp_notebook.lazy_packages import defer_package_init
        deferred = defer_package_init("pkg", "pkg.sub")
        from pkg.sub.leaf import Leaf
        from pkg.sub import leaf
        print(json.dumps({
            "deferred": deferred,
            "init_runs": getattr(builtins, "pkg_init_runs", 0),
            "heavy_imported": "pkg.heavy" in sys.modules,
            "same_module": leaf.Leaf is Leaf,
        }))
        """,
        path=package,
    )
    assert result == {"deferred": ["pkg", "pkg.sub"], "init_runs": 0, "heavy_imported": False, "same_module": True}


def test_a_name_of_the_package_runs_its_init_once(package: Path) -> None:
    result = run_fresh(
        """
        import builtins, json
        from mcp_notebook.lazy_packages import defer_package_init, is_deferred
        defer_package_init("pkg", "pkg.sub")
        import pkg, pkg.sub.leaf
        from pkg import Heavy, Leaf
        from pkg import *
        import pkg.heavy
        print(json.dumps({
            "init_runs": builtins.pkg_init_runs,
            "heavy": Heavy is pkg.heavy.Heavy,
            "leaf": Leaf is pkg.sub.leaf.Leaf,
            "star": sorted(name for name in ("Heavy", "Leaf") if name in globals()),
            "pkg_deferred": is_deferred(pkg),
            "sub_deferred": is_deferred(pkg.sub),
            "sub_name": pkg.sub.SubHeavy is Heavy,
            "sub_deferred_after": is_deferred(pkg.sub),
        }))
        """,
        path=package,
    )
    assert result == {
        "init_runs": 1,
        "heavy": True,
        "leaf": True,
        "star": ["Heavy", "Leaf"],
        "pkg_deferred": False,
        "sub_deferred": True,
        "sub_name": True,
        "sub_deferred_after": False,
    }


def test_a_missing_name_is_still_an_attribute_error(package: Path) -> None:
    result = run_fresh(
        """
        import builtins, json
        from mcp_notebook.lazy_packages import defer_package_init
        defer_package_init("pkg")
        import pkg
        try:
            pkg.nothing_here
        except AttributeError as error:
            message = str(error)
        print(json.dumps({"message": message, "init_runs": builtins.pkg_init_runs, "has": hasattr(pkg, "Heavy")}))
        """,
        path=package,
    )
    assert result == {"message": "module 'pkg' has no attribute 'nothing_here'", "init_runs": 1, "has": True}


def test_a_failing_init_fails_on_every_use_as_an_import_would(package: Path) -> None:
    result = run_fresh(
        """
        import json
        from mcp_notebook.lazy_packages import defer_package_init
        defer_package_init("pkg", "pkg.broken")
        from pkg.broken.part import PART
        import pkg.broken
        errors = []
        for _ in range(2):
            try:
                pkg.broken.anything
            except RuntimeError as error:
                errors.append(str(error))
        print(json.dumps({"part": PART, "errors": errors}))
        """,
        path=package,
    )
    assert result == {"part": 1, "errors": ["broken on purpose", "broken on purpose"]}


def test_packages_already_imported_are_left_alone(package: Path) -> None:
    result = run_fresh(
        """
        import builtins, json
        import pkg
        from mcp_notebook.lazy_packages import defer_package_init, is_deferred
        print(json.dumps({
            "deferred": defer_package_init("pkg", "pkg.sub", "no_such_package"),
            "init_runs": builtins.pkg_init_runs,
            "pkg_deferred": is_deferred(pkg),
        }))
        """,
        path=package,
    )
    assert result == {"deferred": [], "init_runs": 1, "pkg_deferred": False}


def test_a_child_is_deferred_only_under_a_deferred_parent(package: Path) -> None:
    result = run_fresh(
        """
        import json
        from mcp_notebook.lazy_packages import defer_package_init
        print(json.dumps({"deferred": defer_package_init("pkg.sub")}))
        """,
        path=package,
    )
    assert result == {"deferred": []}


def test_the_server_modules_load_none_of_the_sdk_client() -> None:
    """What `mcp-notebook serve` imports to answer over stdio; the whole SDK is still there for whoever asks."""
    result = run_fresh(
        """
        import json, sys
        from mcp_notebook.lazy_packages import defer_package_init
        defer_package_init("mcp", "mcp.server")
        from mcp_notebook.protocol.server import create_server
        from mcp_notebook.transports.stdio import serve_stdio
        from mcp_notebook.sources.folder import NotebookFolderSource
        before = sorted(m for m in sys.modules if m.startswith(("mcp.client", "mcp.server.mcpserver", "mcp.cli")))
        from mcp import Client, MCPError
        from mcp.server import MCPServer
        import mcp.shared.exceptions
        print(json.dumps({
            "before": before,
            "client": Client.__module__,
            "error": MCPError is mcp.shared.exceptions.MCPError,
            "server": MCPServer.__module__,
        }))
        """
    )
    assert result == {
        "before": [],
        "client": "mcp.client.client",
        "error": True,
        "server": "mcp.server.mcpserver.server",
    }
