"""`%%prompt` cells as prompts: parsing the line, defining, appending, replacing and unpublishing."""

from __future__ import annotations

import re
import shlex

import pytest

from mcp_notebook.exceptions import MissingArgumentsError
from mcp_notebook.models import PromptArgument, TextContent
from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources.kernel import (
    KERNEL_GROUP,
    KernelPromptSource,
    PromptCell,
    PromptCellError,
    parse_prompt_cell,
    variable_types,
)


def parse_argument_spec(spec: str, *, required: bool) -> PromptArgument:
    """One `--arg` (required) or `--optional` declaration, as a `%%prompt` line reads it."""
    flag = "--arg" if required else "--optional"
    (argument,) = parse_prompt_cell(f"p {flag} {shlex.quote(spec)}", "x").arguments
    return argument


def _texts(spec_name: str, registry: PromptRegistry, **arguments: str) -> list[str]:
    spec = registry.snapshot().get(spec_name)
    assert spec is not None
    rendered = render_prompt(spec, arguments)
    return [m.content.text for m in rendered.messages if isinstance(m.content, TextContent)]


def test_a_bare_prompt_line_gives_a_user_prompt_whose_body_is_the_template() -> None:
    cell = parse_prompt_cell("greet", "Hello {{who}}!\n\n")
    assert cell == PromptCell(name="greet", body="Hello {{who}}!")


def test_quoted_options_keep_their_spaces() -> None:
    cell = parse_prompt_cell(
        'review --title "Code review" --description "Reviews code." --role assistant '
        '--arg code="the code to review" --optional tone=friendly --append',
        "x",
    )
    assert cell.title == "Code review"
    assert cell.description == "Reviews code."
    assert cell.role == "assistant"
    assert cell.append is True
    assert cell.arguments == (
        PromptArgument(name="code", description="the code to review", required=True),
        PromptArgument(name="tone", required=False, default="friendly"),
    )


@pytest.mark.parametrize(
    ("spec", "required", "expected"),
    [
        ("df:var", True, PromptArgument(name="df", required=True, source="var")),
        ("df:var[pandas.DataFrame]", True, PromptArgument(name="df", required=True, source="var:pandas.DataFrame")),
        (
            "df:var[pandas.DataFrame, pandas.Series]=the table",
            True,
            PromptArgument(
                name="df", description="the table", required=True, source="var:pandas.DataFrame,pandas.Series"
            ),
        ),
        ("n:var[int]=x", False, PromptArgument(name="n", required=False, default="x", source="var:int")),
        ("plain", False, PromptArgument(name="plain", required=False)),
    ],
)
def test_argument_specs_declare_names_descriptions_defaults_and_variable_sources(
    spec: str, required: bool, expected: PromptArgument
) -> None:
    assert parse_argument_spec(spec, required=required) == expected


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (
            "df:var[DataFrame]",
            "'DataFrame' is not a built-in type: name a class with its module, as in pandas.DataFrame",
        ),
        ("df:var[pandas.DataFrame, Series]", "'Series' is not a built-in type"),
        ("df:var[pandas..DataFrame]", "'pandas..DataFrame' is not a type name"),
        ("df:var[list[int]]", "is not NAME, NAME=value, NAME:var or NAME:var[Type]"),
    ],
)
def test_a_type_is_a_built_in_one_or_named_with_its_module(spec: str, problem: str) -> None:
    with pytest.raises(PromptCellError, match=re.escape(problem)):
        parse_argument_spec(spec, required=True)


def test_variable_types_are_read_back_from_the_argument_source() -> None:
    assert variable_types(PromptArgument(name="a")) is None
    assert variable_types(PromptArgument(name="a", source="var")) == ()
    assert variable_types(PromptArgument(name="a", source="var:DataFrame,Series")) == ("DataFrame", "Series")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("", "name"),
        ("bad/name!", "not a valid prompt name"),
        ("p --role system", "invalid choice"),
        ("p --arg 1x", "is not NAME"),
        ("p --arg a --optional a", "declared twice"),
        ("p --ask a --ask a", "declared twice"),
        ("p --arg a --arg a --ask a", "declared twice"),
        ("p --optional a --ask a", "cannot be both --optional and --ask"),
        ("p --ask 1x", "--ask '1x' is not NAME"),
        ('p --title "unclosed', "No closing quotation"),
        ("p --frobnicate", "unrecognized arguments"),
    ],
)
def test_a_malformed_prompt_line_is_a_prompt_cell_error(line: str, message: str) -> None:
    with pytest.raises(PromptCellError, match=message):
        parse_prompt_cell(line, "body")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('p --ask code="Paste the code"', PromptArgument(name="code", ask="Paste the code")),
        ("p --ask code", PromptArgument(name="code", ask="Value for code")),
        (
            'p --ask df:var[pandas.DataFrame]="Which table?"',
            PromptArgument(name="df", source="var:pandas.DataFrame", ask="Which table?"),
        ),
        (
            'p --arg code="the code to review" --ask code="Paste the code"',
            PromptArgument(name="code", description="the code to review", ask="Paste the code"),
        ),
        (
            'p --ask code --arg code:var="the code to review"',
            PromptArgument(name="code", description="the code to review", source="var", ask="the code to review"),
        ),
    ],
)
def test_ask_declares_a_required_argument_with_the_question_put_to_the_user(
    line: str, expected: PromptArgument
) -> None:
    assert parse_prompt_cell(line, "{{code}}").arguments == (expected,)


def test_required_arguments_keep_the_order_of_the_line_and_optional_ones_follow() -> None:
    cell = parse_prompt_cell("p --optional tone --ask code --arg focus --ask context", "x")
    assert [(a.name, a.required, a.ask) for a in cell.arguments] == [
        ("code", True, "Value for code"),
        ("focus", True, None),
        ("context", True, "Value for context"),
        ("tone", False, None),
    ]


def test_a_published_prompt_keeps_the_question_and_the_renderer_still_requires_the_argument() -> None:
    registry = PromptRegistry()
    spec, warnings = KernelPromptSource(registry).define(
        parse_prompt_cell('p --ask code="Paste the code" --optional tone=kind', "{{code}} {{tone}}")
    )
    assert warnings == ()
    assert spec.arguments[0] == PromptArgument(name="code", ask="Paste the code")
    with pytest.raises(MissingArgumentsError):  # asking is the server's business; a render without it fails
        _texts("p", registry)
    assert _texts("p", registry, code="x = 1") == ["x = 1 kind"]


def test_defining_a_prompt_publishes_it_with_inferred_required_arguments() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    spec, warnings = source.define(
        parse_prompt_cell("greet", "# Greeting\nSay hello to {{who}} in {{lang}}. Then stop.")
    )
    assert warnings == ()
    assert spec.origin == "kernel"
    assert spec.title == "Greeting"
    assert spec.description == "Say hello to [who] in [lang]."
    assert [(a.name, a.required) for a in spec.arguments] == [("who", True), ("lang", True)]
    assert registry.groups()[KERNEL_GROUP] == (spec,)
    assert _texts("greet", registry, who="Ada", lang="French") == ["# Greeting\nSay hello to Ada in French. Then stop."]


def test_declared_arguments_are_the_only_placeholders_and_strays_are_reported() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    _, warnings = source.define(parse_prompt_cell("p --optional tone=kind", "Be {{tone}} about {{topic}}."))
    assert warnings == ("prompt 'p': {{topic}} is not a declared argument and stays as written",)
    assert registry.snapshot().warnings == warnings
    assert _texts("p", registry) == ["Be kind about {{topic}}."]


def test_a_missing_required_argument_is_refused_at_render_time() -> None:
    registry = PromptRegistry()
    KernelPromptSource(registry).define(parse_prompt_cell("p --arg code", "{{code}}"))
    with pytest.raises(MissingArgumentsError):
        _texts("p", registry)


def test_argument_values_are_inserted_literally_and_never_evaluated() -> None:
    registry = PromptRegistry()
    KernelPromptSource(registry).define(parse_prompt_cell("p", "value: {{v}}"))
    assert _texts("p", registry, v="{{v}} __import__('os').system('x')") == [
        "value: {{v}} __import__('os').system('x')"
    ]


def test_rerunning_a_cell_replaces_its_prompt() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("p --title One", "first"))
    source.define(parse_prompt_cell("p", "second"))
    spec = registry.snapshot().get("p")
    assert spec is not None
    assert spec.title is None
    assert _texts("p", registry) == ["second"]


def test_append_adds_a_message_with_its_own_role_and_arguments() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("chat", "Question about {{topic}}"))
    spec, _ = source.define(parse_prompt_cell("chat --append --role assistant", "Sure, {{topic}} in {{style}}."))
    assert [m.role for m in spec.messages] == ["user", "assistant"]
    assert [a.name for a in spec.arguments] == ["topic", "style"]
    assert _texts("chat", registry, topic="MCP", style="brief") == ["Question about MCP", "Sure, MCP in brief."]


def test_rerunning_an_appended_cell_replaces_its_message_in_place() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("chat", "one"), cell_id="c1")
    source.define(parse_prompt_cell("chat --append", "two"), cell_id="c2")
    source.define(parse_prompt_cell("chat --append", "three"), cell_id="c3")
    source.define(parse_prompt_cell("chat --append", "TWO"), cell_id="c2")
    assert _texts("chat", registry) == ["one", "TWO", "three"]


def test_rerunning_an_appended_cell_without_an_id_does_not_repeat_its_message() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("chat", "one"))
    source.define(parse_prompt_cell("chat --append", "two"))
    source.define(parse_prompt_cell("chat --append", "two"))
    assert _texts("chat", registry) == ["one", "two"]


def test_renaming_the_prompt_of_a_cell_withdraws_the_old_name() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("old", "text"), cell_id="c1")
    source.define(parse_prompt_cell("new", "text"), cell_id="c1")
    assert [p.name for p in registry.snapshot().prompts] == ["new"]


def test_appending_to_an_unknown_prompt_starts_it() -> None:
    registry = PromptRegistry()
    spec, _ = KernelPromptSource(registry).define(parse_prompt_cell("p --append", "only"))
    assert [m.content for m in spec.messages] == [TextContent(text="only")]


def test_unpublish_removes_a_prompt_and_tells_listeners() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("a", "A"))
    source.define(parse_prompt_cell("b", "B"))
    seen: list[RegistrySnapshot] = []
    registry.add_listener(seen.append)
    assert source.unpublish("a") is True
    assert source.unpublish("a") is False
    assert [p.name for p in registry.snapshot().prompts] == ["b"]
    assert len(seen) == 1
    assert source.names() == ("b",)


def test_clear_withdraws_the_kernel_group() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("a", "A"))
    source.clear()
    assert KERNEL_GROUP not in registry.groups()
    assert registry.snapshot().prompts == ()


def test_a_long_first_sentence_is_cut_for_the_description() -> None:
    registry = PromptRegistry()
    spec, _ = KernelPromptSource(registry).define(parse_prompt_cell("p", "word " * 100))
    assert spec.description is not None
    assert len(spec.description) == 200
    assert spec.description.endswith("…")


def test_the_public_surface_is_pinned() -> None:
    import mcp_notebook.sources.kernel as module

    assert sorted(module.__all__) == [
        "KERNEL_GROUP",
        "KERNEL_ORIGIN",
        "KernelPromptSource",
        "PromptCell",
        "PromptCellError",
        "VariableReference",
        "parse_prompt_cell",
        "variable_references",
        "variable_types",
    ]


@pytest.mark.parametrize(
    ("body", "title", "description"),
    [
        ("Review {{code}} now. More.", None, "Review [code] now."),
        ("# Review {{ code }}\nCheck {{code}} and {{style}}.", "Review [code]", "Check [code] and [style]."),
        ("Escaped \\{{code}} and {{code}}.", None, "Escaped {{code}} and [code]."),
        ("{{a}}{{b}}", None, "[a][b]"),
    ],
)
def test_default_titles_and_descriptions_never_show_raw_placeholders(
    body: str, title: str | None, description: str
) -> None:
    spec, _ = KernelPromptSource(PromptRegistry()).define(parse_prompt_cell("p", body))
    assert (spec.title, spec.description) == (title, description)


def test_a_second_cell_publishing_a_name_warns_and_wins_and_renaming_it_brings_the_first_back() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    _, first = source.define(parse_prompt_cell("same", "From cell one."), cell_id="one")
    assert first == ()
    _, second = source.define(parse_prompt_cell("same", "From cell two."), cell_id="two")
    assert second == (
        "prompt 'same' is also published by another cell; this cell's version is served "
        "(the cell run last wins), and the other one comes back if this cell is renamed",
    )
    assert _texts("same", registry) == ["From cell two."]
    _, rerun = source.define(parse_prompt_cell("same", "From cell two, again."), cell_id="two")
    assert rerun == second  # the clash is still there
    assert _texts("same", registry) == ["From cell two, again."]
    source.define(parse_prompt_cell("renamed", "Cell two's new name."), cell_id="two")
    assert _texts("same", registry) == ["From cell one."]
    assert _texts("renamed", registry) == ["Cell two's new name."]


def test_renaming_the_cell_whose_version_is_hidden_keeps_the_served_one() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("same", "From cell one."), cell_id="one")
    source.define(parse_prompt_cell("same", "From cell two."), cell_id="two")
    source.define(parse_prompt_cell("other", "Cell one renamed."), cell_id="one")
    source.define(parse_prompt_cell("elsewhere", "Cell two renamed."), cell_id="two")
    assert registry.snapshot().get("same") is None  # neither cell publishes it any more
    assert source.names() == ("other", "elsewhere")


def test_unpublishing_a_name_withdraws_every_cells_version_of_it() -> None:
    registry = PromptRegistry()
    source = KernelPromptSource(registry)
    source.define(parse_prompt_cell("same", "One."), cell_id="one")
    source.define(parse_prompt_cell("same", "Two."), cell_id="two")
    assert source.unpublish("same") is True
    source.define(parse_prompt_cell("moved", "Two moved."), cell_id="two")
    assert registry.snapshot().get("same") is None
