"""mcp-notebook's own JupyterLab extension, installed from the wheel, driven in headless Chromium.

Lab starts fresh (default settings) with the wheel's data files as pip puts them (no Node involved):
the prebuilt extension and the server extension's switch; jupyter-lsp and jupyterlab-lsp are turned
off. The extension talks to the real handlers of the server extension (`<base_url>mcp-notebook/api/`),
which serve the fixture notebooks as `/jupyter:<prompt>`.

`/` at the start of a line of a `.md` file or a Markdown cell opens the prompt menu on the first try
after the page loads; code cells never offer prompts; accepting a prompt gives tab stops for its required
arguments, values come from the server, render here / render below show a preview first. The prompts
panel and the cell toolbar's "Publish as prompt" are tested in test_lab_panel.py.

Screenshots go to test-artifacts/browser/ (`lab-*.png`); docs/images/ holds copies of the good ones.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_steps import STEP
from lab_harness import ARTIFACTS, Lab, install_wheel, running_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTES = "slash_notes.md"
CELLS = "prompts_in_cells.ipynb"
SERVED = {"/jupyter:classify_sentiment", "/jupyter:code_review", "/jupyter:describe_chart"}
# Every plugin of jupyterlab-lsp, off as if it were not installed (JupyterLab disables plugins by id or package).
LSP_PLUGINS = (
    "@jupyter-lsp/jupyterlab-lsp",
    "@jupyter-lsp/notebook-adapter",
    "@jupyter-lsp/fileeditor-adapter",
    "@jupyter-lsp/completion-manager",
    "@jupyter-lsp/code-jumpers",
    "@jupyter-lsp/completion-theme",
    "@jupyter-lsp/theme-material",
    "@jupyter-lsp/theme-vscode",
)


def without_jupyterlab_lsp(config: Path) -> None:
    """Config of a Lab where neither jupyter-lsp (server) nor jupyterlab-lsp (frontend) runs."""
    config.mkdir(parents=True, exist_ok=True)
    off = {"ServerApp": {"jpserver_extensions": {"jupyter_lsp": False}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(off), encoding="utf-8")
    (config / "labconfig").mkdir(exist_ok=True)
    page_config = {"disabledExtensions": dict.fromkeys(LSP_PLUGINS, True)}
    (config / "labconfig" / "page_config.json").write_text(json.dumps(page_config), encoding="utf-8")


@pytest.fixture(scope="module")
def prompts_lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Lab with mcp-notebook installed from its wheel into a prefix of its own, and no jupyterlab-lsp."""
    base = tmp_path_factory.mktemp("prompts-lab")
    prefix = base / "prefix"
    install_wheel(prefix)
    assert (prefix / "share/jupyter/labextensions/mcp-notebook/package.json").is_file()
    without_jupyterlab_lsp(base / "config")
    env = {"JUPYTER_PATH": str(prefix / "share/jupyter"), "JUPYTER_CONFIG_PATH": str(prefix / "etc/jupyter")}
    with running_lab(base, env) as running:
        yield running


def test_the_extension_is_the_wheel_s_and_jupyterlab_lsp_is_off(prompts_lab: Lab) -> None:
    with urllib.request.urlopen(f"{prompts_lab.url}/lab/api/extensions?refresh=0", timeout=30) as answer:
        extensions = {e["name"]: e for e in json.load(answer)}
    assert extensions["mcp-notebook"]["enabled"]
    assert extensions["mcp-notebook"]["install"]["packageName"] == "mcp-notebook"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{prompts_lab.url}/lsp/status", timeout=30)
    refused.value.close()
    assert refused.value.code == 404


_SOURCE = """(editor) => {
    const widget = window.jupyterapp.shell.currentWidget.content;
    const model = editor === 'file' ? widget.editor.model : widget.activeCell.model;
    return model.sharedModel.getSource();
}"""


def editor_text(page: Any, editor: str) -> str:
    text: str = page.evaluate(_SOURCE, editor)
    return text


def wait_for_text(page: Any, editor: str, *, ends_with: str = "", contains: str = "", lacks: str = "") -> str:
    """Wait until the text of the file editor (`file`) or active cell (`cell`) is as said."""
    page.wait_for_function(
        f"""([editor, endsWith, contains, lacks]) => {{
            const text = ({_SOURCE})(editor);
            return text.endsWith(endsWith) && text.includes(contains) && (!lacks || !text.includes(lacks));
        }}""",
        arg=[editor, ends_with, contains, lacks],
        timeout=STEP,
    )
    return editor_text(page, editor)


def menu_labels(page: Any) -> list[str]:
    labels: list[str] = page.locator(".jp-mcp-menu .cm-completionLabel").all_inner_texts()
    return labels


def wait_for_menu(page: Any, *wanted: str) -> list[str]:
    """Wait until the prompt menu is open and lists every one of `wanted`; its labels, in order."""
    page.wait_for_function(
        """(wanted) => {
            const labels = Array.from(document.querySelectorAll('.jp-mcp-menu .cm-completionLabel'),
                (e) => e.textContent);
            return labels.length > 0 && wanted.every((w) => labels.includes(w));
        }""",
        arg=list(wanted),
        timeout=STEP,
    )
    return menu_labels(page)


def two_frames(page: Any) -> None:
    """Wait until the page has drawn twice: what a keystroke opens synchronously is on screen by then."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def shoot(page: Any, name: str, *selectors: str) -> None:
    """A screenshot of the union of what `selectors` show (those on the page), under test-artifacts/browser/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    boxes = [b for s in selectors for b in [page.locator(s).first.bounding_box()] if page.locator(s).count() and b]
    left = max(min(b["x"] for b in boxes) - 8, 0)
    top = max(min(b["y"] for b in boxes) - 8, 0)
    right = max(b["x"] + b["width"] for b in boxes) + 8
    bottom = max(b["y"] + b["height"] for b in boxes) + 8
    clip = {"x": left, "y": top, "width": right - left, "height": bottom - top}
    page.screenshot(path=str(ARTIFACTS / name), clip=clip)


def open_notes(page: Any, lab: Lab) -> None:
    (lab.root / NOTES).write_text("# Notes\n", encoding="utf-8")
    page.goto(f"{lab.url}/lab/tree/{NOTES}?reset")
    editor = page.locator(".jp-FileEditor .cm-content[data-mcp-prompts]")
    editor.wait_for(timeout=STEP)
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")


def open_cells(page: Any, lab: Lab, notebook: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{notebook}?reset")
    page.wait_for_function(
        "(n) => window.jupyterapp && document.querySelectorAll('.jp-Notebook .jp-Cell').length === n",
        arg=len(json.loads((lab.root / notebook).read_text())["cells"]),
        timeout=STEP,
    )


def edit_cell(page: Any, index: int, kind: str) -> None:
    page.locator(".jp-Notebook .jp-Cell").nth(index).click()
    page.keyboard.press("Enter")
    page.wait_for_function(
        """([index, kind]) => {
            const notebook = window.jupyterapp.shell.currentWidget.content;
            return notebook.activeCellIndex === index && notebook.activeCell.model.type === kind
                && notebook.mode === 'edit';
        }""",
        arg=[index, kind],
        timeout=STEP,
    )


EDITOR = ".jp-FileEditor"
MENU = ".jp-mcp-menu"
INFO = ".cm-completionInfo"


def test_slash_in_a_md_file_lists_prompts_at_once_and_a_prompt_gives_tab_stops_and_renders_here(
    page: Any, prompts_lab: Lab
) -> None:
    try:
        open_notes(page, prompts_lab)
        page.keyboard.type("/")  # once: the first `/` after the page loads lists the prompts
        labels = wait_for_menu(page, *SERVED)
        assert labels[:3] == sorted(SERVED), labels
        shoot(page, "lab-file-prompts.png", f"{EDITOR} .cm-line", MENU, INFO)

        page.keyboard.type("code")
        assert wait_for_menu(page, "/jupyter:code_review")[0] == "/jupyter:code_review"
        page.keyboard.press("Enter")
        # A tab stop for the one required argument (code=), the cursor in it; the line ends in a last stop.
        wait_for_text(page, "file", ends_with="\n/jupyter:code_review code= ")
        page.keyboard.type("print(1)")
        wait_for_text(page, "file", ends_with="\n/jupyter:code_review code=print(1) ")
        page.keyboard.press("Tab")  # to the end of the line: what is left is rendering it
        assert wait_for_menu(page, "Render here", "Render below")[:2] == ["Render here", "Render below"]
        preview = page.locator(f"{INFO} .jp-mcp-preview-text")
        preview.wait_for(timeout=STEP)
        assert "careful reviewer of Python code" in preview.inner_text()
        assert "print(1)" in preview.inner_text()
        shoot(page, "lab-file-render-preview.png", f"{EDITOR} .cm-line", MENU, INFO)

        page.keyboard.press("Enter")  # render here: the line becomes the prompt
        text = wait_for_text(page, "file", contains="careful reviewer of Python code", lacks="/jupyter:")
        assert text.startswith("# Notes\n\n") and "```\nprint(1)\n```" in text
        shoot(page, "lab-file-rendered.png", f"{EDITOR} .cm-scroller")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-file-failure.png"), full_page=True)
        raise


def test_argument_values_come_from_the_server_and_render_below_keeps_the_line(page: Any, prompts_lab: Lab) -> None:
    try:
        open_notes(page, prompts_lab)
        page.keyboard.type("/jupyter:code_review code=x ")
        # After the space: the arguments not written yet, required first (code is, so no rendering yet).
        wait_for_menu(page, "language=", "focus=")
        page.keyboard.type("language=")
        labels = wait_for_menu(page, "Python", "JavaScript", "Rust")
        assert labels == ["Python", "JavaScript", "TypeScript", "Rust", "Go", "SQL"]
        shoot(page, "lab-file-values.png", f"{EDITOR} .cm-line", MENU)
        page.keyboard.type("Ru")
        wait_for_menu(page, "Rust")
        page.keyboard.press("Enter")
        line = "/jupyter:code_review code=x language=Rust"
        wait_for_text(page, "file", ends_with=line)
        page.keyboard.type(" ")
        assert wait_for_menu(page, "Render here", "Render below", "focus=")[:2] == ["Render here", "Render below"]
        page.keyboard.press("ArrowDown")
        preview = page.locator(f"{INFO} .jp-mcp-preview")
        preview.wait_for(timeout=STEP)
        page.wait_for_function(
            "() => document.querySelector('.cm-completionInfo .jp-mcp-preview-what')"
            ".textContent.startsWith('Adds below')",
            timeout=STEP,
        )
        page.keyboard.press("Enter")
        text = wait_for_text(page, "file", contains="careful reviewer of Rust code")
        assert f"\n{line}\n\n# Review code\n" in text
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-values-failure.png"), full_page=True)
        raise


def test_slash_in_a_markdown_cell_lists_prompts_on_the_first_try_and_code_cells_never_offer_them(
    page: Any, prompts_lab: Lab
) -> None:
    try:
        open_cells(page, prompts_lab, CELLS)
        edit_cell(page, 2, "markdown")
        page.keyboard.type("/")
        wait_for_menu(page, *SERVED)
        shoot(page, "lab-cell-prompts.png", ".jp-Notebook .jp-Cell.jp-mod-active", MENU, INFO)
        page.keyboard.type("describe")
        wait_for_menu(page, "/jupyter:describe_chart")
        page.keyboard.press("Enter")  # no required argument: the line, then render here / below at once
        wait_for_menu(page, "Render here", "Render below", "audience=")
        page.locator(f"{INFO} .jp-mcp-preview-text").wait_for(timeout=STEP)
        page.keyboard.press("Enter")
        text = wait_for_text(page, "cell", contains="Describe this chart for a general audience", lacks="/jupyter:")
        assert 'sales = {"Q1": 120' in text  # the chart's code comes with it
        page.keyboard.press("Escape")

        # Markdown editors carry the extension; code cells do not have it at all.
        offers = page.evaluate(
            """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'), (cell) =>
                [cell.classList.contains('jp-CodeCell') ? 'code' : 'markdown',
                 cell.querySelector('.cm-content') ? cell.querySelector('.cm-content').hasAttribute('data-mcp-prompts')
                 : null])"""
        )
        assert ["code", False] in offers and ["code", True] not in offers, offers
        edit_cell(page, 1, "code")
        page.keyboard.press("Control+End")
        page.keyboard.press("Enter")
        page.keyboard.type("/")
        wait_for_text(page, "cell", ends_with="\n/")
        two_frames(page)
        assert page.locator(MENU).count() == 0
        page.keyboard.press("Tab")  # JupyterLab's own completer may open here; never with prompts
        two_frames(page)
        assert page.locator(MENU).count() == 0
        assert not [t for t in page.locator(".jp-Completer-item").all_inner_texts() if "/jupyter:" in t]
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-cell-failure.png"), full_page=True)
        raise
