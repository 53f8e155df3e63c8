"""Getting into the kernel: the README's install steps, followed in a fresh virtual environment.

A venv gets the project (from this checkout) and a kernelspec
(`python -m ipykernel install --user --name …`), and a notebook executed by
nbclient on that kernel loads the extension and renders a prompt of
`mcp-notebook serve examples/`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from kernel_harness import jupyter_folders
from nbclient import NotebookClient
from trusted_files import trusted

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
KERNEL = "mcp-notebook-install-test"
INSTALL_DEADLINE = 900  # seconds: pip resolves and installs the dependencies (from its cache when warm)


def run(*command: str | Path, env: dict[str, str]) -> None:
    done = subprocess.run([str(c) for c in command], env=env, capture_output=True, text=True, timeout=INSTALL_DEADLINE)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_DEADLINE * 2)
def test_a_fresh_venv_with_a_kernelspec_runs_the_magics_in_a_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = jupyter_folders(tmp_path / "jupyter")
    for variable, value in folders.items():
        monkeypatch.setenv(variable, value)
    env = {**os.environ, **folders}
    env.pop("VIRTUAL_ENV", None)
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, env=env)
    python = venv / "bin" / "python"
    # The README's steps: install the project into the kernel's environment, then register the kernel.
    run(python, "-m", "pip", "install", "-q", ROOT, env=env)
    run(python, "-m", "ipykernel", "install", "--user", "--name", KERNEL, "--display-name", "mcp-notebook", env=env)
    spec = json.loads((Path(folders["JUPYTER_DATA_DIR"]) / "kernels" / KERNEL / "kernel.json").read_text())
    assert Path(spec["argv"][0]) == python

    project = tmp_path / "project"
    project.mkdir()
    server = {"command": str(venv / "bin" / "mcp-notebook"), "args": ["serve", str(EXAMPLES)]}
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": server}}), encoding="utf-8")
    trusted(project / "mcp.json")  # the user's own project
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import sys; print(sys.executable)"),
            nbformat.v4.new_code_cell("%load_ext mcp_notebook"),
            nbformat.v4.new_code_cell('msgs = %mcp get docs:code_review code="print(1)"\nprint(msgs.to_openai())'),
        ],
        metadata={"kernelspec": {"name": KERNEL, "display_name": "mcp-notebook", "language": "python"}},
    )
    NotebookClient(notebook, timeout=120, kernel_name=KERNEL, resources={"metadata": {"path": str(project)}}).execute()

    printed = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream") for cell in notebook.cells]
    assert Path(printed[0].strip()) == python  # the kernel runs in the venv, not in the test's environment
    assert "'role': 'user'" in printed[2]
    assert "print(1)" in printed[2] and "Python" in printed[2]  # the argument, and the notebook's default
