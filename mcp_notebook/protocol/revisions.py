"""Which MCP protocol revision carries which field, so output can be era-correct.

A client that negotiated an older revision gets only what that revision's
schema defines: no `title` or `_meta` before 2025-06-18, no `icons` before
2025-11-25, no audio before 2025-03-26, no `resource_link` before 2025-06-18,
and cache hints (`ttlMs`, `cacheScope`) and `resultType` only at 2026-07-28.
Revisions are ISO dates, so comparing the strings compares the dates.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "HANDSHAKE_REVISIONS",
    "KNOWN_REVISIONS",
    "LATEST_REVISION",
    "MODERN_REVISIONS",
    "Feature",
    "is_modern",
    "supports",
]

HANDSHAKE_REVISIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_REVISIONS: Final = ("2026-07-28",)
KNOWN_REVISIONS: Final = HANDSHAKE_REVISIONS + MODERN_REVISIONS
LATEST_REVISION: Final = MODERN_REVISIONS[-1]

Feature = Literal[
    "title",  # `title` on prompts, arguments, resources and links
    "meta",  # `_meta` on prompts, content blocks and resource contents
    "icons",  # `icons` on prompts and resource links
    "audio",  # audio content blocks
    "completions_capability",  # `capabilities.completions` in the initialize result
    "resource_link",  # resource_link content blocks
    "last_modified",  # `annotations.lastModified`
    "cache_hints",  # `ttlMs` / `cacheScope` / `resultType` on results
    "elicitation",  # the client capability and `elicitation/create` (asking the user for input)
    "elicitation_modes",  # `mode` ("form" / "url") in `elicitation/create` params
]

_SINCE: Final[dict[Feature, str]] = {
    "audio": "2025-03-26",
    "completions_capability": "2025-03-26",
    "title": "2025-06-18",
    "meta": "2025-06-18",
    "resource_link": "2025-06-18",
    "last_modified": "2025-06-18",
    "elicitation": "2025-06-18",
    "icons": "2025-11-25",
    "elicitation_modes": "2025-11-25",
    "cache_hints": "2026-07-28",
}


def supports(revision: str, feature: Feature) -> bool:
    """True when `revision`'s schema defines `feature`.

    An unknown revision newer than every known one is treated as the newest
    (the SDK only negotiates known ones; this keeps future strings harmless).
    """
    return revision >= _SINCE[feature]


def is_modern(revision: str) -> bool:
    """True for the stateless revisions (no `initialize`, per-request `_meta`)."""
    return revision >= MODERN_REVISIONS[0]
