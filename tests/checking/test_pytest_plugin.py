"""`pytest --mcp-prompts PATH`: the plugin, found through its entry point, run on a folder in a real pytest."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from xml.etree import ElementTree

import pytest
from notebook_files import write_notebook

PROMPT = {"source": "Say hi to {{who}}.", "mcp": {"prompt": "hi"}}


def _test(**fields: str | dict[str, str] | bool) -> dict[str, object]:
    import json

    return {"cell_type": "raw", "source": json.dumps(fields), "tags": ["test:hi"]}


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    (plugin,) = [e for e in entry_points(group="pytest11") if e.name == "mcp_notebook"]
    assert plugin.value == "mcp_notebook.checking.pytest_plugin"


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_each_prompt_test_is_an_item_with_its_failure_in_the_junit_report(tmp_path: Path) -> None:
    write_notebook(
        tmp_path / "prompts" / "hi.ipynb",
        [
            PROMPT,
            _test(name="greets Ada", arguments={"who": "Ada"}, contains="Ada"),
            _test(name="wrong", arguments={"who": "Ada"}, contains="Grace"),
            _test(name="snap", arguments={"who": "Ada"}, snapshot=True),
        ],
    )
    (tmp_path / "prompts" / "broken.ipynb").write_text("{nope")
    write_notebook(tmp_path / "prompts" / "untested.ipynb", [PROMPT])

    run = _pytest(tmp_path, "--mcp-prompts", "prompts", "--junitxml", "first.xml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 failed, 1 passed" in run.stdout
    assert "prompt test wrong (prompt hi, cell 3): the rendered prompt does not contain 'Grace'" in run.stdout
    assert "Say hi to Ada." in run.stdout, "the rendered result beside the expectation"
    cases = {
        (case.get("classname"), case.get("name")): case.find("failure")
        for case in ElementTree.parse(tmp_path / "first.xml").getroot().iter("testcase")
    }
    assert set(cases) == {
        ("prompts.hi.ipynb", "greets Ada"),
        ("prompts.hi.ipynb", "wrong"),
        ("prompts.hi.ipynb", "snap"),
        ("prompts.broken.ipynb", "the notebook loads"),
    }
    assert cases["prompts.hi.ipynb", "greets Ada"] is None
    snap = cases["prompts.hi.ipynb", "snap"]
    assert snap is not None and "no snapshot yet (snap.txt)" in (snap.get("message") or "")

    updated = _pytest(tmp_path, "--mcp-prompts", "prompts/hi.ipynb", "--mcp-update-snapshots", "-k", "snap")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert (tmp_path / "prompts" / "hi.snapshots" / "snap.txt").read_text().endswith("Say hi to Ada.")
    again = _pytest(tmp_path, "--mcp-prompts", "prompts/hi.ipynb", "-k", "snap")
    assert again.returncode == 0 and "1 passed" in again.stdout


@pytest.mark.slow
def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "--mcp-prompts", "nowhere")
    assert run.returncode == 4
    assert "--mcp-prompts nowhere: No such notebook or folder" in run.stderr
