"""Every third-party distribution the product imports is declared in pyproject.toml, with a lower bound.

Each import of mcp_notebook/ and lsp_bridge/ (wherever it stands: in a function, under `TYPE_CHECKING`) is
mapped to the distributions that provide it, as installed; one of them must be declared. The Jupyter Server
extension (mcp_notebook/jupyter/) may also rely on the `jupyter` extra, which installing it needs. Declaring
a package that merely comes along with another (pydantic with mcp) is not enough to be left out: we use its
API ourselves, so its range is ours to state and to test (.ci/lowest-setup.sh installs every lower bound).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OWN = frozenset({"mcp_notebook", "lsp_bridge"})
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
EXTRA_USERS = {"jupyter": "mcp_notebook/jupyter/"}  # the extra, and the modules that may rely on it


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(pyproject: Mapping[str, object]) -> dict[str, dict[str, str]]:
    """The declared requirements by where they apply ("" for the dependencies, else the extra): name → spec."""
    project = pyproject["project"]
    assert isinstance(project, dict)
    groups = {"": project["dependencies"], **{extra: project["optional-dependencies"][extra] for extra in EXTRA_USERS}}
    return {
        group: {normalized(re.split(r"[<>=!~;\[ ]", line)[0]): line for line in lines}
        for group, lines in groups.items()
    }


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of the third-party modules `path` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found - STDLIB - OWN


def undeclared(
    imports: Mapping[str, Iterable[str]],
    providers: Mapping[str, list[str]],
    requirements: Mapping[str, Mapping[str, str]],
) -> list[str]:
    """Each import (module → the files importing it) that no declared distribution provides, in words."""
    problems: list[str] = []
    for module, files in sorted(imports.items()):
        dists = {normalized(dist) for dist in providers.get(module, [])}
        if not dists:
            problems.append(f"{module} (imported by {sorted(files)[0]}) comes from no installed distribution")
            continue
        for file in sorted(files):
            groups = [""] + [extra for extra, users in EXTRA_USERS.items() if file.startswith(users)]
            if not any(dists & requirements[group].keys() for group in groups):
                where = "the dependencies" + "".join(f" or the {g!r} extra" for g in groups[1:])
                problems.append(f"{file} imports {module}, but none of {sorted(dists)} is in {where}")
                break
    return problems


def _product_imports() -> dict[str, set[str]]:
    imports: dict[str, set[str]] = {}
    for package in sorted(OWN):
        for path in sorted((ROOT / package).rglob("*.py")):
            for module in third_party_imports(path):
                imports.setdefault(module, set()).add(path.relative_to(ROOT).as_posix())
    return imports


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_import_of_the_product_is_a_declared_distribution() -> None:
    assert undeclared(_product_imports(), packages_distributions(), declared(PYPROJECT)) == []


def test_the_distributions_the_sdk_brings_along_are_declared_too() -> None:
    # Named by the issue that found them undeclared; the check above would catch any other.
    runtime = declared(PYPROJECT)[""]
    for name in ("pydantic-core", "pydantic", "mcp-types", "httpx2", "opentelemetry-api", "jupyter-core"):
        assert name in runtime


@pytest.mark.parametrize("group", ["", *EXTRA_USERS])
def test_every_declared_requirement_has_a_lower_bound(group: str) -> None:
    # .ci/lowest-setup.sh installs each at its lower bound: a requirement without one has no tested floor.
    for line in declared(PYPROJECT)[group].values():
        assert re.search(r">=\s*[0-9]", line), f"{line!r}: declare the lowest version it is tested with (>=X)"


# -- the check itself can fail -----------------------------------------------------------------------------------


def test_an_import_of_an_undeclared_distribution_is_named() -> None:
    requirements = {"": {"mcp": "mcp>=2.3"}, "jupyter": {"jupyter-server": "jupyter_server>=2.4"}}
    providers = {"mcp": ["mcp"], "yaml": ["PyYAML"], "jupyter_server": ["jupyter_server"], "mystery": []}
    imports = {
        "mcp": ["mcp_notebook/cli.py"],
        "yaml": ["mcp_notebook/config.py"],
        "jupyter_server": ["mcp_notebook/jupyter/app.py", "mcp_notebook/service.py"],
        "mystery": ["lsp_bridge/server.py"],
    }
    assert undeclared(imports, providers, requirements) == [
        "mcp_notebook/service.py imports jupyter_server, but none of ['jupyter-server'] is in the dependencies",
        "mystery (imported by lsp_bridge/server.py) comes from no installed distribution",
        "mcp_notebook/config.py imports yaml, but none of ['pyyaml'] is in the dependencies",
    ]


def test_imports_are_found_wherever_they_stand(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import os\nfrom typing import TYPE_CHECKING\nimport pydantic_core.core_schema\nfrom . import x\n"
        "if TYPE_CHECKING:\n    from IPython import InteractiveShell\n"
        "def f():\n    import mcp_notebook.models\n    from opentelemetry import trace\n",
        encoding="utf-8",
    )
    assert third_party_imports(module) == {"pydantic_core", "IPython", "opentelemetry"}
