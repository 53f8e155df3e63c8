"""Prompt arguments typed on a %mcp line: quoting, @variables as data, @file:path, @@ escapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError

from mcp_notebook.ipython.arguments import parse_arguments, split_line


def test_quoted_values_keep_their_spaces() -> None:
    tokens = split_line("""text="two words" other='single quoted' plain=x""")

    assert parse_arguments(tokens, {}) == {"text": "two words", "other": "single quoted", "plain": "x"}


def test_at_name_takes_the_variable_as_text_without_evaluating_anything() -> None:
    namespace = {"code": "print('hi')", "count": 3}

    assert parse_arguments(["a=@code", "b=@count"], namespace) == {"a": "print('hi')", "b": "3"}
    with pytest.raises(UsageError, match="@ takes a variable name"):
        parse_arguments(["a=@code.upper()"], namespace)
    with pytest.raises(UsageError, match="no variable named 'missing'"):
        parse_arguments(["a=@missing"], namespace)


def test_at_file_reads_a_text_file_relative_to_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")

    assert parse_arguments(["n=@file:notes.md"], {}, cwd=tmp_path) == {"n": "# Notes\n"}
    with pytest.raises(UsageError, match="no such file"):
        parse_arguments(["n=@file:absent.md"], {}, cwd=tmp_path)
    (tmp_path / "image.bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not a UTF-8 text file"):
        parse_arguments(["n=@file:image.bin"], {}, cwd=tmp_path)


def test_double_at_is_a_literal_at_sign() -> None:
    assert parse_arguments(["handle=@@someone"], {"someone": "ignored"}) == {"handle": "@someone"}


def test_values_may_contain_equals_signs() -> None:
    assert parse_arguments(["expr=a=b"], {}) == {"expr": "a=b"}


@pytest.mark.parametrize("token", ["positional", "=value", "bad key=x"])
def test_tokens_that_are_not_name_value_pairs_are_refused(token: str) -> None:
    with pytest.raises(UsageError, match="expected NAME=VALUE"):
        parse_arguments([token], {})


def test_an_argument_given_twice_is_refused() -> None:
    with pytest.raises(UsageError, match="given twice"):
        parse_arguments(["a=1", "a=2"], {})


def test_an_unclosed_quote_is_explained() -> None:
    with pytest.raises(UsageError, match="close your quotes"):
        split_line('text="unfinished')
