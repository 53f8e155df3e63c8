"""The Jupyter Server extension follows git-sync's swap of `current`, as `mcp-notebook serve` does.

The served root is a symlink, or sits under one (`--MCPNotebook.root=current`);
git-sync renames a new link over it and deletes the old checkout, three times:
each time the new checkout's prompts are served and clients are told.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import httpx2
import pytest
from e2e_processes import write_notebook
from jupyter_harness import JupyterServer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.slow

SWAP_DEADLINE = 5.0


def _checkout(root: Path, revision: int) -> Path:
    folder = root / f"rev-{revision}"
    write_notebook(folder / "greet.ipynb", [(f"Hello from revision {revision}.", {"prompt": f"greet_r{revision}"})])
    return folder


def _swap(root: Path, revision: int) -> None:
    old = Path(os.path.realpath(root / "current"))
    new = _checkout(root, revision)
    os.symlink(new.name, root / ".current.tmp")
    os.replace(root / ".current.tmp", root / "current")
    shutil.rmtree(old)


@pytest.mark.parametrize("served", ["root_dir", "MCPNotebook.root"])
async def test_the_extension_follows_every_swap_of_current(tmp_path: Path, served: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    git = tmp_path / "git"
    _checkout(git, 0)
    os.symlink("rev-0", git / "current")
    root, args = (git / "current", []) if served == "root_dir" else (git, ["--MCPNotebook.root=current"])
    with JupyterServer(root, home, args=args) as jupyter:
        async with (
            httpx2.AsyncClient(headers=jupyter.auth()) as http,
            Client(streamable_http_client(jupyter.url, http_client=http)) as client,
            client.listen(prompts_list_changed=True) as changes,
        ):
            assert [p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts] == ["greet_r0"]
            for revision in range(1, 4):
                _swap(git, revision)
                with anyio.fail_after(SWAP_DEADLINE):
                    await changes.__anext__()
                listed = await client.list_prompts(cache_mode="bypass")
                assert [p.name for p in listed.prompts] == [f"greet_r{revision}"]
