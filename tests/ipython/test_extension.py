"""%load_ext stays light (no SDK, anyio or asyncio on its path) and %unload_ext removes what it added."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from magics_harness import DEADLINE, isolated_shell

from mcp_notebook.ipython.extension import loaded_pool

__all__ = ["isolated_shell"]


def run_in_fresh_ipython(code: str, tmp_path: Path) -> dict[str, object]:
    """Start IPython in a new interpreter, run `code` (which prints one JSON line), return what it printed."""
    script = (
        "import json, sys, time\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n" + code
    )
    env = {"IPYTHONDIR": str(tmp_path / "ipython"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_load_ext_imports_no_sdk_anyio_or_asyncio(tmp_path: Path) -> None:
    # What loading costs in time is measured by benchmarks/bench_load_ext.py; the heavy
    # imports are what would make it slow, and those are checked here.
    code = (
        "heavy = ('mcp', 'mcp_types', 'pydantic', 'anyio', 'asyncio', 'ipywidgets')\n"
        "before = {m for m in heavy if m in sys.modules}\n"
        "shell.run_line_magic('load_ext', 'mcp_notebook')\n"
        "print(json.dumps({'new': sorted(m for m in heavy if m in sys.modules and m not in before)}))\n"
    )
    assert run_in_fresh_ipython(code, tmp_path)["new"] == []


@pytest.mark.slow
def test_the_sdk_is_warmed_up_in_the_background_after_the_first_cell(tmp_path: Path) -> None:
    result = run_in_fresh_ipython(
        "shell.run_line_magic('load_ext', 'mcp_notebook')\n"
        "after_load = 'mcp' in sys.modules\n"
        "shell.run_cell('1 + 1')\n"
        "import threading\n"
        "for thread in threading.enumerate():\n"
        "    if thread.name == 'mcp-notebook-warm-up':\n"
        "        thread.join(60)\n"
        "print(json.dumps({'after_load': after_load, 'after_cell': 'mcp.client.client' in sys.modules}))\n",
        tmp_path,
    )

    assert result == {"after_load": False, "after_cell": True}


def test_loading_registers_mcp_and_prompt(isolated_shell: InteractiveShell) -> None:
    assert isolated_shell.find_line_magic("mcp") is not None
    assert isolated_shell.find_cell_magic("prompt") is not None
    assert loaded_pool(isolated_shell) is not None


def test_loading_twice_keeps_one_registration(isolated_shell: InteractiveShell) -> None:
    pool = loaded_pool(isolated_shell)
    isolated_shell.run_line_magic("reload_ext", "mcp_notebook")

    assert loaded_pool(isolated_shell) is not pool
    assert isolated_shell.find_line_magic("mcp").__self__.pool is loaded_pool(isolated_shell)


def test_unloading_removes_magics_formatters_and_the_pool(isolated_shell: InteractiveShell) -> None:
    isolated_shell.run_line_magic("unload_ext", "mcp_notebook")
    try:
        assert isolated_shell.find_line_magic("mcp") is None
        assert isolated_shell.find_cell_magic("prompt") is None
        assert loaded_pool(isolated_shell) is None
        assert "MCPMagics" not in isolated_shell.magics_manager.registry
    finally:
        isolated_shell.run_line_magic("load_ext", "mcp_notebook")


def test_prompt_loads_the_kernel_prompt_magic_on_first_use(
    isolated_shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_shell.run_cell_magic("prompt", "hello_prompt", "Say hello to {{who}}.")

    assert "Published prompt 'hello_prompt' (who)" in capsys.readouterr().out
    assert not getattr(isolated_shell.find_cell_magic("prompt"), "_mcp_notebook_stub", False)
