"""The benchmark corpus is deterministic, valid nbformat, and read the same way by the SDK baseline."""

from __future__ import annotations

from pathlib import Path

import nbformat

from benchmarks.baseline_server import read_cell_prompts
from benchmarks.corpus import create_corpus, revise_notebook


def test_the_same_sizes_give_byte_identical_notebooks(tmp_path: Path) -> None:
    first = create_corpus(tmp_path / "a", notebooks=3, prompts=2)
    second = create_corpus(tmp_path / "b", notebooks=3, prompts=2)
    assert [p.name for p in first.notebooks] == [p.name for p in second.notebooks]
    assert [p.read_bytes() for p in first.notebooks] == [p.read_bytes() for p in second.notebooks]


def test_corpus_notebooks_are_valid_nbformat(tmp_path: Path) -> None:
    corpus = create_corpus(tmp_path, notebooks=2, prompts=3)
    for path in corpus.notebooks:
        nbformat.validate(nbformat.read(path, as_version=4))  # type: ignore[no-untyped-call]


def test_every_prompt_name_is_unique_and_read_back_by_the_baseline(tmp_path: Path) -> None:
    corpus = create_corpus(tmp_path, notebooks=4, prompts=3)
    prompts = read_cell_prompts([tmp_path])
    assert corpus.size == 12 == len(set(corpus.prompt_names))
    assert [p.name for p in prompts] == list(corpus.prompt_names)
    assert [a["name"] for a in prompts[0].arguments] == ["topic", "audience"]


def test_a_revised_notebook_changes_only_its_first_prompt_description(tmp_path: Path) -> None:
    corpus = create_corpus(tmp_path / "corpus", notebooks=2, prompts=2)
    before = {p.name: p for p in read_cell_prompts([corpus.folder])}
    revise_notebook(corpus, 1, 7, scratch=tmp_path)
    after = {p.name: p for p in read_cell_prompts([corpus.folder])}
    changed = [name for name in before if before[name] != after[name]]
    assert changed == [corpus.prompt_names[2]]
    assert (after[corpus.prompt_names[2]].description or "").endswith(" Rev 7.")
    assert not list(tmp_path.glob(".bench-*")), "the scratch file was renamed away"
