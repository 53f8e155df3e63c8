"""`mcp-notebook check` on the command line: the report for people, --json, --junit, --strict, --clients."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from notebook_files import write_notebook, write_skill

from mcp_notebook.cli import main

TWO_ARGUMENTS = {"source": "Review {{code}} for {{focus}}.", "mcp": {"prompt": "review"}}
NO_ARGUMENTS = {"source": "Say hi.", "mcp": {"prompt": "hello"}}
PASSING = {"cell_type": "raw", "source": '{"arguments": {"code": "x", "focus": "y"}, "contains": "x"}',
           "tags": ["test:review"]}  # fmt: skip
FAILING = {"cell_type": "raw", "source": '{"name": "wrong", "contains": "nowhere"}', "tags": ["test:hello"]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_notebook(tmp_path / "clean.ipynb", [{"source": "Explain {{topic}}.", "mcp": {"prompt": "explain"}}])
    write_notebook(tmp_path / "warned.ipynb", [TWO_ARGUMENTS, PASSING])
    write_notebook(tmp_path / "failing.ipynb", [NO_ARGUMENTS, FAILING])
    return tmp_path


def _check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(["check", *args])
    finally:
        gc.unfreeze()  # what the command froze, as a process about to end would keep it
    assert gc.isenabled(), "collection is on again after the command"
    out, err = capsys.readouterr()
    return code, out, err


def test_the_report_groups_by_notebook_worst_first_and_errors_exit_1(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _check([str(folder)], capsys)
    assert code == 1
    headings = [line for line in out.splitlines() if line.endswith(("errors", "error", "warnings", "warning"))]
    assert headings[0].startswith("failing.ipynb: 1 error, ")
    assert headings[1] == "warned.ipynb: 0 errors, 2 warnings"
    assert "clean.ipynb" not in out
    assert "  error    test wrong: the rendered prompt does not contain 'nowhere'" in out
    assert "zed: Zed drops prompts that take more than one argument" in out
    assert "(source: https://github.com/zed-industries/zed/issues/21944)" in out
    assert out.rstrip().endswith("2 prompt tests (1 passed, 1 failed): 1 error, 3 warnings "
                                 "(clients: claude-code, cursor, opencode, text-only, vscode, zed)")  # fmt: skip


def test_warnings_alone_exit_0_and_1_with_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(tmp_path / "warned.ipynb", [TWO_ARGUMENTS, PASSING])
    assert _check([str(tmp_path)], capsys)[0] == 0
    assert _check([str(tmp_path), "--strict"], capsys)[0] == 1
    assert _check([str(tmp_path), "--strict", "--clients", "opencode,cursor"], capsys)[0] == 0


def test_clients_narrow_the_report_and_an_unknown_one_is_a_usage_error(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _check([str(folder), "--clients", "opencode"], capsys)
    assert "opencode skips prompts that take no arguments" in out and "zed" not in out.replace("(clients", "")
    code, out, err = _check([str(folder), "--clients", "zed,emacs"], capsys)
    assert code == 2 and out == ""
    known = "claude-code, cursor, opencode, text-only, vscode, zed"
    assert err == f"mcp-notebook: unknown client emacs: the known ones are {known}\n"


def test_json_carries_every_finding_and_test(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check([str(folder), "--json"], capsys)
    document = json.loads(out)
    assert code == 1 and (document["errors"], document["warnings"]) == (1, 3)
    assert [n["notebook"] for n in document["notebooks"]] == ["failing.ipynb", "warned.ipynb", "clean.ipynb"]
    failing = document["notebooks"][0]
    assert failing["tests"] == [
        {"name": "wrong", "prompt": "hello", "cell": 2, "passed": False,
         "failure": "the rendered prompt does not contain 'nowhere'",
         "detail": "expected: 'nowhere'\nrendered:\n# hello: Say hi.\n\n## user\n\nSay hi."}
    ]  # fmt: skip
    (opencode,) = [f for f in failing["findings"] if f["kind"] == "client"]
    assert opencode["client"] == "opencode" and opencode["prompts"] == ["hello"]
    assert opencode["source"] == "https://github.com/anomalyco/opencode/issues/14613"


def test_the_junit_file_reads_back_as_junit(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "out" / "check.xml"
    junit.parent.mkdir()
    assert _check([str(folder), "--junit", str(junit)], capsys)[0] == 1
    root = ElementTree.parse(junit).getroot()
    assert root.tag == "testsuites" and (root.get("tests"), root.get("failures")) == ("5", "1")
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    assert list(suites) == ["failing.ipynb", "warned.ipynb", "clean.ipynb"]
    cases = {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}
    failure = cases["failing.ipynb", "wrong"].find("failure")
    assert failure is not None and failure.get("message") == "the rendered prompt does not contain 'nowhere'"
    assert "rendered:" in (failure.text or "")
    assert cases["warned.ipynb", "review (cell 2)"].find("failure") is None
    warned = cases["warned.ipynb", "format and clients"]
    assert warned.find("failure") is None and "zed:" in (warned.findtext("system-out") or "")
    _check([str(folder), "--junit", str(junit), "--strict"], capsys)
    strict = {(c.get("classname"), c.get("name")): c for c in ElementTree.parse(junit).getroot().iter("testcase")}
    assert strict["warned.ipynb", "format and clients"].find("failure") is not None


def test_an_unreadable_notebook_and_format_warnings_are_reported_under_their_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.ipynb").write_text("{not json")
    write_notebook(tmp_path / "odd.ipynb", [{"source": "Hi {{who}}", "mcp": {"prompt": "hi", "colour": "red"}}])
    code, out, _ = _check([str(tmp_path), "--clients", "zed"], capsys)
    assert code == 1
    assert out.splitlines()[0] == "broken.ipynb: 1 error, 0 warnings"
    assert "  warning  cell 1: unknown metadata.mcp fields colour ignored" in out


def test_skills_that_would_not_be_served_are_warnings_under_skills(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_notebook(tmp_path / "clean.ipynb", [{"source": "Explain {{topic}}.", "mcp": {"prompt": "explain"}}])
    write_skill(tmp_path, "tidy-table")
    clients = "(clients: claude-code, cursor, opencode, text-only, vscode, zed)"
    code, out, _ = _check([str(tmp_path)], capsys)
    assert code == 0 and out.strip() == f"1 prompt in 1 notebook, 1 skill: 0 errors, 0 warnings {clients}"
    write_skill(tmp_path, "bad-name", "---\nname: other\ndescription: Misnamed.\n---\n\nDo it.\n")
    write_skill(tmp_path, "bare", "# No frontmatter\n")
    outside = tmp_path.parent / "secret.txt"
    outside.write_text("password", encoding="utf-8")
    (tmp_path / "tidy-table" / "leak.txt").symlink_to(outside)

    code, out, _ = _check([str(tmp_path)], capsys)

    assert code == 0  # warnings, as `list` gives them: --strict fails on them
    lines = out.splitlines()
    assert lines[0] == "skills: 0 errors, 3 warnings"
    assert lines[1:4] == [
        "  warning  skill bad-name/SKILL.md is not served: its name 'other' is not its folder's name 'bad-name': "
        "rename one",
        "  warning  skill bare/SKILL.md is not served: SKILL.md does not begin with YAML frontmatter: start it with "
        "a '---' line, then 'name: ...' and 'description: ...', then a '---' line",
        "  warning  tidy-table/leak.txt is left out of its skill: a symlink leads outside the served folder",
    ]
    assert lines[-1] == f"1 prompt in 1 notebook, 1 skill: 0 errors, 3 warnings {clients}"
    assert _check([str(tmp_path), "--strict"], capsys)[0] == 1
    document = json.loads(_check([str(tmp_path), "--json"], capsys)[1])
    assert document["skills"] == 1 and document["warnings"] == 3
    (skills,) = [n for n in document["notebooks"] if n["notebook"] == "skills"]
    assert {f["kind"] for f in skills["findings"]} == {"skill"} and len(skills["findings"]) == 3
    junit = tmp_path.parent / "check.xml"
    _check([str(tmp_path), "--strict", "--junit", str(junit)], capsys)
    cases = {(c.get("classname"), c.get("name")): c for c in ElementTree.parse(junit).getroot().iter("testcase")}
    failure = cases["skills", "served as skills"].find("failure")
    assert failure is not None and "bad-name/SKILL.md is not served" in (failure.text or "")


@pytest.mark.slow
def test_the_installed_command_checks_a_folder(folder: Path, tmp_path: Path) -> None:
    (folder / "broken.ipynb").write_text("{not json")
    run = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "check", str(folder), "--junit", str(tmp_path / "j.xml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert "broken.ipynb: 1 error" in run.stdout and "failing.ipynb: 1 error" in run.stdout
    assert run.stderr == "", "every problem is said once, in the report"
    assert ElementTree.parse(tmp_path / "j.xml").getroot().get("failures") == "2"
