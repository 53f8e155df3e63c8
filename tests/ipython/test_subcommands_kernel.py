"""`%mcp SUB --help` in a real ipykernel (jupyter_client): the same sections for every subcommand, nothing heavy loaded.

A notebook's front end shows what the kernel prints on stdout; the help of
`form`, `picker` and `serve` must read like every other subcommand's, and
asking for it must not import the widgets or the kernel's own server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from kernel_harness import RealKernel

pytestmark = pytest.mark.slow

# Not the MCP SDK (nor what it imports): after the first cell a background thread imports it on purpose.
HEAVY = ("ipywidgets", "mcp_notebook.ipython.widgets", "mcp_notebook.ipython.kernel_server")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("subcommands-kernel")) as kernel:
        loaded = kernel.execute("%load_ext mcp_notebook")
        assert loaded.status == "ok", loaded.error
        yield kernel


def printed(kernel: RealKernel, code: str) -> str:
    result = kernel.execute(code)
    assert result.status == "ok", result.error
    return result.text


def heavy_modules(kernel: RealKernel) -> list[str]:
    text = printed(kernel, f"import sys, json\nprint(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))")
    found: list[str] = json.loads(text)
    return found


@pytest.mark.parametrize("name", ["form", "picker", "serve", "stop", "unpublish", "get"])
def test_help_in_a_kernel_has_the_sections_of_every_subcommand_and_imports_nothing_heavy(
    kernel: RealKernel, name: str
) -> None:
    assert heavy_modules(kernel) == []
    text = printed(kernel, f"%mcp {name} --help")

    assert text.startswith(f"usage: %mcp {name} [-h]"), text
    headings = [line for line in text.splitlines() if line and not line[0].isspace() and line.endswith(":")]
    assert headings[-2:] == ["options:", "examples:"], text
    assert set(headings) <= {"arguments:", "options:", "examples:"}, text
    assert re.search(r"\n  -h, --help +show this help\n", text), text
    assert "\nexamples:\n  " in text and f"%mcp {name}" in text.split("examples:")[1]
    assert printed(kernel, f"%mcp help {name}") == text
    assert heavy_modules(kernel) == []


def test_form_and_picker_help_are_no_longer_docstrings(kernel: RealKernel) -> None:
    for name in ("form", "picker"):
        text = printed(kernel, f"%mcp {name} --help")
        assert "    %mcp " not in text  # a docstring's indented usage line
        assert "`" not in text  # nor its reST quotes


def test_serve_help_names_every_option_and_running_it_still_serves(kernel: RealKernel) -> None:
    text = printed(kernel, "%mcp serve --help")
    for option in ("--port N", "--no-token", "--live MAGIC,...", "--live-timeout S", "--all-magics", "--notebook PATH"):
        assert f"\n  {option}" in text, option
    assert "--stdio-proxy" in text

    [served] = kernel.execute("%mcp serve").displays  # a summary (HTML) whose text form holds every line
    assert "MCP server of this kernel: http://127.0.0.1:" in served["text/plain"]
    assert printed(kernel, "%mcp stop").startswith("Stopped the kernel's MCP server at http://127.0.0.1:")
