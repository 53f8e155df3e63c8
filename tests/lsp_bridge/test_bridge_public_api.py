"""The public surface of the LSP bridge and of the catalog it runs on, pinned: it only changes on purpose (kernel
discovery's is pinned with the core's, in tests/test_core_public_api.py)."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "lsp_bridge.cli": ["create_parser", "main"],
    "lsp_bridge.server": ["BridgeServer", "RENDER_COMMAND", "create_server"],
    "mcp_notebook.catalog.pool": [
        "CatalogSnapshot",
        "ClientPool",
        "PromptCatalog",
        "PromptClientLike",
        "QuickCompletions",
        "ServerState",
        "ServerStatus",
        "create_prompt_client",
    ],
    "mcp_notebook.catalog.kernels": ["KernelWatcher", "to_kernel_server_configs"],
    "lsp_bridge.settings": ["ALL_FILE_TYPES", "BridgeSettings", "parse_setting", "to_settings"],
    "lsp_bridge.lifecycle": ["run_stdio", "run_tcp"],
    "lsp_bridge.processes": ["child_pids", "is_running", "stop_children"],
    "lsp_bridge.positions": ["to_code_points", "to_units"],
    "lsp_bridge.slashline": [
        "MAX_ARGUMENTS",
        "MAX_LINE_LENGTH",
        "ArgumentNameContext",
        "ArgumentValueContext",
        "CommandNameContext",
        "CursorContext",
        "SlashArgument",
        "SlashCommand",
        "StrayToken",
        "context_at",
        "find_commands",
        "format_invocation",
        "quote_value",
        "split_command_name",
    ],
    "mcp_notebook.ranking": [
        "CommandEntry",
        "CommandIndex",
        "CommandMatch",
        "MatchTier",
        "SearchResult",
        "is_magic",
        "word_starts",
    ],
    "lsp_bridge.render": ["ImageStyle", "fence", "to_editor_text"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(PUBLIC[module])
    for name in loaded.__all__:
        assert hasattr(loaded, name), f"{module}.{name} is exported but missing"
