"""A prompt's `prompts/get` result as JSON made once: literal pieces, and where each argument value goes.

A direct `prompts/get` (`direct.py`) answers with the JSON the SDK's path
would write for it. Rendering the prompt, converting it to the SDK's models
and dumping those again for every request costs more than all the checks of
the request together, though from one request to the next only the argument
values change. So the first request for a prompt at a revision renders it
once with a marker in place of each value, through the very same
`render_prompt`, `to_mcp_get_prompt_result` and dump as ever, and the JSON is
kept cut at the markers; every request after it joins those pieces around
its own values, each encoded as the content of a JSON string.

That is byte for byte the JSON the renderer gives, because a value reaches
the wire as it is, and only through a JSON string:

* substitution is literal and single-pass (`rendering.py`): a value is
  inserted where its placeholder stands, never looked into;
* at a 2026-07-28-era revision the conversion copies every field a value
  may be substituted into (a text, a resource's URI and text, a link's URI,
  name, title and description) as it is: no degradation to text, no field
  derived from one, all plain `str` fields of the SDK's models;
* JSON escapes each character on its own, so the encoding of a string is
  the encodings of its parts, joined.

So pieces are made for those revisions only (`is_modern`); the markers are
private-use characters around a token drawn for this process, which no
notebook knows. A prompt is cut again when the registry holds another
version of it; at most `MAX_PROMPTS` are kept.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any, Final

from pydantic_core import to_json

from ..models import PromptSpec
from ..rendering import render_prompt
from .convert import to_mcp_get_prompt_result
from .revisions import is_modern

__all__ = ["MAX_PROMPTS", "GetBodies"]

MAX_PROMPTS: Final = 4096
"""How many prompts' pieces are kept; the oldest made goes first."""

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters: JSON writes them as they are, in UTF-8
_UNLIMITED: Final = 1 << 62

_Pieces = tuple[bytes | str, ...]  # literal JSON, or the name of the argument whose value goes there


class GetBodies:
    """The `prompts/get` result JSON of each prompt asked for, per revision (module docstring)."""

    def __init__(self, finish: Any) -> None:
        # `finish(result)`: the dumped result as the direct answer sends it (its type and stamp added).
        self._finish = finish
        self._token = secrets.token_hex(8)
        self._marker = re.compile(re.escape(f"{_OPEN}{self._token}".encode()) + rb"(\d+)" + re.escape(_CLOSE.encode()))
        self._made: dict[tuple[str, str], tuple[PromptSpec, _Pieces]] = {}

    def body(self, spec: PromptSpec, values: Mapping[str, str], revision: str) -> bytes | None:
        """The result JSON of `spec` with `values` (every argument's, defaults filled in) at `revision`.

        None at a revision whose conversion may reshape a value (then the caller renders as ever).
        """
        if not is_modern(revision):
            return None
        key = (spec.name, revision)
        made = self._made.get(key)
        if made is None or made[0] is not spec:
            made = (spec, self._cut(spec, revision))
            self._made.pop(key, None)
            if len(self._made) >= MAX_PROMPTS:
                del self._made[next(iter(self._made))]
            self._made[key] = made
        return b"".join(piece if isinstance(piece, bytes) else to_json(values[piece])[1:-1] for piece in made[1])

    def _cut(self, spec: PromptSpec, revision: str) -> _Pieces:
        names = [argument.name for argument in spec.arguments]
        marked = {name: f"{_OPEN}{self._token}{number}{_CLOSE}" for number, name in enumerate(names)}
        rendered = render_prompt(spec, marked, max_argument_bytes=_UNLIMITED)
        model = to_mcp_get_prompt_result(rendered, revision)
        whole = to_json(self._finish(model.model_dump(by_alias=True, mode="json", exclude_none=True)))
        parts = self._marker.split(whole)
        # split() alternates: literal, the number of a marker, literal, ..., literal.
        return tuple(part if index % 2 == 0 else names[int(part)] for index, part in enumerate(parts))
