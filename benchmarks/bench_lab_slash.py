"""From a JupyterLab page opening to its first `/` listing prompts, in headless Chromium.

JupyterLab runs as a user installs it: mcp-notebook's wheel installed into a prefix of its own (the
prebuilt extension, no Node), jupyterlab-lsp off, no token and Jupyter's XSRF checks on, serving the
browser tests' notebooks as `/jupyter:<prompt>`. The server is started and warmed once (its prompt
lists are kept server side, as after any earlier page); each run is then a fresh browser context (no
cache) that opens a Markdown file, types `/` as soon as the editor takes keys, and waits for the menu to
list the prompts. The page's own clock (`performance.now()`, 0 at navigation) times three moments: the
editor taking keys, the `/` key, the menu with prompts on screen.

Figures: the first `/` to the menu with prompts (target < 300 ms in every run); the editor on screen to
that menu (with the harness's own round trip to press the key while JupyterLab finishes starting); how
long before the editor the prompt lists were in the page (the first listing's answer; positive: the first
`/` never waits for them); and the page load itself, JupyterLab's, for reference. Needs the browser
stack (`bash .ci/browser-setup.sh`).
Example: `python -m benchmarks.bench_lab_slash --runs 9`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

from .report import FigureTable, write_json
from .servers import ROOT, describe_environment

__all__ = ["main"]

FIRST_SLASH_TARGET_MS = 300.0
PROMPT = "/jupyter:code_review"  # served by the browser tests' notebooks
STEP_MS = 60_000

# Runs in the page before JupyterLab's own code: marks when a Markdown editor that offers prompts appears, when
# `/` is pressed, and when the menu first lists a prompt.
_STOPWATCH = """
window.mcpBench = {};
document.addEventListener('keydown', (e) => {
    if (e.key === '/' && !window.mcpBench.key) window.mcpBench.key = performance.now();
}, true);
new MutationObserver(() => {
    const bench = window.mcpBench;
    if (!bench.editor && document.querySelector('.jp-FileEditor .cm-content[data-mcp-prompts]')) {
        bench.editor = performance.now();
    }
    if (bench.key && !bench.menu) {
        const labels = document.querySelectorAll('.jp-mcp-menu .cm-completionLabel');
        if (Array.from(labels).some((l) => l.textContent.startsWith('/jupyter:'))) bench.menu = performance.now();
    }
}).observe(document, {childList: true, subtree: true});
"""


def _one_run(browser: Any, url: str, notes: str) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        context.add_init_script(_STOPWATCH)
        page = context.new_page()
        page.goto(f"{url}/lab/tree/{notes}?reset")
        editor = page.locator(".jp-FileEditor .cm-content[data-mcp-prompts]")
        editor.wait_for(timeout=STEP_MS)
        editor.focus()
        page.keyboard.type("/")
        page.wait_for_function("() => window.mcpBench.menu", timeout=STEP_MS)
        marks: dict[str, float] = page.evaluate(
            """() => {
                const listing = performance.getEntriesByType('resource')
                    .find((e) => new URL(e.name).pathname.endsWith('/mcp-notebook/api/prompts'));
                return {...window.mcpBench, lists: listing ? listing.responseEnd : NaN};
            }"""
        )
        return marks
    finally:
        context.close()


def run(args: argparse.Namespace, base: Path) -> FigureTable:
    # The browser tests' harness starts Lab as they do (their folders are not packages: by path).
    sys.path[:0] = [str(ROOT / "tests" / "browser"), str(ROOT / "tests")]
    harness = importlib.import_module("lab_harness")
    find_chromium, install_wheel, missing_stack, running_lab = (
        harness.find_chromium,
        harness.install_wheel,
        harness.missing_stack,
        harness.running_lab,
    )
    without_jupyterlab_lsp = importlib.import_module("test_prompts_extension").without_jupyterlab_lsp
    from playwright.sync_api import sync_playwright

    reason = missing_stack()
    if reason is not None:
        raise SystemExit(reason)
    prefix = base / "prefix"
    install_wheel(prefix)
    without_jupyterlab_lsp(base / "config")
    env = {
        "JUPYTER_PATH": str(prefix / "share/jupyter"),
        "JUPYTER_CONFIG_PATH": str(prefix / "etc/jupyter"),
        "MCP_NOTEBOOK_CONFIG": str(base / "no-servers.json"),
        "MCP_NOTEBOOK_CACHE_DIR": str(base / "cache"),
    }
    runs: list[dict[str, float]] = []
    with running_lab(base, env, check_xsrf=True) as lab, sync_playwright() as playwright:
        notes = "bench_notes.md"
        (lab.root / notes).write_text("", encoding="utf-8")
        browser = playwright.chromium.launch(
            executable_path=find_chromium(), args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            _one_run(browser, lab.url, notes)  # warm-up: the server reads its notebooks, Lab builds its assets
            for _ in range(args.runs):
                runs.append(_one_run(browser, lab.url, notes))
        finally:
            browser.close()
    table = FigureTable(f"JupyterLab: page load to the first `/` with prompts ({args.runs} fresh pages)")
    slash = [r["menu"] - r["key"] for r in runs]
    table.add_runs("first `/` pressed to the menu listing prompts", slash, target=FIRST_SLASH_TARGET_MS)
    table.add_runs(
        "editor on screen to the menu listing prompts (with the harness's key press)",
        [r["menu"] - r["editor"] for r in runs],
    )
    table.add_runs(
        "prompt lists in the page, before the editor is on screen by", [r["editor"] - r["lists"] for r in runs]
    )
    table.add_runs(
        "page load: navigation to the editor on screen (JupyterLab's own start)", [r["editor"] for r in runs]
    )
    return table


def create_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Time JupyterLab's first `/` with prompts after the page opens.")
    parser.add_argument("--runs", type=int, default=7, help="fresh pages measured (after one unmeasured)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = create_parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-lab-") as base:
        table = run(args, Path(base))
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
