"""Make the screenshots of docs/widgets.md from the real thing: JupyterLab in headless Chromium.

    python -m tests.browser.screenshots            # from the repository root, after .ci/browser-setup.sh

Starts JupyterLab on 127.0.0.1 with the browser tests' fixture notebooks, runs
them, and saves PNGs cropped to what they show, in the light and the dark
theme, under docs/images/:

* `form-<theme>.png`: the form of `code_review`, its defaults filled in, the
  language's suggestions open on focus;
* `typed-form-<theme>.png`: a FastMCP server's typed arguments as a number
  field, a checkbox and a drop-down;
* `conversation-<theme>.png`: a few-shot prompt's user and assistant turns;
* `attachments-<theme>.png`: an embedded image and an embedded PDF.

Each step waits on the page with a deadline, as the tests do; nothing sleeps.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the browser tests' helpers, by their own names

from browser_steps import STEP, run_all_cells, set_theme, wait_for_outputs, wait_for_suggestions
from lab_harness import ROOT, chromium_page, find_chromium, missing_stack, running_lab

OUT = ROOT / "docs" / "images"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
MARGIN = 8  # px around what a shot shows
LANGUAGES = ["Python", "JavaScript", "TypeScript", "Rust", "Go", "SQL"]


def _union(*boxes: dict[str, float]) -> dict[str, float]:
    left = min(b["x"] for b in boxes) - MARGIN
    top = min(b["y"] for b in boxes) - MARGIN
    right = max(b["x"] + b["width"] for b in boxes) + MARGIN
    bottom = max(b["y"] + b["height"] for b in boxes) + MARGIN
    return {"x": max(left, 0), "y": max(top, 0), "width": right - max(left, 0), "height": bottom - max(top, 0)}


def _shoot(page: Any, name: str, *boxes: dict[str, float]) -> Path:
    path = OUT / name
    page.screenshot(path=str(path), clip=_union(*boxes))
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KiB)")
    return path


def _box(page: Any, selector: str) -> dict[str, float]:
    locator = page.locator(selector).first
    locator.scroll_into_view_if_needed()
    found: dict[str, float] = locator.bounding_box()
    return found


def _output_box(page: Any, index: int) -> dict[str, float]:
    """The output area of the notebook's `index`-th rendered Markdown output, the prompt number left out."""
    output = page.locator(".jp-OutputArea-output.jp-RenderedMarkdown").nth(index)
    output.scroll_into_view_if_needed()
    found: dict[str, float] = output.bounding_box()
    return found


def form_shots(page: Any, url: str) -> None:
    run_all_cells(page, f"{url}/lab/tree/form_keyboard_in_lab.ipynb?reset", "form_keyboard_in_lab.ipynb")
    page.wait_for_selector(".mcp-field-focus input[data-mcp-combobox]", timeout=STEP)
    page.locator(".mcp-field-code input").fill("total = sum(xs) / len(xs)")
    for theme, name in THEMES.items():
        set_theme(page, name)
        page.locator(".mcp-field-language input").click()
        wait_for_suggestions(page, LANGUAGES)
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        popup = page.evaluate(
            """() => {
                const list = Array.from(document.querySelectorAll('.mcp-combobox-list'))
                    .find((l) => l.style.display !== 'none');
                const box = list.getBoundingClientRect();
                return {x: box.x, y: box.y, width: box.width, height: box.height};
            }"""
        )
        _shoot(page, f"form-{theme}.png", page.locator(".mcp-prompt-form").bounding_box(), popup)
        page.keyboard.press("Escape")


def typed_form_shots(page: Any, url: str) -> None:
    run_all_cells(page, f"{url}/lab/tree/typed_form_in_lab.ipynb?reset", "typed_form_in_lab.ipynb")
    page.wait_for_selector(".mcp-field-tone select", timeout=STEP)
    page.locator(".mcp-field-topic input").fill("Lisbon")
    page.locator(".mcp-field-days input").fill("5")
    page.locator(".mcp-field-days input").press("Tab")
    page.locator(".mcp-field-detailed input").check()
    page.locator(".mcp-field-tone select").select_option("formal")
    page.locator(".mcp-render").click()
    page.wait_for_function(
        "document.querySelector('.mcp-form-output') && "
        "document.querySelector('.mcp-form-output').innerText.includes('Plan Lisbon')",
        timeout=STEP,
    )
    for theme, name in THEMES.items():
        set_theme(page, name)
        _shoot(page, f"typed-form-{theme}.png", _box(page, ".mcp-prompt-form"))


def conversation_shots(page: Any, url: str) -> None:
    run_all_cells(page, f"{url}/lab/tree/conversation_in_lab.ipynb?reset", "conversation_in_lab.ipynb")
    wait_for_outputs(page, 3)
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jp-RenderedMarkdown img')).every(i => i.complete)",
        timeout=STEP,
    )
    for theme, name in THEMES.items():
        set_theme(page, name)
        _shoot(page, f"conversation-{theme}.png", _output_box(page, 0))
        _shoot(page, f"attachments-{theme}.png", _output_box(page, 2))


def main() -> int:
    reason = missing_stack()
    chromium = find_chromium()
    if reason is not None or chromium is None:
        print(reason or "no chromium", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="screenshots-") as base,
        running_lab(Path(base)) as lab,
        chromium_page(chromium, width=1100, height=1000) as page,
    ):
        form_shots(page, lab.url)
        typed_form_shots(page, lab.url)
        conversation_shots(page, lab.url)
        set_theme(page, THEMES["light"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
