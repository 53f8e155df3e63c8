"""`%mcp check`: the kernel's notebook and its %%prompt cells, checked as `mcp-notebook check` does, as a table."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from magics_harness import isolated_shell
from notebook_files import write_notebook

from mcp_notebook.ipython.check import KERNEL_CELLS, CheckTable

__all__ = ["isolated_shell"]


def _notebook(folder: Path) -> Path:
    test = {"name": "greets Ada", "arguments": {"who": "Ada"}, "contains": "Grace"}
    return write_notebook(
        folder / "prompts.ipynb",
        [
            {"source": "Review {{code}} for {{focus}}.", "mcp": {"prompt": "review"}},
            {"source": "Say hi to {{who}}.", "mcp": {"prompt": "hi"}},
            {"cell_type": "raw", "source": json.dumps(test), "tags": ["test:hi"]},
            {"cell_type": "raw", "source": '{"arguments": {"who": "Ada"}}', "tags": ["test:hi"]},
        ],
    )


def test_the_notebook_and_the_prompt_cells_are_checked_worst_first(
    isolated_shell: InteractiveShell, tmp_path: Path
) -> None:
    path = _notebook(tmp_path)
    isolated_shell.run_cell_magic("prompt", "summary", "Summarize.")
    table = isolated_shell.run_line_magic("mcp", f"check --notebook {path}")
    assert isinstance(table, CheckTable)
    rows = table.rows()
    assert rows[0][:2] == ("prompts.ipynb", "error")
    assert rows[0][2].startswith("test greets Ada: the rendered prompt does not contain 'Grace'\nexpected: 'Grace'")
    assert ("prompts.ipynb", "passed", "test hi (cell 4)", "") in rows
    zed = [row for row in rows if row[2].startswith("zed:")]
    assert zed == [
        (
            "prompts.ipynb",
            "warning",
            "zed: Zed drops prompts that take more than one argument, without a word: it will not list this one "
            "(2 arguments) — review",
            "https://github.com/zed-industries/zed/issues/21944",
        )
    ]
    opencode = [row for row in rows if row[0] == KERNEL_CELLS]
    assert [row[2].split(":")[0] for row in opencode] == ["opencode"]
    assert opencode[0][2].endswith("— summary")
    html = table._repr_html_()
    assert '<a href="https://github.com/zed-industries/zed/issues/21944"' in html
    assert "3 prompts in 1 notebook and %%prompt cells, 2 prompt tests" in html
    assert "greets Ada" in repr(table)
    assert table.report.exit_code() == 1


def test_clients_narrow_it_and_mistakes_are_one_line(isolated_shell: InteractiveShell, tmp_path: Path) -> None:
    path = _notebook(tmp_path)
    table = isolated_shell.run_line_magic("mcp", f"check --notebook {path} --clients vscode")
    assert not [row for row in table.rows() if row[1] == "warning"]
    with pytest.raises(UsageError, match="unknown client emacs: the known ones are claude-code"):
        isolated_shell.run_line_magic("mcp", f"check --notebook {path} --clients emacs")
    with pytest.raises(UsageError, match=r"--notebook: no such file: nowhere\.ipynb"):
        isolated_shell.run_line_magic("mcp", "check --notebook nowhere.ipynb")
    with pytest.raises(UsageError, match="nothing to check"):
        isolated_shell.run_line_magic("mcp", "check")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs chromium to render the table")
def test_the_table_renders_in_a_browser(isolated_shell: InteractiveShell, tmp_path: Path) -> None:
    path = _notebook(tmp_path)
    table = isolated_shell.run_line_magic("mcp", f"check --notebook {path}")
    page = tmp_path / "check.html"
    page.write_text(f"<html><body style='font-family: sans-serif'>{table._repr_html_()}</body></html>")
    shot = tmp_path / "check.png"
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}", "--window-size=1400,700",
         page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )  # fmt: skip
    assert shot.stat().st_size > 10_000  # a page with a table on it, not a blank one


@pytest.mark.slow
def test_in_a_real_kernel_the_kernels_own_notebook_is_checked(tmp_path: Path) -> None:
    from kernel_harness import RealKernel

    path = _notebook(tmp_path / "work")
    with RealKernel(tmp_path / "jupyter", cwd=path.parent, env={"JPY_SESSION_NAME": str(path)}) as kernel:
        assert kernel.execute("%load_ext mcp_notebook").status == "ok"
        assert kernel.execute("%%prompt summary\nSummarize.").status == "ok"
        shown = kernel.execute("%mcp check")
        assert shown.error is None, shown.error
        data = shown.result
        assert "<table>" in data["text/html"] and "test greets Ada" in data["text/html"]
        assert "3 prompts in 1 notebook and %%prompt cells" in data["text/plain"]
        assert "opencode" in data["text/plain"] and "summary" in data["text/plain"]
