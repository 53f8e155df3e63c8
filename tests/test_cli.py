"""The `mcp-notebook` command line: help without the SDK, list, render, config, argument errors."""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from import_probe import ARGPARSE_HELP, new_modules

from mcp_notebook.cli import build_parser, main

NotebookFactory = Callable[..., Path]
HEAVY = ("mcp", "mcp_types", "pydantic", "anyio", "uvicorn", "starlette")


@pytest.fixture(autouse=True)
def _thaw() -> Iterator[None]:
    """Loading freezes what it built, as a long-lived server should; in a test process it is freed again later."""
    yield
    gc.unfreeze()  # else another test, counting frozen objects, sees this one's go


@pytest.fixture
def folder(notebook_factory: NotebookFactory, tmp_path: Path) -> Path:
    arguments = [
        {"name": "who", "description": "the person to greet"},
        {"name": "style", "required": False, "default": "friendly", "completions": ["friendly", "formal"]},
    ]
    notebook_factory(
        "prompts/greet.ipynb",
        [
            {
                "source": "# Greeting\nSay hello to {{who}}, {{style}}.",
                "mcp": {"prompt": "greet", "arguments": arguments},
            },
            {
                "source": "print('hi')",
                "cell_type": "code",
                "mcp": {"prompt": "greet", "role": "assistant"},
                "outputs": [
                    {
                        "output_type": "display_data",
                        "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
                        "metadata": {},
                    }
                ],
            },
        ],
    )
    notebook_factory("prompts/sub/explain.ipynb", [{"source": "Explain {{topic}}.", "mcp": {"prompt": "explain"}}])
    return tmp_path / "prompts"


def heavy_modules_after(argv: list[str]) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    code = (
        "import sys\n"
        "from mcp_notebook.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    line = next(line for line in done.stderr.splitlines() if line.startswith("HEAVY="))
    return [m for m in line.removeprefix("HEAVY=").split(",") if m], done


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["serve", "--help"],
        ["list", "--help"],
        ["render", "--help"],
        ["config", "--help"],
        ["serve"],
        ["serve", "x", "--port", "nope"],
        ["frobnicate"],
    ],
    ids=["help", "serve-help", "list-help", "render-help", "config-help", "no-path", "bad-port", "unknown-command"],
)
def test_help_and_argument_errors_do_not_import_the_sdk(argv: list[str]) -> None:
    heavy, done = heavy_modules_after(argv)
    assert heavy == []
    # A refused value is one line, as a bad variable gets; the other mistakes show the usage.
    said = "mcp-notebook: --port must be a port number, got 'nope'" if "nope" in argv else "usage: mcp-notebook"
    assert said in done.stdout + done.stderr


@pytest.mark.parametrize("command", ["serve", "list", "render", "config"])
def test_every_command_help_explains_itself_with_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert "examples:" in text
    assert f"mcp-notebook {command} " in text


def test_no_command_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "serve     serve notebooks as MCP prompts" in err


def test_every_serve_option_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    for option in ("--http", "--host", "--port", "--token", "--page-size", "--no-watch", "--allow-remote"):
        assert option in text


def test_python_dash_m_runs_the_same_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout.startswith("mcp-notebook ")


def test_list_shows_each_prompt_with_its_arguments_and_origin(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert "greet — Greeting  (greet.ipynb)" in out
    assert "who (required): the person to greet" in out
    assert "style (optional, default 'friendly')" in out
    assert "explain  (sub/explain.ipynb)" in out
    assert "2 prompts from 2 notebooks" in err


def test_list_json_is_one_machine_readable_document(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(folder), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in document["prompts"]] == ["greet", "explain"]
    assert document["prompts"][0]["arguments"][1] == {
        "name": "style",
        "title": None,
        "description": None,
        "required": False,
        "default": "friendly",
        "completions": ["friendly", "formal"],
    }
    assert document["errors"] == {}


def test_list_reports_a_broken_notebook_and_exits_1(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "broken.ipynb").write_text("{ this is not json")
    assert main(["list", str(folder), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert list(document["errors"]) == ["broken.ipynb"]
    assert any("broken.ipynb" in warning for warning in document["warnings"])


def test_list_names_a_broken_notebook_once_and_keeps_the_others(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "broken.ipynb").write_text("{ this is not json")
    assert main(["list", str(folder)]) == 1
    out, err = capsys.readouterr()
    assert "greet — Greeting  (greet.ipynb)" in out
    assert err.count("broken.ipynb") == 1, err
    assert "warning: broken.ipynb: is not valid JSON" in err


def test_an_unknown_prompt_suggests_a_close_name_and_says_which_notebooks_were_not_read(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "broken.ipynb").write_text("{ this is not json")
    assert main(["render", str(folder), "gret"]) == 2
    err = capsys.readouterr().err
    assert "Unknown prompt: gret; did you mean greet?" in err
    assert "not read, so its prompts are missing: broken.ipynb: is not valid JSON" in err


def test_render_prints_each_message_under_its_role(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(folder), "greet", "who=Ada"]) == 0
    out = capsys.readouterr().out
    assert "## user\n\n# Greeting\nSay hello to Ada, friendly." in out
    assert "## assistant\n\n```python\nprint('hi')\n```" in out
    assert "## assistant\n\n[image/png, 8 bytes]" in out


def test_render_takes_values_with_spaces_and_equals_signs(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(folder), "greet", "who=Ada Lovelace", "style=a=b"]) == 0
    assert "Say hello to Ada Lovelace, a=b." in capsys.readouterr().out


def test_render_with_a_missing_argument_says_how_to_call_it(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(folder), "greet", "style=very warm"]) == 2
    err = capsys.readouterr().err
    # Only the missing argument, and the call given so far completed with it.
    assert (
        "Missing required argument for greet: who. "
        f"Call it as: mcp-notebook render {folder} greet 'style=very warm' who=…" in err
    )
    assert "<who>" not in err


def test_render_with_an_unknown_argument_exits_2(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(folder), "greet", "who=x", "mood=happy"]) == 2
    assert "Unknown arguments for prompt 'greet': mood" in capsys.readouterr().err


def test_render_with_a_misspelled_argument_name_says_which_was_meant(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", str(folder), "greet", "who=x", "stlye=warm"]) == 2
    assert "Unknown arguments for prompt 'greet': stlye (it takes: who, style). Did you mean style=?" in (
        capsys.readouterr().err
    )


def test_render_of_an_unknown_prompt_suggests_names(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(folder), "gret"]) == 2
    err = capsys.readouterr().err
    assert "Unknown prompt: gret; did you mean greet?" in err
    assert "available: greet, explain" in err


def test_render_without_a_prompt_name_is_a_usage_error(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(folder)]) == 2
    assert "then a prompt name" in capsys.readouterr().err


def test_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(tmp_path / "nope")]) == 2
    assert "No such notebook or folder" in capsys.readouterr().err


def test_config_prints_ready_to_paste_client_configuration(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", str(folder), "--name", "team"]) == 0
    out = capsys.readouterr().out
    claude_line = next(line for line in out.splitlines() if line.startswith("claude mcp add"))
    assert claude_line.startswith("claude mcp add team -- /")
    assert claude_line.endswith(f"serve {folder.resolve()}")
    blocks = [json.loads(block) for block in _json_blocks(out)]
    vscode, desktop = blocks
    server = vscode["servers"]["team"]
    assert server["type"] == "stdio"
    assert Path(server["command"]).is_absolute()
    assert server["args"][-2:] == ["serve", str(folder.resolve())]
    assert desktop["mcpServers"]["team"] == {"command": server["command"], "args": server["args"]}


def test_config_names_the_server_after_the_folder_by_default(
    notebook_factory: NotebookFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notebook_factory("My Prompts!/a.ipynb", [{"source": "x", "mcp": {"prompt": "a"}}])
    assert main(["config", str(tmp_path / "My Prompts!")]) == 0
    assert "claude mcp add my-prompts --" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "x", "--token", "t"], "need --http"),
        (["serve", "x", "--token-file", "t"], "need --http"),
        (["serve", "x", "--http", "--host", "0.0.0.0"], "add --allow-remote"),
    ],
)
def test_serve_refuses_options_that_make_no_sense_or_expose_the_server(
    folder: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [argv[0], str(folder), *argv[2:]]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def _json_blocks(text: str) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line == "{":
            current = [line]
        elif current:
            current.append(line)
            if line == "}":
                blocks.append("\n".join(current))
                current = []
    return blocks


def test_loading_for_serve_freezes_what_the_scan_built_and_leaves_collection_on(
    notebook_factory: Callable[..., Path],
) -> None:
    import gc

    from mcp_notebook.commands import prompts

    path = notebook_factory("frozen.ipynb", [{"source": "Hello {{who}}", "mcp": {"prompt": "hello"}}])
    before = gc.get_freeze_count()
    try:
        registry, _ = prompts.load([str(path)])
        assert [p.name for p in registry.snapshot().prompts] == ["hello"]
        assert gc.isenabled()
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "env_dir", "expect"),
    [
        (["--cache-dir", "{cache}"], False, True),
        ([], True, True),  # $MCP_NOTEBOOK_CACHE_DIR
        (["--no-cache"], True, False),
    ],
)
def test_serve_keeps_its_notebook_index_where_told(
    notebook_factory: Callable[..., Path], tmp_path: Path, options: list[str], env_dir: bool, expect: bool
) -> None:
    import os

    path = notebook_factory("indexed.ipynb", [{"source": "Hello {{who}}", "mcp": {"prompt": "hello"}}])
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "MCP_NOTEBOOK_CACHE_DIR"}
    if env_dir:
        env["MCP_NOTEBOOK_CACHE_DIR"] = str(cache)
    argv = [sys.executable, "-m", "mcp_notebook", "serve", str(path), "--no-watch"]
    argv += [o.format(cache=cache) for o in options]
    run = subprocess.run(argv, input=b"", capture_output=True, env=env, timeout=120, check=False)
    assert run.returncode == 0, run.stderr.decode()
    assert (cache / "notebook-index.sqlite3").exists() is expect
    assert not (cache / "notebook-index.sqlite3-wal").exists()  # closed on the way out: the log folded in


# --- every error says what to do (issue #25) -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "command_module"),
    [
        (["--help"], None),
        (["serve", "--help"], "mcp_notebook.commands.serve"),
        (["render", "--help"], "mcp_notebook.commands.prompts"),
    ],
)
def test_help_imports_nothing_but_what_argparse_itself_needs_to_print_help(
    argv: list[str], command_module: str | None
) -> None:
    # The imports are what made `--help` take 168 ms (the kernel proxy, logging, dataclasses, json,
    # shutil, typing): `--help` may import only the command and what argparse needs for any help.
    argparse_alone = new_modules(ARGPARSE_HELP)
    ours = new_modules(f"from mcp_notebook.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass")
    assert ours - argparse_alone == {
        "mcp_notebook",
        "mcp_notebook.version",
        "mcp_notebook.cli",
        "mcp_notebook.command_line",
        "mcp_notebook.commands",
        "mcp_notebook.commands.usage",  # the program's name and its usage error, shared by the commands
        "mcp_notebook.terminal",
        "mcp_notebook.settings",  # the options `serve` declares, which its flags are derived from
        *([command_module] if command_module else []),  # the command typed, and no other
    }


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err.splitlines()


def test_a_misspelled_subcommand_keeps_the_usage_line_and_says_what_to_type(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _usage_error(["serv", str(folder), "--http"], capsys)
    assert lines == [
        "usage: mcp-notebook [-h] [--version] COMMAND ...",
        "mcp-notebook: error: argument COMMAND: invalid choice: 'serv' "
        "(choose from 'serve', 'list', 'render', 'check', 'config', 'connect', 'trust', 'help')",
        f"mcp-notebook: did you mean serve? type: mcp-notebook serve {folder} --http",
    ]


@pytest.mark.parametrize("command", ["serve", "list", "render", "check", "config", "connect"])
def test_every_subcommand_misspelled_is_suggested(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    typo = command[:2] + command[3:]  # one letter left out
    lines = _usage_error([typo, "x"], capsys)
    assert lines[-1] == f"mcp-notebook: did you mean {command}? type: mcp-notebook {command} x"


def test_a_misspelled_option_is_suggested_under_the_subcommands_usage_line(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _usage_error(["serve", str(folder), "--htp", "--prot", "8765"], capsys)
    assert lines[0].startswith("usage: mcp-notebook serve [-h] [--http]")
    assert lines[-2:] == [
        "mcp-notebook serve: error: unrecognized arguments: --htp --prot 8765",
        f"mcp-notebook: did you mean --http? type: mcp-notebook serve {folder} --http --prot 8765",
    ]


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings if option.startswith("--")]


def _every_long_option() -> list[tuple[str, str]]:
    parser = build_parser()
    found = [("", option) for option in _options(parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += [(name, option) for option in _options(sub)]
    return found


@pytest.mark.parametrize(("command", "option"), _every_long_option())
def test_every_option_misspelled_is_suggested(command: str, option: str, capsys: pytest.CaptureFixture[str]) -> None:
    # A letter left out from the middle on: a prefix of an option would be taken as an abbreviation (allow_abbrev).
    every = {known for _, known in _every_long_option()}
    cuts = range(2 + (len(option) - 2) // 2, 2, -1)
    typo = next(typo for cut in cuts if not any(k.startswith(typo := option[:cut] + option[cut + 1 :]) for k in every))
    word = "format" if command == "help" else "x"  # a word each command takes where a path or name goes
    argv = [command, word, typo] if command else [typo]
    lines = _usage_error(argv, capsys)
    assert (
        lines[-1] == f"mcp-notebook: did you mean {option}? type: mcp-notebook {' '.join(argv).replace(typo, option)}"
    )


def test_a_word_without_a_value_after_the_prompt_name_says_it_needs_one(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", str(folder), "greet", "who"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "mcp-notebook: who needs a value: who=…",
        f"mcp-notebook: call it as: mcp-notebook render {folder} greet who=<who> [style=...]",
    ]
    assert main(["render", str(folder), "greet", "style=formal", "Ada"]) == 2
    assert (
        capsys.readouterr().err.splitlines()[0] == "mcp-notebook: 'Ada' is not NAME=VALUE: greet takes who=…, style=…"
    )


def test_a_missing_folder_before_the_prompt_name_is_still_named(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", str(folder), str(folder / "nope"), "greet"]) == 2
    assert capsys.readouterr().err == f"mcp-notebook: No such notebook or folder: {folder / 'nope'}\n"


def test_a_misspelled_option_is_named_even_when_argparse_stops_at_another_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _usage_error(["serve", "--htp"], capsys)
    assert lines[-2:] == [
        "mcp-notebook serve: error: the following arguments are required: PATH",
        "mcp-notebook: did you mean --http?",  # no line to type: PATH is still missing
    ]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["serve", "x", "--port", "-1"], ["mcp-notebook: --port must be a port number from 0 to 65535"]),
        (["serve", "x", "--htt", "--workers", "0"], ["mcp-notebook: --workers must be at least 1, got '0'"]),
        (["serve"], ["usage: ", "mcp-notebook serve: error: "]),
    ],
)
def test_values_and_abbreviations_are_not_taken_for_typos(
    argv: list[str], said: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _usage_error(argv, capsys)
    assert "did you mean" not in lines[-1]
    assert lines[0].startswith(said[0])  # a refused value is one line, as a bad variable gets
    assert lines[-1].startswith(said[-1])
    if len(said) == 1:
        assert len(lines) == 1, lines


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--json", "examples"],
        ["render", "examples/code_review.ipynb", "code_review", "code=x = 1"],
        ["config", "examples"],
        ["--help"],
        ["help", "format"],
    ],
    ids=["list", "render", "config", "help", "guide"],
)
def test_output_to_a_closed_pipe_ends_quietly_with_the_shells_code(argv: list[str]) -> None:
    """`mcp-notebook list --json | head -1`: the reader is gone before the output is; no traceback."""
    import os

    reader, writer = os.pipe()
    os.close(reader)  # as `head` does once it has its line
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from mcp_notebook.console import main; sys.exit(main())", *argv],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    assert done.stderr == ""
    assert done.returncode == 141  # 128 + SIGPIPE, as a shell reports it


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("topic", "page"), [("format", "notebook-format.md"), ("deployment", "deployment.md")])
def test_help_prints_the_guide_a_hint_names_as_its_docs_page_says_it(
    topic: str, page: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["help", topic]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / page).read_text(encoding="utf-8")


def test_help_without_a_topic_lists_the_topics_and_a_misspelled_one_is_suggested(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert "mcp-notebook help TOPIC" in out and "  format  " in out and "  deployment  " in out
    suggested = _usage_error(["help", "formt"], capsys)[-1]
    assert suggested == "mcp-notebook: did you mean format? type: mcp-notebook help format"


def test_no_help_and_no_hint_names_a_docs_page_a_registry_install_does_not_have() -> None:
    """Every page a user is sent to is one they have: `mcp-notebook help TOPIC`, never docs/…"""
    from mcp_notebook import help_text
    from mcp_notebook.checking.command import CHECK_HELP
    from mcp_notebook.sources.start_report import FORMAT_GUIDE

    for command, text in help_text.TEXTS.items():
        assert "docs/" not in text, command
    assert "docs/" not in CHECK_HELP
    assert FORMAT_GUIDE == "mcp-notebook help format"
