"""DataFrames and Series as Markdown tables, written with pandas' public API only (tabulate is not needed)."""

from __future__ import annotations

import pytest

from mcp_notebook.transcript import frame_markdown, markdown_table


def test_a_cell_stays_one_cell_on_one_line() -> None:
    table = markdown_table(["a|b", "note"], [["x|y", "two\nlines"], [1.5, float("nan")]], right={1})
    assert table == "| a\\|b | note |\n|---|---:|\n| x\\|y | two lines |\n| 1.5 | NaN |"


def test_a_frame_shows_its_index_only_when_it_is_not_the_default_and_says_when_it_was_cut() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"city": ["Oslo", "Rome", "Lima"], "people": [0.7, 2.8, 10.0]})

    assert frame_markdown(frame) == "| city | people |\n|---|---:|\n| Oslo | 0.7 |\n| Rome | 2.8 |\n| Lima | 10.0 |"
    assert frame_markdown(frame.set_index("city"), max_rows=2) == (
        "| city | people |\n|---|---:|\n| Oslo | 0.7 |\n| Rome | 2.8 |\n\n(the first 2 of 3 rows)"
    )
    assert frame_markdown(pandas.Series([1, 2])) == "| value |\n|---:|\n| 1 |\n| 2 |"
