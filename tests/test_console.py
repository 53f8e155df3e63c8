"""The `mcp-notebook` console script: help rendered in advance, exactly as argparse prints it, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from import_probe import new_modules

from mcp_notebook import cli, console, help_text

REGENERATE = (
    "run: python -c 'from mcp_notebook.cli import write_help_text; write_help_text()' (then ruff format it) "
    "after changing an option or a help text"
)
SAME_PYTHON = tuple(sys.version_info[:2]) == help_text.PYTHON
HELP_FORMS = [
    ["--help"],
    ["-h"],
    [],
    *([command, flag] for command in cli.HELP_COMMANDS if command for flag in ("--help", "-h")),
]


def _printed(run: object, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = run(argv)  # type: ignore[operator]
    except SystemExit as exited:  # argparse leaves with SystemExit, the console script returns the code
        code = exited.code
    captured = capsys.readouterr()
    return int(code or 0), captured.out, captured.err


@pytest.mark.skipif(not SAME_PYTHON, reason=f"help_text.py was rendered with Python {help_text.PYTHON}")
def test_the_help_rendered_in_advance_is_what_argparse_prints_today() -> None:
    assert cli.help_texts() == help_text.TEXTS, REGENERATE


def test_the_help_module_is_written_as_the_formatter_keeps_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Written again from the same parser, the file is byte for byte the one shipped (so `ruff format` leaves it be).
    shipped = Path(help_text.__file__).read_text(encoding="utf-8")
    monkeypatch.setattr(cli, "__file__", str(tmp_path / "cli.py"))
    written = cli.write_help_text()
    assert written == tmp_path / "help_text.py"
    if SAME_PYTHON:
        assert written.read_text(encoding="utf-8") == shipped, REGENERATE


@pytest.mark.parametrize("argv", HELP_FORMS, ids=lambda argv: " ".join(argv) or "bare")
@pytest.mark.parametrize("columns", ["80", "200"])
def test_help_is_printed_from_the_text_rendered_in_advance_exactly_as_argparse_would(
    argv: list[str], columns: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", columns)  # a wide terminal gets the 80-column layout either way
    assert (console.prerendered(argv) is not None) is SAME_PYTHON
    fast = _printed(console.main, argv, capsys)
    full = _printed(cli.main, argv, capsys)
    assert fast == full
    assert fast[0] == (2 if not argv else 0)
    assert "usage: mcp-notebook" in fast[1] + fast[2]


def test_a_narrow_terminal_gets_help_laid_out_to_its_width(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    assert console.prerendered(["serve", "--help"]) is None
    code, out, _ = _printed(console.main, ["serve", "--help"], capsys)
    assert code == 0
    # The options' help is wrapped to the width (the descriptions and group titles keep their own lines).
    options = [line for line in out[out.index("\noptions:\n") :].splitlines() if line.startswith(" ")]
    assert max(len(line) for line in options) <= 50
    assert out != help_text.TEXTS["serve"]


def test_the_version_is_printed_as_argparse_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert _printed(console.main, ["--version"], capsys) == _printed(cli.main, ["--version"], capsys)


@pytest.mark.parametrize(
    "argv",
    [["serve", "--help", "x"], ["--help", "serve"], ["serv", "--help"], ["serve", "examples"], ["--versio"]],
    ids=["after-help", "help-first", "misspelled", "a-command", "misspelled-flag"],
)
def test_any_other_command_line_is_parsed_by_the_command_line_itself(argv: list[str]) -> None:
    assert console.prerendered(argv) is None


@pytest.mark.slow
@pytest.mark.skipif(not SAME_PYTHON, reason=f"help_text.py was rendered with Python {help_text.PYTHON}")
@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"], []], ids=["help", "serve-help", "bare"])
def test_help_imports_neither_argparse_nor_the_command_line(argv: list[str]) -> None:
    code = f"from mcp_notebook.console import main\nmain({argv!r})"
    assert new_modules(code) == {
        "mcp_notebook",
        "mcp_notebook.version",
        "mcp_notebook.console",
        "mcp_notebook.terminal",
        "mcp_notebook.help_text",
    }


@pytest.mark.slow
def test_the_installed_script_and_python_dash_m_print_the_same_help() -> None:
    script = Path(sys.executable).with_name("mcp-notebook")
    via_m = subprocess.run([sys.executable, "-m", "mcp_notebook", "serve", "--help"], capture_output=True, text=True)
    assert via_m.returncode == 0
    assert via_m.stdout == cli.help_texts()["serve"]
    if script.exists():
        via_script = subprocess.run([str(script), "serve", "--help"], capture_output=True, text=True)
        assert (via_script.returncode, via_script.stdout) == (0, via_m.stdout)
