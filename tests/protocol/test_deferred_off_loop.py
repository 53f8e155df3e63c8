"""A prompt restored from the notebook index reads its body at its first `prompts/get`: in a worker thread,
never on the event loop, which every other client of the server (or of the Jupyter server) shares."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from mcp import Client
from notebook_files import write_notebook

from mcp_notebook.models import Deferred
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources import stored as stored_module
from mcp_notebook.sources.folder import NotebookFolderSource

pytestmark = pytest.mark.usefixtures("settled_files")


def _restored(folder: Path, cache: Path) -> PromptRegistry:
    for _ in range(2):  # the first start stores the notebook, the second restores it
        registry = PromptRegistry()
        source = NotebookFolderSource([folder], registry, index_folder=cache)
        source.scan()
        source.wait_for_index(timeout=30)
        source.close()
    return registry


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_the_first_get_of_a_restored_prompt_reads_its_body_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    folder = tmp_path / "prompts"
    write_notebook(folder / "a.ipynb", [{"source": "Hello {{who}}.", "mcp": {"prompt": "greet"}}])
    registry = _restored(folder, tmp_path / "cache")
    spec = registry.snapshot().get("greet")
    assert spec is not None and isinstance(spec.messages, Deferred) and not spec.messages.made

    loads: list[threading.Thread] = []
    load = stored_module.StoredBody._load

    def recorded(body: stored_module.StoredBody) -> stored_module.Body:
        loads.append(threading.current_thread())
        return load(body)

    monkeypatch.setattr(stored_module.StoredBody, "_load", recorded)
    loop_thread = threading.current_thread()

    async with Client(create_server(registry), mode=mode) as client:
        first = await client.get_prompt("greet", {"who": "Ada"})
        again = await client.get_prompt("greet", {"who": "Grace"})

    assert [block.content.text for block in first.messages] == ["Hello Ada."]  # type: ignore[union-attr]
    assert [block.content.text for block in again.messages] == ["Hello Grace."]  # type: ignore[union-attr]
    assert len(loads) == 1 and loads[0] is not loop_thread
    assert spec.messages.made
