"""The command line: instant help, server names that fit a slash command, settings from options."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lsp_bridge.cli import create_parser, to_command_server_names
from mcp_notebook.config import ServerConfig


def test_help_is_instant_and_imports_neither_pygls_nor_the_sdk() -> None:
    code = (
        "import sys\nfrom lsp_bridge.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', sorted(m for m in ('pygls', 'lsprotocol', 'mcp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "--config PATH" in out.stdout
    assert "examples:" in out.stdout
    assert "HEAVY []" in out.stdout


def test_config_is_repeatable_and_defaults_are_sensible() -> None:
    args = create_parser().parse_args(["--config", "a.json", "--config", "b.json", "--stdio"])
    assert [str(p) for p in args.config] == ["a.json", "b.json"]
    assert (args.trigger, args.file_types, args.images, args.max_items) == (
        "/",
        "markdown,plaintext",
        "placeholder",
        100,
    )
    assert not args.no_kernels and not args.no_default_config


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["notebooks"], ["notebooks"]),
        (["my server", "a:b"], ["my_server", "a_b"]),
        (["a b", "a_b"], ["a_b", "a_b_"]),
        ([":::"], ["server"]),
    ],
)
def test_server_names_are_made_to_fit_a_slash_command(names: list[str], expected: list[str]) -> None:
    configs = {name: ServerConfig(name=name, command="x") for name in names}
    assert list(to_command_server_names(configs)) == expected
