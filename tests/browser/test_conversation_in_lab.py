"""How a rendered conversation reads in JupyterLab, light and dark, in headless Chromium.

The fixture notebook shows a few-shot prompt (user and assistant turns), the
chart prompt (four user messages: one turn) and a conversation with an
embedded image and an embedded PDF.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, run_all_cells, set_theme, wait_for_outputs
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Per output, in order: the role of each turn.
EXPECTED_TURNS = [
    ["user", "assistant", "user", "assistant", "user"],  # classify_sentiment: tagged cells alternate
    ["user"],  # describe_chart: code, chart image and text are one turn
    ["user", "assistant"],  # attachments
]

TURN_LOOK = """(turn) => {
    const style = getComputedStyle(turn);
    const label = getComputedStyle(turn.querySelector('.mcp-role'));
    const text = getComputedStyle(turn.querySelector('p') || turn);
    return {background: style.backgroundColor, accent: style.borderLeftColor, label: label.color,
            text: text.color, labelText: turn.querySelector('.mcp-role').textContent};
}"""

PAGE_BACKGROUND = "getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor"


def rgb(colour: str) -> tuple[float, float, float, float]:
    inside = colour[colour.index("(") + 1 : colour.index(")")]
    parts = [float(p) for p in inside.replace("/", ",").replace(" ", ",").split(",") if p]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def over(top: str, bottom: str) -> tuple[float, float, float]:
    """The colour `top` (maybe translucent) shows over `bottom`."""
    r, g, b, a = rgb(top)
    br, bg, bb, _ = rgb(bottom)
    return (r * a + br * (1 - a), g * a + bg * (1 - a), b * a + bb * (1 - a))


def contrast(one: tuple[float, float, float], two: tuple[float, float, float]) -> float:
    """The WCAG contrast ratio of two colours."""

    def luminance(colour: tuple[float, float, float]) -> float:
        linear = [(c / 255 / 12.92) if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in colour]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def looks(page: Any) -> list[list[dict[str, str]]]:
    outputs = page.locator(".jp-OutputArea-output.jp-RenderedMarkdown")
    return [
        [turn.evaluate(TURN_LOOK) for turn in outputs.nth(i).locator(".mcp-turn").all()] for i in range(outputs.count())
    ]


def test_turns_are_grouped_and_user_and_assistant_read_apart_in_light_and_dark(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/conversation_in_lab.ipynb?reset", "conversation_in_lab.ipynb")
        wait_for_outputs(page, 3)
        outputs = page.locator(".jp-OutputArea-output.jp-RenderedMarkdown")
        roles = [
            [
                cls.split("mcp-turn-")[1]
                for cls in outputs.nth(i).locator(".mcp-turn").evaluate_all("turns => turns.map(t => t.className)")
            ]
            for i in range(outputs.count())
        ]
        assert roles == EXPECTED_TURNS
        chart = outputs.nth(1)
        assert chart.locator(".mcp-role").all_inner_texts() == ["USER"]  # one label for four messages
        assert chart.locator("img").count() == 1

        backgrounds: dict[str, str] = {}
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            page_background = page.evaluate(PAGE_BACKGROUND)
            user, assistant = looks(page)[0][:2]
            assert user["labelText"] == "User" and assistant["labelText"] == "Assistant"
            assert user["accent"] != assistant["accent"]
            assert user["background"] != assistant["background"]
            for turn in (user, assistant):
                shown = over(turn["background"], page_background)
                assert contrast(rgb(turn["text"])[:3], shown) >= 4.5, (theme, turn)
                assert contrast(rgb(turn["label"])[:3], shown) >= 3, (theme, turn)
            backgrounds[theme] = user["background"]
            page.screenshot(path=str(ARTIFACTS / f"conversation-{theme.split()[-1].lower()}.png"), full_page=True)
        assert backgrounds["JupyterLab Light"] != backgrounds["JupyterLab Dark"]  # the turns follow the theme
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "conversation-failure.png"), full_page=True)
        raise
    finally:
        set_theme(page, "JupyterLab Light")


def test_embedded_blobs_show_as_an_image_and_a_download_link(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/conversation_in_lab.ipynb?reset", "conversation_in_lab.ipynb")
        wait_for_outputs(page, 3)
        attachments = page.locator(".jp-OutputArea-output.jp-RenderedMarkdown").nth(2)

        image = attachments.locator("img")
        page.wait_for_function(
            "(img) => img.complete && img.naturalWidth > 0", arg=image.element_handle(), timeout=STEP
        )
        link = attachments.locator("a[download]")
        assert link.get_attribute("download") == "report.pdf"
        assert (link.get_attribute("href") or "").startswith("data:application/pdf;base64,")
        assert "Download report.pdf (application/pdf, 1150 bytes)" in attachments.inner_text()
        with page.expect_download(timeout=STEP) as download:
            link.click()
        assert download.value.suggested_filename == "report.pdf"
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "conversation-blobs-failure.png"), full_page=True)
        raise
