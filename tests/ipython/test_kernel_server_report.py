"""What `%mcp serve` shows: in Jupyter a short summary with each client folded away, in a terminal all of it."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from kernel_harness import RealKernel
from kernel_server_harness import Kernel, isolate_runtime_dir, running_kernel

from mcp_notebook.ipython.client_config import client_config
from mcp_notebook.ipython.display import ServeReport
from mcp_notebook.ipython.kernel_server import kernel_prompt_state, serve_command

pytestmark = pytest.mark.slow  # real HTTP servers and a real kernel

CONFIG = client_config(
    url="http://127.0.0.1:34789/mcp",
    token="secret-token",
    kernel_id="425168ee0123456789",
    connection_file="/run/user/1000/jupyter/mcp-notebook-kernel-425168ee0123456789.json",
    runtime_dir=None,
)


class Outline(HTMLParser):
    """The `<details>` of an HTML output: each one's summary text and the text of its `<pre>`; and the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.folded: list[tuple[str, str]] = []
        self.open_details: list[bool] = []
        self.visible: list[str] = []  # text outside any <details>, scripts left out
        self._in: list[str] = []
        self._summary = ""
        self._pre = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in.append(tag)
        if tag == "details":
            self.open_details.append(any(name == "open" for name, _ in attrs))
            self._summary = self._pre = ""

    def handle_endtag(self, tag: str) -> None:
        self._in.pop()
        if tag == "details":
            self.folded.append((self._summary.strip(), self._pre))

    def handle_data(self, data: str) -> None:
        if "script" in self._in:
            return
        if "summary" in self._in:
            self._summary += data
        elif "pre" in self._in:
            self._pre += data
        elif "details" not in self._in:
            self.visible.append(data)


def outline(markup: str) -> Outline:
    parsed = Outline()
    parsed.feed(markup)
    return parsed


def test_the_html_is_a_short_summary_with_each_client_folded_and_the_text_keeps_every_line() -> None:
    report = ServeReport(
        "Serving 1 prompt from a %%prompt cell, the kernel's magics (the `magic` prompt names them all).",
        (
            "warning: --live %timeit runs code: any client holding the token can run arbitrary code in this kernel "
            "through it",
        ),
        CONFIG,
    )
    parsed = outline(report._repr_html_())
    visible = " ".join(" ".join(parsed.visible).split())
    assert visible == (
        "MCP server of this kernel at http://127.0.0.1:34789/mcp , named kernel-425168ee in the configurations "
        "below. Serving 1 prompt from a %%prompt cell, the kernel's magics (the magic prompt names them all). warning: "
        "--live %timeit runs code: any client holding the token can run arbitrary code in this kernel through "
        "it Connect a client:"
    )
    assert [summary for summary, _ in parsed.folded] == [
        "Token: never shown here (cell outputs are saved in the notebook); this command prints it",
        "Claude Code",
        "VS Code (.vscode/mcp.json)",
        "Cursor (~/.cursor/mcp.json; set MCP_NOTEBOOK_KERNEL_TOKEN to the token in Cursor's environment)",
        "Clients that only speak stdio",
        "Connection file (for editors and mcp-notebook connect)",
    ]
    assert parsed.open_details == [False] * 6  # all folded
    assert [body for _, body in parsed.folded] == [
        CONFIG.token_command,
        *(body for _, body in CONFIG.clients),
        CONFIG.connection_file,
    ]
    assert 'querySelectorAll("pre.mcp-paste")' in report._repr_html_()  # the Copy buttons' script
    text = repr(report)
    assert text == "\n".join([report.served, *report.warnings, CONFIG.text()])
    assert "secret-token" not in text and "secret-token" not in report._repr_html_()


def test_the_text_form_keeps_todays_lines() -> None:
    lines = CONFIG.text().splitlines()
    assert lines[:4] == [
        "MCP server of this kernel: http://127.0.0.1:34789/mcp",
        "Token: in the connection file, never printed here (cell outputs are saved in the notebook).",
        f"  To see it: {CONFIG.token_command}",
        f"Connection file: {CONFIG.connection_file}",
    ]
    assert lines[4:7] == ["", "Claude Code:", f"  {CONFIG.clients[0][1]}"]
    assert lines[8] == "VS Code (.vscode/mcp.json):" and lines[9] == "  {"
    assert lines[-1] == f"Clients that only speak stdio: {CONFIG.clients[3][1]}"


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    isolate_runtime_dir(tmp_path, monkeypatch)
    with running_kernel() as kernel:
        yield kernel


@pytest.mark.parametrize(
    ("cells", "served"),
    [
        (0, "no prompts from %%prompt cells"),
        (1, "1 prompt from a %%prompt cell"),
        (2, "2 prompts from %%prompt cells"),
    ],
)
def test_the_count_of_prompts_reads_right_in_the_singular_and_plural(kernel: Kernel, cells: int, served: str) -> None:
    for number in range(cells):
        kernel.cell(f"%%prompt ks_report_{number}\nHello.")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        kernel.main.run(lambda: serve_command(kernel.shell, [], scheduler=kernel.scheduler))
    assert out.getvalue().startswith(f"Serving {served}.")  # the magics are not listed unless asked for
    assert "prompt(s)" not in out.getvalue()
    server = kernel_prompt_state(kernel.shell).server
    assert server is not None
    kernel.stop()


@pytest.mark.parametrize(
    ("argv", "served"),
    [
        (
            ["--magics"],
            "Serving no prompts from %%prompt cells, the kernel's magics (the `magic` prompt names them all).",
        ),
        (["--all-magics"], "Serving no prompts from %%prompt cells, every magic."),
        (["--live", "%who"], "Serving no prompts from %%prompt cells, live magics: %who."),
    ],
)
def test_the_report_names_the_magics_when_they_are_served(kernel: Kernel, argv: list[str], served: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        kernel.main.run(lambda: serve_command(kernel.shell, argv, scheduler=kernel.scheduler))
    assert out.getvalue().startswith(served + "\n")
    kernel.stop()


def test_a_real_kernel_shows_html_and_text_and_neither_holds_the_token(tmp_path: Path) -> None:
    with RealKernel(tmp_path) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("%%prompt kr_hello\nSay hello.")
        shown = kernel.execute("%mcp serve")
        token = kernel.connection().token
        assert shown.text == ""  # nothing printed: one display
        [data] = shown.displays
        assert set(data) == {"text/plain", "text/html"}
        assert data["text/plain"].startswith("Serving 1 prompt from a %%prompt cell.")
        assert "\nClaude Code:\n  token=$(" in data["text/plain"]
        parsed = outline(data["text/html"])
        assert [summary for summary, _ in parsed.folded][1:3] == ["Claude Code", "VS Code (.vscode/mcp.json)"]
        assert token and token not in data["text/plain"] and token not in data["text/html"]
        assert re.search(r"at http://127\.0\.0\.1:\d+/mcp", "".join(parsed.visible))
        kernel.execute("%mcp stop")
