"""`entries_json`: each prompt's listing entry as `to_json(to_mcp_prompt_entry(...))` makes it, byte for byte.

Prompts of one notebook share their arguments, icons and `_meta` (the same
objects), and their JSON after the head is made once; these cases mix shared
and own parts, heads with and without titles and descriptions, and text that
JSON escapes, in every revision.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import to_json
from test_listing_cache import VARIED

from mcp_notebook.models import Icon, PromptArgument, PromptSpec
from mcp_notebook.protocol.convert import to_mcp_prompt_entry
from mcp_notebook.protocol.listing import LIST_PROMPTS, entries_json
from mcp_notebook.protocol.revisions import KNOWN_REVISIONS
from mcp_notebook.protocol.sdk_seam import shape_result
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
MAYBE = st.none() | TEXT
ARGUMENTS = st.lists(
    st.builds(PromptArgument, name=TEXT, title=MAYBE, description=MAYBE, required=st.booleans(), default=MAYBE),
    max_size=3,
).map(tuple)
ICONS = st.lists(st.builds(Icon, src=TEXT.map(lambda text: "https://example.com/" + text)), max_size=2).map(tuple)
META = st.none() | st.dictionaries(TEXT, TEXT | st.integers() | st.lists(st.integers(), max_size=2), max_size=3)
SHARED = st.tuples(ARGUMENTS, ICONS, META)


def _prompt(head: tuple[str, str | None, str | None], shared: tuple[Any, Any, Any]) -> PromptSpec:
    name, title, description = head
    arguments, icons, meta = shared
    return PromptSpec(name=name, title=title, description=description, arguments=arguments, icons=icons, meta=meta)


def _expected(spec: PromptSpec, revision: str) -> bytes:
    return to_json(to_mcp_prompt_entry(spec, revision))


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(KNOWN_REVISIONS),
    st.lists(SHARED, min_size=1, max_size=3),
    st.lists(st.tuples(st.tuples(TEXT, MAYBE, MAYBE), st.integers(0, 2)), min_size=1, max_size=12),
)
def test_each_entry_is_the_json_of_the_one_builder(
    revision: str, parts: list[tuple[Any, Any, Any]], heads: list[tuple[tuple[str, Any, Any], int]]
) -> None:
    prompts = [_prompt(head, parts[choice % len(parts)]) for head, choice in heads]
    assert entries_json(prompts, revision) == [_expected(spec, revision) for spec in prompts]


@pytest.mark.parametrize("revision", KNOWN_REVISIONS)
def test_the_varied_prompts_twice_over(revision: str) -> None:
    """Each sample prompt, then a sibling sharing its parts under another head: both as the builder makes them."""
    prompts: list[PromptSpec] = []
    for spec in VARIED:
        prompts.append(spec)
        prompts.append(
            PromptSpec(
                name=spec.name + "-2", title='Ünïcode "q"\n', arguments=spec.arguments, icons=spec.icons, meta=spec.meta
            )
        )
    assert entries_json(prompts, revision) == [_expected(spec, revision) for spec in prompts]


@pytest.mark.parametrize("revision", KNOWN_REVISIONS)
def test_a_null_in_meta_is_shaped_by_the_sdk_for_every_prompt_sharing_it(revision: str) -> None:
    meta = {"org.example/x": None, "kept": 1}
    prompts = [PromptSpec(name=f"p{i}", meta=meta) for i in range(3)]
    server = create_server(PromptRegistry())
    shape = partial(shape_result, server, LIST_PROMPTS)
    shaped = [
        to_json(
            shape(revision, {"prompts": [to_mcp_prompt_entry(spec, revision)], "resultType": "complete"})["prompts"][0]
        )
        for spec in prompts
    ]
    assert entries_json(prompts, revision, shape) == shaped


@pytest.mark.parametrize("revision", KNOWN_REVISIONS)
def test_prompts_sharing_some_parts_and_not_others(revision: str) -> None:
    """As restored from the index: one arguments tuple for every notebook, each notebook its own `_meta`."""
    arguments = (PromptArgument("topic"), PromptArgument("tone", required=False, default="plain"))
    icons = (Icon("https://example.com/i.png"),)
    prompts = [
        PromptSpec(name=f"{notebook}-{i}", arguments=parts, icons=shown, meta={"notebook": notebook})
        for notebook in ("a.ipynb", "b.ipynb")
        for parts in (arguments, ())
        for shown in (icons, ())
        for i in range(2)
    ]
    assert entries_json(prompts, revision) == [_expected(spec, revision) for spec in prompts]
