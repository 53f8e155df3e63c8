"""A first scan shared with forked children serves exactly what one process alone would."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from notebook_dicts import markdown, notebook, write
from test_index_deferred import _examples, _rendered, _write_table

from mcp_notebook.models import Deferred
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources import folder as folder_module
from mcp_notebook.sources import index as index_module
from mcp_notebook.sources import loading as loading_module
from mcp_notebook.sources import parallel
from mcp_notebook.sources.folder import NotebookFolderSource

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="shared scans fork")


@pytest.fixture(autouse=True)
def files_are_never_too_recent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "RACY_SECONDS", -1.0)


def _hostile(folder: Path) -> None:
    """Notebooks a child cannot build (the parent must load and report them) among many ordinary ones."""
    for number in range(40):
        cells = [markdown(f"Prompt {number} about {{{{topic}}}}", {"prompt": f"p{number}"})]
        if number % 7 == 0:
            cells.append(markdown("A clash", {"prompt": "shared"}))  # the same name in several notebooks
        write(folder / "many" / f"n{number:02}.ipynb", notebook(*cells))
    (folder / "broken.ipynb").write_text('{"cells": [')
    (folder / "not_a_notebook.ipynb").write_text('{"cells": 5}')
    (folder / "deep.ipynb").write_text('{"cells": [], "metadata": ' + "[" * 5000 + "]" * 5000 + "}")
    outside = folder.parent / "outside.ipynb"
    write(outside, notebook(markdown("Outside", {"prompt": "outside"})))
    (folder / "link.ipynb").symlink_to(outside)


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the children a scan forks, in order."""
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(parallel.os, "fork", fork)
    return pids


def _scan(folder: Path, workers: int, cache: Path | None = None) -> tuple[PromptRegistry, NotebookFolderSource]:
    registry = PromptRegistry()
    source = NotebookFolderSource([folder], registry, index_folder=cache)
    source.scan(workers=workers)
    source.wait_for_index(timeout=30)
    return registry, source


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("make", [_examples, _write_table, _hostile], ids=["examples", "generated table", "hostile"])
def test_a_shared_scan_serves_what_one_process_serves(
    tmp_path: Path, make: Callable[[Path], None], workers: int
) -> None:
    folder = tmp_path / "served"
    make(folder)
    alone_registry, alone = _scan(folder, 0)
    shared_registry, shared = _scan(folder, workers)

    alone_snapshot, shared_snapshot = alone_registry.snapshot(), shared_registry.snapshot()
    assert [spec.name for spec in shared_snapshot.prompts] == [spec.name for spec in alone_snapshot.prompts]
    assert shared_snapshot.warnings == alone_snapshot.warnings
    assert shared_snapshot.fingerprint == alone_snapshot.fingerprint
    assert dict(shared.errors) == dict(alone.errors)
    assert any(isinstance(spec.messages, Deferred) for spec in shared_snapshot.prompts)  # children built some
    for spec in alone_snapshot.prompts:
        built = shared_snapshot.get(spec.name)
        assert built == spec
        assert built is not None and _rendered(built, shared) == _rendered(spec, alone), spec.name
    assert shared.list_resources() == alone.list_resources()
    for resource in alone.list_resources().items:
        assert shared.read_resource(resource.uri) == alone.read_resource(resource.uri)


def test_what_children_built_is_indexed_for_the_next_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, cache = tmp_path / "served", tmp_path / "cache"
    _write_table(folder)
    first_registry, first = _scan(folder, 2, cache)
    read: list[str] = []
    real = loading_module.prompts_from_notebook
    monkeypatch.setattr(
        loading_module, "prompts_from_notebook", lambda data, **kw: read.append(kw["origin"]) or real(data, **kw)
    )

    again_registry, again = _scan(folder, 2, cache)

    assert again_registry.snapshot().fingerprint == first_registry.snapshot().fingerprint
    for spec in first_registry.snapshot().prompts:
        assert _rendered(again_registry.snapshot().get(spec.name), again) == _rendered(spec, first)  # type: ignore[arg-type]
    assert read == []  # every notebook, whichever process built it, came back from the index


def test_a_child_that_dies_leaves_its_notebooks_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[int]
) -> None:
    folder = tmp_path / "served"
    _hostile(folder)
    parent = os.getpid()
    real = NotebookFolderSource._build_stored

    def dies_in_the_child(self: NotebookFolderSource, key: str):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            os._exit(3)
        return real(self, key)

    alone_registry, _ = _scan(folder, 0)
    monkeypatch.setattr(NotebookFolderSource, "_build_stored", dies_in_the_child)
    shared_registry, _ = _scan(folder, 1)

    assert shared_registry.snapshot().fingerprint == alone_registry.snapshot().fingerprint
    assert shared_registry.snapshot().warnings == alone_registry.snapshot().warnings
    assert not any(isinstance(spec.messages, Deferred) for spec in shared_registry.snapshot().prompts)
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)  # and the child is reaped


def test_what_a_child_sent_before_it_died_is_used_and_the_rest_is_left_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[int]
) -> None:
    """A child sends its notebooks a few at a time; the frames it finished count, a frame it did not never reads."""
    folder = tmp_path / "served"
    _hostile(folder)
    parent = os.getpid()
    real = NotebookFolderSource._build_stored
    log = tmp_path / "built-in-the-child.txt"

    def dies_in_its_third_frame(self: NotebookFolderSource, key: str):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            with log.open("a") as out:
                out.write(key + "\n")
            if len(log.read_text().splitlines()) == 10:
                os._exit(3)
        return real(self, key)

    alone_registry, _ = _scan(folder, 0)
    monkeypatch.setattr(parallel, "_FRAME", 4)
    monkeypatch.setattr(NotebookFolderSource, "_build_stored", dies_in_its_third_frame)
    shared_registry, shared = _scan(folder, 1)

    snapshot = shared_registry.snapshot()
    assert snapshot.fingerprint == alone_registry.snapshot().fingerprint
    assert snapshot.warnings == alone_registry.snapshot().warnings
    from_child = {spec.origin for spec in snapshot.prompts if isinstance(spec.messages, Deferred)}
    sent = log.read_text().splitlines()[:8]  # its first two frames, of four notebooks each
    # Every notebook of those frames that loads came from the child; the broken ones, and all after, from here.
    assert from_child == {key for key in sent if key.startswith("many/")}
    assert len(from_child) >= 4
    for spec in alone_registry.snapshot().prompts:
        assert _rendered(snapshot.get(spec.name), shared) == _rendered(spec, _scan(folder, 0)[1])  # type: ignore[arg-type]
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)  # and the child is reaped


def test_children_are_used_only_when_they_pay_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _: {0, 1, 2, 3, 4, 5, 6, 7})
    assert parallel.worker_count(parallel.MIN_NOTEBOOKS - 1) == 0
    assert parallel.worker_count(parallel.MIN_NOTEBOOKS) == 3  # capped
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _: {0})
    assert parallel.worker_count(10_000) == 0  # one core: nothing to share
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _: {0, 1})
    assert parallel.worker_count(10_000) == 1
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    assert parallel.worker_count(10_000) == 0


def test_nothing_is_forked_beside_another_thread() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel.can_fork()
        assert parallel.worker_count(10_000) == 0
    finally:
        stop.set()
        other.join()


def test_the_first_scan_of_a_large_folder_is_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "served"
    for number in range(parallel.MIN_NOTEBOOKS):
        write(folder / f"n{number:03}.ipynb", notebook(markdown(f"Prompt {number}", {"prompt": f"p{number}"})))
    asked: list[int] = []
    monkeypatch.setattr(folder_module, "worker_count", lambda notebooks: asked.append(notebooks) or 1)
    registry = PromptRegistry()
    try:
        NotebookFolderSource([folder], registry).first_scan()
    finally:
        gc.unfreeze()  # what it froze is this test's alone

    assert asked == [parallel.MIN_NOTEBOOKS]
    assert len(registry.snapshot().prompts) == parallel.MIN_NOTEBOOKS
    assert any(isinstance(spec.messages, Deferred) for spec in registry.snapshot().prompts)


@pytest.mark.parametrize("workers", [0, 1])
def test_other_work_of_the_start_is_done_once_while_children_build(
    tmp_path: Path, workers: int, forked: list[int]
) -> None:
    folder = tmp_path / "served"
    _write_table(folder)
    done: list[tuple[int, int]] = []
    registry = PromptRegistry()
    NotebookFolderSource([folder], registry).scan(
        workers=workers, meanwhile=lambda: done.append((os.getpid(), len(forked)))
    )

    assert done == [(os.getpid(), workers)]  # here, once, after the children started
    assert registry.snapshot().prompts


def test_the_frames_children_wrote_are_gone_after_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, scratch = tmp_path / "served", tmp_path / "scratch"
    scratch.mkdir()
    _write_table(folder)
    monkeypatch.setattr(parallel.tempfile, "tempdir", str(scratch))
    registry, _ = _scan(folder, 2)
    assert any(isinstance(spec.messages, Deferred) for spec in registry.snapshot().prompts)  # children built some
    assert list(scratch.iterdir()) == []
