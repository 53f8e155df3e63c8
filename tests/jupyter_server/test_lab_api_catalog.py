"""The JupyterLab listing, fast: kinds, states, magics left out unless asked, nothing secret in a detail.

The pool is the real one with in-memory clients (the real servers are in test_lab_api.py).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mcp_notebook.catalog.pool import ClientPool
from mcp_notebook.config import ServerConfig
from mcp_notebook.discovery import write_connection_file
from mcp_notebook.exceptions import ServerConnectionError
from mcp_notebook.jupyter.lab_api_catalog import LabCatalog
from mcp_notebook.models import CompletionResult, PromptSpec, RenderedPrompt
from mcp_notebook.naming import fit_name, is_valid_name
from mcp_notebook.trust import UntrustedConfig

DEADLINE = 5.0
SECRET = "tok-123456789"


class _Client:
    """A server with fixed prompts; `broken` ones fail to start, saying their command line and a header."""

    offers_skills = False  # it declares no Skills extension

    def __init__(self, config: ServerConfig, prompts: Mapping[str, tuple[PromptSpec, ...]]) -> None:
        self.config = config
        self.prompts = prompts.get(config.name)
        self.connected = False

    async def connect(self) -> None:
        if self.prompts is None:
            raise ServerConnectionError(self.config.name, f"{self.config.describe()} failed with {SECRET}")
        self.connected = True

    async def close(self) -> None:
        self.connected = False

    async def list_prompts(self, *, refresh: bool = False) -> tuple[PromptSpec, ...]:
        return self.prompts or ()

    def add_list_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        return lambda: None

    def add_skills_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        return lambda: None

    def add_connection_lost_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        return lambda: None

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        raise NotImplementedError

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        await asyncio.Event().wait()  # never answers
        raise AssertionError


async def _catalog(tmp_path: Path, *, trusted: list[str] | None = None) -> LabCatalog:
    prompts = {
        "tools": (PromptSpec(name="greet"),),
        "jupyter": (PromptSpec(name="summarize"),),
        # A kernel's prompts, as `%mcp serve` documents its magics.
        "analysis": (PromptSpec(name="explain"), PromptSpec(name="magic"), PromptSpec(name="magic.timeit")),
        "project": (PromptSpec(name="review"),),
    }
    configs = {
        "tools": ServerConfig(name="tools", command="tools-server"),
        "my broken": ServerConfig(
            name="my broken", command="run", args=("--key", "abc-secret-arg"), env={"API_KEY": SECRET}
        ),
        "gone": ServerConfig(
            name="gone", url="http://127.0.0.1:9/mcp?key=abc-secret-query", headers={"Authorization": SECRET}
        ),
    }
    untrusted = [UntrustedConfig(path=tmp_path / ".mcp.json", digest="0", servers=(("project", "rm -rf /"),))]
    trusted = trusted if trusted is not None else []

    def load() -> tuple[dict[str, ServerConfig], list[UntrustedConfig], list[Any]]:
        if trusted:  # the user ran `mcp-notebook trust .mcp.json`
            return configs | {"project": ServerConfig(name="project", command="review-server")}, [], []
        return configs, untrusted, []

    pool = ClientPool(client_factory=lambda config: _Client(config, prompts), reconnect_initial=60)
    host = ServerConfig(name="jupyter", url="http://127.0.0.1:1/mcp", headers={"Authorization": f"token {SECRET}"})
    catalog = LabCatalog(
        root=tmp_path,
        host=lambda: host,
        pool=pool,
        load=load,
        runtime_dir=tmp_path / "runtime",
        completion_seconds=0.05,
    )
    await catalog.start()
    return catalog


async def _until(catalog: LabCatalog, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    async with asyncio.timeout(DEADLINE):
        while True:
            listing = catalog.listing()
            if ready({server["name"]: server for server in listing["servers"]}):
                return listing
            await catalog.wait_past(listing["version"])


async def test_servers_are_listed_by_kind_and_state_without_secrets(tmp_path: Path) -> None:
    catalog = await _catalog(tmp_path)
    try:
        listing = await _until(
            catalog, lambda s: s.get("tools", {}).get("state") == "ready" and s["my_broken"]["state"] == "failed"
        )
        servers = {server["name"]: server for server in listing["servers"]}
        assert [(s["name"], s["kind"]) for s in listing["servers"]] == [
            ("jupyter", "notebooks"),
            ("gone", "config"),
            ("my_broken", "config"),  # a configured name is made to fit `/server:prompt`
            ("project", "config"),
            ("tools", "config"),
        ]
        assert [p["name"] for p in servers["tools"]["prompts"]] == ["greet"]
        assert servers["project"]["state"] == "not-trusted"
        assert "mcp-notebook trust" in servers["project"]["detail"]
        broken = servers["my_broken"]["detail"]
        assert "its command failed" in broken
        assert "its address failed" in servers["gone"]["detail"]  # a URL is an address, not a command
        assert SECRET not in str(listing) and "abc-secret-arg" not in str(listing)
        assert "abc-secret-query" not in str(listing)
    finally:
        await catalog.aclose()


async def test_magic_prompts_are_left_out_unless_asked(tmp_path: Path) -> None:
    catalog = await _catalog(tmp_path)
    try:
        # A running kernel (this process stands in for it), found by its connection file and named by its notebook.
        write_connection_file(
            url="http://127.0.0.1:2/mcp",
            token=SECRET,
            kernel_id="0123456789abcdef",
            notebook_path=str(tmp_path / "analysis.ipynb"),
            pid=os.getpid(),
            directory=tmp_path / "runtime",
        )
        catalog.refresh_soon(force=True)
        await _until(catalog, lambda s: s.get("analysis", {}).get("state") == "ready")
        plain = {s["name"]: s for s in catalog.listing()["servers"]}["analysis"]
        assert plain["kind"] == "kernel"
        assert [p["name"] for p in plain["prompts"]] == ["explain"]
        everything = {s["name"]: s for s in catalog.listing(magics=True)["servers"]}["analysis"]
        assert [(p["name"], p["magic"]) for p in everything["prompts"]] == [
            ("explain", False),
            ("magic", True),
            ("magic.timeit", True),
        ]
    finally:
        await catalog.aclose()


async def test_a_completion_that_does_not_come_in_time_is_pending_not_waited_for(tmp_path: Path) -> None:
    catalog = await _catalog(tmp_path)
    try:
        await _until(catalog, lambda s: s.get("tools", {}).get("state") == "ready")
        async with asyncio.timeout(1.0):
            assert await catalog.complete("tools", "greet", "x", "", {}) is None
    finally:
        await catalog.aclose()


def test_a_suggested_name_is_always_valid() -> None:
    for typed in ("my prompt", "  ", "...", "ünïcode name", "x" * 100, "a/b:c"):
        assert is_valid_name(fit_name(typed)), typed
    assert fit_name("my prompt") == "my_prompt"


async def test_a_project_file_trusted_meanwhile_starts_its_servers_on_a_later_listing(tmp_path: Path) -> None:
    trusted: list[str] = []
    catalog = await _catalog(tmp_path, trusted=trusted)
    try:
        await _until(catalog, lambda s: s.get("project", {}).get("state") == "not-trusted")
        trusted.append(".mcp.json")
        assert catalog.refresh_soon(force=True)
        listing = await _until(catalog, lambda s: s.get("project", {}).get("state") == "ready")
        project = {server["name"]: server for server in listing["servers"]}["project"]
        assert [p["name"] for p in project["prompts"]] == ["review"]
        assert project["kind"] == "config"
    finally:
        await catalog.aclose()
