"""A skill's path in its server's namespace: read straight from a plain `skill://` URI, split and decoded otherwise.

Both ways must agree: the path names the skill in `%mcp skill`, in warnings, and in the URIs of its files.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest

from mcp_notebook.models import SKILL_FILE, Skill


def _split(uri: str) -> str:
    try:
        parts = urlsplit(uri[: -len(SKILL_FILE) - 1])
    except ValueError as refused:
        return f"refused: {refused}"
    return unquote(f"{parts.netloc}{parts.path}").strip("/")


def _path(uri: str) -> str:
    try:
        return Skill(uri, {}, ()).path
    except ValueError as refused:
        return f"refused: {refused}"


@pytest.mark.parametrize(
    "path",
    [
        "refunds",
        "acme/billing/refunds",
        "acme//refunds",
        "/refunds",
        "a b/c",
        "café/über",
        "user@host:80/x",
        "a%20b/c",
        "a%2Fb",
        "q?x=1/y",
        "f#frag/y",
        "tab\there/y",
        "line\nbreak/y",
        "[v6]/x",
        "[::1]/x",
        "",
    ],
)
def test_the_path_of_a_skill_is_what_splitting_and_decoding_its_uri_gives(path: str) -> None:
    uri = f"skill://{path}/{SKILL_FILE}"
    assert _path(uri) == _split(uri)


def test_a_uri_of_another_scheme_is_split_as_ever() -> None:
    uri = f"SKILL://Acme/refunds/{SKILL_FILE}"
    assert Skill(uri, {}, ()).path == _split(uri) == "Acme/refunds"
