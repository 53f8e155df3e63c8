"""Write the example notebooks of this folder (run it from anywhere: `python examples/make_examples.py`).

The notebooks are committed, so nobody needs to run this; it documents how
each one is built and regenerates them identically (fixed cell ids, images
drawn pixel by pixel, no kernel needed). Each notebook shows some of the
notebook prompt format (docs/notebook-format.md):

* code_review.ipynb    metadata form: title, description, icons, declared
                       arguments with descriptions, defaults, completions and
                       a question to ask the user (`ask`)
* few_shot.ipynb       tag form (`prompt:NAME`, `role:assistant`): a few-shot chat
* plot_prompt.ipynb    a code cell whose outputs (a PNG chart, printed text) go to the model
* embedded_file.ipynb  a `resource` read from a file next to the notebook, and a `link`
* rich_content.ipynb   a markdown attachment, annotations, `_meta`, a raw cell,
                       an error output and an audio output
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

HERE = Path(__file__).parent

Pixel = tuple[int, int, int]


# -- media, drawn by hand so the examples need no plotting library ---------------------------------


def png(width: int, height: int, pixel: Any) -> bytes:
    """An 8-bit RGB PNG whose colour at (x, y) is `pixel(x, y)`."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def bar_chart(values: list[int], width: int = 160, height: int = 100) -> bytes:
    """A bar chart: one coloured bar per value on a white background with a grey axis."""
    colours: list[Pixel] = [(66, 133, 244), (219, 68, 55), (244, 180, 0), (15, 157, 88)]
    margin, gap = 10, 8
    bar = (width - 2 * margin - gap * (len(values) - 1)) // len(values)
    top = max(values)

    def pixel(x: int, y: int) -> Pixel:
        if y == height - margin or (x == margin - 1 and y < height - margin):
            return (120, 120, 120)
        column, offset = divmod(x - margin, bar + gap)
        if 0 <= column < len(values) and offset < bar and x >= margin:
            bar_top = height - margin - values[column] * (height - 2 * margin) // top
            if bar_top <= y < height - margin:
                return colours[column % len(colours)]
        return (255, 255, 255)

    return png(width, height, pixel)


def notebook_icon(size: int = 16) -> bytes:
    """A tiny orange notebook page with ruled lines."""

    def pixel(x: int, y: int) -> Pixel:
        if x in (0, size - 1) or y in (0, size - 1):
            return (230, 81, 0)
        return (200, 200, 200) if y % 4 == 0 and 2 < x < size - 3 else (255, 243, 224)

    return png(size, size, pixel)


def screenshot(width: int = 48, height: int = 32) -> bytes:
    """A small 'terminal screenshot': dark background, a red error line, grey text lines."""

    def pixel(x: int, y: int) -> Pixel:
        if y in (8, 9) and 4 <= x < 40:
            return (244, 67, 54)
        if y in (14, 15, 20, 21) and 4 <= x < 30:
            return (189, 189, 189)
        return (33, 33, 33)

    return png(width, height, pixel)


def tone_wav(frequency: float = 440.0, seconds: float = 0.25, rate: int = 8000) -> bytes:
    """A mono 8-bit PCM WAV of a sine tone that fades out."""
    count = int(seconds * rate)
    samples = bytes(
        128 + int(100 * (1 - i / count) * math.sin(2 * math.pi * frequency * i / rate)) for i in range(count)
    )
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", count) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# -- notebooks -----------------------------------------------------------------------------------------


def python_notebook(*cells: NotebookNode) -> NotebookNode:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def with_id(cell: NotebookNode, cell_id: str) -> NotebookNode:
    cell.id = cell_id  # fixed ids keep resource URIs stable across regenerations
    return cell


def code_review() -> NotebookNode:
    icon = "data:image/png;base64," + b64(notebook_icon())
    return python_notebook(
        with_id(new_markdown_cell("# Prompts for code review\n\nThis notebook publishes one prompt."), "intro"),
        with_id(
            new_markdown_cell(
                "# Review code\n\n"
                "You are a careful reviewer of {{language}} code. Review the code below, "
                "focusing on {{focus}}. For each problem give the line, what is wrong and a fix.\n\n"
                "```\n{{code}}\n```",
                metadata={
                    "mcp": {
                        "prompt": "code_review",
                        "title": "Review code",
                        "description": "Review a piece of code for bugs, style, performance or security.",
                        "icons": [{"src": icon, "mimeType": "image/png", "sizes": ["16x16"]}],
                        "arguments": [
                            {
                                "name": "code",
                                "title": "Code",
                                "description": "The code to review",
                                # Clients that cannot pass arguments (or drop one) get asked for it.
                                "ask": "Paste the code to review",
                            },
                            {
                                "name": "language",
                                "description": "Its programming language",
                                "default": "Python",
                                "completions": ["Python", "JavaScript", "TypeScript", "Rust", "Go", "SQL"],
                            },
                            {
                                "name": "focus",
                                "description": "What to look at first",
                                "default": "bugs",
                                "completions": ["bugs", "style", "performance", "security", "tests"],
                            },
                        ],
                    }
                },
            ),
            "review-ask",
        ),
        with_id(
            new_markdown_cell(
                "Answer with a short summary first, then a numbered list. Say so when you find nothing.",
                metadata={"mcp": {"prompt": "code_review"}},
            ),
            "review-format",
        ),
    )


def few_shot() -> NotebookNode:
    def turn(text: str, role: str, cell_id: str) -> NotebookNode:
        return with_id(
            new_markdown_cell(text, metadata={"tags": ["prompt:classify_sentiment", f"role:{role}"]}), cell_id
        )

    return python_notebook(
        with_id(new_markdown_cell("# Few-shot prompts with tags\n\nTagged cells form a chat."), "intro"),
        turn(
            "Classify the sentiment of a review as positive, negative or mixed.\n\nReview: The battery lasts all day.",
            "user",
            "q1",
        ),
        turn("positive", "assistant", "a1"),
        turn("Review: Great screen, but it overheats and the fan is loud.", "user", "q2"),
        turn("mixed", "assistant", "a2"),
        turn("Review: {{review}}", "user", "ask"),
    )


def plot_prompt() -> NotebookNode:
    chart = new_code_cell(
        'sales = {"Q1": 120, "Q2": 180, "Q3": 90, "Q4": 210}\n'
        "plt.bar(sales.keys(), sales.values())\n"
        'print(f"total: {sum(sales.values())}")',
        execution_count=2,
        metadata={
            "mcp": {
                "prompt": "describe_chart",
                "title": "Describe a chart",
                "description": "Describe the quarterly sales chart for a given audience.",
                "arguments": [
                    {
                        "name": "audience",
                        "description": "Who will read the description",
                        "default": "a general audience",
                        "completions": ["a general audience", "engineers", "executives"],
                    }
                ],
            }
        },
        outputs=[
            new_output("stream", name="stdout", text="total: 600\n"),
            new_output(
                "display_data",
                data={"image/png": b64(bar_chart([120, 180, 90, 210])), "text/plain": "<Figure size 160x100>"},
            ),
        ],
    )
    return python_notebook(
        with_id(new_code_cell("import matplotlib.pyplot as plt", execution_count=1), "imports"),
        with_id(chart, "chart"),
        with_id(
            new_markdown_cell(
                "Describe this chart for {{audience}}: the trend, the best and the worst quarter.",
                metadata={"mcp": {"prompt": "describe_chart"}},
            ),
            "ask",
        ),
    )


def embedded_file() -> NotebookNode:
    return python_notebook(
        with_id(
            new_markdown_cell(
                "# Follow the style guide\n\nRewrite the text below so it follows our style guide.\n\n{{text}}",
                metadata={
                    "mcp": {
                        "prompt": "follow_style_guide",
                        "resource": {"path": "data/style_guide.md"},
                        "link": {
                            "uri": "https://peps.python.org/pep-0008/",
                            "name": "pep8",
                            "title": "PEP 8: Style Guide for Python Code",
                            "mimeType": "text/html",
                        },
                    }
                },
            ),
            "style",
        ),
        with_id(
            new_markdown_cell(
                "# Summarize a table\n\nSummarize the table: its columns, its size and anything unusual.",
                metadata={
                    "mcp": {
                        "prompt": "summarize_table",
                        "arguments": [
                            {"name": "table", "description": "Which table", "completions": ["sales", "inventory"]}
                        ],
                        "resource": {"path": "data/{{table}}.csv", "mimeType": "text/csv"},
                    }
                },
            ),
            "table",
        ),
    )


def rich_content() -> NotebookNode:
    failing = new_code_cell(
        "ratios = [sales / visits for sales, visits in rows]",
        execution_count=3,
        metadata={"mcp": {"prompt": "debug_traceback", "annotations": {"audience": ["assistant"], "priority": 0.9}}},
        outputs=[
            new_output(
                "error",
                ename="ZeroDivisionError",
                evalue="division by zero",
                traceback=[
                    "\x1b[0;31m-------------------------------------------------------\x1b[0m",
                    "\x1b[0;31mZeroDivisionError\x1b[0m    Traceback (most recent call last)",
                    "Cell \x1b[0;32mIn[3], line 1\x1b[0m\n\x1b[0;32m----> 1\x1b[0m ratios = [sales / visits ...]",
                    "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero",
                ],
            )
        ],
    )
    screenshot_cell = new_markdown_cell(
        "# Debug a traceback\n\nMy notebook fails; here is what I see:\n\n![terminal](attachment:terminal.png)",
        metadata={
            "mcp": {
                "prompt": "debug_traceback",
                "description": "Explain an error from a notebook and propose a fix.",
                "_meta": {"org.example.notebooks/team": "data-platform", "org.example.notebooks/version": 2},
            }
        },
    )
    screenshot_cell.attachments = {"terminal.png": {"image/png": b64(screenshot())}}
    sound = new_code_cell(
        "Audio(tone, rate=8000)",
        execution_count=4,
        metadata={"mcp": {"prompt": "describe_sound", "source": False}},
        outputs=[
            new_output(
                "display_data",
                data={"audio/wav": b64(tone_wav()), "text/plain": "<IPython.lib.display.Audio object>"},
            )
        ],
    )
    setup = new_code_cell(
        "import numpy as np\n"
        "from IPython.display import Audio\n\n"
        "rows = [(120, 40), (80, 0)]\n"
        "time = np.arange(2000) / 8000\n"
        "tone = np.sin(2 * np.pi * 440 * time) * (1 - time * 4)",
        execution_count=1,
    )
    return python_notebook(
        with_id(setup, "setup"),
        with_id(
            new_raw_cell(
                "You are a patient Python tutor. Explain the cause first, then the smallest fix.",
                metadata={"mcp": {"prompt": "debug_traceback", "title": "Debug a traceback"}},
            ),
            "system",
        ),
        with_id(screenshot_cell, "screenshot"),
        with_id(failing, "failing"),
        with_id(sound, "sound"),
        with_id(
            new_markdown_cell(
                "What does this sound like? Describe its pitch and how it changes.",
                metadata={"mcp": {"prompt": "describe_sound"}},
            ),
            "sound-ask",
        ),
    )


def write_data_files() -> None:
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    (data / "style_guide.md").write_text(
        "# Style guide\n\n"
        "* Short sentences; one idea each.\n"
        "* Active voice: say who does what.\n"
        "* Plain words: 'use', not 'utilize'.\n"
        "* Numbers as digits, units spelled out: 5 seconds.\n",
        encoding="utf-8",
    )
    (data / "sales.csv").write_text(
        "quarter,region,revenue\nQ1,north,120\nQ2,north,180\nQ3,north,90\nQ4,north,210\n", encoding="utf-8"
    )
    (data / "inventory.csv").write_text("sku,item,count\nA-1,bolt,1200\nA-2,nut,0\nB-7,washer,35\n", encoding="utf-8")


NOTEBOOKS = {
    "code_review.ipynb": code_review,
    "few_shot.ipynb": few_shot,
    "plot_prompt.ipynb": plot_prompt,
    "embedded_file.ipynb": embedded_file,
    "rich_content.ipynb": rich_content,
}


def main() -> None:
    write_data_files()
    for name, build in NOTEBOOKS.items():
        nb = build()
        nbformat.validate(nb)
        nbformat.write(nb, str(HERE / name))
        print(f"wrote {name}")


if __name__ == "__main__":
    main()
