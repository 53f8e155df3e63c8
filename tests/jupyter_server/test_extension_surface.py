"""What the extension adds to other entry points: nothing to `%load_ext` or `--help`; its options in `--help-all`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_harness import BIN, DEADLINE, jupyter_env

pytestmark = pytest.mark.slow

SERVER_MODULES = ("jupyter_server", "tornado", "mcp_notebook.jupyter")


def modules_after(code: str, tmp_path: Path) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in {SERVER_MODULES!r} if m in sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=jupyter_env(tmp_path), timeout=DEADLINE
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("import mcp_notebook", id="import"),
        pytest.param(
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "InteractiveShell.instance().run_line_magic('load_ext', 'mcp_notebook')",
            id="load_ext",
        ),
        pytest.param(
            "from mcp_notebook.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
            id="cli-help",
        ),
        pytest.param(
            "from mcp_notebook.cli import main\ntry:\n    main(['config', '--help'])\nexcept SystemExit:\n    pass",
            id="cli-config-help",
        ),
    ],
)
def test_the_extension_costs_nothing_where_it_is_not_used(tmp_path: Path, code: str) -> None:
    assert modules_after(code, tmp_path) == []


def test_only_the_jupyter_server_asking_for_the_extension_imports_it(tmp_path: Path) -> None:
    loaded = modules_after("import mcp_notebook\npoints = mcp_notebook._jupyter_server_extension_points()", tmp_path)
    assert loaded == sorted(SERVER_MODULES)


def test_jupyter_mcp_notebook_help_all_documents_every_option(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BIN / "jupyter"), "mcp-notebook", "--help-all"],
        capture_output=True,
        text=True,
        env=jupyter_env(tmp_path),
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    for option, words in [
        ("--MCPNotebook.root=<Unicode>", "relative to the server's root"),
        ("--MCPNotebook.page_size=<Int>", "per prompts/list page"),
        ("--MCPNotebook.server_name=<Unicode>", "server name MCP clients show"),
        ("--MCPNotebook.watch=<Bool>", "Reload a notebook when it is saved"),
    ]:
        assert option in done.stdout
        assert words in " ".join(done.stdout.split(option, 1)[1].split()[:40])
