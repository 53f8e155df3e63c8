"""`%mcp` subcommands as objects: one table, one parser class, the same help layout for all, one-line errors.

Every subcommand is an entry of `magics.SUBCOMMANDS`; its `--help` has the
sections usage, description, arguments (when it takes any), options and
examples, and `%mcp help SUB` prints the very same text. Tab offers the
options of every subcommand, read from those parsers.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from magics_harness import DEADLINE, isolated_shell

import mcp_notebook.ipython
from mcp_notebook.ipython import magics as magics_module
from mcp_notebook.ipython.magics import SUBCOMMANDS
from mcp_notebook.ipython.subcommands import Subcommand, SubcommandParser

__all__ = ["isolated_shell"]

EVERY_SUBCOMMAND = (
    "servers",
    "connect",
    "disconnect",
    "prompts",
    "get",
    "complete",
    "skills",
    "skill",
    "help",
    "trust",
    "serve",
    "stop",
    "unpublish",
    "form",
    "picker",
    "check",
)
IPYTHON_PACKAGE = Path(mcp_notebook.ipython.__file__).parent


def sections(help_text: str) -> list[str]:
    """The headings of a help text, in order: `usage`, `description`, then each `name:` line at column 0."""
    blocks = help_text.strip("\n").split("\n\n")
    assert blocks[0].startswith("usage: "), help_text
    found = ["usage"]
    for block in blocks[1:]:
        first = block.splitlines()[0]
        if re.fullmatch(r"[a-z]+:", first):
            found.append(first.removesuffix(":"))
        elif found[-1] == "usage":
            found.append("description")
        elif found[-1] != "description":  # a second paragraph of the description is fine, nothing else
            raise AssertionError(f"text outside any section: {block!r}\n{help_text}")
    return found


def help_of(shell: InteractiveShell, capsys: pytest.CaptureFixture[str], line: str) -> str:
    capsys.readouterr()
    assert shell.run_line_magic("mcp", line) is None
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_the_table_holds_every_subcommand_as_an_object_with_a_parser_of_the_one_class() -> None:
    assert tuple(SUBCOMMANDS) == EVERY_SUBCOMMAND
    for name, subcommand in SUBCOMMANDS.items():
        assert isinstance(subcommand, Subcommand)
        assert subcommand.name == name
        assert subcommand.summary and "\n" not in subcommand.summary
        parser = subcommand.parser()
        assert type(parser) is SubcommandParser, name
        assert parser.prog == f"%mcp {name}"
        assert callable(subcommand.run)


@pytest.mark.parametrize("name", EVERY_SUBCOMMAND)
def test_every_help_has_the_same_sections_and_help_sub_prints_the_same_text(
    name: str, isolated_shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    text = help_of(isolated_shell, capsys, f"{name} --help")

    assert text.startswith(f"usage: %mcp {name} [-h]"), text
    takes_arguments = any(not a.option_strings for a in SUBCOMMANDS[name].parser()._actions)
    expected = ["usage", "description", *(["arguments"] if takes_arguments else []), "options", "examples"]
    assert sections(text) == expected
    assert "\n  -h, --help  " in text and text.count("show this help") == 1
    assert re.search(r"\nexamples:\n  (\w+ = )?%mcp " + name + r"\b", text), text
    assert max(len(line) for line in text.splitlines()) <= 88
    assert help_of(isolated_shell, capsys, f"{name} -h") == text
    assert help_of(isolated_shell, capsys, f"help {name}") == text


def test_help_is_shown_again_when_asked_after_other_words(
    isolated_shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    for line in ("servers --reload --help", "picker review --help", "connect docs --help", "get docs:x k=v --help"):
        name = line.split()[0]
        assert help_of(isolated_shell, capsys, line) == help_of(isolated_shell, capsys, f"{name} --help"), line


def test_the_overview_lists_every_subcommand_with_its_summary(
    isolated_shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    text = help_of(isolated_shell, capsys, "help")
    overview, listing = text.split("\nsubcommands:\n", 1)
    assert "positional arguments" not in overview  # %mcp?'s block would list the subcommands twice
    for name, subcommand in SUBCOMMANDS.items():
        assert re.search(rf"^  {name} +{re.escape(subcommand.summary)}$", listing, re.M), name
    magic_help = isolated_shell.find_line_magic("mcp").__doc__
    for name in SUBCOMMANDS:
        assert re.search(rf"\b{name}\b", magic_help), f"%mcp? does not name {name}"


# Words a subcommand's parser refuses: each gives one line naming the subcommand and pointing to its help.
BAD_WORDS = [
    ("servers", "--no-such-option", "unrecognized arguments: --no-such-option"),
    ("servers", "--config", "argument --config: expected one argument"),
    ("connect", "", "the following arguments are required: NAME"),
    ("connect", "docs --mode sideways", "argument --mode: invalid choice: 'sideways' (choose from"),
    ("disconnect", "a b", "unrecognized arguments: b"),
    ("prompts", "--refresh=yes", "ignored explicit argument 'yes'"),
    ("complete", "docs:x", "the following arguments are required: ARGUMENT"),
    ("help", "get serve", "unrecognized arguments: serve"),
    ("serve", "--port eighty", "argument --port: invalid int value: 'eighty'"),
    ("serve", "--port 70000", "--port 70000 is not a port number"),
    ("serve", "--live-timeout 0", "--live-timeout 0 is not a number of seconds"),
    ("serve", "--liv who", "unrecognized arguments: --liv who"),
    ("stop", "now", "unrecognized arguments: now"),
    ("unpublish", "", "the following arguments are required: NAME"),
    ("unpublish", "explain --all", "unrecognized arguments: --all"),
    ("picker", "--bogus", "unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize(("name", "words", "message"), BAD_WORDS, ids=[f"{n} {w}" for n, w, _ in BAD_WORDS])
def test_bad_words_give_one_line_that_names_the_subcommand_and_its_help(
    name: str, words: str, message: str, isolated_shell: InteractiveShell
) -> None:
    with pytest.raises(UsageError) as raised:
        isolated_shell.run_line_magic("mcp", f"{name} {words}")

    text = str(raised.value)
    assert "\n" not in text
    assert text.startswith(f"%mcp {name}: ")
    assert message in text
    assert text.endswith(f"(see %mcp {name} --help)")


def test_the_serve_help_states_the_live_timeout_the_server_uses() -> None:
    from mcp_notebook.ipython.kernel_host import LIVE_MAGIC_TIMEOUT
    from mcp_notebook.ipython.kernel_server import parse_serve_options

    help_text = SUBCOMMANDS["serve"].parser().format_help()
    assert f"(default: {LIVE_MAGIC_TIMEOUT:g})" in help_text
    assert parse_serve_options([]).live_timeout == LIVE_MAGIC_TIMEOUT


# -- one parser class, one table ---------------------------------------------------------------------


def _argument_parser_subclasses() -> list[str]:
    found = []
    for path in sorted(IPYTHON_PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base).rpartition(".")[2] for base in node.bases}
                if bases & {"ArgumentParser", "MagicArgumentParser"}:
                    found.append(f"{path.relative_to(IPYTHON_PACKAGE)}:{node.name}")
    return found


def test_there_is_exactly_one_argument_parser_class_in_the_ipython_package() -> None:
    assert _argument_parser_subclasses() == ["subcommands.py:SubcommandParser"]


def test_the_magic_dispatches_through_the_table_not_by_module_and_function_names() -> None:
    tree = ast.parse(Path(magics_module.__file__).read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {"getattr", "__import__"} & names
    assert "import_module" not in attributes and "importlib" not in imported


# -- Tab -------------------------------------------------------------------------------------------


def _completions(shell: InteractiveShell, code: str) -> list[str]:
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        return [c.text for c in shell.Completer.completions(code, len(code))]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "%mcp serve --",
            ["--port", "--no-token", "--live", "--live-timeout", "--magics", "--all-magics", "--notebook"],
        ),
        ("%mcp serve --li", ["--live", "--live-timeout"]),
        ("%mcp serve --port 1 --st", ["--stdio-proxy"]),
        ("%mcp picker --", ["--all", "--help"]),
        ("%mcp picker review --a", ["--all"]),
        ("%mcp stop --", ["--help"]),
        ("%mcp unpublish --", ["--help"]),
        ("%mcp form --", ["--help"]),
        ("%mcp connect docs --mode ", ["auto", "legacy", "2026-07-28"]),
    ],
)
def test_tab_offers_the_options_every_subcommand_parser_declares(
    code: str, expected: list[str], isolated_shell: InteractiveShell
) -> None:
    offered = _completions(isolated_shell, code)
    assert offered[: len(expected)] == expected


def test_tab_offers_every_option_of_every_subcommand(isolated_shell: InteractiveShell) -> None:
    for name, subcommand in SUBCOMMANDS.items():
        declared = {s for a in subcommand.parser()._actions for s in a.option_strings if s.startswith("--")}
        assert set(_completions(isolated_shell, f"%mcp {name} --")) == declared, name


# -- light ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_help_for_every_subcommand_imports_nothing_heavy(tmp_path: Path) -> None:
    lines = [f"{name} --help" for name in EVERY_SUBCOMMAND] + [f"help {name}" for name in EVERY_SUBCOMMAND]
    code = (
        "heavy = ('mcp', 'pydantic', 'anyio', 'asyncio', 'ipywidgets', 'uvicorn', 'starlette',\n"
        "         'mcp_notebook.ipython.widgets', 'mcp_notebook.ipython.kernel_server')\n"
        "before = {m for m in heavy if m in sys.modules}\n"
        "shell.run_line_magic('load_ext', 'mcp_notebook')\n"
        "import contextlib, io\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    for line in {json.dumps(lines)}:\n"
        "        shell.run_line_magic('mcp', line)\n"
        "print(json.dumps({'new': sorted(m for m in heavy if m in sys.modules and m not in before),\n"
        "                  'usages': out.getvalue().count('usage: %mcp ')}))\n"
    )
    env = {"IPYTHONDIR": str(tmp_path / "ipython"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    script = "import json, sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"
    script += "shell = InteractiveShell.instance()\n" + code
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr

    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"new": [], "usages": len(lines)}
