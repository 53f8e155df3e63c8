"""What the bridge does differently when jupyter-lsp starts it: the host server from its info file, the 0.2 s rule."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from lsp_bridge.jupyter_host import (
    COMPLETION_DEADLINE_ENV,
    INFO_FILE_ENV,
    completion_deadline,
    host_server_config,
    with_completion_deadline,
    with_host_server,
)
from mcp_notebook.catalog.pool import CatalogSnapshot, QuickCompletions
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerConnectionError
from mcp_notebook.jupyter import lsp_spec
from mcp_notebook.models import CompletionResult, RenderedPrompt


def test_the_host_server_comes_from_the_info_file_with_its_token(tmp_path: Path) -> None:
    info = tmp_path / "jpserver-1.json"
    info.write_text(json.dumps({"url": "http://127.0.0.1:8888/base/", "token": "secret"}), encoding="utf-8")
    config = host_server_config({INFO_FILE_ENV: str(info)})
    assert config is not None
    assert (config.name, config.url) == ("jupyter", "http://127.0.0.1:8888/base/mcp")
    assert config.headers == {"Authorization": "token secret"}
    mine = ServerConfig(name="jupyter", command="x")
    assert list(with_host_server({"jupyter": mine}, {INFO_FILE_ENV: str(info)})) == ["jupyter", "jupyter_"]


@pytest.mark.parametrize("content", [None, "not json", json.dumps({"url": "ftp://x"}), json.dumps({})])
def test_no_usable_info_file_means_no_host_server(tmp_path: Path, content: str | None) -> None:
    info = tmp_path / "jpserver-1.json"
    if content is not None:
        info.write_text(content, encoding="utf-8")
    assert host_server_config({INFO_FILE_ENV: str(info)}) is None
    assert host_server_config({}) is None


def test_the_spec_names_the_info_file_and_the_deadline_never_the_token() -> None:
    class App:
        info_file = "/run/jpserver-7.json"
        runtime_dir = "/run"
        config: ClassVar[dict[str, object]] = {}

    class Manager:
        parent = App()

    spec = lsp_spec.language_server_spec(Manager())["mcp-notebook"]
    assert spec["env"][INFO_FILE_ENV] == "/run/jpserver-7.json"
    assert spec["env"][COMPLETION_DEADLINE_ENV] == "0.2"
    file_types = "markdown,ipythongfm,gfm,plaintext,text"
    assert spec["argv"][1:] == ["-P", "-m", "lsp_bridge", "--file-types", file_types, "--runtime-dir", "/run"]
    assert "python" not in spec["languages"]


def test_the_deadline_is_read_from_the_environment() -> None:
    assert completion_deadline({COMPLETION_DEADLINE_ENV: "0.2"}) == 0.2
    assert completion_deadline({}) is None
    assert completion_deadline({COMPLETION_DEADLINE_ENV: "soon"}) is None
    catalog = _SlowCatalog()
    assert with_completion_deadline(catalog, {}) is catalog
    assert isinstance(with_completion_deadline(catalog, {COMPLETION_DEADLINE_ENV: "0.2"}), QuickCompletions)


class _SlowCatalog:
    """A catalog whose server suggests values only once `gate` is open (open from the start when `slow` is False)."""

    def __init__(self, *, slow: bool = False) -> None:
        self.gate = asyncio.Event()
        if not slow:
            self.gate.set()
        self.asked = 0

    def snapshot(self) -> CatalogSnapshot:
        return CatalogSnapshot()

    def add_listener(self, listener: Callable[[CatalogSnapshot], None]) -> Callable[[], None]:
        return lambda: None

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt:
        raise AssertionError("not used")

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult:
        self.asked += 1
        await self.gate.wait()  # the slow server itself
        return CompletionResult(values=(f"{value}-1", f"{value}-2"))


async def test_a_slow_server_gets_no_wait_beyond_the_deadline_and_answers_the_next_request() -> None:
    slow = _SlowCatalog(slow=True)
    quick = QuickCompletions(slow, 0.2)
    async with asyncio.timeout(10):  # without the deadline these would wait for the server forever
        with pytest.raises(ServerConnectionError, match=r"no values within 0\.2 s"):
            await quick.complete("s", "p", "a", "Ru", {})
        with pytest.raises(ServerConnectionError):
            await quick.complete("s", "p", "a", "Ru", {})  # still coming: the same request, not a second one
    assert slow.asked == 1
    slow.gate.set()  # the server answers at last
    async with asyncio.timeout(10):
        while True:  # the background answer lands in the cache
            try:
                result = await quick.complete("s", "p", "a", "Ru", {})
                break
            except ServerConnectionError:
                continue
    assert result.values == ("Ru-1", "Ru-2")
    assert slow.asked == 1


async def test_a_fast_server_answers_at_once() -> None:
    quick = QuickCompletions(_SlowCatalog(), 0.2)
    assert (await quick.complete("s", "p", "a", "x", {"b": "1"})).values == ("x-1", "x-2")


def test_the_file_types_the_spec_passes_are_the_ones_the_bridge_serves() -> None:
    from lsp_bridge.cli import _settings, create_parser

    argv = lsp_spec.language_server_spec(None)["mcp-notebook"]["argv"]
    argv = argv[argv.index("lsp_bridge") + 1 :]
    settings = _settings(create_parser().parse_args(argv))
    assert settings.file_types == frozenset(lsp_spec.LANGUAGES)
    assert settings.applies_to("ipythongfm") and not settings.applies_to("python")
    assert settings.magics is False  # JupyterLab's menus leave kernels' magic prompts out, as editors' do
