"""Prompt tests written as cells: read, never served, run by `check_paths`; snapshots; hostile test cells."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from notebook_files import write_notebook

from mcp_notebook.checking.prompt_tests import MAX_SNAPSHOT_BYTES, snapshot_path
from mcp_notebook.checking.report import Report, check_paths
from mcp_notebook.sources.cells import prompts_from_notebook
from mcp_notebook.sources.stored import StoredBody, listing_of, restore
from mcp_notebook.sources.test_cells import PromptTest

GREET = {"source": "Say hello to {{who}}, warmly.", "mcp": {"prompt": "greet", "description": "Greets."}}
REPLY = {"source": "Hello! How can I help?", "tags": ["prompt:greet", "role:assistant"]}


def _test(prompt: str = "greet", **fields: Any) -> dict[str, Any]:
    """A test cell in the tag form: a raw cell whose source is the test as JSON."""
    return {"cell_type": "raw", "source": json.dumps(fields), "tags": [f"test:{prompt}"]}


def _notebook(folder: Path, *tests: dict[str, Any], name: str = "greet.ipynb") -> Path:
    return write_notebook(folder / name, [GREET, REPLY, *tests])


def _results(report: Report) -> dict[str, tuple[bool, str | None]]:
    return {r.test.name: (r.passed, r.failure) for r in report.tests}


# -- reading test cells ------------------------------------------------------------------------


def test_test_cells_in_both_forms_are_read_and_never_served_as_prompts(tmp_path: Path) -> None:
    metadata_form = {"source": "checks the greeting", "mcp": {"test": {"prompt": "greet", "contains": "Ada"}}}
    both = {"source": "{}", "tags": ["test:greet", "prompt:greet"]}  # a test cell is never part of a prompt
    path = _notebook(tmp_path, _test(arguments={"who": "Ada"}, messages=2), metadata_form, both)
    loaded = prompts_from_notebook(json.loads(path.read_text()), origin="greet.ipynb")
    (greet,) = loaded.prompts
    assert [m.content.text for m in greet.messages] == [GREET["source"], REPLY["source"]]  # type: ignore[union-attr]
    assert [(t.prompt, t.cell, t.arguments, t.messages, t.contains) for t in loaded.tests] == [
        ("greet", 3, (("who", "Ada"),), 2, ()),
        ("greet", 4, (), None, ("Ada",)),
        ("greet", 5, (), None, ()),
    ]
    assert loaded.warnings == ()
    assert not any(cell.number > 2 for cell in loaded.cells)


def test_the_stored_listing_keeps_the_tests(tmp_path: Path) -> None:
    path = _notebook(tmp_path, _test(arguments={"who": "Ada"}, regex="Ada"))
    loaded = prompts_from_notebook(json.loads(path.read_text()), origin="greet.ipynb", root=str(tmp_path))
    listing = listing_of(loaded, origin="greet.ipynb", root=str(tmp_path))
    assert listing is not None

    def body(names: tuple[str, ...]) -> StoredBody:
        return StoredBody(names, lambda: None, lambda: None)

    restored = restore(listing, body, origin="greet.ipynb", root=str(tmp_path), interned={})
    assert restored is not None and restored.tests == loaded.tests and restored.media == loaded.media


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        ({"cell_type": "raw", "source": "not json", "tags": ["test:greet"]}, "must be a JSON object"),
        ({"cell_type": "raw", "source": "[1]", "tags": ["test:greet"]}, "must be a JSON object"),
        ({"source": "x", "mcp": {"test": {"contains": "a"}}}, "names no prompt"),
        (_test(contain="Ada"), "unknown test fields contain"),
        (_test(arguments={"who": 3}), "argument values must be strings"),
        (_test(messages=-1), "messages must be a count"),
        (_test(roles=["system"]), "roles must each be 'user' or 'assistant'"),
        ({"cell_type": "raw", "source": "{}", "tags": ["test:greet", "test:other"]}, "names several prompts"),
    ],
)
def test_a_malformed_test_cell_is_a_failing_test_saying_why(tmp_path: Path, cell: dict[str, Any], problem: str) -> None:
    report = check_paths([_notebook(tmp_path, cell)])
    ((passed, failure),) = _results(report).values()
    assert not passed and failure is not None and problem in failure
    assert report.exit_code() == 1


# -- running them ------------------------------------------------------------------------------


def test_tests_that_pass_and_tests_that_fail_show_the_rendered_result_beside_the_expectation(tmp_path: Path) -> None:
    path = _notebook(
        tmp_path,
        _test(name="ok", arguments={"who": "Ada"}, contains=["hello to Ada"], messages=2),
        _test(name="roles", arguments={"who": "Ada"}, roles=["user", "assistant"]),
        _test(name="missing text", arguments={"who": "Ada"}, contains="Grace"),
        _test(name="count", arguments={"who": "Ada"}, messages=3),
        _test(name="wrong roles", arguments={"who": "Ada"}, roles=["assistant", "user"]),
    )
    report = check_paths([path])
    assert _results(report) == {
        "ok": (True, None),
        "roles": (True, None),
        "missing text": (False, "the rendered prompt does not contain 'Grace'"),
        "count": (False, "2 messages rendered, 3 expected"),
        "wrong roles": (False, "roles user, assistant rendered, assistant, user expected"),
    }
    failed = {r.test.name: r for r in report.tests if not r.passed}
    assert failed["missing text"].detail == (
        "expected: 'Grace'\nrendered:\n# greet: Greets.\n\n## user\n\nSay hello to Ada, warmly.\n\n"
        "## assistant\n\nHello! How can I help?"
    )
    text = report.text()
    assert "test missing text: the rendered prompt does not contain 'Grace'" in text
    assert "Say hello to Ada, warmly." in text
    assert report.exit_code() == 1


def test_snapshots_are_missing_then_written_then_compared_with_a_diff(tmp_path: Path) -> None:
    path = _notebook(tmp_path, _test(name="snap", arguments={"who": "Ada"}, snapshot=True))
    stored = tmp_path / "greet.snapshots" / "snap.txt"
    assert snapshot_path(path, PromptTest("greet", 3, "snap", snapshot="")) == stored

    first = check_paths([path])
    assert _results(first) == {"snap": (False, "no snapshot yet (snap.txt): run with --update-snapshots to write it")}
    assert not stored.exists()

    updated = check_paths([path], update_snapshots=True)
    assert _results(updated) == {"snap": (True, None)}
    assert (
        stored.read_text()
        == "# greet: Greets.\n\n## user\n\nSay hello to Ada, warmly.\n\n## assistant\n\nHello! How can I help?"
    )
    assert f"updated  snapshot {stored}" in updated.text()
    assert _results(check_paths([path])) == {"snap": (True, None)}

    _notebook(tmp_path, _test(name="snap", arguments={"who": "Grace"}, snapshot=True))
    changed = check_paths([path])
    (result,) = changed.tests
    assert result.failure == "the rendered prompt differs from the snapshot snap.txt"
    assert result.detail is not None
    assert "-Say hello to Ada, warmly.\n+Say hello to Grace, warmly." in result.detail
    assert stored.read_text().count("Ada") == 1, "a failing snapshot is not rewritten without --update-snapshots"
    assert _results(check_paths([path], update_snapshots=True)) == {"snap": (True, None)}
    assert "Grace" in stored.read_text()


def test_a_snapshot_named_by_the_test_stays_beside_the_notebook(tmp_path: Path) -> None:
    path = _notebook(
        tmp_path / "nb",
        _test(name="named", arguments={"who": "Ada"}, snapshot="snaps/greet-ada.md"),
        _test(name="escape", arguments={"who": "Ada"}, snapshot="../outside.txt"),
    )
    report = check_paths([path], update_snapshots=True)
    assert _results(report)["named"] == (True, None)
    assert (tmp_path / "nb" / "snaps" / "greet-ada.md").is_file()
    assert _results(report)["escape"] == (
        False,
        "the snapshot '../outside.txt' is outside the notebook's folder, so it is not used",
    )
    assert not (tmp_path / "outside.txt").exists()


# -- hostile test cells ------------------------------------------------------------------------


def test_a_test_of_a_missing_prompt_fails_naming_close_ones(tmp_path: Path) -> None:
    report = check_paths([_notebook(tmp_path, _test("greeet"))])
    ((passed, failure),) = _results(report).values()
    assert not passed and failure == "no such prompt in this notebook: greeet; did you mean greet?"


def test_unknown_and_missing_arguments_fail_saying_which(tmp_path: Path) -> None:
    report = check_paths(
        [_notebook(tmp_path, _test(name="unknown", arguments={"who": "Ada", "mood": "x"}), _test(name="missing"))]
    )
    results = _results(report)
    assert not results["unknown"][0] and "mood" in str(results["unknown"][1])
    assert not results["missing"][0] and "who" in str(results["missing"][1])


@pytest.mark.slow  # regexes are searched in a helper process
def test_a_regex_that_would_run_for_ever_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    catastrophic = r"(a+)+$"  # on a run of a's that ends in something else: exponential backtracking
    path = _notebook(
        tmp_path,
        _test(name="matches", arguments={"who": "Ada"}, regex=[r"^Hello!", r"hello to \w+,"]),
        _test(name="no match", arguments={"who": "Ada"}, regex=r"Grace \d+"),
        _test(name="forever", arguments={"who": "a" * 40 + "!"}, regex=catastrophic),
        _test(name="after", arguments={"who": "Ada"}, regex="Ada"),
        _test(name="malformed", arguments={"who": "Ada"}, regex="(unclosed"),
    )
    started = time.monotonic()
    report = check_paths([path], regex_timeout=2.0)
    assert time.monotonic() - started < 30
    results = _results(report)
    assert results["matches"] == (True, None)
    assert results["no match"] == (False, r"no match for the regex 'Grace \\d+'")
    assert results["forever"][0] is False
    assert "was stopped: the search ran longer than 2 s" in str(results["forever"][1])
    assert results["after"] == (True, None), "the next regex runs in a new search process"
    assert "is malformed: missing ), unterminated subpattern" in str(results["malformed"][1])


def test_a_huge_snapshot_is_refused_unread_and_a_huge_result_is_not_written(tmp_path: Path) -> None:
    path = _notebook(
        tmp_path,
        _test(name="huge file", arguments={"who": "Ada"}, snapshot="huge.txt"),
        _test(name="huge result", arguments={"who": "x" * (MAX_SNAPSHOT_BYTES - 10)}, snapshot="big.txt"),
    )
    (tmp_path / "huge.txt").write_bytes(b"x" * (50 * MAX_SNAPSHOT_BYTES))
    report = check_paths([path], update_snapshots=False)
    results = _results(report)
    assert results["huge file"] == (
        False,
        "the snapshot huge.txt is over 1,000,000 bytes, so it is not compared: test part of the result with "
        "contains or regex instead",
    )
    assert str(results["huge result"][1]).startswith("the rendered prompt is over 1,000,000 bytes")
    assert check_paths([path], update_snapshots=True).exit_code() == 1
    assert not (tmp_path / "big.txt").exists()
    assert (tmp_path / "huge.txt").stat().st_size == 50 * MAX_SNAPSHOT_BYTES
