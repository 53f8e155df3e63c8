"""The bridge in JupyterLab's own editor, through jupyter-lsp and jupyterlab-lsp, driven in headless Chromium.

Lab runs with the `mcp_notebook` server extension on (it serves the fixture
notebooks at `<base_url>mcp`) and nothing else configured: jupyter-lsp finds
the bridge by its entry point. In a `.md` file, `/` then Tab opens
JupyterLab's completer with the served prompts; accepting one writes it, Tab
after `audience=` lists the server's values, and "render here" replaces the
slash line with the rendered prompt. In a notebook's Markdown cell the same
works once JupyterLab's own "Enable autocompletion" setting is on (typing `/`
opens the menu there; Tab in a Markdown cell indents). An unknown prompt is
underlined as a diagnostic.

Screenshots go to test-artifacts/browser/ (`jupyterlab-*.png`, cropped to the
editor and its menu); docs/images/ holds copies of them.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from browser_steps import STEP
from lab_harness import ARTIFACTS, Lab, running_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

pytest.importorskip("jupyterlab_lsp", reason="jupyterlab-lsp is not installed (run .ci/browser-setup.sh)")

NOTES = "slash_notes.md"
CELLS = "slash_cells.ipynb"
SERVED = {"/jupyter:classify_sentiment", "/jupyter:code_review", "/jupyter:describe_chart"}
# Enough tries for the bridge to connect to <base_url>mcp (it does in the background) and for the first answer of
# a server to arrive (the bridge waits 0.2 s, then answers the next request from what came in meanwhile).
TRIES = 60


@pytest.fixture(scope="module")
def lsp_lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Lab with the mcp_notebook extension enabled, as `pip install mcp-notebook` enables it."""
    base = tmp_path_factory.mktemp("lsp-lab")
    config = base / "config"
    config.mkdir()
    enabled = {"ServerApp": {"jpserver_extensions": {"mcp_notebook": True}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(enabled), encoding="utf-8")
    with running_lab(base) as running:
        yield running


def record_messages(page: Any) -> list[dict[str, Any]]:
    """Every LSP message on the page's websocket to the bridge, as JSON, appended as they pass."""
    seen: list[dict[str, Any]] = []

    def on_socket(socket: Any) -> None:
        if "/lsp/ws/mcp-notebook" in socket.url:
            socket.on("framesent", lambda frame: seen.append(json.loads(frame)))
            socket.on("framereceived", lambda frame: seen.append(json.loads(frame)))

    page.on("websocket", on_socket)
    return seen


def open_notes(page: Any, lab: Lab) -> Any:
    page.goto(f"{lab.url}/lab/tree/{NOTES}?reset")
    editor = page.locator(".jp-FileEditor .cm-content")
    editor.wait_for(timeout=STEP)
    # jupyter-lsp starts the bridge for this file; the status bar says when it is connected.
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jp-StatusBar-Item'))"
        ".some((e) => e.textContent.includes('Fully initialized'))",
        timeout=STEP,
    )
    editor.click()
    page.keyboard.press("Control+End")
    return editor


def shown_items(page: Any) -> list[str]:
    """The labels in JupyterLab's completer menu while it is open (none when it is closed)."""
    labels: list[str] = page.evaluate(
        """() => {
            const menu = document.querySelector('.jp-Completer');
            if (!menu || menu.classList.contains('lm-mod-hidden')) return [];
            return Array.from(menu.querySelectorAll('.jp-Completer-item .jp-Completer-match'), (e) => e.textContent);
        }"""
    )
    return labels


_MENU_OPEN = """() => {
    const menu = document.querySelector('.jp-Completer');
    return menu && !menu.classList.contains('lm-mod-hidden') && menu.querySelector('.jp-Completer-item');
}"""


def wait_for_menu(page: Any, open_menu: Callable[[], None], wanted: Callable[[list[str]], bool]) -> list[str]:
    """The menu's labels once it shows what `wanted` accepts: open already, or opened by `open_menu` (retried).

    Each try waits for the menu up to 1 s: while the bridge connects, or a
    server's first answer is on its way, the menu may stay closed or not list it yet.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    shown: list[str] = []
    for attempt in range(TRIES):
        if attempt:
            open_menu()
        try:
            page.wait_for_function(_MENU_OPEN, timeout=1000)
        except PlaywrightTimeout:
            continue
        shown = shown_items(page)
        if wanted(shown):
            return shown
        page.keyboard.press("Escape")
    raise AssertionError(f"the completer never showed what was wanted; last shown: {shown}")


def choose(page: Any, label: str) -> None:
    """Click the menu item whose label is `label`, as a user picks one."""
    page.locator(".jp-Completer-item", has=page.locator(".jp-Completer-match", has_text=label)).first.click()


_SOURCE = """(editor) => {
    const widget = window.jupyterapp.shell.currentWidget.content;
    const model = editor === 'file' ? widget.editor.model : widget.activeCell.model;
    return model.sharedModel.getSource();
}"""


def editor_text(page: Any, editor: str) -> str:
    """The text of the file editor (`file`) or of the notebook's active cell (`cell`)."""
    text: str = page.evaluate(_SOURCE, editor)
    return text


def wait_for_text(page: Any, editor: str, *, ends_with: str = "", contains: str = "") -> str:
    """Wait until the editor's text ends with `ends_with` and contains `contains` (the chosen item is applied)."""
    page.wait_for_function(
        f"""([editor, endsWith, contains]) => {{
            const text = ({_SOURCE})(editor);
            return text.endsWith(endsWith) && text.includes(contains);
        }}""",
        arg=[editor, ends_with, contains],
        timeout=STEP,
    )
    return editor_text(page, editor)


def shoot(page: Any, name: str, around: str, *more: dict[str, float]) -> None:
    """A screenshot of `around` (all of a cell; an editor down to its last line), the open menu and `more`.

    Saved under test-artifacts/browser/.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    editor = page.locator(around).first.bounding_box()
    shown = [page.locator(f"{around} .cm-line").last.bounding_box(), *more]
    if editor["height"] < 400:  # a cell: all of it
        shown.append(editor)
    menu = page.locator(".jp-Completer:not(.lm-mod-hidden)")
    if menu.count():
        shown.append(menu.first.bounding_box())
    top = max(editor["y"] - 8, 0)
    bottom = max(b["y"] + b["height"] for b in shown) + 16
    right = min(max(b["x"] + b["width"] for b in shown) + 16, editor["x"] + editor["width"])
    clip = {"x": editor["x"], "y": top, "width": right - editor["x"], "height": bottom - top}
    page.screenshot(path=str(ARTIFACTS / name), clip=clip)


@dataclass(frozen=True)
class Asking:
    """How the user makes the editor ask the bridge: for the prompts, for values (after `audience=`), to render."""

    prompts: Callable[[], None]
    values: Callable[[], None]
    render: Callable[[], None]


def use_slash_commands(page: Any, editor: str, ask: Asking, shots: str, around: str) -> None:
    """Pick a prompt from the menu, complete an argument value, render the line in place; check the text each time."""
    # Once every server is up (a bridge started again lists the stored prompts at once, "connecting to 1 server…"
    # after them, until the server answers).
    shown = wait_for_menu(page, ask.prompts, lambda labels: set(labels) == SERVED)
    assert shown == sorted(SERVED)  # the bridge's ranking: these three tie, by name
    shoot(page, f"{shots}-prompts.png", around)
    choose(page, "/jupyter:describe_chart")
    wait_for_text(page, editor, ends_with="/jupyter:describe_chart")

    page.keyboard.type(" audience=")
    shown = wait_for_menu(page, ask.values, lambda labels: "executives" in labels)
    assert shown[:3] == ["a general audience", "engineers", "executives"]  # the server's values, in its order
    shoot(page, f"{shots}-values.png", around)
    choose(page, "executives")
    wait_for_text(page, editor, ends_with="/jupyter:describe_chart audience=executives")

    here = "/jupyter:describe_chart — render here"
    shown = wait_for_menu(page, ask.render, lambda labels: here in labels)
    assert shown[-2:] == [here, "/jupyter:describe_chart — render below"]
    shoot(page, f"{shots}-render.png", around)
    choose(page, here)
    text = wait_for_text(page, editor, contains="Describe this chart for executives")
    assert "/jupyter:describe_chart" not in text  # the slash line itself is gone
    assert "the best and the worst quarter" in text
    assert "[image: image/png]" in text  # the chart, as the default placeholder
    shoot(page, f"{shots}-rendered.png", around)


def test_slash_in_a_markdown_file_lists_the_served_prompts_completes_a_value_and_renders_in_place(
    page: Any, lsp_lab: Lab
) -> None:
    messages = record_messages(page)
    try:
        open_notes(page, lsp_lab)
        page.keyboard.type("/")

        def tab() -> None:
            page.keyboard.press("Tab")

        use_slash_commands(page, "file", Asking(tab, tab, tab), "jupyterlab-file", ".jp-FileEditor")
        text = editor_text(page, "file")
        assert text.startswith("# Notes\n\n")  # the text before the slash line is untouched
        opened = next(m for m in messages if m.get("method") == "textDocument/didOpen")
        assert opened["params"]["textDocument"]["languageId"] == "ipythongfm"
        assert opened["params"]["textDocument"]["uri"].endswith("/" + NOTES)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-lsp-failure.png"), full_page=True)
        raise


def enable_autocompletion(lab: Lab) -> None:
    """JupyterLab's Settings → Code Completion → Enable autocompletion, as the settings editor saves it."""
    body = json.dumps({"raw": json.dumps({"autoCompletion": True})}).encode()
    request = urllib.request.Request(
        f"{lab.url}/lab/api/settings/@jupyterlab/completer-extension:manager",
        data=body,
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 204


def test_slash_in_a_notebook_markdown_cell_with_autocompletion_on(page: Any, lsp_lab: Lab) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Cells"},
        {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None},
        {"cell_type": "markdown", "metadata": {}, "source": ""},
    ]
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (lsp_lab.root / CELLS).write_text(json.dumps(notebook), encoding="utf-8")
    enable_autocompletion(lsp_lab)
    messages = record_messages(page)
    try:
        page.goto(f"{lsp_lab.url}/lab/tree/{CELLS}?reset")
        page.wait_for_function(
            "() => window.jupyterapp && document.querySelectorAll('.jp-Notebook .jp-Cell').length === 3",
            timeout=STEP,
        )
        page.locator(".jp-Notebook .jp-Cell").nth(2).click()
        page.keyboard.press("Enter")  # edit the (empty) markdown cell
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.content.activeCell.model.type === 'markdown'"
            " && window.jupyterapp.shell.currentWidget.content.mode === 'edit'",
            timeout=STEP,
        )

        # Tab indents in a Markdown cell: the menu opens as the trigger characters `/`, `=` and space are typed.
        def prompts() -> None:  # `/` again, until the bridge is connected
            page.keyboard.press("Control+a")
            page.keyboard.press("Backspace")
            page.keyboard.type("/")

        def values() -> None:  # `=` again, until the server's values are in
            page.keyboard.press("Backspace")
            page.keyboard.type("=")

        def render() -> None:  # a space after the complete command
            if editor_text(page, "cell").endswith(" "):
                page.keyboard.press("Backspace")
            page.keyboard.type(" ")

        asking = Asking(prompts, values, render)
        use_slash_commands(page, "cell", asking, "jupyterlab-cell", ".jp-Notebook .jp-Cell.jp-mod-active")
        sent = [m for m in messages if m.get("method") == "textDocument/completion"]
        assert sent and all(m["params"]["textDocument"]["uri"].endswith(".ipynb.python-markdown.md") for m in sent)
        assert sent[0]["params"]["context"] == {"triggerKind": 2, "triggerCharacter": "/"}

        # Render below: the line stays, without the space typed to open the menu, the prompt after it.
        line = "/jupyter:describe_chart audience=engineers"
        page.evaluate(
            "(text) => window.jupyterapp.shell.currentWidget.content.activeCell.model.sharedModel.setSource(text)",
            f"Notes.\n\n{line}",
        )
        page.keyboard.press("Control+End")
        below = "/jupyter:describe_chart — render below"
        wait_for_menu(page, render, lambda labels: below in labels)
        choose(page, below)
        text = wait_for_text(page, "cell", contains="Describe this chart for engineers")
        assert text.startswith(f"Notes.\n\n{line}\n\n"), text
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-cell-failure.png"), full_page=True)
        raise


def test_unknown_prompts_and_missing_arguments_are_underlined_and_hover_documents_a_prompt(
    page: Any, lsp_lab: Lab
) -> None:
    messages = record_messages(page)
    try:
        open_notes(page, lsp_lab)
        page.keyboard.type("/jupyter:nope")
        mark = page.locator(".jp-FileEditor .cm-lintRange-error, .jp-FileEditor .cm-lintRange-warning").first
        mark.wait_for(timeout=STEP)
        assert mark.inner_text() == "/jupyter:nope"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-diagnostic.png"))
        shot = page.locator(".jp-FileEditor").bounding_box()
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-diagnostic-editor.png"), clip={**shot, "height": 100})

        page.keyboard.press("Enter")
        page.keyboard.press("Enter")
        page.keyboard.type("/jupyter:code_review language=python")  # `code=` is required
        # The bridge underlines the name. Marks the editor stretched over text typed right after an older one
        # are replaced once the diagnostics of the finished line come in.
        page.wait_for_function(
            """() => Array.from(document.querySelectorAll('.jp-FileEditor .cm-lintRange-error'))
                .some((mark) => mark.textContent === '/jupyter:code_review')""",
            timeout=STEP,
        )
        published = [
            d["message"]
            for m in messages
            if m.get("method") == "textDocument/publishDiagnostics"
            for d in m["params"]["diagnostics"]
        ]
        assert "/jupyter:code_review needs code=" in published

        # jupyterlab-lsp asks for hover while Control is held (its Hover setting); the bridge documents the prompt.
        line = page.locator(".jp-FileEditor .cm-line", has_text="/jupyter:code_review").first.bounding_box()
        page.keyboard.down("Control")
        try:
            page.mouse.move(line["x"] + 30, line["y"] + line["height"] / 2)
            page.mouse.move(line["x"] + 40, line["y"] + line["height"] / 2)
            hover = page.locator(".lsp-hover", has_text="Review a piece of code")
            hover.wait_for(timeout=STEP)
            text = hover.inner_text()
            assert "code (required)" in text
            assert "MCP server jupyter" in text
            shoot(page, "jupyterlab-hover.png", ".jp-FileEditor", hover.bounding_box())
        finally:
            page.keyboard.up("Control")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-diagnostic-failure.png"), full_page=True)
        raise
