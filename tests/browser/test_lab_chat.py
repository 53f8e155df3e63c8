"""The prompts in the Jupyter chat (jupyterlab-chat), and the extension without it, in headless Chromium.

Lab starts fresh (default settings, no jupyterlab-lsp) with mcp-notebook installed from its wheel and
jupyterlab-chat from the test extras. In a chat, `/` lists every prompt of the user's servers as a
`/server:prompt` command on the first try; choosing one opens a form of its arguments (required ones marked,
values from the server) and the rendered prompt replaces the command in the chat input, unsent. A prompt
without arguments is rendered at once; what the server refuses is said in the form, which stays open.
A second Lab has no jupyterlab-chat at all (its front end is not on the extensions path): the extension
loads and `/` in a Markdown file works as before.

Screenshots go to test-artifacts/browser/ (`chat-*.png`); docs/images/ holds copies of the good ones.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_steps import STEP
from lab_harness import ARTIFACTS, Lab, install_wheel, running_lab
from test_prompts_extension import open_notes, shoot, wait_for_menu, without_jupyterlab_lsp

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SERVED = ["/jupyter:classify_sentiment", "/jupyter:code_review", "/jupyter:describe_chart"]
CHAT_LABEXTENSION = "jupyterlab-chat-extension"
GREETING = "greeting.ipynb"  # a prompt without arguments, written once Lab runs


def _chat_installed() -> bool:
    try:
        import jupyterlab_chat  # noqa: F401
    except ImportError:
        return False
    return True


def lab_with_the_wheel(base: Path, config: dict[str, Any] | None = None) -> Iterator[Lab]:
    """Lab with mcp-notebook's wheel in a prefix of its own, no jupyterlab-lsp, and `config` added."""
    prefix = base / "prefix"
    if not prefix.exists():
        install_wheel(prefix)
    without_jupyterlab_lsp(base / "config")
    server_config = base / "config" / "jupyter_server_config.json"
    merged = json.loads(server_config.read_text(encoding="utf-8"))
    for section, values in (config or {}).items():
        for key, value in values.items():
            if isinstance(value, dict):
                merged.setdefault(section, {}).setdefault(key, {}).update(value)
            else:
                merged.setdefault(section, {})[key] = value
    server_config.write_text(json.dumps(merged), encoding="utf-8")
    env = {"JUPYTER_PATH": str(prefix / "share/jupyter"), "JUPYTER_CONFIG_PATH": str(prefix / "etc/jupyter")}
    with running_lab(base, env) as running:
        yield running


@pytest.fixture(scope="module")
def chat_lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not _chat_installed():
        pytest.skip("jupyterlab-chat is not installed: pip install -e '.[test]' installs it")
    yield from lab_with_the_wheel(tmp_path_factory.mktemp("chat-lab"))


def extensions_path_without_the_chat(base: Path, prefix: Path) -> list[str]:
    """One folder holding every prebuilt Lab extension found here except jupyterlab-chat's (as links)."""
    from jupyter_core.paths import jupyter_path

    folder = base / "labextensions"
    folder.mkdir()
    sources = [prefix / "share/jupyter/labextensions", *map(Path, jupyter_path("labextensions"))]
    for source in sources:
        if not source.is_dir():
            continue
        packages = [
            p for entry in source.iterdir() for p in (entry.iterdir() if entry.name.startswith("@") else [entry])
        ]
        for package in packages:
            name = package.relative_to(source)
            if str(name) == CHAT_LABEXTENSION or not (package / "package.json").is_file():
                continue
            link = folder / name
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(package, target_is_directory=True)
    return [str(folder)]


@pytest.fixture(scope="module")
def lab_without_chat(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Lab whose extensions path leaves jupyterlab-chat's front end out, and with its server extension off."""
    base = tmp_path_factory.mktemp("no-chat-lab")
    install_wheel(base / "prefix")
    path = extensions_path_without_the_chat(base, base / "prefix")
    config = {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_chat": False}},
        "LabApp": {"labextensions_path": path},
    }
    yield from lab_with_the_wheel(base, config)


INPUT = ".jp-chat-input-container textarea"
MENU = ".MuiAutocomplete-popper"
FORM = ".jp-mcp-chat-form"


def open_chat(page: Any, lab: Lab, name: str) -> None:
    """A new chat, opened as a user does from File > New > Chat, with its input focused."""
    page.goto(f"{lab.url}/lab?reset")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands.hasCommand('jupyterlab-chat:create')")
    page.evaluate(
        """async (name) => {
            const path = await window.jupyterapp.commands.execute('jupyterlab-chat:create', {name});
            await window.jupyterapp.commands.execute('docmanager:open', {path});
        }""",
        name,
    )
    page.locator(INPUT).first.click(timeout=STEP)


def chat_text(page: Any) -> str:
    text: str = page.locator(INPUT).first.input_value()
    return text


def wait_for_chat_text(page: Any, *, contains: str, lacks: str = "") -> str:
    page.wait_for_function(
        """([selector, contains, lacks]) => {
            const text = document.querySelector(selector).value;
            return text.includes(contains) && (!lacks || !text.includes(lacks));
        }""",
        arg=[INPUT, contains, lacks],
        timeout=STEP,
    )
    return chat_text(page)


def wait_for_commands(page: Any, *wanted: str) -> list[str]:
    """Wait until the chat's command menu lists every one of `wanted` (and only prompts when all are ours)."""
    page.wait_for_function(
        """(wanted) => {
            const names = Array.from(document.querySelectorAll('.jp-chat-command-name'), (e) => e.textContent);
            return names.length > 0 && wanted.every((w) => names.includes(w));
        }""",
        arg=list(wanted),
        timeout=STEP,
    )
    names: list[str] = page.locator(".jp-chat-command-name").all_inner_texts()
    return names


def test_slash_in_the_chat_lists_the_prompts_and_a_chosen_one_lands_rendered_in_the_input(
    page: Any, chat_lab: Lab
) -> None:
    try:
        open_chat(page, chat_lab, "prompts")
        page.keyboard.type("/")  # once: the first `/` lists the prompts
        names = wait_for_commands(page, *SERVED)
        assert [n for n in names if n.startswith("/jupyter:")] == SERVED, names
        shoot(page, "chat-commands.png", MENU, INPUT)

        page.keyboard.type("code")
        assert wait_for_commands(page, "/jupyter:code_review") == ["/jupyter:code_review"]
        page.keyboard.press("Enter")
        form = page.locator(FORM)
        form.wait_for(timeout=STEP)
        assert form.locator(".jp-mcp-chat-command").inner_text() == "/jupyter:code_review"
        fields = {
            f.locator(".jp-mcp-field-name").inner_text(): f.locator("input").get_attribute("placeholder")
            for f in form.locator(".jp-mcp-field").all()
        }
        assert fields == {  # required marked, defaults shown
            "code*": "required",
            "language": "optional, default: Python",
            "focus": "optional, default: bugs",
        }
        assert page.evaluate("() => document.activeElement.name") == "code"

        page.keyboard.press("Enter")  # nothing filled in: the form says what is missing, beside the field, and stays
        code = form.locator(".jp-mcp-field", has=page.locator("input[name=code]"))
        status = form.locator(".jp-mcp-status.jp-mcp-error")
        status.wait_for(timeout=STEP)
        assert status.inner_text() == "Fill in the fields marked *, then try again."
        assert code.locator(".jp-mcp-field-error").inner_text() == "Required: fill this in."
        assert "jp-mcp-invalid" in (code.get_attribute("class") or "")
        shoot(page, "chat-required.png", FORM)
        page.keyboard.type("print(1)")
        status.wait_for(state="detached", timeout=STEP)  # filled in: no longer said missing
        assert code.locator(".jp-mcp-field-error").inner_text() == ""
        assert "jp-mcp-invalid" not in (code.get_attribute("class") or "")
        page.keyboard.press("Tab")
        values = form.locator("input[name=language] + .jp-mcp-values")
        values.wait_for(timeout=STEP)  # the server's values, as soon as the field has the focus
        assert values.locator("li").all_inner_texts() == ["Python", "JavaScript", "TypeScript", "Rust", "Go", "SQL"]
        page.keyboard.type("Ru")
        page.wait_for_function(
            "(s) => Array.from(document.querySelectorAll(s), (e) => e.textContent).join() === 'Rust'",
            arg=f"{FORM} input[name=language] + .jp-mcp-values li",
            timeout=STEP,
        )
        shoot(page, "chat-arguments.png", FORM)
        values.locator("li", has_text="Rust").click()
        assert form.locator("input[name=language]").input_value() == "Rust"
        assert values.is_hidden()

        page.keyboard.press("Enter")
        text = wait_for_chat_text(page, contains="careful reviewer of Rust code", lacks="/jupyter:code_review")
        assert "print(1)" in text
        assert form.count() == 0
        assert page.evaluate(f"() => document.activeElement === document.querySelector('{INPUT}')")
        shoot(page, "chat-rendered.png", ".jp-chat-input-container")
        assert page.locator(".jp-chat-message").count() == 0  # in the input, not sent
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "chat-failure.png"), full_page=True)
        raise


def served_names(lab: Lab) -> set[str]:
    with urllib.request.urlopen(f"{lab.url}/mcp-notebook/api/prompts", timeout=30) as answer:
        lists = json.load(answer)
    return {f"{s['name']}:{p['name']}" for s in lists["servers"] for p in s["prompts"]}


def wait_until_served(lab: Lab, name: str, served: bool = True) -> None:
    """Long-poll the prompt lists (`?since=version`) until `name` is served (or, `served=False`, no longer)."""
    deadline = time.monotonic() + STEP / 1000
    version = -1
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{lab.url}/mcp-notebook/api/prompts?since={version}", timeout=30) as answer:
            lists = json.load(answer)
        if any(f"{s['name']}:{p['name']}" == name for s in lists["servers"] for p in s["prompts"]) == served:
            return
        version = lists["version"]
    raise AssertionError(f"{name} still {'not ' if served else ''}served after {STEP / 1000:g} s")


def write_prompt_notebook(lab: Lab, file: str, name: str, text: str) -> None:
    """A notebook serving one Markdown cell as the prompt `name`, in the served folder; waits until it is served."""
    cell = {"cell_type": "markdown", "id": name, "metadata": {"tags": [f"prompt:{name}"]}, "source": text}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (lab.root / file).write_text(json.dumps(notebook), encoding="utf-8")
    wait_until_served(lab, f"jupyter:{name}")


def test_a_prompt_without_arguments_is_rendered_at_once_and_cancel_keeps_the_command(page: Any, chat_lab: Lab) -> None:
    write_prompt_notebook(chat_lab, GREETING, "greeting", "Greet the people in this chat warmly.")
    try:
        open_chat(page, chat_lab, "greeting")
        page.keyboard.type("Hello! /gree")  # the prompt's own name finds it too
        assert wait_for_commands(page, "/jupyter:greeting") == ["/jupyter:greeting"]
        page.keyboard.press("Enter")
        text = wait_for_chat_text(page, contains="Greet the people in this chat warmly.", lacks="/jupyter:")
        assert text.startswith("Hello! Greet the people")
        assert page.locator(FORM).count() == 0

        # Cancelling a form leaves the command as written, to edit or send.
        page.keyboard.type(" /jupyter:describe_chart ")  # typed in full and a space: chosen as well
        form = page.locator(FORM)
        audience = form.locator("input[name=audience]")
        values = form.locator("input[name=audience] + .jp-mcp-values")
        values.wait_for(timeout=STEP)
        page.keyboard.press("Escape")  # first the values, then the form
        values.wait_for(state="hidden", timeout=STEP)
        assert form.is_visible()
        page.keyboard.type("e")
        page.wait_for_function(
            "(s) => Array.from(document.querySelectorAll(s), (e) => e.textContent).join() === 'engineers,executives'",
            arg=f"{FORM} input[name=audience] + .jp-mcp-values li",
            timeout=STEP,
        )
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")  # picks the value, does not insert
        assert audience.input_value() == "executives"
        assert values.is_hidden() and form.is_visible()
        page.keyboard.press("Escape")
        form.wait_for(state="detached", timeout=STEP)
        assert chat_text(page).endswith("warmly. /jupyter:describe_chart ")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "chat-greeting-failure.png"), full_page=True)
        raise


def test_without_jupyterlab_chat_the_extension_loads_and_slash_works(page: Any, lab_without_chat: Lab) -> None:
    with urllib.request.urlopen(f"{lab_without_chat.url}/lab/api/extensions?refresh=0", timeout=30) as answer:
        extensions = {e["name"] for e in json.load(answer)}
    assert "mcp-notebook" in extensions
    assert CHAT_LABEXTENSION not in extensions
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        open_notes(page, lab_without_chat)
        assert page.evaluate("() => window.jupyterapp.hasPlugin('mcp-notebook:plugin')")
        assert not page.evaluate("() => window.jupyterapp.commands.hasCommand('jupyterlab-chat:create')")
        page.keyboard.type("/")
        wait_for_menu(page, *SERVED)
        assert page.evaluate("() => window.jupyterapp.isPluginActivated('mcp-notebook:plugin')")
        assert errors == []
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "chat-absent-failure.png"), full_page=True)
        raise


def test_what_the_server_refuses_is_said_in_the_form_which_stays_open(page: Any, chat_lab: Lab) -> None:
    write_prompt_notebook(chat_lab, "farewell.ipynb", "farewell", "Say goodbye to {{name}}.")
    try:
        open_chat(page, chat_lab, "farewell")
        page.keyboard.type("/jupyter:farewell ")
        form = page.locator(FORM)
        form.wait_for(timeout=STEP)
        # The notebook goes away while the form is open: the server no longer has the prompt.
        (chat_lab.root / "farewell.ipynb").unlink()
        wait_until_served(chat_lab, "jupyter:farewell", served=False)
        page.keyboard.type("Ada")
        page.keyboard.press("Enter")
        error = form.locator(".jp-mcp-status.jp-mcp-error")
        error.wait_for(timeout=STEP)
        assert "farewell" in error.inner_text(), error.inner_text()
        assert form.locator("input[name=name]").input_value() == "Ada"  # nothing lost
        assert chat_text(page) == "/jupyter:farewell "
        shoot(page, "chat-refused.png", FORM)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "chat-refused-failure.png"), full_page=True)
        raise
