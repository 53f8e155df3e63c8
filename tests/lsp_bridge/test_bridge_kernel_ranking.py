"""A real kernel serving its magics must never push the user's configured prompts out of the menu.

`%mcp serve --all-magics` offers every magic of the kernel as a `magic.*`
prompt (well over a hundred), besides the `magic` prompt that documents any
of them. Unless the user asks for them (`magics`), the menu leaves them out;
asked for, it lists the configured servers' prompts first, then the kernel's
own (`%%prompt`) ones, then the magics, within `maxItems`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge_harness import BRIDGE, start_bridge
from kernel_harness import RealKernel
from lsprotocol import types
from notebook_files import write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

URI = "file:///work/ranking.md"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("ranking-kernel")) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("%%prompt scratch_note\nA note about {{topic}}.")
        kernel.execute("%mcp serve --all-magics")
        yield kernel


def _command(root: Path, kernel: RealKernel) -> list[str]:
    notebooks = root / "notebooks"
    write_notebook(
        notebooks / "mine.ipynb",
        [
            {"source": "Review {{file}}", "mcp": {"prompt": "review"}},
            {"source": "Summarize the notebook.", "mcp": {"prompt": "summarize"}},
        ],
    )
    config = root / "mcp.json"
    serve = [sys.executable, "-m", "mcp_notebook", "serve", str(notebooks)]
    config.write_text(json.dumps({"mcpServers": {"nb": {"command": serve[0], "args": serve[1:]}}}))
    return [
        *BRIDGE,
        "--config",
        str(config),
        "--no-default-config",
        "--runtime-dir",
        str(kernel.runtime_dir),
        "--kernel-poll",
        "0.2",
    ]


def _labels(result: types.CompletionList) -> list[str]:
    return [item.label for item in result.items if not item.label.startswith("connecting")]


@pytest.mark.parametrize("max_items", [100, 10, 3])
async def test_configured_prompts_come_first_then_the_kernels_own_then_its_magics(
    kernel: RealKernel, tmp_path: Path, max_items: int
) -> None:
    short_id = kernel.connection().short_id
    server = f"kernel-{short_id}"
    async with start_bridge(_command(tmp_path, kernel), options={"maxItems": max_items, "magics": True}) as bridge:
        await bridge.log_line(lambda line: "nb ready (2 prompts)" in line and f"{server} ready" in line, 60.0)
        bridge.open(URI, "/\n")
        result = await bridge.complete(URI, 0, 1, trigger="/")
        labels = _labels(result)
        expected_head = ["/nb:review", "/nb:summarize", f"/{server}:scratch_note"]
        assert labels[:3] == expected_head[: min(3, max_items)]
        assert len(labels) == max_items
        assert result.is_incomplete is True
        magics = [label for label in labels if re.search(r":magic(\.|$)", label)]
        assert len(magics) == max(0, max_items - 3)
        assert all(labels.index(m) > 2 for m in magics)


async def test_the_kernel_has_enough_magics_to_have_filled_the_menu(kernel: RealKernel, tmp_path: Path) -> None:
    # The premise of the test above: without the ranking, magics would take the whole list.
    async with start_bridge(_command(tmp_path, kernel), options={"maxItems": 5000, "magics": True}) as bridge:
        server = f"kernel-{kernel.connection().short_id}"
        await bridge.log_line(lambda line: "nb ready (2 prompts)" in line and f"{server} ready" in line, 60.0)
        bridge.open(URI, "/\n")
        labels = _labels(await asyncio.wait_for(bridge.complete(URI, 0, 1), 10))
        assert sum(":magic." in label for label in labels) > 100
        assert sorted(labels)[0].startswith(f"/{server}:magic.")  # by name alone, a magic would come first


async def test_unless_asked_for_the_menu_lists_no_magics(kernel: RealKernel, tmp_path: Path) -> None:
    server = f"kernel-{kernel.connection().short_id}"
    async with start_bridge(_command(tmp_path, kernel), options={"maxItems": 100}) as bridge:
        await bridge.log_line(lambda line: "nb ready (2 prompts)" in line and f"{server} ready" in line, 60.0)
        bridge.open(URI, "/\n/mag\n")
        assert _labels(await bridge.complete(URI, 0, 1, trigger="/")) == [
            "/nb:review",
            "/nb:summarize",
            f"/{server}:scratch_note",
        ]
        assert _labels(await bridge.complete(URI, 1, 4)) == []  # typed, still not offered
    # The configured server's list is kept for the next start; the kernel's is not (its address changes).
    stored = Path(os.environ["MCP_NOTEBOOK_CACHE_DIR"]) / "lsp-prompts"
    assert [path.name.split("-")[0] for path in await asyncio.to_thread(lambda: list(stored.glob("*.json")))] == ["nb"]
