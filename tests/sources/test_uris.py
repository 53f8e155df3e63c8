"""The `notebook:///` URIs of served cells and files: building, parsing, and refusing escapes."""

from __future__ import annotations

import pytest

from mcp_notebook.exceptions import PathOutsideRootError, ResourceError
from mcp_notebook.sources.uris import (
    NotebookLocation,
    is_absolute_path,
    normalize_relative_path,
    parse_notebook_uri,
    to_cell_uri,
    to_file_uri,
    to_file_uri_template,
)


def test_a_cell_uri_names_the_notebook_path_and_the_cell() -> None:
    assert to_cell_uri("reports/q3 review.ipynb", "9f2c") == "notebook:///reports/q3%20review.ipynb#cell=9f2c"


def test_cell_and_file_uris_parse_back_to_their_location() -> None:
    for path, cell in [("a.ipynb", "1"), ("dir/with space/ü.ipynb", "id-_x"), ("x#y?.ipynb", "a/b")]:
        assert parse_notebook_uri(to_cell_uri(path, cell), root="/r") == NotebookLocation(path=path, cell=cell)
    assert parse_notebook_uri(to_file_uri("data/t.csv"), root="/r") == NotebookLocation(path="data/t.csv")


def test_a_file_uri_template_keeps_placeholders_and_quotes_the_rest() -> None:
    assert to_file_uri_template("my data/{{table}} v1.csv") == "notebook:///my%20data/{{table}}%20v1.csv"


def test_dot_segments_are_resolved_inside_the_root() -> None:
    assert parse_notebook_uri("notebook:///a/./b/../c.csv", root="/r").path == "a/c.csv"


@pytest.mark.parametrize("path", ["..", "../x", "a/../../x", "/etc/passwd", "C:/x", "\\\\server\\share"])
def test_paths_that_leave_the_root_are_refused(path: str) -> None:
    with pytest.raises(PathOutsideRootError):
        normalize_relative_path(path, root="/r")


def test_absolute_paths_are_recognised_for_every_system() -> None:
    assert [is_absolute_path(p) for p in ["/a", "C:\\a", "\\\\srv\\a", "a/b", "a:b"]] == [
        True,
        True,
        True,
        False,
        False,
    ]


@pytest.mark.parametrize(
    "uri", ["https://x/a", "notebook://host/a", "notebook:///a?cell=1", "notebook:///a#line=1", "notebook:///"]
)
def test_uris_that_are_not_served_resources_are_a_resource_error(uri: str) -> None:
    with pytest.raises(ResourceError):
        parse_notebook_uri(uri, root="/r")
