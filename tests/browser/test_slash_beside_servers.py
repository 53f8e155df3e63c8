"""The `/` menu beside MCP servers that hang or are gone, and beside a kernel serving its magics, in Chromium.

Lab starts fresh from the wheel (no jupyterlab-lsp), with no token and Jupyter's XSRF checks on, as
`jupyter lab --IdentityProvider.token=''` runs. The user's configuration names three real stdio MCP
servers: `slow` never lists its prompts, `dead` exits at once, `slowvalues` lists its prompt but never
completes the value of its `slow` argument. None of them holds up the menu for more than 0.2 s, and
the Jupyter server's own API keeps answering meanwhile. A kernel running `%mcp serve --magics` is in
the menu under the name `%mcp serve` gives it, without its magic prompts until the `magics` setting
asks for them.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from browser_steps import STEP, run_all_cells
from lab_harness import ARTIFACTS, Lab, install_wheel, running_lab
from test_prompts_extension import MENU, edit_cell, open_cells, shoot, wait_for_menu, without_jupyterlab_lsp

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SERVERS = Path(__file__).resolve().parents[1] / "servers"
BOUND_MS = 200  # a slow or dead server never holds up the menu longer than this
MAGICS = "magics_in_lab.ipynb"

# Times, in the page, from the `/` key to the menu's first item on screen.
_STOPWATCH = """() => {
    window.mcpStopwatch = {};
    document.addEventListener('keydown', (e) => {
        if (e.key === '/' || e.key === ' ') {
            window.mcpStopwatch.key = performance.now();
            window.mcpStopwatch.menu = null;
        }
    }, true);
    new MutationObserver(() => {
        const watch = window.mcpStopwatch;
        if (watch.key && !watch.menu && document.querySelector('.jp-mcp-menu .cm-completionLabel')) {
            watch.menu = performance.now();
        }
    }).observe(document.body, {childList: true, subtree: true});
}"""


@pytest.fixture(scope="module")
def busy_lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("busy-lab")
    prefix = base / "prefix"
    install_wheel(prefix)
    without_jupyterlab_lsp(base / "config")
    stub = str(SERVERS / "stub_completion_server.py")
    servers = {
        "slow": {"command": sys.executable, "args": [stub, "--list-delay", "3600"]},
        "dead": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]},
        "slowvalues": {"command": sys.executable, "args": [stub, "--complete-delay", "3600"]},
    }
    config = base / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    env = {
        "JUPYTER_PATH": str(prefix / "share/jupyter"),
        "JUPYTER_CONFIG_PATH": str(prefix / "etc/jupyter"),
        "MCP_NOTEBOOK_CONFIG": str(config),
        "MCP_NOTEBOOK_CACHE_DIR": str(base / "cache"),
        "MCP_NOTEBOOK_TRUST_FILE": str(base / "trust.json"),
    }
    with running_lab(base, env, check_xsrf=True) as running:
        yield running


class LoopWatch:
    """Asks the Jupyter server's own API (`api/status`) again and again in a thread: how long each answer took."""

    def __init__(self, lab: Lab) -> None:
        self.took: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(lab.url,))

    def _run(self, url: str) -> None:
        with httpx2.Client(base_url=url, timeout=STEP / 1000) as client:
            while not self._stop.is_set():
                started = time.monotonic()
                client.get("/api/status").raise_for_status()
                self.took.append(time.monotonic() - started)

    def __enter__(self) -> LoopWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def menu_delay_ms(page: Any) -> float:
    delay: float = page.evaluate("() => window.mcpStopwatch.menu - window.mcpStopwatch.key")
    return delay


def test_a_slow_or_dead_server_never_holds_up_the_menu_nor_the_jupyter_server(page: Any, busy_lab: Lab) -> None:
    api_calls: list[tuple[str, float, Any]] = []

    def finished(request: Any) -> None:
        if "/mcp-notebook/api/" in request.url and "since=" not in request.url:  # a long poll waits by design
            response = request.response()
            api_calls.append((request.url, request.timing["responseEnd"], response.json() if response else None))

    page.on("requestfinished", finished)
    try:
        with LoopWatch(busy_lab) as loop:
            (busy_lab.root / "notes.md").write_text("# Notes\n", encoding="utf-8")
            page.goto(f"{busy_lab.url}/lab/tree/notes.md?reset")
            editor = page.locator(".jp-FileEditor .cm-content[data-mcp-prompts]")
            editor.wait_for(timeout=STEP)
            page.evaluate(_STOPWATCH)
            editor.click()
            page.keyboard.press("Control+End")
            page.keyboard.press("Enter")
            page.keyboard.type("/")
            labels = wait_for_menu(page, "/jupyter:code_review")
            first = menu_delay_ms(page)
            # The servers that hang or died are named, with their state, after the prompts.
            labels = wait_for_menu(page, "/jupyter:code_review", "/slowvalues:p", "/slow:", "/dead:")
            assert labels.index("/slow:") > labels.index("/slowvalues:p"), labels
            states = page.locator(f"{MENU} li").all_inner_texts()
            assert any(t.startswith("/slow:") and "connecting" in t for t in states), states
            page.wait_for_function(
                """() => Array.from(document.querySelectorAll('.jp-mcp-menu li'), (li) => li.textContent)
                    .some((t) => t.startsWith('/dead:') && t.includes('failed'))""",
                timeout=STEP,
            )
            shoot(page, "lab-file-servers-down.png", ".jp-FileEditor .cm-line", MENU)
            assert first < BOUND_MS, f"the menu opened {first:.0f} ms after `/`"

            # The value of `slow` never comes: the server answers `pending` within its 0.2 s, and the menu of
            # what is left opens at once after the value anyway, while that request is still out. (The editor
            # asks a moment after the last key: the space waits until the request is sent; its answer, which
            # may come after the menu, is waited for before the calls are read.)
            def asks_for_slow(request: Any) -> bool:
                asked = urlsplit(request.url).path.endswith("/complete")
                return asked and '"argument":"slow"' in (request.post_data or "")

            with page.expect_event("requestfinished", asks_for_slow, timeout=STEP):
                with page.expect_event("request", asks_for_slow, timeout=STEP):
                    page.keyboard.type("slowvalues:p fast=a slow=xy")
                page.wait_for_function(
                    "() => window.jupyterapp.shell.currentWidget.content.editor.model.sharedModel.getSource()"
                    ".endsWith('\\n/slowvalues:p fast=a slow=xy')",
                    timeout=STEP,
                )
                # No menu for `slow` (its values never come); the space after it opens the next one.
                page.wait_for_function("() => !document.querySelector('.jp-mcp-menu')", timeout=STEP)
                page.keyboard.type(" ")
                labels = wait_for_menu(page, "Render here", "Render below", "other=")
                after_value = menu_delay_ms(page)
                assert after_value < BOUND_MS, f"the menu opened {after_value:.0f} ms after the space"
                page.keyboard.press("Escape")
                page.wait_for_function("() => !document.querySelector('.jp-mcp-menu')", timeout=STEP)
        calls = [(urlsplit(url).path.rsplit("/", 1)[-1], took, answer) for url, took, answer in api_calls]
        completions = [(took, answer) for endpoint, took, answer in calls if endpoint == "complete"]
        assert any(answer and answer.get("pending") for _, answer in completions), calls
        assert all(took < BOUND_MS + 300 for took, _ in completions), completions  # 0.2 s held by the server
        # The first listing comes while the page loads (and may wait 0.1 s for the lists kept from the last
        # start); every one after it answers at once with the last known lists.
        listings = [took for endpoint, took, _ in calls if endpoint == "prompts"]
        assert listings and listings[0] < 1000 and all(took < BOUND_MS for took in listings[1:]), listings
        # The servers hang for an hour: a loop they held would stall the Jupyter server's API that long. A busy
        # machine (2 cores, shared) may hold up the odd answer on its own: the bound holds for 95 in 100.
        ordered = sorted(loop.took)
        assert len(ordered) > 20, ordered
        assert ordered[-1] < 1.0, f"the Jupyter server's own API waited {ordered[-1]:.3f} s"
        assert ordered[len(ordered) * 95 // 100] < BOUND_MS / 1000, f"slowest answers: {ordered[-10:]}"
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-servers-down-failure.png"), full_page=True)
        raise


def test_a_kernel_has_the_name_serve_gives_it_and_its_magics_only_when_asked(page: Any, busy_lab: Lab) -> None:
    try:
        run_all_cells(page, f"{busy_lab.url}/lab/tree/{MAGICS}?reset", MAGICS)
        report = page.locator(".jp-OutputArea-output .mcp-serve")
        report.wait_for(timeout=STEP)
        claude = report.locator("details").nth(1).locator("pre").text_content() or ""
        assert " claude mcp add --transport http magics_in_lab " in claude, claude  # what `%mcp serve` calls it
        edit_cell(page, 4, "markdown")
        page.keyboard.type("/")
        # The kernel started serving after the page opened: the open menu gets it when the lists come.
        labels = wait_for_menu(page, "/magics_in_lab:tldr", "/jupyter:code_review")
        assert not [label for label in labels if label.startswith("/magics_in_lab:magic")], labels
        shoot(page, "lab-cell-kernel.png", ".jp-Notebook .jp-Cell.jp-mod-active", MENU)
        page.keyboard.press("Escape")

        # Asked for in the settings (what Settings → MCP prompts writes), a kernel's magics are listed too.
        settings = busy_lab.root.parent / "settings" / "mcp-notebook" / "plugin.jupyterlab-settings"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"magics": True}), encoding="utf-8")
        open_cells(page, busy_lab, MAGICS)
        edit_cell(page, 4, "markdown")
        page.keyboard.type("/")
        labels = wait_for_menu(page, "/magics_in_lab:tldr", "/magics_in_lab:magic")
        assert [label for label in labels if label.startswith("/magics_in_lab:magic.")], labels
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-kernel-failure.png"), full_page=True)
        raise
