"""Prompts taken from the persistent index: only the listing is read at start, and the rest renders exactly
as the notebook itself would."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from notebook_dicts import PNG_1X1, WAV_SILENCE, code, display, markdown, notebook, raw, stream, write

from mcp_notebook.exceptions import MCPNotebookError
from mcp_notebook.models import Deferred, PromptSpec, RenderedPrompt
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources import index as index_module
from mcp_notebook.sources import loading as loading_module
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.index import FILE_NAME

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def files_are_never_too_recent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "RACY_SECONDS", -1.0)


def _serve(folder: Path, cache: Path | None) -> tuple[PromptRegistry, NotebookFolderSource]:
    registry = PromptRegistry()
    source = NotebookFolderSource([folder], registry, index_folder=cache)
    source.scan()
    source.wait_for_index(timeout=30)
    return registry, source


def _values(spec: PromptSpec) -> dict[str, str]:
    values = {}
    for argument in spec.arguments:
        values[argument.name] = argument.completions[0] if argument.completions else f"value of {argument.name}"
    return values


def _rendered(spec: PromptSpec, source: NotebookFolderSource) -> RenderedPrompt | str:
    try:
        return render_prompt(spec, _values(spec), read_file=source.read_file)
    except MCPNotebookError as error:  # refused the same way from both, or the test fails
        return f"{type(error).__name__}: {error}"


_TEXT = {"text/plain": "a table"}
_ANNOTATED = {"audience": ["user"], "priority": 0.5}

# One notebook per way of writing a prompt cell (the notebook prompt format), and one with them all.
TABLE: dict[str, list[dict[str, Any]]] = {
    "placeholders": [markdown("Summarize {{topic}} for {{audience}}.", {"prompt": "summarize"})],
    "declared": [
        markdown(
            "Review {{topic}} in {{style}}.",
            {
                "prompt": "review",
                "title": "Review",
                "description": "Reviews a topic",
                "arguments": [
                    {"name": "topic", "description": "What", "completions": ["code", "docs"]},
                    {"name": "style", "default": "prose", "required": False},
                    {"name": "asked", "description": "Who asks?", "ask": True},
                ],
            },
        )
    ],
    "several cells": [
        markdown("## First\n\nPart one of {{x}}", {"prompt": "multi"}),
        markdown("An answer", {"prompt": "multi", "role": "assistant"}),
        raw("Raw text {{x}}", {"prompt": "multi"}),
    ],
    "tags": [markdown("Tagged {{who}}", tags=["prompt:tagged", "role:user"])],
    "code with outputs": [
        code(
            "print('{{what}}')",
            {"prompt": "plot"},
            outputs=[stream("hello\n"), display({"image/png": PNG_1X1, **_TEXT}), display({"audio/wav": WAV_SILENCE})],
        )
    ],
    "source hidden": [
        code("secret()", {"prompt": "hidden", "source": False}, outputs=[display(_TEXT, "execute_result")])
    ],
    "attachment": [
        markdown(
            "See ![dot](attachment:dot.png)", {"prompt": "attached"}, attachments={"dot.png": {"image/png": PNG_1X1}}
        )
    ],
    "resource and link": [
        markdown(
            "Use the data",
            {
                "prompt": "embedded",
                "resource": {"path": "data/{{name}}.csv"},
                "link": {"uri": "https://example.org/{{name}}", "name": "{{name}}"},
            },
        ),
        markdown("Fixed", {"prompt": "fixed", "resource": {"path": "data/sales.csv"}}),
    ],
    "meta, icons, annotations": [
        markdown(
            "Annotated {{a}}",
            {
                "prompt": "annotated",
                "_meta": {"vendor/x": {"deep": [1, 2]}},
                "icons": [{"src": "https://example.org/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
                "annotations": _ANNOTATED,
            },
        )
    ],
    "malformed": [
        markdown("Bad {{x}}", {"prompt": "bad", "arguments": [{"name": 5}, {"name": "ok"}], "role": "robot"}),
        markdown("No name", {"prompt": ""}),
        markdown("Clash", {"prompt": "summarize"}),
    ],
}


def _write_table(folder: Path) -> None:
    for index, cells in enumerate(TABLE.values()):
        write(folder / f"case{index}.ipynb", notebook(*cells))
    write(folder / "all" / "everything.ipynb", notebook(*(cell for cells in TABLE.values() for cell in cells)))
    write(folder / "no_language.ipynb", notebook(*TABLE["code with outputs"], language=None))
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "sales.csv").write_text("region,total\nnorth,3\n")
    (folder / "all" / "data").mkdir(exist_ok=True)
    (folder / "all" / "data" / "sales.csv").write_text("region,total\nsouth,4\n")


def _examples(folder: Path) -> None:
    shutil.copytree(EXAMPLES, folder, dirs_exist_ok=True)


@pytest.mark.parametrize("make", [_examples, _write_table], ids=["examples", "generated table"])
def test_prompts_from_the_index_render_exactly_as_those_built_from_the_notebooks(
    tmp_path: Path, make: Callable[[Path], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "served"
    make(folder)
    cache = tmp_path / "cache"
    eager_registry, eager = _serve(folder, cache)
    built: list[str] = []
    real = loading_module.prompts_from_notebook
    monkeypatch.setattr(
        loading_module, "prompts_from_notebook", lambda data, **kw: built.append(kw["origin"]) or real(data, **kw)
    )

    lazy_registry, lazy = _serve(folder, cache)

    assert built == []  # every notebook came from the index...
    lazy_prompts = lazy_registry.snapshot().prompts
    assert lazy_prompts and all(isinstance(spec.messages, Deferred) for spec in lazy_prompts)  # ...messages unread
    assert lazy_registry.snapshot().warnings == eager_registry.snapshot().warnings
    assert lazy_registry.snapshot().fingerprint == eager_registry.snapshot().fingerprint
    for spec in eager_registry.snapshot().prompts:
        stored = lazy_registry.snapshot().get(spec.name)
        assert stored is not None
        assert _rendered(stored, lazy) == _rendered(spec, eager), spec.name
        assert stored == spec
    assert lazy.list_resources() == eager.list_resources()
    for resource in eager.list_resources().items:
        assert lazy.read_resource(resource.uri) == eager.read_resource(resource.uri)
    assert built == []  # and the messages and cells came from the index as well


def _stamp_of(path: Path) -> tuple[int, int, int, int]:
    status = path.stat()
    return (status.st_mtime_ns, status.st_size, status.st_ino, status.st_ctime_ns)


@pytest.mark.parametrize("loss", ["replaced by a newer file's entry", "damaged", "deleted"])
def test_messages_whose_index_entry_is_lost_after_the_start_are_read_from_the_file(tmp_path: Path, loss: str) -> None:
    folder = tmp_path / "served"
    other_prompt = markdown("Another prompt", {"prompt": "q"})
    target = write(folder / "n.ipynb", notebook(markdown("Old words about {{topic}}.", {"prompt": "p"}), other_prompt))
    cache = tmp_path / "cache"
    _serve(folder, cache)
    registry, source = _serve(folder, cache)  # from the index; the messages are not read yet
    spec = registry.snapshot().get("p")
    assert spec is not None and isinstance(spec.messages, Deferred)
    # Meanwhile the file changes and another server stores it (or the entry is damaged or gone).
    write(target, notebook(other_prompt, markdown("New words about {{topic}}.", {"prompt": "p"})))  # in another order
    with sqlite3.connect(cache / FILE_NAME) as db:
        if loss == "replaced by a newer file's entry":
            other = NotebookFolderSource([folder], PromptRegistry(), index_folder=cache)
            other.scan()
            other.wait_for_index(timeout=30)
            assert db.execute("SELECT mtime_ns, size, inode, ctime_ns FROM notebooks").fetchone() == _stamp_of(target)
        elif loss == "damaged":
            db.execute("UPDATE notebooks SET body = ?", (b"\x80\x05garbage",))
        else:
            db.execute("DELETE FROM notebooks")

    rendered = render_prompt(spec, {"topic": "bees"})

    assert rendered.messages[0].content.text == "New words about bees."  # type: ignore[union-attr]
    assert len(source.list_resources().items) == 2


def test_an_index_written_by_an_older_layout_is_laid_out_anew_and_used(tmp_path: Path) -> None:
    folder = tmp_path / "served"
    write(folder / "n.ipynb", notebook(markdown("Words about {{topic}}.", {"prompt": "p"})))
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    with sqlite3.connect(cache / FILE_NAME) as db:  # the layout of the first release of the index
        db.execute(
            "CREATE TABLE notebooks (root TEXT NOT NULL, key TEXT NOT NULL, format TEXT NOT NULL, mtime_ns INTEGER"
            " NOT NULL, size INTEGER NOT NULL, inode INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, prompts BLOB NOT"
            " NULL, PRIMARY KEY (root, key))"
        )
    os.chmod(cache / FILE_NAME, 0o600)

    _serve(folder, cache)
    registry, _ = _serve(folder, cache)

    spec = registry.snapshot().get("p")
    assert spec is not None and isinstance(spec.messages, Deferred)
    assert render_prompt(spec, {"topic": "ants"}).messages[0].content.text == "Words about ants."  # type: ignore[union-attr]


def test_a_deferred_tuple_is_its_tuple_in_every_way() -> None:
    class Parts:
        calls = 0

        def part(self, position: int) -> tuple[Any, ...]:
            Parts.calls += 1
            return ((1, 2, 3), ())[position]

        def made(self) -> bool:
            return False

    lazy: Deferred[int] = Deferred(Parts(), 0)
    assert Parts.calls == 0
    assert lazy == (1, 2, 3) and (1, 2, 3) == lazy and lazy != (1, 2)  # noqa: SIM300 (both sides)
    assert lazy == Deferred(Parts(), 0)
    assert list(lazy) == [1, 2, 3] and len(lazy) == 3 and lazy[1] == 2 and lazy[1:] == (2, 3) and 3 in lazy
    assert hash(lazy) == hash((1, 2, 3)) and repr(lazy) == "(1, 2, 3)" and bool(lazy) and not Deferred(Parts(), 1)
    assert lazy + (4,) == (1, 2, 3, 4) and (0,) + lazy == (0, 1, 2, 3)  # noqa: RUF005 (the operators)
    import pickle

    assert pickle.loads(pickle.dumps(lazy)) == (1, 2, 3) and type(pickle.loads(pickle.dumps(lazy))) is tuple


def test_a_deferred_tuple_asks_its_parts_once_and_is_made_from_then_on() -> None:
    class Parts:
        calls = 0

        def part(self, position: int) -> tuple[Any, ...]:
            Parts.calls += 1
            return ("a", "b")

        def made(self) -> bool:
            return False  # whatever the parts say, the tuple that has its items is made

    lazy: Deferred[str] = Deferred(Parts(), 0)
    assert not lazy.made
    assert list(lazy) == ["a", "b"]
    assert lazy.made
    assert list(lazy) == ["a", "b"] and lazy[0] == "a" and len(lazy) == 2
    assert Parts.calls == 1


def test_every_host_indexes_with_collection_off_and_freezes_what_it_built(tmp_path: Path) -> None:
    """The stdio server (`NotebookService`) and the ASGI app (HTTP, each `--workers` process) share `first_scan`."""
    import gc

    import anyio

    from mcp_notebook.asgi import ServeSettings, create_app
    from mcp_notebook.service import ServiceSettings

    write(tmp_path / "n.ipynb", notebook(markdown("Hi {{who}}", {"prompt": "hi"})))
    seen: list[tuple[bool, int]] = []
    real = NotebookFolderSource.scan

    def scan(self: NotebookFolderSource, **options: Any) -> None:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        real(self, **options)

    summaries: list[list[str]] = []
    before = gc.get_freeze_count()

    async def start_and_stop() -> None:
        settings = ServeSettings(service=ServiceSettings(paths=(str(tmp_path),), watch=False))
        app = create_app(settings, on_indexed=summaries.append)
        sent: list[dict[str, Any]] = []
        inbox = [{"type": "lifespan.startup"}]
        started = anyio.Event()

        async def receive() -> dict[str, Any]:
            if inbox:
                return inbox.pop(0)
            await started.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "lifespan.startup.complete":
                started.set()

        with anyio.fail_after(30):
            await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
        assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(NotebookFolderSource, "scan", scan)
            anyio.run(start_and_stop)
        assert seen == [(False, before)]  # no collection while it scanned
        assert gc.isenabled() and gc.get_freeze_count() > before  # and what it built is frozen
        assert summaries and summaries[0][0].startswith("1 prompt from 1 notebook")
    finally:
        gc.unfreeze()
