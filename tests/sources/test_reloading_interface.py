"""The reloader drives its folder source through the source's public interface (`Reloadable`), nothing private."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources import reloading
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.reloading import Reloadable


def private_uses(source: str) -> list[str]:
    """Each `x._name` in `source` where `x` is not `self` (nor a dunder): another object's private member."""
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]


def test_the_reloader_touches_nothing_private_of_another_object() -> None:
    assert private_uses(inspect.getsource(reloading)) == []


def test_what_the_reloader_asks_of_a_source_is_public_and_the_folder_source_has_it(tmp_path: Path) -> None:
    members = [name for name in vars(Reloadable) if not name.startswith("_")]
    assert sorted(members) == [
        "accepts",
        "follow_swap",
        "given_paths",
        "reload",
        "rescan",
        "served_files",
        "served_folders",
        "skills",
    ]
    write(tmp_path / "one.ipynb", notebook(markdown("text", {"prompt": "one"})))
    source = NotebookFolderSource([tmp_path], PromptRegistry())
    for name in members:
        assert inspect.getattr_static(NotebookFolderSource, name) is not None
    assert source.given_paths == (tmp_path,) and source.served_folders == (tmp_path.resolve(),)
    assert source.served_files == () and source.accepts(tmp_path / "two.ipynb")
    assert not source.follow_swap()


def test_a_private_use_is_found() -> None:
    assert private_uses("def f(source):\n    source._reload([])\n    self._x = 1\n    type(x).__name__\n") == [
        "line 2: source._reload"
    ]
