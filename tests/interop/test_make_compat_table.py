"""`make_compat_table.py` turns the recorded rows into the compatibility table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from make_compat_table import END, START, main, render_table, replace_table


def _row(check: str, result: str, *, client: str = "Some Client 1.0", protocol: str = "2025-11-25") -> dict[str, str]:
    return {"client": client, "protocol": protocol, "transport": "stdio", "check": check, "result": result}


def test_rows_of_one_client_revision_and_transport_make_one_line() -> None:
    table = render_table([_row("prompts/list", "pass"), _row("prompts/get", "pass")])
    lines = table.splitlines()
    assert lines[0] == "| Client | Protocol revision | Transport | Result | What was checked |"
    assert lines[2:] == ["| Some Client 1.0 | 2025-11-25 | stdio | pass (2 checks) | `prompts/list`, `prompts/get` |"]


def test_a_failed_check_fails_its_line_and_is_named() -> None:
    table = render_table([_row("prompts/list", "pass"), _row("prompts/get", "fail")])
    assert "| **fail** (1 of 2 checks: prompts/get) |" in table


def test_each_protocol_revision_gets_its_own_line() -> None:
    table = render_table([_row("initialize", "pass", protocol="2026-07-28"), _row("initialize", "pass")])
    assert [line.split(" | ")[1] for line in table.splitlines()[2:]] == ["2025-11-25", "2026-07-28"]


def test_a_line_whose_checks_were_all_skipped_says_so() -> None:
    assert "| skipped |" in render_table([_row("prompts/list", "skip")])


def test_pipes_in_names_do_not_break_the_table() -> None:
    table = render_table([_row("a|b", "pass", client="X | Y")])
    assert "X \\| Y" in table
    assert "`a\\|b`" in table


def test_the_table_replaces_only_the_text_between_the_markers() -> None:
    document = f"# Title\n\n{START}\nold table\n{END}\n\nafter\n"
    assert replace_table(document, "new table\n") == f"# Title\n\n{START}\nnew table\n{END}\n\nafter\n"


def test_a_document_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        replace_table("# no table here\n", "table\n")


def test_the_script_writes_the_table_into_a_document(tmp_path: Path) -> None:
    results = tmp_path / "compat"
    results.mkdir()
    (results / "one.json").write_text(json.dumps(_row("prompts/list", "pass")), encoding="utf-8")
    document = tmp_path / "compatibility.md"
    document.write_text(f"intro\n{START}\n{END}\n", encoding="utf-8")
    assert main(["--results", str(results), "--write", str(document)]) == 0
    assert "| Some Client 1.0 | 2025-11-25 | stdio | pass (1 check) | `prompts/list` |" in document.read_text("utf-8")


def test_the_script_fails_when_there_are_no_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--results", str(tmp_path)]) == 1
    assert "run the interop tests first" in capsys.readouterr().err
