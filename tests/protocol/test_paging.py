"""Opaque cursors: valid while the listed set is unchanged, refused when stale, edited or foreign."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from mcp_notebook.exceptions import InvalidCursorError
from mcp_notebook.protocol.paging import CursorCodec, Paginator, fingerprint_of

ITEMS = tuple(f"item{i}" for i in range(7))
FINGERPRINT = fingerprint_of(ITEMS)


def walk(paginator: Paginator, items: tuple[str, ...]) -> list[tuple[str, ...]]:
    pages = []
    cursor = None
    while True:
        page = paginator.page("prompts", items, fingerprint_of(items), cursor)
        pages.append(page.items)
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


def test_pages_cover_the_whole_listing_in_order() -> None:
    pages = walk(Paginator(page_size=3), ITEMS)
    assert pages == [ITEMS[0:3], ITEMS[3:6], ITEMS[6:7]]


def test_a_listing_that_fits_one_page_has_no_next_cursor() -> None:
    page = Paginator(page_size=7).page("prompts", ITEMS, FINGERPRINT, None)
    assert page.items == ITEMS
    assert page.next_cursor is None


def test_an_empty_listing_is_one_empty_page() -> None:
    page = Paginator(page_size=3).page("prompts", (), fingerprint_of(()), None)
    assert page.items == ()
    assert page.next_cursor is None


def test_a_cursor_stays_valid_while_the_set_is_unchanged() -> None:
    paginator = Paginator(page_size=3)
    cursor = paginator.page("prompts", ITEMS, FINGERPRINT, None).next_cursor
    assert cursor is not None
    first = paginator.page("prompts", ITEMS, FINGERPRINT, cursor)
    again = paginator.page("prompts", ITEMS, FINGERPRINT, cursor)
    assert first == again
    assert first.items == ITEMS[3:6]


def test_a_cursor_is_invalid_once_the_set_changes() -> None:
    paginator = Paginator(page_size=3)
    cursor = paginator.page("prompts", ITEMS, FINGERPRINT, None).next_cursor
    assert cursor is not None
    changed = (*ITEMS, "item7")
    with pytest.raises(InvalidCursorError) as caught:
        paginator.page("prompts", changed, fingerprint_of(changed), cursor)
    assert str(caught.value) == "Invalid cursor"


def test_an_edited_cursor_is_invalid() -> None:
    codec = CursorCodec()
    cursor = codec.encode("prompts", FINGERPRINT, 3)
    payload, mac = cursor.split(".")
    decoded = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
    forged_payload = base64.urlsafe_b64encode(decoded.replace(":3", ":6").encode()).rstrip(b"=").decode()
    with pytest.raises(InvalidCursorError):
        codec.decode("prompts", f"{forged_payload}.{mac}", FINGERPRINT)


@pytest.mark.parametrize(
    "garbage",
    ["", "garbage", "a.b", "a.b.c", "!!!.???", "é.ü", "x" * 5000, "MTpwcm9tcHRz.AAAA"],
    ids=["empty", "word", "two-parts", "three-parts", "not-base64", "non-ascii", "huge", "short-mac"],
)
def test_garbage_is_not_a_cursor(garbage: str) -> None:
    with pytest.raises(InvalidCursorError):
        Paginator(page_size=3).page("prompts", ITEMS, FINGERPRINT, garbage)


def test_a_cursor_of_one_listing_is_invalid_for_another() -> None:
    paginator = Paginator(page_size=3)
    cursor = paginator.page("prompts", ITEMS, FINGERPRINT, None).next_cursor
    assert cursor is not None
    with pytest.raises(InvalidCursorError):
        paginator.page("resources", ITEMS, FINGERPRINT, cursor)


def test_a_cursor_from_another_server_of_the_same_set_is_valid() -> None:
    # Workers and replicas behind one load balancer, and a restarted server, share no secret.
    cursor = Paginator(page_size=3).page("prompts", ITEMS, FINGERPRINT, None).next_cursor
    assert cursor is not None
    assert Paginator(page_size=3).page("prompts", ITEMS, FINGERPRINT, cursor).items == ITEMS[3:6]


def test_a_cursor_sealed_with_another_key_is_invalid() -> None:
    cursor = CursorCodec(b"k" * 32).encode("prompts", FINGERPRINT, 3)
    with pytest.raises(InvalidCursorError):
        CursorCodec().decode("prompts", cursor, FINGERPRINT)


def test_the_same_key_opens_its_own_cursors_across_instances() -> None:
    key = b"k" * 32
    cursor = CursorCodec(key).encode("prompts", FINGERPRINT, 3)
    assert CursorCodec(key).decode("prompts", cursor, FINGERPRINT) == 3


@pytest.mark.parametrize("size", [0, -1])
def test_a_page_size_below_one_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="page_size"):
        Paginator(page_size=size)


def test_every_way_to_serve_has_the_same_default_page_size(tmp_path: Path) -> None:
    from mcp_notebook.asgi import ServeSettings
    from mcp_notebook.cli import build_parser
    from mcp_notebook.commands.serve import serve_settings
    from mcp_notebook.jupyter.app import MCPNotebook
    from mcp_notebook.protocol.paging import DEFAULT_PAGE_SIZE
    from mcp_notebook.service import ServiceSettings

    assert DEFAULT_PAGE_SIZE == 500
    chosen, _ = serve_settings(build_parser().parse_args(["serve", str(tmp_path)]))
    assert chosen.page_size == DEFAULT_PAGE_SIZE
    assert ServiceSettings(paths=(str(tmp_path),)).page_size == DEFAULT_PAGE_SIZE
    assert ServeSettings.from_env({"MCP_NOTEBOOK_PATHS": str(tmp_path)}).service.page_size == DEFAULT_PAGE_SIZE
    assert MCPNotebook().page_size == DEFAULT_PAGE_SIZE
