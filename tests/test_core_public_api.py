"""The public surface of the core modules, pinned so that it only changes on purpose.

Subpackages pin their own (tests/protocol, tests/sources, tests/ipython, tests/lsp_bridge).
"""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "mcp_notebook": ["__version__", "connect", "load_ipython_extension", "unload_ipython_extension"],
    "mcp_notebook.models": [
        "Annotations",
        "AudioContent",
        "CompletionResult",
        "ContentBlock",
        "Deferred",
        "DeferredParts",
        "EmbeddedResource",
        "Icon",
        "ImageContent",
        "MessageTemplate",
        "PromptArgument",
        "PromptMessage",
        "PromptSpec",
        "RenderedPrompt",
        "ResourceInfo",
        "ResourceLink",
        "Role",
        "SkillFile",
        "SkillSpec",
        "TextContent",
    ],
    "mcp_notebook.exceptions": [
        "AmbiguousPromptError",
        "ArgumentTooLargeError",
        "ConfigError",
        "DeclinedArgumentsError",
        "EmbeddedFileArgumentError",
        "InvalidCursorError",
        "InvalidMagicArgumentError",
        "MCPNotebookError",
        "MagicExecutionError",
        "MissingArgumentsError",
        "NotebookFormatError",
        "PathOutsideRootError",
        "PathRefusedError",
        "PromptCellError",
        "PromptError",
        "PromptExecutionError",
        "ResourceError",
        "ServerConnectionError",
        "ServerError",
        "SkillsNotOfferedError",
        "UnknownArgumentsError",
        "UnknownMagicError",
        "UnknownPromptError",
        "UnknownSkillError",
        "VariableArgumentError",
    ],
    "mcp_notebook.naming": [
        "NAME_PATTERN",
        "closest_names",
        "command_server_names",
        "fit_name",
        "is_valid_name",
        "kernel_server_name",
        "plan_renames",
        "qualify",
        "resolve_clashes",
        "suggest_names",
    ],
    "mcp_notebook.registry": ["PromptRegistry", "RegistrySnapshot", "digest_of"],
    "mcp_notebook.resources": ["ResourceListing", "ResourceProvider"],
    "mcp_notebook.client": [
        "InputHandler",
        "InputRequest",
        "PromptClient",
        "Skill",
        "SkillContent",
        "SkillFile",
        "import_sdk",
    ],
    "mcp_notebook.config": [
        "CONFIG_ENV_VAR",
        "Loaded",
        "ServerConfig",
        "default_config_paths",
        "describe_project_file",
        "load_config_file",
        "load_server_configs",
        "load_trusted",
        "project_config_paths",
        "read_config_bytes",
        "untrusted_servers",
    ],
    "mcp_notebook.runtime": ["BackgroundRuntime", "get_runtime", "run_in_caller"],
    "mcp_notebook.api": [
        "Connection",
        "InputHandler",
        "argument_text",
        "ask_with_input",
        "check_arguments",
        "connect",
        "resolve_server",
    ],
    "mcp_notebook.llm": ["Conversation", "to_anthropic_messages", "to_openai_messages"],
    "mcp_notebook.discovery": [
        "CACHE_DIR_ENV",
        "CONNECTION_FILE_PREFIX",
        "KernelConnection",
        "STATE_DIR_ENV",
        "connection_file_name",
        "default_cache_dir",
        "default_runtime_dir",
        "is_process_alive",
        "latest_kernel_connection",
        "list_kernel_connections",
        "read_connection_file",
        "register_connection_file",
        "remove_connection_file",
        "runtime_dir",
        "state_dir",
        "write_connection_file",
    ],
    "mcp_notebook.transcript": [
        "BlockForm",
        "Grouping",
        "HeadingPolicy",
        "HeadingStyle",
        "Layout",
        "MediaStyle",
        "TitleStyle",
        "block_markdown",
        "block_text",
        "clipped",
        "code_span",
        "data_size",
        "describe_size",
        "escape_markdown",
        "fence",
        "fence_language",
        "frame_markdown",
        "markdown_table",
        "role_label",
        "to_transcript",
        "turns",
    ],
    "mcp_notebook.cli": ["main"],
    "mcp_notebook.kernel_proxy": [
        "add_connect_arguments",
        "find_kernel_connection",
        "main",
        "run_connect",
        "run_proxy",
    ],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_the_public_names_are_the_pinned_ones_and_all_exist(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == PUBLIC[module]
    for name in imported.__all__:
        assert hasattr(imported, name), f"{module}.{name} is exported but missing"


def test_the_error_tree_has_one_root() -> None:
    from mcp_notebook import exceptions

    for name in exceptions.__all__:
        assert issubclass(getattr(exceptions, name), exceptions.MCPNotebookError), name
