"""Magics as prompts: names, titles, arguments from parsers, documentation rendering, live results."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from mcp_notebook.exceptions import MissingArgumentsError, UnknownArgumentsError
from mcp_notebook.models import ImageContent, PromptSpec, TextContent
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources.magics import (
    MAGICS_GROUP,
    CapturedOutput,
    MagicInfo,
    MagicInvocation,
    MagicPromptSource,
    build_invocation,
    describe_magics,
    render_magic_documentation,
    to_content_blocks,
    to_live_result,
    to_magic_prompts,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode("ascii")


@magics_class
class SampleMagics(Magics):
    @magic_arguments()
    @argument("-n", "--number", help="How many times (default %(default)s).", default=3)
    @argument("-q", "--quiet", action="store_true", help="Print nothing.")
    @argument("--mode", choices=["fast", "slow"], help="The speed.")
    @argument("target", help="What to greet.")
    @line_magic
    def greet(self, line: str) -> None:
        """Greet a target several times.

        More words that are not the summary.
        """

    @line_cell_magic
    def twice(self, line: str, cell: str | None = None) -> str:
        """Run a line or a cell twice.

        The rest of the story.
        """
        return line

    @line_magic
    def undocumented(self, line: str) -> None:
        pass


def _table() -> dict[str, dict[str, Any]]:
    magics = SampleMagics(shell=None)
    return {kind: dict(entries) for kind, entries in magics.magics.items()}


def _prompts(live: tuple[str, ...] = ()) -> dict[str, PromptSpec]:
    return {p.name: p for p in to_magic_prompts(describe_magics(_table()), live)}


def _info(name: str, kind: str = "line") -> MagicInfo:
    return next(i for i in describe_magics(_table()) if i.name == name and i.kind == kind)


def test_magics_are_named_magic_dot_name_and_cell_twins_magic_dot_cell_dot_name() -> None:
    prompts = _prompts()
    assert sorted(prompts) == ["magic.cell.twice", "magic.greet", "magic.twice", "magic.undocumented"]
    assert prompts["magic.twice"].title == "%twice"
    assert prompts["magic.cell.twice"].title == "%%twice"


def test_the_description_is_the_first_paragraph_of_the_docstring() -> None:
    prompts = _prompts()
    assert prompts["magic.twice"].description == "Run a line or a cell twice."
    assert prompts["magic.greet"].description == "Greet a target several times."
    assert prompts["magic.undocumented"].description == "The IPython magic %undocumented."


def test_a_parser_gives_one_argument_per_option_and_positional_with_its_help() -> None:
    arguments = {a.name: a for a in _prompts()["magic.greet"].arguments}
    assert list(arguments) == ["number", "quiet", "mode", "target"]
    assert arguments["number"].description == "--number: How many times (default 3)."
    assert arguments["number"].required is False
    assert arguments["quiet"].completions == ("true", "false")
    assert arguments["mode"].completions == ("fast", "slow")
    assert arguments["target"].required is True


def test_a_magic_without_parser_takes_one_optional_line_and_a_cell_magic_a_body() -> None:
    prompts = _prompts()
    assert [(a.name, a.required) for a in prompts["magic.twice"].arguments] == [("line", False)]
    assert [(a.name, a.required) for a in prompts["magic.cell.twice"].arguments] == [("line", False), ("body", False)]


def test_the_invocation_passes_true_switches_set_options_and_quoted_positionals() -> None:
    invocation = build_invocation(_info("greet"), {"quiet": "true", "number": "5", "target": "the world", "mode": ""})
    assert invocation == MagicInvocation(name="greet", kind="line", line="--number 5 --quiet 'the world'")
    assert invocation.source == "%greet --number 5 --quiet 'the world'"
    assert build_invocation(_info("greet"), {"quiet": "false", "target": "x"}).line == "x"


def test_a_cell_invocation_puts_the_body_under_the_magic_line() -> None:
    invocation = build_invocation(_info("twice", "cell"), {"line": " -v ", "body": "print(1)"})
    assert invocation.source == "%%twice -v\nprint(1)"


def test_documentation_mode_shows_usage_docstring_and_the_exact_invocation() -> None:
    spec = _prompts()["magic.greet"]
    rendered = render_magic_documentation(_info("greet"), spec, {"target": "Ada", "number": "2"})
    [message] = rendered.messages
    assert isinstance(message.content, TextContent)
    text = message.content.text
    assert "The IPython magic `%greet`." in text
    assert "%greet [-n NUMBER] [-q] [--mode {fast,slow}] target" in text
    assert "More words that are not the summary." in text
    assert text.endswith("```python\n%greet --number 2 Ada\n```")


def test_documentation_mode_checks_arguments_like_any_prompt() -> None:
    spec = _prompts()["magic.greet"]
    with pytest.raises(MissingArgumentsError):
        render_magic_documentation(_info("greet"), spec, {})
    with pytest.raises(UnknownArgumentsError):
        render_magic_documentation(_info("greet"), spec, {"target": "x", "bogus": "1"})


def test_only_allowed_magics_are_marked_live() -> None:
    prompts = _prompts(live=("%twice",))
    assert prompts["magic.twice"].description == (
        "Run a line or a cell twice. [runs in the kernel: may execute code (a magic mcp-notebook does not know)]"
    )
    assert "[runs in the kernel]" not in (prompts["magic.cell.twice"].description or "")
    assert "[runs in the kernel]" not in (prompts["magic.greet"].description or "")


def test_captured_output_becomes_text_and_image_blocks_in_order() -> None:
    captured = CapturedOutput(
        stdout="hello\n",
        stderr="careful\n",
        displays=({"image/png": PNG, "text/plain": "<Figure>"}, {"text/plain": "plain", "text/html": "<b>x</b>"}),
        result={"text/plain": "42"},
    )
    assert to_content_blocks(captured) == (
        TextContent(text="hello\n"),
        TextContent(text="stderr:\ncareful\n"),
        ImageContent(data=PNG, mime_type="image/png"),
        TextContent(text="plain"),
        TextContent(text="42"),
    )


def test_image_bytes_are_base64_encoded() -> None:
    [block] = to_content_blocks(CapturedOutput(displays=({"image/jpeg": b"\xff\xd8raw"},)))
    assert block == ImageContent(data=base64.b64encode(b"\xff\xd8raw").decode("ascii"), mime_type="image/jpeg")


def test_a_live_result_says_what_ran_then_gives_the_output() -> None:
    spec = _prompts()["magic.twice"]
    invocation = MagicInvocation(name="twice", kind="line", line="x")
    rendered = to_live_result(spec, invocation, CapturedOutput(stdout="x x\n"))
    texts = [m.content.text for m in rendered.messages if isinstance(m.content, TextContent)]
    assert texts == ["Ran in the kernel:\n\n```python\n%twice x\n```", "x x\n"]
    quiet = to_live_result(spec, invocation, CapturedOutput())
    assert [m.content for m in quiet.messages] == [
        TextContent(text="Ran in the kernel:\n\n```python\n%twice x\n```\n\nIt printed nothing.")
    ]


def test_the_source_publishes_the_magics_group_and_finds_the_magic_behind_a_prompt() -> None:
    registry = PromptRegistry()
    source = MagicPromptSource(registry, live=("%twice",))
    assert source.refresh(_table()) is True
    assert source.refresh(_table()) is True  # new bound methods are new magics
    snapshot = registry.snapshot()
    assert {p.name for p in registry.groups()[MAGICS_GROUP]} == set(_prompts())
    twice = snapshot.get("magic.twice")
    greet = snapshot.get("magic.greet")
    assert twice is not None and greet is not None
    assert source.magic_for(twice) == (_info("twice"), True)
    assert source.magic_for(greet) == (_info("greet"), False)
    assert source.magic_for(PromptSpec(name="magic.twice")) is None


def test_an_unchanged_magics_table_is_not_republished() -> None:
    registry = PromptRegistry()
    source = MagicPromptSource(registry)
    table = _table()
    assert source.refresh(table) is True
    assert source.refresh(table) is False


def test_allowed_names_that_match_no_magic_are_reported() -> None:
    source = MagicPromptSource(PromptRegistry(), live=("%twice", "greet", "magic.cell.twice", "%nothing", "%%greet"))
    source.refresh(_table())
    assert source.unknown_live() == ("%nothing", "%%greet")


def test_an_allowed_magic_is_live_and_clearing_unpublishes_the_magics() -> None:
    registry = PromptRegistry()
    source = MagicPromptSource(registry, live=["%greet"])
    source.refresh(_table())
    greet = registry.snapshot().get("magic.greet")
    assert greet is not None
    assert source.magic_for(greet) == (_info("greet"), True)
    source.clear()
    assert MAGICS_GROUP not in registry.groups()


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    shell = InteractiveShell.instance()
    yield shell
    for kind in ("line", "cell"):
        shell.magics_manager.magics[kind].pop("not_loaded_yet", None)
    shell.magics_manager.lazy_magics.pop("not_loaded_yet", None)


def test_listing_magics_never_loads_a_lazy_extension(shell: InteractiveShell) -> None:
    module = "mcp_notebook_test_lazy_extension_that_does_not_exist"
    shell.magics_manager.register_lazy("not_loaded_yet", module, "line")
    registry = PromptRegistry()
    MagicPromptSource(registry).refresh(shell.magics_manager.magics)
    spec = registry.snapshot().get("magic.not_loaded_yet")
    assert spec is not None
    assert spec.description == f"The magic %not_loaded_yet, provided by {module} (not loaded yet)."
    assert module not in sys.modules
    info = describe_magics({"line": {"not_loaded_yet": shell.magics_manager.magics["line"]["not_loaded_yet"]}})[0]
    rendered = render_magic_documentation(info, spec, {"line": "x"})
    assert isinstance(rendered.messages[0].content, TextContent)
    assert "%not_loaded_yet x" in rendered.messages[0].content.text
    assert module not in sys.modules


def test_the_public_surface_is_pinned() -> None:
    import mcp_notebook.sources.live_policy as policy
    import mcp_notebook.sources.magic_invocation as invocation
    import mcp_notebook.sources.magic_listing as listing
    import mcp_notebook.sources.magic_output as output
    import mcp_notebook.sources.magics as module

    assert sorted(invocation.__all__) == [
        "ESCAPES",
        "MagicInvocation",
        "MagicKind",
        "build_invocation",
        "build_live_invocation",
    ]
    assert sorted(listing.__all__) == [
        "CURATED_MAGICS",
        "GENERIC_MARKER",
        "GENERIC_PROMPT",
        "Listing",
        "MAGIC_META_KEY",
        "MAGIC_ORIGIN",
        "MAX_LISTED_MAGICS",
        "live_policies",
        "to_magic_prompts",
    ]
    assert sorted(policy.__all__) == [
        "Effect",
        "InvalidMagicArgumentError",
        "LivePolicy",
        "MAX_LINE",
        "check_line_words",
        "check_parser_word",
        "check_value",
        "is_builtin_magic",
        "live_policy",
        "refusal_reason",
    ]

    assert sorted(output.__all__) == ["CapturedOutput", "to_content_blocks", "to_live_result"]
    assert sorted(module.__all__) == [
        "CURATED_MAGICS",
        "CapturedOutput",
        "GENERIC_PROMPT",
        "Listing",
        "MAGICS_GROUP",
        "MAGIC_META_KEY",
        "MAGIC_ORIGIN",
        "MAX_LISTED_MAGICS",
        "MagicInfo",
        "MagicInvocation",
        "MagicKind",
        "MagicOption",
        "MagicPromptSource",
        "UnknownMagicError",
        "build_invocation",
        "build_live_invocation",
        "describe_magic",
        "describe_magics",
        "render_magic_documentation",
        "to_content_blocks",
        "to_live_result",
        "to_magic_prompts",
    ]
