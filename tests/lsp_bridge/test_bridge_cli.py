"""The command line: instant help, server names that fit a slash command, settings from options."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from import_probe import ARGPARSE_HELP, new_modules

from lsp_bridge.cli import create_parser
from mcp_notebook.config import ServerConfig
from mcp_notebook.naming import command_server_names


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
    assert list(command_server_names(configs)) == expected


@pytest.mark.parametrize("level", ["debug", "DEBUG", "Info", "warning", " error "])
def test_log_level_is_accepted_in_any_case(level: str) -> None:
    assert create_parser().parse_args(["--log-level", level]).log_level == level.strip().upper()


BAD_COMMAND_LINES = [
    (["--log-level", "verbose"], "--log-level: 'verbose' is not one of DEBUG, INFO, WARNING, ERROR"),
    (["--max-items", "0"], "--max-items must be a whole number from 1 to 5000"),
    (["--max-items", "many"], "--max-items: invalid int value"),
    (["--trigger", "    "], "--trigger must be one to three non-space characters"),
    (["--trigger", "////"], "--trigger must be one to three non-space characters"),
    (["--file-types", " , "], "--file-types must be a list of language ids"),
    (["--timeout", "-1"], "--timeout: '-1' is not a positive number of seconds"),
    (["--kernel-poll", "nan"], "--kernel-poll: 'nan' is not a positive number of seconds"),
    (["--tcp", "70000"], "--tcp: '70000' is not a port number"),
    (["--images", "inline"], "--images: invalid choice"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--config", "{missing}"], "no such configuration file"),
    (["--config", "{invalid}"], "is not valid JSON"),
    (["--config", "{wrong_shape}"], ""),
]


@pytest.mark.parametrize(("argv", "says"), BAD_COMMAND_LINES)
def test_a_bad_command_line_is_one_clear_line_on_stderr_and_exit_code_2(
    tmp_path: Path, argv: list[str], says: str
) -> None:
    (tmp_path / "invalid.json").write_text("{not json")
    (tmp_path / "wrong_shape.json").write_text('{"mcpServers": {"x": {"command": 5}}}')
    files = {"missing": tmp_path / "nope.json", "invalid": tmp_path / "invalid.json"}
    files["wrong_shape"] = tmp_path / "wrong_shape.json"
    argv = [part.format(**files) for part in argv]
    done = subprocess.run(
        [sys.executable, "-m", "lsp_bridge", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("mcp-notebook-lsp: error: ")
    assert says in line
    assert "Traceback" not in done.stderr and "usage:" not in done.stderr


@pytest.mark.slow
def test_tcp_serves_one_editor_on_loopback_and_ends_with_it() -> None:
    bridge = subprocess.Popen(
        [sys.executable, "-m", "lsp_bridge", "--tcp", "0", "--no-kernels", "--no-default-config"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert bridge.stderr is not None
        line = bridge.stderr.readline()
        match = re.fullmatch(r"mcp-notebook-lsp: listening on 127\.0\.0\.1:(\d+)\n", line)
        assert match, line
        address = ("127.0.0.1", int(match.group(1)))
        with socket.create_connection(address, timeout=30) as connection, connection.makefile("rb") as reader:

            def send(message: dict[str, object]) -> None:
                body = json.dumps(message).encode()
                connection.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

            def receive(ident: int) -> dict[str, object]:
                while True:
                    length = 0
                    while (header := reader.readline()) not in (b"\r\n", b""):
                        if header.lower().startswith(b"content-length:"):
                            length = int(header.split(b":")[1])
                    message: dict[str, object] = json.loads(reader.read(length))
                    if message.get("id") == ident and "method" not in message:
                        return message

            send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}})
            answer = receive(1)
            assert answer["result"]["serverInfo"]["name"] == "mcp-notebook-lsp"  # type: ignore[index]
            send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
            assert receive(2)["result"] is None
            send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert bridge.wait(timeout=10) == 0
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait()
        if bridge.stderr is not None:
            bridge.stderr.close()


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["--confg", "a.json"], "did you mean --config? type: mcp-notebook-lsp --config a.json"),
        (["--log-levl=debug"], "did you mean --log-level? type: mcp-notebook-lsp --log-level=debug"),
        (["--images", "data-url"], "did you mean data-uri? type: mcp-notebook-lsp --images data-uri"),
    ],
)
def test_a_misspelled_option_or_choice_ends_the_one_line_with_what_to_type(argv: list[str], hint: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lsp_bridge", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("mcp-notebook-lsp: error: ")
    assert line.endswith(f"(see mcp-notebook-lsp --help); {hint}")


@pytest.mark.slow
def test_help_imports_nothing_but_what_argparse_itself_needs_to_print_help() -> None:
    # Not the settings, the configuration files, logging, pathlib or typing: those come after the options.
    ours = new_modules("from lsp_bridge.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert ours - new_modules(ARGPARSE_HELP) == {
        "lsp_bridge",
        "lsp_bridge.cli",
        "mcp_notebook",
        "mcp_notebook.command_line",
        "mcp_notebook.terminal",
        "mcp_notebook.version",
    }
