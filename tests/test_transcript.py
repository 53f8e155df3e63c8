"""Content blocks as plain text for terminals."""

from __future__ import annotations

import base64

from mcp_notebook.models import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent
from mcp_notebook.transcript import block_text, data_size, describe_size


def b64(size: int) -> str:
    return base64.b64encode(b"x" * size).decode()


def test_the_size_of_base64_data_is_known_without_decoding_it() -> None:
    assert [data_size(b64(n)) for n in (0, 1, 2, 3, 4, 1000)] == [0, 1, 2, 3, 4, 1000]


def test_large_sizes_read_in_kibibytes() -> None:
    assert (describe_size(9_999), describe_size(20_480)) == ("9999 bytes", "20 KiB")


def test_text_is_kept_whole_unless_a_clip_is_asked_for() -> None:
    assert block_text(TextContent(text="abcdef")) == "abcdef"
    assert block_text(TextContent(text="abcdef"), clip=4) == "abcd… (2 more characters)"


def test_media_and_binaries_are_named_never_printed() -> None:
    assert block_text(ImageContent(data=b64(8), mime_type="image/png")) == "[image/png, 8 bytes]"
    assert block_text(AudioContent(data=b64(3), mime_type="audio/wav")) == "[audio/wav, 3 bytes]"
    blob = EmbeddedResource(uri="file:///b.bin", mime_type="application/octet-stream", blob=b64(3))
    assert block_text(blob) == "[resource file:///b.bin, application/octet-stream, 3 bytes]"


def test_embedded_text_comes_under_its_uri_and_links_show_where_they_point() -> None:
    text = EmbeddedResource(uri="file:///a.py", mime_type="text/x-python", text="x = 1")
    assert block_text(text) == "[resource file:///a.py (text/x-python)]\nx = 1"
    assert block_text(ResourceLink(uri="https://e.com/s", name="s", title="Style")) == "[link: Style <https://e.com/s>]"
