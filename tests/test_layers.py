"""The layering rules of docs/architecture.md, checked on the source of both packages.

Every module belongs to one layer of the table below (a module that fits none
fails the test: add it to the table here and in docs/architecture.md). A module
may import its own layer and the layers before it, never a later one, in either
import form (`from mcp_notebook.x import …` or `from ..x import …`), wherever
the import stands (module level, inside a function, or under `TYPE_CHECKING`).
No import climbs back up: a module never imports from a package above its own
(`from .. import settings`), nor a name from the package face
(`from . import __version__`, `from mcp_notebook import __version__`); it
imports the module that defines what it uses (`from ..version import __version__`).
Third-party packages are confined to the layers that own them. Runtime imports
never form a circle; a type-only back-reference (under `TYPE_CHECKING`) may,
and the ones that do are exactly those `ALLOWED_TYPE_ONLY_CIRCLES` lists, as the architecture doc
states them.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mcp_notebook", "lsp_bridge")

# (layer, module prefixes under mcp_notebook/), in the order of the table: each may import only the ones before.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model", ("models", "exceptions", "version")),
    (
        "pure logic",
        (
            "naming",
            "ranking",
            "command_line",
            "terminal",
            "settings",
            "rendering",
            "argument_types",
            "owned_files",
            "discovery",
            "resources",
            "transcript",
        ),
    ),
    ("state", ("registry",)),
    ("event loop", ("worker_threads", "interrupts")),
    ("sources", ("sources",)),
    ("protocol seam", ("protocol",)),
    ("service", ("service",)),
    ("checking", ("checking",)),
    (
        "edges",
        (
            "transports",
            "asgi",
            "lazy_packages",
            "client",
            "catalog",
            "cli",
            "commands",
            "console",
            "help_text",
            "__main__",
            "kernel_proxy",
            "trust",
            "trust_command",
            "config",
            "runtime",
            "api",
            "llm",
        ),
    ),
    ("Jupyter Server extension", ("jupyter",)),
    ("IPython", ("ipython",)),
)
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}
# What the editor bridge may use of mcp_notebook: the model, the client and its configuration, kernel discovery,
# the transcript that writes a rendered prompt out as every front end does, the "did you mean" of its command line,
# and the one way blocking work leaves the event loop.
BRIDGE_MAY_IMPORT = frozenset(
    {
        "version",
        "models",
        "exceptions",
        "naming",
        "ranking",
        "command_line",
        "client",
        "catalog",
        "config",
        "trust",
        "discovery",
        "transcript",
        "worker_threads",
    },
)
# The bridge's pure module (the table's "slashline.py (pure)"): no editor, no client, no I/O.
PURE_BRIDGE = frozenset({"lsp_bridge.slashline"})
PURE_BRIDGE_MAY_IMPORT = PURE_BRIDGE | {
    "mcp_notebook.models",
    "mcp_notebook.exceptions",
    "mcp_notebook.naming",
    "mcp_notebook.ranking",
}

SDK = frozenset({"mcp", "mcp_types", "pydantic", "pydantic_core"})
IPYTHON = frozenset({"IPython", "ipywidgets", "ipykernel", "traitlets"})
LSP = frozenset({"pygls", "lsprotocol"})
NOTEBOOK_FILES = frozenset({"nbformat", "watchfiles", "yaml"})  # yaml: SKILL.md frontmatter
# The Jupyter Server extension alone imports the Jupyter server (its configuration is traitlets, as IPython's is).
JUPYTER_SERVER = frozenset({"jupyter_server", "tornado"})
# Modules (relative to mcp_notebook/) of the edges allowed to import the SDK: the protocol seam and these.
SDK_EDGES = ("transports/", "client/", "kernel_proxy.py")
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
# Third-party packages each layer up to the protocol seam may import (the edges and above import what they serve
# with, within the rules above); anyio is the one concurrency model below IPython.
THIRD_PARTY: dict[str, frozenset[str]] = {
    "model": frozenset(),
    "pure logic": frozenset({"jupyter_core"}),  # for discovery only, below
    "state": frozenset(),
    "event loop": frozenset({"anyio"}),
    "sources": NOTEBOOK_FILES | {"anyio"},
    # httpx2: the type of the SDK's HTTP client, named in sdk_seam; opentelemetry: whether the SDK's spans are recorded.
    "protocol seam": SDK | {"anyio", "httpx2", "opentelemetry"},
}
JUPYTER_CORE_USERS = ("discovery",)
BRIDGE_THIRD_PARTY = LSP
# The type-only back-references that close a circle, as docs/architecture.md states them.
ALLOWED_TYPE_ONLY_CIRCLES = frozenset(
    {
        ("mcp_notebook.sources.magic_listing", "mcp_notebook.sources.magics"),
        ("mcp_notebook.sources.magic_invocation", "mcp_notebook.sources.magics"),
        ("mcp_notebook.sources.magic_output", "mcp_notebook.sources.magics"),
        ("mcp_notebook.sources.live_policy", "mcp_notebook.sources.magics"),
        ("lsp_bridge.expansion", "lsp_bridge.server"),
        ("lsp_bridge.lifecycle", "lsp_bridge.server"),
        ("mcp_notebook.ipython.subcommands", "mcp_notebook.ipython.magics"),
    }
)


@dataclass(frozen=True)
class Import:
    target: str  # a dotted module name, absolute
    line: int
    type_only: bool
    name: str | None = None  # the name imported by `from target import name`, when it is not a module
    via: str | None = None  # the `from` part of the statement, absolute


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(
    module: str, source: str, *, is_package: bool = False, known: frozenset[str] = frozenset()
) -> Iterator[Import]:
    """Every import in `source` (the text of `module`), relative ones resolved to absolute names."""
    tree = ast.parse(source)
    type_only = _type_checking_lines(tree)
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno, node.lineno in type_only)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                # `from . import servers` imports a module; `from .models import PromptSpec` a name.
                sub = f"{target}.{alias.name}"
                if sub in known:
                    yield Import(sub, node.lineno, node.lineno in type_only, via=target)
                else:
                    yield Import(target, node.lineno, node.lineno in type_only, alias.name, via=target)


FACES = frozenset(PACKAGES)


def climbs(module: str, imp: Import, *, is_package: bool = False) -> bool:
    """Whether `imp` reaches back up: from a package above `module`'s own, or a name from a package face."""
    if imp.via is None or module in FACES:
        return False
    own = module if is_package else module.rpartition(".")[0]
    above_own = own.startswith(imp.via + ".")
    return above_own or (imp.via in FACES and imp.name is not None)


def layer_of(module: str) -> str | None:
    """The layer of a module of mcp_notebook (dotted), or None when the table has no place for it."""
    inner = module.removeprefix("mcp_notebook").removeprefix(".")
    best: tuple[int, str] | None = None
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (inner == prefix or inner.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), name)
    return best[1] if best else None


def violations(module: str, source: str, *, is_package: bool = False, known: frozenset[str] = frozenset()) -> list[str]:
    """What breaks the layering rules in `source`, the text of `module` (e.g. 'mcp_notebook.sources.cells')."""
    found: list[str] = []
    inner = module.removeprefix("mcp_notebook.")
    own = layer_of(module) if module.startswith("mcp_notebook.") else None
    rel_file = inner.replace(".", "/") + ("/" if is_package else ".py")
    for imp in imports_of(module, source, is_package=is_package, known=known):
        root = imp.target.split(".")[0]
        where = f"{module}:{imp.line} imports {imp.target}"
        if climbs(module, imp, is_package=is_package):
            what = f"{imp.via}.{imp.name}" if imp.name else imp.target
            found.append(
                f"{module}:{imp.line} imports {what} by climbing to {imp.via}: import it from the module that "
                "defines it (`from ..version import __version__`, `from ..settings import option`)"
            )
        if module.startswith("lsp_bridge"):
            if root in IPYTHON | SDK | NOTEBOOK_FILES:
                found.append(f"{where}: the bridge speaks to mcp_notebook's client, not to {root}")
            elif root not in STDLIB | BRIDGE_THIRD_PARTY | {"mcp_notebook", "lsp_bridge"}:
                found.append(f"{where}: the bridge's own third-party packages are {sorted(BRIDGE_THIRD_PARTY)}")
            if root == "mcp_notebook":
                used = imp.target.removeprefix("mcp_notebook.").split(".")[0] if imp.target != "mcp_notebook" else root
                if used not in BRIDGE_MAY_IMPORT:
                    found.append(f"{where}: the bridge may use only {sorted(BRIDGE_MAY_IMPORT)} of mcp_notebook")
            if module in PURE_BRIDGE and root not in STDLIB and imp.target not in PURE_BRIDGE_MAY_IMPORT:
                found.append(f"{where}: {module} is pure: the stdlib and {sorted(PURE_BRIDGE_MAY_IMPORT)} only")
            continue
        if module == "mcp_notebook":  # the package facade: imports lazily, on first use
            continue
        if own is None:
            found.append(f"{module} has no layer: add it to the layer table (docs/architecture.md, this test)")
            break
        if root == "lsp_bridge":
            found.append(f"{where}: mcp_notebook never imports lsp_bridge")
        if root in LSP:
            found.append(f"{where}: pygls/lsprotocol belong to lsp_bridge")
        if root in IPYTHON and own != "IPython" and not (root == "traitlets" and own == "Jupyter Server extension"):
            found.append(f"{where}: IPython and ipywidgets belong to mcp_notebook/ipython/")
        if root in JUPYTER_SERVER and own != "Jupyter Server extension":
            found.append(f"{where}: jupyter_server and tornado belong to mcp_notebook/jupyter/")
        if root in SDK and not (own == "protocol seam" or (own == "edges" and rel_file.startswith(SDK_EDGES))):
            found.append(f"{where}: the MCP SDK is imported only in the protocol seam and the edges {SDK_EDGES}")
        if root in NOTEBOOK_FILES and RANK[own] < RANK["sources"]:
            found.append(f"{where}: {root} belongs to the sources layer and above")
        if own == "model" and root not in STDLIB and root != "mcp_notebook":
            found.append(f"{where}: the model uses the stdlib only")
        if own == "pure logic" and root not in STDLIB and root != "mcp_notebook":
            if root not in THIRD_PARTY[own] or not inner.startswith(JUPYTER_CORE_USERS):
                found.append(f"{where}: pure logic uses the stdlib (and jupyter_core for discovery) only")
        elif own in THIRD_PARTY and own != "model" and root not in STDLIB | THIRD_PARTY[own] | {"mcp_notebook"}:
            found.append(f"{where}: the {own} layer's third-party packages are {sorted(THIRD_PARTY[own])}")
        if root == "mcp_notebook" and imp.target != "mcp_notebook":
            target_layer = layer_of(imp.target)
            if target_layer is not None and RANK[target_layer] > RANK[own]:
                found.append(f"{where}: the {own} layer may not import the later {target_layer} layer")
    return found


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


KNOWN = frozenset(_dotted(p) for p in _modules())


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_module_imports_respect_the_layers(path: Path) -> None:
    found = violations(
        _dotted(path), path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py", known=KNOWN
    )
    assert found == []


def _runtime_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _modules():
        module = _dotted(path)
        source = path.read_text(encoding="utf-8")
        targets = {
            imp.target
            for imp in imports_of(module, source, is_package=path.name == "__init__.py", known=KNOWN)
            if not imp.type_only and imp.target in KNOWN and imp.target != module
        }
        graph[module] = targets - {"mcp_notebook", "lsp_bridge"}  # the package facades import lazily
    return graph


def _cycle_from(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_runtime_imports_form_no_circle() -> None:
    assert _cycle_from(_runtime_graph()) is None


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return start == goal


def type_only_circles() -> set[tuple[str, str]]:
    """Each type-only import A → B where B leads back to A at run time: a circle only the type checker sees."""
    graph = _runtime_graph()
    found = set()
    for path in _modules():
        module = _dotted(path)
        for imp in imports_of(
            module, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py", known=KNOWN
        ):
            if imp.type_only and imp.target in KNOWN and imp.target != module and _reaches(graph, imp.target, module):
                found.add((module, imp.target))
    return found


def test_the_only_type_only_circles_are_the_ones_the_architecture_lists() -> None:
    assert type_only_circles() == ALLOWED_TYPE_ONLY_CIRCLES


# -- the checker itself can fail ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "source", "complaint"),
    [
        ("mcp_notebook.sources.summaries", "from ..ipython import magics\n", "may not import the later IPython"),
        ("mcp_notebook.sources.summaries", "from ..ipython.magics import MCPMagics\n", "may not import the later"),
        ("mcp_notebook.registry", "from .protocol import server\n", "may not import the later protocol seam"),
        ("mcp_notebook.registry", "from mcp_notebook.protocol.server import create_server\n", "may not import"),
        ("mcp_notebook.models", "import anyio\n", "stdlib only"),
        ("mcp_notebook.naming", "import nbformat\n", "belongs to the sources layer"),
        ("mcp_notebook.sources.cells", "from IPython import get_ipython\n", "belong to mcp_notebook/ipython/"),
        ("mcp_notebook.config", "import mcp\n", "the MCP SDK is imported only"),
        ("mcp_notebook.api", "def f():\n    from mcp.client import Client\n", "the MCP SDK is imported only"),
        ("mcp_notebook.client", "from lsp_bridge import server\n", "never imports lsp_bridge"),
        ("mcp_notebook.protocol.server", "import pygls\n", "belong to lsp_bridge"),
        ("mcp_notebook.transports.http", "import tornado.web\n", "belong to mcp_notebook/jupyter/"),
        ("mcp_notebook.cli", "from jupyter_server.utils import url_path_join\n", "belong to mcp_notebook/jupyter/"),
        ("mcp_notebook.jupyter.app", "from IPython import get_ipython\n", "belong to mcp_notebook/ipython/"),
        ("mcp_notebook.jupyter.host", "from ..ipython import magics\n", "may not import the later IPython"),
        ("mcp_notebook.jupyter.host", "import mcp_types\n", "the MCP SDK is imported only"),
        (
            "mcp_notebook.sources.cells",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..protocol import convert\n",
            "may not import",
        ),
        ("mcp_notebook.brand_new", "import os\n", "has no layer"),
        (
            "lsp_bridge.server",
            "from mcp_notebook.sources.folder import NotebookFolderSource\n",
            "the bridge may use only",
        ),
        ("lsp_bridge.server", "from mcp_notebook.ipython import magics\n", "the bridge may use only"),
        ("lsp_bridge.server", "import IPython\n", "the bridge speaks to mcp_notebook's client"),
        ("lsp_bridge.server", "import starlette\n", "the bridge's own third-party packages"),
        ("lsp_bridge.slashline", "import lsprotocol.types\n", "is pure"),
        ("lsp_bridge.slashline", "from mcp_notebook.catalog.pool import ClientPool\n", "is pure"),
        ("mcp_notebook.ranking", "from .client import PromptClient\n", "may not import"),
        ("lsp_bridge.server", "from mcp_notebook import connect\n", "by climbing to mcp_notebook"),
        ("lsp_bridge.server", "from mcp_notebook import __version__\n", "by climbing to mcp_notebook"),
        ("mcp_notebook.protocol.server", "from .. import __version__\n", "by climbing to mcp_notebook"),
        ("mcp_notebook.transports.limits", "from .. import settings\n", "by climbing to mcp_notebook"),
        ("mcp_notebook.transports.limits", "from mcp_notebook import settings\n", "by climbing to mcp_notebook"),
        ("mcp_notebook.cli", "from . import __version__\n", "by climbing to mcp_notebook"),
        ("mcp_notebook.ipython.forms.picker", "from .. import servers\n", "by climbing to mcp_notebook.ipython"),
        ("mcp_notebook.naming", "import jupyter_core.paths\n", "jupyter_core for discovery"),
        ("mcp_notebook.registry", "import anyio\n", "the state layer's third-party packages"),
        ("mcp_notebook.sources.folder", "import starlette\n", "the sources layer's third-party packages"),
        ("mcp_notebook.protocol.server", "import uvicorn\n", "the protocol seam layer's third-party packages"),
        ("mcp_notebook.config", "import pydantic_core\n", "the MCP SDK is imported only"),
    ],
)
def test_a_forbidden_import_fails_the_check(module: str, source: str, complaint: str) -> None:
    known = KNOWN | {"mcp_notebook.ipython.magics", "mcp_notebook.protocol.server", "mcp_notebook.protocol.convert"}
    found = violations(module, source, known=known)
    assert any(complaint in line for line in found), found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("mcp_notebook.sources.cells", "from ..rendering import PLACEHOLDER_PATTERN\nfrom .fields import to_text\n"),
        ("mcp_notebook.ipython.magics", "from ..protocol import convert\nimport IPython\n"),
        ("mcp_notebook.protocol.server", "import mcp\nfrom ..version import __version__\n"),
        ("mcp_notebook.cli", "from . import settings\nfrom .version import __version__\n"),
        ("mcp_notebook.ipython.widgets", "from . import servers\n"),
        ("lsp_bridge.server", "from mcp_notebook.client import PromptClient\nimport pygls\n"),
        ("lsp_bridge.server", "from mcp_notebook.version import __version__\n"),
        (
            "lsp_bridge.slashline",
            "from mcp_notebook.ranking import is_magic\nfrom mcp_notebook.models import PromptSpec\n",
        ),
        ("mcp_notebook.discovery", "from jupyter_core.paths import jupyter_runtime_dir\n"),
        ("mcp_notebook.sources.watch", "import anyio\nimport watchfiles\n"),
        ("mcp_notebook.transports.http", "import uvicorn\nfrom starlette.types import Scope\n"),
    ],
)
def test_an_allowed_import_passes_the_check(module: str, source: str) -> None:
    assert violations(module, source, known=KNOWN) == []


def test_a_runtime_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle_from(graph) == ["a", "b", "c", "a"]
    assert _cycle_from({"a": {"b"}, "b": set()}) is None


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, mcp_notebook; heavy = sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'IPython', "
        "'ipywidgets', 'pygls', 'nbformat', 'anyio') if m in sys.modules); print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_circle_made_type_only_is_still_found() -> None:
    graph = {"a": {"b"}, "b": set()}
    assert _reaches(graph, "a", "b") and not _reaches(graph, "b", "a")


def test_a_forbidden_import_added_to_a_real_module_fails_the_layering_test(tmp_path: Path) -> None:
    """The two imports the layering once missed, added to copies of the real modules, fail the real test."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    shutil.copy2(Path(__file__), tmp_path / "tests" / "test_layers.py")
    for module, line in (
        ("sources/summaries.py", "from ..ipython import magics"),
        ("registry.py", "from .protocol import server"),
    ):
        path = tmp_path / "mcp_notebook" / module
        path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _added():\n    {line}\n", encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-k",
            "respect",
            str(tmp_path / "tests" / "test_layers.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 1, run.stdout[-3000:]
    assert "2 failed" in run.stdout, run.stdout[-3000:]
    assert "mcp_notebook.sources.summaries" in run.stdout and "may not import the later IPython layer" in run.stdout
    assert "mcp_notebook.registry" in run.stdout and "may not import the later protocol seam layer" in run.stdout
