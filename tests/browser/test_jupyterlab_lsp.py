"""The bridge in JupyterLab's own editor, through jupyter-lsp and jupyterlab-lsp, driven in headless Chromium.

Lab runs with the `mcp_notebook` server extension on (it serves the fixture
notebooks at `<base_url>mcp`) and nothing else configured: jupyter-lsp finds
the bridge by its entry point. In a `.md` file, `/` then Tab makes Lab ask the
bridge, whose answer (read on the page's own websocket) lists the served
prompts; an unknown prompt is underlined as a diagnostic.

What jupyterlab-lsp 5.3 does not do (docs/jupyterlab.md): its completer
stays closed for these answers, it never asks for completions in a
notebook's Markdown cells, and it has no code actions ("Render prompt").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browser_steps import STEP
from lab_harness import ARTIFACTS, Lab, running_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

pytest.importorskip("jupyterlab_lsp", reason="jupyterlab-lsp is not installed (run .ci/browser-setup.sh)")

NOTES = "slash_notes.md"


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


def record_completions(page: Any) -> list[dict[str, Any]]:
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


def answered_labels(messages: list[dict[str, Any]]) -> list[list[str]]:
    """The labels of each completion answer the bridge sent the page, in order."""
    asked = {m["id"] for m in messages if m.get("method") == "textDocument/completion"}
    return [
        [item["label"] for item in m["result"]["items"]]
        for m in messages
        if "method" not in m and m.get("id") in asked and isinstance(m.get("result"), dict)
    ]


def test_tab_after_slash_in_a_markdown_file_asks_the_bridge_and_gets_the_served_prompts(
    page: Any, lsp_lab: Lab
) -> None:
    messages = record_completions(page)
    try:
        open_notes(page, lsp_lab)
        page.keyboard.type("/")
        for _ in range(60):  # the bridge connects to <base_url>mcp in the background: ask until it has the prompts
            before = len(answered_labels(messages))
            page.keyboard.press("Tab")
            for _ in range(50):  # up to 5 s for this answer; the page handles its websocket while it waits
                page.wait_for_timeout(100)
                if len(answered_labels(messages)) > before:
                    break
            if any("/jupyter:code_review" in labels for labels in answered_labels(messages)):
                break
            page.keyboard.press("Escape")
        answers = answered_labels(messages)
        assert answers, "JupyterLab never asked the bridge for completions"
        assert {"/jupyter:code_review", "/jupyter:describe_chart"} <= set(answers[-1])
        request = next(m for m in messages if m.get("method") == "textDocument/completion")
        assert request["params"]["textDocument"]["uri"].endswith("/" + NOTES)
        opened = next(m for m in messages if m.get("method") == "textDocument/didOpen")
        assert opened["params"]["textDocument"]["languageId"] == "ipythongfm"
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-lsp-failure.png"), full_page=True)
        raise


def test_an_unknown_prompt_is_underlined_in_a_markdown_file(page: Any, lsp_lab: Lab) -> None:
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
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-diagnostic-failure.png"), full_page=True)
        raise
