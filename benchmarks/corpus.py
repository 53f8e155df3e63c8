"""A deterministic corpus of notebooks that publish prompts, for the benchmarks.

`create_corpus(folder, notebooks=N, prompts=M)` writes N notebooks of M prompt
cells each (plus two ordinary cells per notebook, as real notebooks have). Every
prompt uses the canonical metadata form of the notebook prompt format, with an
explicit title, description and two arguments (one required, one optional with a
default), and names that are unique across the corpus, so that the bare SDK
server can serve exactly the same prompts under exactly the same names.

Run as a script to write a corpus by hand:
`python -m benchmarks.corpus /tmp/corpus --notebooks 1000 --prompts 20`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Corpus",
    "create_corpus",
    "create_notebook",
    "prompt_arguments_for",
    "prompt_name",
    "revise_notebook",
]

# The text of every prompt cell; `{{topic}}` and `{{audience}}` are the arguments.
_PROMPT_TEXT = (
    "## Review {index}\n"
    "\n"
    "Review {{{{topic}}}} for {{{{audience}}}}. Start with a two-sentence summary, then list the three\n"
    "most important findings, each with the evidence from notebook {notebook} that supports it.\n"
    "Keep the tone neutral, avoid jargon the audience would not know, and end with open questions.\n"
    "\n"
    "- scope: only what notebook {notebook} shows\n"
    "- length: at most 300 words\n"
)


@dataclass(frozen=True, slots=True)
class Corpus:
    """What `create_corpus` wrote: the folder, the notebook files and every prompt name."""

    folder: Path
    notebooks: tuple[Path, ...]
    prompts_per_notebook: int
    prompt_names: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.prompt_names)


def _width(count: int) -> int:
    return max(2, len(str(max(count - 1, 0))))


def prompt_name(notebook: int, prompt: int, *, notebooks: int, prompts: int) -> str:
    """The name of prompt `prompt` of notebook `notebook`, zero-padded so names sort in corpus order."""
    return f"nb{notebook:0{_width(notebooks)}d}_p{prompt:0{_width(prompts)}d}"


def prompt_arguments_for(name: str) -> dict[str, str]:
    """Argument values that render the prompt `name` fully (used by the `prompts/get` measurements)."""
    return {"topic": f"the findings of {name}", "audience": "reviewers"}


def _prompt_cell(notebook: int, prompt: int, name: str) -> dict[str, Any]:
    mcp = {
        "prompt": name,
        "title": f"Review {prompt} of notebook {notebook}",
        "description": f"Review a topic for an audience (notebook {notebook}, prompt {prompt}).",
        "arguments": [
            {"name": "topic", "description": "What to review"},
            {"name": "audience", "description": "Who reads the review", "required": False, "default": "engineers"},
        ],
    }
    return {
        "cell_type": "markdown",
        "id": f"{name}-cell",
        "metadata": {"mcp": mcp},
        "source": _PROMPT_TEXT.format(index=prompt, notebook=notebook),
    }


def _ordinary_cells(notebook: int) -> list[dict[str, Any]]:
    # Cells that publish nothing: a loader still has to read and skip them.
    intro = {
        "cell_type": "markdown",
        "id": f"intro-{notebook}",
        "metadata": {},
        "source": f"# Analysis {notebook}\n\nData exploration notes.",
    }
    code = {
        "cell_type": "code",
        "id": f"code-{notebook}",
        "metadata": {},
        "execution_count": 1,
        "source": "import statistics\nstatistics.mean([1, 2, 3, 4])",
        "outputs": [
            {"output_type": "execute_result", "execution_count": 1, "data": {"text/plain": "2.5"}, "metadata": {}}
        ],
    }
    return [intro, code]


def create_notebook(notebook: int, *, notebooks: int, prompts: int, description_suffix: str = "") -> dict[str, Any]:
    """The nbformat v4.5 document of notebook `notebook` (as JSON-ready data)."""
    cells = _ordinary_cells(notebook)
    for prompt in range(prompts):
        name = prompt_name(notebook, prompt, notebooks=notebooks, prompts=prompts)
        cell = _prompt_cell(notebook, prompt, name)
        if prompt == 0 and description_suffix:
            cell["metadata"]["mcp"]["description"] += description_suffix
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _notebook_path(folder: Path, notebook: int, notebooks: int) -> Path:
    return folder / f"analysis_{notebook:0{_width(notebooks)}d}.ipynb"


def _write_json(path: Path, document: dict[str, Any], scratch: Path | None = None) -> None:
    # Written whole to a scratch file, then renamed over the target: a watcher never reads half a file,
    # as with Jupyter's own atomic saves.
    fd, tmp = tempfile.mkstemp(prefix=".bench-", suffix=".tmp", dir=scratch or path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; a saved notebook is normally world-readable
    os.replace(tmp, path)


def create_corpus(folder: Path, *, notebooks: int, prompts: int) -> Corpus:
    """Write `notebooks` notebooks of `prompts` prompt cells each into `folder` (created if needed).

    The same arguments always give byte-identical files.
    """
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    names: list[str] = []
    for notebook in range(notebooks):
        path = _notebook_path(folder, notebook, notebooks)
        _write_json(path, create_notebook(notebook, notebooks=notebooks, prompts=prompts))
        paths.append(path)
        names.extend(prompt_name(notebook, p, notebooks=notebooks, prompts=prompts) for p in range(prompts))
    return Corpus(folder=folder, notebooks=tuple(paths), prompts_per_notebook=prompts, prompt_names=tuple(names))


def revise_notebook(corpus: Corpus, notebook: int, revision: int, *, scratch: Path) -> Path:
    """Save notebook `notebook` again with its first prompt's description changed (revision `revision`).

    The file is written in `scratch` (outside the served folder, same file system) and renamed over the
    notebook, so a watcher sees exactly one complete save. Returns the notebook's path.
    """
    document = create_notebook(
        notebook,
        notebooks=len(corpus.notebooks),
        prompts=corpus.prompts_per_notebook,
        description_suffix=f" Rev {revision}.",
    )
    path = corpus.notebooks[notebook]
    _write_json(path, document, scratch)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a benchmark corpus of notebooks that publish prompts.")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--notebooks", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=10, help="prompt cells per notebook")
    args = parser.parse_args(argv)
    corpus = create_corpus(args.folder, notebooks=args.notebooks, prompts=args.prompts)
    print(f"wrote {len(corpus.notebooks)} notebooks, {corpus.size} prompts, into {corpus.folder}")


if __name__ == "__main__":
    main()
