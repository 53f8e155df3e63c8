"""One rule for the title and description a prompt gets from its text, in every source: `{{name}}` reads `[name]`.

Clients show them as they are (Claude Code's slash menu, VS Code's picker), so
a raw template there reads "Say goodbye to {{name}}.". The folder source (what
`serve` and the Jupyter extension list) and a kernel's `%%prompt` give the
same text for the same cell.
"""

from __future__ import annotations

import pytest
from notebook_dicts import markdown, notebook

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources.cells import prompts_from_notebook
from mcp_notebook.sources.kernel import KernelPromptSource, parse_prompt_cell

TEXT = "# Goodbye {{name}}\nSay goodbye to {{ name }} from {{place}}. Then stop."


@pytest.mark.parametrize("how", ["tag", "metadata"])
def test_a_notebook_cell_reads_as_its_arguments_names(how: str) -> None:
    cell = markdown(TEXT, tags=["prompt:goodbye"]) if how == "tag" else markdown(TEXT, {"prompt": "goodbye"})
    (spec,) = prompts_from_notebook(notebook(cell), origin="nb.ipynb").prompts
    assert (spec.title, spec.description) == ("Goodbye [name]", "Say goodbye to [name] from [place].")
    assert [a.name for a in spec.arguments] == ["name", "place"]


def test_a_kernels_prompt_cell_reads_the_same() -> None:
    spec, _ = KernelPromptSource(PromptRegistry()).define(parse_prompt_cell("goodbye", TEXT))
    (folder,) = prompts_from_notebook(notebook(markdown(TEXT, {"prompt": "goodbye"})), origin="nb.ipynb").prompts
    assert (spec.title, spec.description) == (folder.title, folder.description)


def test_an_escaped_placeholder_and_a_declared_description_are_left_as_written() -> None:
    escaped = markdown("Write \\{{literal}} braces for {{x}}.", {"prompt": "p"})
    declared = markdown("Say {{x}}.", {"prompt": "q", "description": "Fills {{x}} in."})
    first, second = prompts_from_notebook(notebook(escaped, declared), origin="nb.ipynb").prompts
    assert first.description == "Write {{literal}} braces for [x]."
    assert second.description == "Fills {{x}} in."  # the author's own words are theirs
