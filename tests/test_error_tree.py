"""One error tree: every error class of both packages is drawn in mcp_notebook/exceptions.py, under one root.

The test imports every module of mcp_notebook and lsp_bridge and looks at each exception class defined
there. A class of the tree must be defined in `exceptions`, listed in its `__all__` and drawn in its
docstring. The only other exception classes are signals that never leave the module pair that raises and
catches them; each is named below with the reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import lsp_bridge
import mcp_notebook
from mcp_notebook import exceptions

# Internal signals: raised and caught inside one part, never shown to a user or sent to a client as such.
INTERNAL = {
    "mcp_notebook.commands.usage.UsageProblem": "a command's usage error, said by `cli.main` in one line, exit code 2",
    "mcp_notebook.runtime._Interrupted": "Ctrl-C carried across the runtime thread, re-raised as KeyboardInterrupt",
    "mcp_notebook.ipython.subcommands._HelpShown": "argparse printed the help; the subcommand returns",
    "mcp_notebook.sources.sandbox.FileRefusal": "why a file read was refused; the folder source words it per case",
    "mcp_notebook.sources.skill_format.SkillFormatError": "why a SKILL.md is not served; said as a warning",
    "mcp_notebook.protocol.screening.UnreadableMessage": "not a request; answered with its JSON-RPC code",
    "mcp_notebook.ipython.namespace._OverTime": "formatting a variable ran past its budget; worded per variable",
    "mcp_notebook.transports.limits._HeadTooLarge": "stops the parser at a head over the limit; answered with 431",
    "mcp_notebook.checking.bounded_regex.RegexTimeout": "a prompt test's search ran past its deadline; a failed test",
    "mcp_notebook.checking.prompt_tests._Failed": "a prompt test's expectation not met; reported as its failure",
    "mcp_notebook.checking.pytest_plugin.PromptTestFailed": "a prompt test failed; pytest shows its report",
}


def _modules() -> list[str]:
    names = []
    for package in (mcp_notebook, lsp_bridge):
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
            if not info.name.endswith(".__main__"):  # importing it would run the command
                names.append(info.name)
    return sorted(names)


def _defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        if name.startswith("mcp_notebook.jupyter"):
            pytest.importorskip("jupyter_server")
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{attribute}"] = value
    return found


def test_the_walk_sees_every_module() -> None:
    modules = _modules()
    assert "mcp_notebook.ipython.live_magics" in modules
    assert "lsp_bridge.server" in modules
    assert len(modules) > 80


def test_every_error_class_is_drawn_in_the_one_tree() -> None:
    drawn = exceptions.__doc__ or ""
    for qualified, cls in _defined_exceptions().items():
        if qualified in INTERNAL:
            continue
        assert cls.__module__ == "mcp_notebook.exceptions", f"{qualified} belongs in mcp_notebook/exceptions.py"
        assert issubclass(cls, exceptions.MCPNotebookError), f"{qualified} is not under MCPNotebookError"
        assert cls.__name__ in exceptions.__all__, f"{qualified} is not in exceptions.__all__"
        assert re.search(rf"^[ │├└─]*{cls.__name__}\b", drawn, re.M), (
            f"{qualified} is not drawn in the tree of exceptions.py"
        )


def test_every_name_the_tree_draws_exists_under_the_root() -> None:
    for name in exceptions.__all__:
        assert issubclass(getattr(exceptions, name), exceptions.MCPNotebookError), name


def test_the_internal_signals_exist_and_stay_out_of_the_tree() -> None:
    defined = _defined_exceptions()
    for qualified in INTERNAL:
        assert qualified in defined, f"{qualified} is gone: remove it from INTERNAL"
        assert not issubclass(defined[qualified], exceptions.MCPNotebookError), qualified


@pytest.mark.parametrize(
    ("old_home", "name"),
    [
        ("mcp_notebook.ipython.servers", "AmbiguousPromptError"),
        ("mcp_notebook.ipython.live_magics", "MagicExecutionError"),
        ("mcp_notebook.sources.kernel", "PromptCellError"),
        ("mcp_notebook.sources.magics", "UnknownMagicError"),
        ("mcp_notebook.sources.live_policy", "InvalidMagicArgumentError"),
    ],
)
def test_errors_moved_into_the_tree_are_still_importable_where_they_were(old_home: str, name: str) -> None:
    assert getattr(importlib.import_module(old_home), name) is getattr(exceptions, name)


def _drawn_parents() -> dict[str, str | None]:
    """Each class the docstring draws, with the class drawn above it (None for the root)."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (exceptions.__doc__ or "").splitlines():
        match = re.match(r"^(\s*[│├└─ ]*)([A-Z]\w+Error)\b", line)
        if match is None:
            continue
        depth, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((depth, name))
    return parents


def test_the_tree_is_drawn_as_the_classes_inherit() -> None:
    parents = _drawn_parents()
    assert parents.get("MCPNotebookError", "missing") is None and len(parents) == len(exceptions.__all__)
    for name, parent in parents.items():
        cls = getattr(exceptions, name)
        if parent is not None:
            assert getattr(exceptions, parent) in cls.__bases__, f"{name} is drawn under {parent}, not a base of it"


def test_no_error_class_hides_inside_a_function_or_a_class() -> None:
    """The walk sees module attributes; a class defined in a function or class body would slip past it."""
    nested = []
    for package in (mcp_notebook, lsp_bridge):
        for path in Path(package.__path__[0]).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for outer in ast.walk(tree):
                if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for inner in ast.walk(outer):
                        if inner is not outer and isinstance(inner, ast.ClassDef):
                            bases = " ".join(ast.unparse(base) for base in inner.bases)
                            if re.search(r"(Error|Exception|Interrupt|Exit)\b", bases):
                                nested.append(f"{path.name}: {outer.name}.{inner.name}({bases})")
    assert nested == []
