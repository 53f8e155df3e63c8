"""Reading the MCP configuration files users already have."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.config import ServerConfig, default_config_paths, load_server_configs
from mcp_notebook.exceptions import ConfigError
from mcp_notebook.trust import TrustStore, content_digest


@pytest.fixture
def home(empty_home: Path) -> Path:
    return empty_home


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    return project


def write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def trusted(path: Path) -> Path:
    """`path` trusted by the user as it is now (a project file starts nothing before)."""
    TrustStore().trust(path, content_digest(path.read_bytes()))
    return path


def test_claude_desktop_stdio_entry_becomes_a_stdio_server(home: Path, project: Path) -> None:
    path = write(
        home / ".config" / "Claude" / "claude_desktop_config.json",
        {"mcpServers": {"docs": {"command": "uvx", "args": ["docs-server", "--x"], "env": {"K": "v"}}}},
    )

    servers = load_server_configs(cwd=project)

    assert servers == {
        "docs": ServerConfig(name="docs", command="uvx", args=("docs-server", "--x"), env={"K": "v"}, source=str(path))
    }
    assert servers["docs"].transport == "stdio"


def test_cursor_url_entry_with_headers_is_an_http_server(home: Path, project: Path) -> None:
    write(
        home / ".cursor" / "mcp.json",
        {"mcpServers": {"remote": {"url": "https://host/mcp", "headers": {"Authorization": "Bearer t"}}}},
    )

    server = load_server_configs(cwd=project)["remote"]

    assert (server.transport, server.url, server.headers) == ("http", "https://host/mcp", {"Authorization": "Bearer t"})


def test_vscode_servers_shape_with_types_and_workspace_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_TOKEN", "s3cret")
    vscode = write(
        project / ".vscode" / "mcp.json",
        {
            "inputs": [{"id": "key", "type": "promptString"}],
            "servers": {
                "local": {"type": "stdio", "command": "python", "args": ["${workspaceFolder}/server.py"]},
                "api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "${env:API_TOKEN}"}},
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                "asked": {"command": "srv", "env": {"KEY": "${input:key}"}},
            },
        },
    )
    trusted(vscode)

    servers = load_server_configs(cwd=project)

    assert servers["local"].args == (f"{project.resolve()}/server.py",)
    assert servers["api"].headers == {"X": "s3cret"}
    assert servers["old"].sse is True
    assert servers["asked"].env == {"KEY": "${input:key}"}


def test_claude_code_expands_shell_variables_with_defaults(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCS_HOST", "example.test")
    monkeypatch.delenv("DOCS_PORT", raising=False)
    trusted(
        write(
            project / ".mcp.json",
            {"mcpServers": {"docs": {"type": "http", "url": "https://${DOCS_HOST}:${DOCS_PORT:-8443}/mcp"}}},
        )
    )

    assert load_server_configs(cwd=project)["docs"].url == "https://example.test:8443/mcp"


def test_unset_shell_variable_is_an_error_naming_file_entry_and_variable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOPE_TOKEN", raising=False)
    path = write(project / ".mcp.json", {"mcpServers": {"docs": {"command": "x", "env": {"T": "${NOPE_TOKEN}"}}}})

    with pytest.raises(ConfigError) as caught:
        load_server_configs([path], include_defaults=False)

    message = str(caught.value)
    assert str(path) in message and "'docs'" in message and "NOPE_TOKEN" in message


def test_claude_desktop_leaves_variables_alone(home: Path) -> None:
    path = write(home / "claude_desktop_config.json", {"mcpServers": {"a": {"command": "x", "args": ["${HOME}"]}}})

    assert load_server_configs([path], include_defaults=False)["a"].args == ("${HOME}",)


def test_later_files_override_earlier_and_explicit_paths_come_last(home: Path, project: Path) -> None:
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"docs": {"command": "global"}, "only": {"command": "g"}}})
    trusted(write(project / "mcp.json", {"mcpServers": {"docs": {"command": "project"}}}))
    explicit = write(project / "custom.json", {"servers": {"docs": {"command": "explicit"}}})

    assert load_server_configs(cwd=project)["docs"].command == "project"
    merged = load_server_configs([explicit], cwd=project)
    assert (merged["docs"].command, merged["only"].command) == ("explicit", "g")


def test_environment_variable_names_extra_config_files(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = write(home / "extra.json", {"mcpServers": {"extra": {"command": "e"}}})
    monkeypatch.setenv("MCP_NOTEBOOK_CONFIG", str(extra))

    assert default_config_paths(project)[-1] == extra
    assert "extra" in load_server_configs(cwd=project)


def test_project_files_are_found_in_a_parent_folder(home: Path, project: Path) -> None:
    trusted(write(project / ".vscode" / "mcp.json", {"servers": {"up": {"command": "u"}}}))
    notebooks = project / "notebooks" / "deep"
    notebooks.mkdir(parents=True)

    assert load_server_configs(cwd=notebooks)["up"].command == "u"


def test_missing_explicit_file_is_an_error(project: Path) -> None:
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_server_configs([project / "absent.json"], cwd=project)


def test_invalid_json_is_an_error_with_its_position(project: Path) -> None:
    path = project / "mcp.json"
    path.write_text('{"mcpServers": {', encoding="utf-8")

    with pytest.raises(ConfigError, match=r"not valid JSON \(line 1"):
        load_server_configs([path], include_defaults=False)


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ({}, "needs 'command'"),
        ({"command": "x", "url": "http://h"}, "both 'command' and 'url'"),
        ({"command": "x", "args": "a b"}, "'args' must be a list"),
        ({"command": 3}, "'command' must be a string"),
        ({"type": "http"}, "needs a 'url'"),
        ({"type": "websocket", "command": "x"}, "unknown type"),
    ],
)
def test_bad_entries_are_errors_that_say_what_is_wrong(project: Path, entry: dict[str, Any], complaint: str) -> None:
    path = write(project / "mcp.json", {"mcpServers": {"bad": entry}})

    with pytest.raises(ConfigError, match=complaint):
        load_server_configs([path], include_defaults=False)


def test_on_error_reports_bad_entries_and_keeps_good_ones(project: Path) -> None:
    trusted(write(project / "mcp.json", {"mcpServers": {"bad": {}, "good": {"command": "g"}}}))
    errors: list[ConfigError] = []

    servers = load_server_configs(cwd=project, on_error=errors.append)

    assert list(servers) == ["good"]
    assert len(errors) == 1 and "'bad'" in str(errors[0])


def test_disabled_entries_are_skipped(project: Path) -> None:
    path = write(project / "mcp.json", {"mcpServers": {"off": {"command": "x", "disabled": True}}})

    assert load_server_configs([path], include_defaults=False) == {}


def test_relative_cwd_is_resolved_against_the_project(project: Path) -> None:
    path = write(project / "mcp.json", {"mcpServers": {"a": {"command": "x", "cwd": "sub"}}})

    assert load_server_configs([path], include_defaults=False)["a"].cwd == os.path.join(project, "sub")


def test_describe_shows_the_command_line_or_url() -> None:
    assert ServerConfig(name="a", command="uvx", args=("srv", "--x")).describe() == "uvx srv --x"
    assert ServerConfig(name="b", url="http://h/mcp").describe() == "http://h/mcp"
