"""Which cells become prompts, prompt-level and cell-level fields, and arguments (format sections 1 and 2)."""

from __future__ import annotations

from typing import Any

import pytest
from notebook_dicts import code, markdown, notebook, raw

from mcp_notebook.models import (
    Annotations,
    EmbeddedResource,
    Icon,
    PromptArgument,
    PromptSpec,
    ResourceLink,
    TextContent,
)
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources.cells import NOTEBOOK_META_KEY, NotebookPrompts, prompts_from_notebook


def _load(*cells: dict[str, Any], **options: Any) -> NotebookPrompts:
    return prompts_from_notebook(notebook(*cells), origin="nb.ipynb", **options)


def _only(*cells: dict[str, Any]) -> PromptSpec:
    result = _load(*cells)
    assert len(result.prompts) == 1, result
    return result.prompts[0]


def _texts(spec: PromptSpec, **arguments: str) -> list[str]:
    return [m.content.text for m in render_prompt(spec, arguments).messages if isinstance(m.content, TextContent)]


# -- which cells -----------------------------------------------------------------------------


def test_a_cell_with_metadata_mcp_prompt_publishes_a_prompt() -> None:
    spec = _only(markdown("Say hello.", {"prompt": "hello"}))
    assert spec.name == "hello"
    assert [(m.role, m.content) for m in spec.messages] == [("user", TextContent(text="Say hello."))]


def test_a_prompt_tag_publishes_a_prompt() -> None:
    spec = _only(markdown("Say hello.", tags=["prompt:hello"]))
    assert spec.name == "hello"


def test_cells_without_a_prompt_name_are_not_published() -> None:
    result = _load(markdown("intro"), code("x = 1"), markdown("Hi", {"prompt": "p"}), markdown("outro", tags=["other"]))
    assert [p.name for p in result.prompts] == ["p"]
    assert _texts(result.prompts[0]) == ["Hi"]


def test_cells_naming_the_same_prompt_form_it_in_notebook_order() -> None:
    result = _load(
        markdown("one", {"prompt": "a"}),
        markdown("x", {"prompt": "b"}),
        markdown("two", tags=["prompt:a"]),
        raw("three", {"prompt": "a"}),
    )
    assert [p.name for p in result.prompts] == ["a", "b"]
    assert _texts(result.prompts[0]) == ["one", "two", "three"]


def test_a_cell_may_take_part_in_several_prompts() -> None:
    result = _load(
        markdown("shared preamble", {"prompt": "a"}, tags=["prompt:b"]), markdown("b only", tags=["prompt:b"])
    )
    by_name = {p.name: _texts(p) for p in result.prompts}
    assert by_name == {"a": ["shared preamble"], "b": ["shared preamble", "b only"]}


def test_roles_come_from_metadata_or_tags_and_default_to_user() -> None:
    spec = _only(
        markdown("q1", tags=["prompt:chat"]),
        markdown("a1", tags=["prompt:chat", "role:assistant"]),
        markdown("q2", {"prompt": "chat", "role": "user"}),
        markdown("a2", {"prompt": "chat", "role": "assistant"}),
    )
    assert [m.role for m in render_prompt(spec, {}).messages] == ["user", "assistant", "user", "assistant"]


def test_metadata_role_wins_over_a_disagreeing_role_tag_and_is_reported() -> None:
    result = _load(markdown("a", {"prompt": "p", "role": "assistant"}, tags=["role:user"]))
    assert result.prompts[0].messages[0].role == "assistant"
    assert any("disagree" in w for w in result.warnings)


def test_an_invalid_role_is_reported_and_the_cell_speaks_as_user() -> None:
    result = _load(markdown("a", {"prompt": "p", "role": "system"}), markdown("b", tags=["prompt:p", "role:robot"]))
    assert [m.role for m in result.prompts[0].messages] == ["user", "user"]
    assert sum("role must be 'user' or 'assistant'" in w for w in result.warnings) == 2


@pytest.mark.parametrize("name", ["has space", "slash/name", "x" * 65, "ünïcode", "colon:name"])
def test_an_invalid_prompt_name_is_refused_with_a_warning_and_the_others_stay(name: str) -> None:
    result = _load(markdown("bad", {"prompt": name}), markdown("good", {"prompt": "good"}))
    assert [p.name for p in result.prompts] == ["good"]
    assert any(repr(name) in w and "refused" in w for w in result.warnings)


def test_names_of_64_characters_with_dots_and_dashes_are_valid() -> None:
    name = "a.b-c_" + "x" * 58
    assert _only(markdown("ok", {"prompt": name})).name == name


def test_a_prompt_name_that_is_not_a_string_is_reported() -> None:
    result = _load(markdown("x", {"prompt": 3}))
    assert result.prompts == ()
    assert any("metadata.mcp.prompt must be a prompt name" in w for w in result.warnings)


def test_mcp_fields_on_a_cell_that_names_no_prompt_are_reported() -> None:
    result = _load(markdown("x", {"title": "orphan"}))
    assert result.prompts == ()
    assert any("names no prompt" in w for w in result.warnings)


def test_unknown_mcp_fields_are_reported_so_typos_are_found() -> None:
    result = _load(markdown("x", {"prompt": "p", "descripton": "typo"}))
    assert result.prompts[0].description == "x"
    assert any("descripton" in w for w in result.warnings)


def test_a_cell_with_text_and_an_image_output_yields_two_messages() -> None:
    from notebook_dicts import PNG_1X1, display

    spec = _only(code("plot()", {"prompt": "p"}, outputs=[display({"image/png": PNG_1X1, "text/plain": "<Figure>"})]))
    assert [m.content.type for m in spec.messages] == ["text", "image"]


# -- prompt-level fields -----------------------------------------------------------------------


def test_prompt_level_fields_come_from_the_first_cell() -> None:
    spec = _only(
        markdown(
            "Body.",
            {
                "prompt": "p",
                "title": "Nice title",
                "description": "What it does",
                "icons": [{"src": "https://example.org/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
                "_meta": {"org.example/team": "docs"},
            },
        )
    )
    assert (spec.title, spec.description) == ("Nice title", "What it does")
    assert spec.icons == (Icon(src="https://example.org/i.png", mime_type="image/png", sizes=("48x48",)),)
    assert spec.meta == {"org.example/team": "docs", NOTEBOOK_META_KEY: "nb.ipynb"}


def test_a_later_cell_repeating_a_field_with_another_value_is_reported_and_ignored() -> None:
    result = _load(markdown("a", {"prompt": "p", "title": "First"}), markdown("b", {"prompt": "p", "title": "Second"}))
    assert result.prompts[0].title == "First"
    assert any("cell 2 sets title differently" in w for w in result.warnings)


def test_a_later_cell_repeating_a_field_with_the_same_value_is_fine() -> None:
    result = _load(markdown("a", {"prompt": "p", "title": "Same"}), markdown("b", {"prompt": "p", "title": "Same"}))
    assert result.prompts[0].title == "Same"
    assert result.warnings == ()


def test_a_field_first_set_on_a_later_cell_is_used() -> None:
    spec = _only(markdown("a", tags=["prompt:p"]), markdown("b", {"prompt": "p", "title": "Late"}))
    assert spec.title == "Late"


def test_the_title_defaults_to_the_first_markdown_heading_of_the_first_cell() -> None:
    spec = _only(markdown("Intro text\n\n## Code review ##\n\n# Later", {"prompt": "p"}))
    assert spec.title == "Code review"


def test_a_heading_inside_a_code_block_is_not_a_title() -> None:
    spec = _only(markdown("```\n# comment\n```\nNo heading.", {"prompt": "p"}))
    assert spec.title is None


def test_there_is_no_default_title_when_the_first_cell_is_code() -> None:
    spec = _only(code("x = 1", {"prompt": "p"}), markdown("# Heading", {"prompt": "p"}))
    assert spec.title is None


def test_the_description_defaults_to_the_first_sentence_of_the_text() -> None:
    spec = _only(markdown("# Title\n\nReview the code carefully. Then list bugs.", {"prompt": "p"}))
    assert spec.description == "Review the code carefully."


def test_the_default_description_skips_code_and_reads_on_into_later_cells() -> None:
    spec = _only(
        code("x = 1", {"prompt": "p"}),
        markdown("# Only a heading", {"prompt": "p"}),
        raw("Raw text!", tags=["prompt:p"]),
    )
    assert spec.description == "Raw text!"


def test_the_default_description_leaves_out_images_and_keeps_link_text() -> None:
    spec = _only(markdown("![chart](attachment:c.png)\n\nSee [the docs](https://x) first. More.", {"prompt": "p"}))
    assert spec.description == "See the docs first."


def test_the_default_description_is_cut_at_200_characters() -> None:
    spec = _only(markdown("word " * 100, {"prompt": "p"}))
    assert spec.description is not None
    assert len(spec.description) == 200 and spec.description.endswith("…")


def test_a_prompt_without_text_has_no_description() -> None:
    assert _only(code("x = 1", {"prompt": "p"})).description is None


def test_our_meta_key_names_the_notebook_even_without_author_meta() -> None:
    assert _only(markdown("x", {"prompt": "p"})).meta == {NOTEBOOK_META_KEY: "nb.ipynb"}


def test_origin_and_root_are_set_on_every_prompt() -> None:
    result = prompts_from_notebook(notebook(markdown("x", {"prompt": "p"})), origin="sub/nb.ipynb", root="/srv")
    assert (result.prompts[0].origin, result.prompts[0].root) == ("sub/nb.ipynb", "/srv")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"title": 3}, "title must be a string"),
        ({"arguments": {"name": "x"}}, "arguments must be a list"),
        ({"icons": "icon.png"}, "icons must be a list"),
        ({"icons": [{"href": "x"}]}, "string 'src'"),
        ({"_meta": ["x"]}, "_meta must be an object"),
    ],
)
def test_malformed_prompt_level_fields_are_reported_and_ignored(fields: dict[str, Any], message: str) -> None:
    result = _load(markdown("Text.", {"prompt": "p", **fields}))
    assert [p.name for p in result.prompts] == ["p"]
    assert any(message in w for w in result.warnings), result.warnings


# -- arguments and placeholders ------------------------------------------------------------------


def test_arguments_are_inferred_from_placeholders_in_order_of_first_use_all_required() -> None:
    spec = _only(
        markdown("Review {{ file }} for {{goal}}.", {"prompt": "p"}),
        code("open('{{file}}')  # {{style}}", tags=["prompt:p"]),
    )
    assert spec.arguments == (PromptArgument(name="file"), PromptArgument(name="goal"), PromptArgument(name="style"))
    assert all(a.required for a in spec.arguments)


def test_placeholders_in_resource_and_link_fields_are_arguments_too() -> None:
    spec = _only(
        markdown(
            "See below.",
            {
                "prompt": "p",
                "resource": {"path": "data/{{table}}.csv"},
                "link": {"uri": "https://x/{{page}}", "name": "{{page}}"},
            },
        )
    )
    assert [a.name for a in spec.arguments] == ["table", "page"]


def test_declared_arguments_keep_their_descriptions_defaults_and_completions() -> None:
    declared = [
        {"name": "code", "title": "Code", "description": "The code to review"},
        {"name": "lang", "description": "Language", "default": "python", "completions": ["python", "rust"]},
        {"name": "tone", "required": False},
        {"name": "strict", "required": True, "default": "no"},
    ]
    spec = _only(markdown("{{code}} {{lang}} {{tone}} {{strict}}", {"prompt": "p", "arguments": declared}))
    assert spec.arguments == (
        PromptArgument(name="code", title="Code", description="The code to review", required=True),
        PromptArgument(
            name="lang", description="Language", required=False, default="python", completions=("python", "rust")
        ),
        PromptArgument(name="tone", required=False),
        PromptArgument(name="strict", required=True, default="no"),
    )
    assert _texts(spec, code="c", strict="s") == ["c python  s"]


def test_when_arguments_are_declared_other_placeholders_stay_literal_and_are_reported_once() -> None:
    result = _load(
        markdown("{{a}} and {{b}}", {"prompt": "p", "arguments": [{"name": "a"}]}),
        markdown("again {{b}}", {"prompt": "p"}),
    )
    spec = result.prompts[0]
    assert [a.name for a in spec.arguments] == ["a"]
    assert _texts(spec, a="A") == ["A and {{b}}", "again {{b}}"]
    assert [w for w in result.warnings if "{{b}}" in w] == [
        "nb.ipynb: prompt 'p': {{b}} is not a declared argument, so it stays as written"
    ]


def test_escaped_placeholders_are_not_arguments_and_render_as_braces() -> None:
    spec = _only(markdown(r"Jinja uses \{{ name }}; you give {{x}}.", {"prompt": "p"}))
    assert [a.name for a in spec.arguments] == ["x"]
    assert _texts(spec, x="1") == ["Jinja uses {{ name }}; you give 1."]


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("code", "each argument must be an object"),
        ({"description": "no name"}, "each argument must be an object"),
        ({"name": "has space"}, "a name must start with a letter"),
        ({"name": "a", "required": "yes"}, "required must be true or false"),
        ({"name": "a", "completions": "python"}, "completions must be a list of strings"),
        ({"name": "a", "kind": "str"}, "unknown keys kind"),
    ],
)
def test_malformed_argument_declarations_are_reported(argument: Any, message: str) -> None:
    result = _load(markdown("{{a}}", {"prompt": "p", "arguments": [argument]}))
    assert any(message in w for w in result.warnings), result.warnings


def test_an_argument_declared_twice_keeps_the_first() -> None:
    result = _load(markdown("{{a}}", {"prompt": "p", "arguments": [{"name": "a", "title": "1"}, {"name": "a"}]}))
    assert result.prompts[0].arguments == (PromptArgument(name="a", title="1"),)
    assert any("declared twice" in w for w in result.warnings)


# -- cell-level fields --------------------------------------------------------------------------


def test_a_resource_with_text_becomes_an_embedded_resource_after_the_cell_text() -> None:
    spec = _only(
        markdown(
            "Use this:",
            {"prompt": "p", "resource": {"uri": "mem://{{k}}", "mimeType": "text/plain", "text": "v={{k}}"}},
        )
    )
    rendered = render_prompt(spec, {"k": "7"})
    assert rendered.messages[1].content == EmbeddedResource(uri="mem://7", mime_type="text/plain", text="v=7")


def test_a_resource_with_blob_keeps_its_base64() -> None:
    spec = _only(markdown("x", {"prompt": "p", "resource": {"uri": "mem://b", "blob": "aGk=\n"}}))
    assert spec.messages[1].content == EmbeddedResource(uri="mem://b", blob="aGk=")


def test_a_resource_with_a_path_gets_a_file_uri_relative_to_the_served_folder() -> None:
    result = prompts_from_notebook(
        notebook(markdown("x", {"prompt": "p", "resource": {"path": "../data/{{name}} v1.csv"}})), origin="sub/nb.ipynb"
    )
    template = result.prompts[0].messages[1]
    assert template.path == "../data/{{name}} v1.csv"
    assert template.content == EmbeddedResource(uri="notebook:///data/{{name}}%20v1.csv")


@pytest.mark.parametrize(
    "resource",
    [
        {"uri": "mem://x"},
        {"uri": "mem://x", "text": "a", "blob": "aGk="},
        {"text": "no uri"},
        {"uri": "mem://x", "blob": "not base64!"},
        {"uri": "mem://x", "path": 3},
        "mem://x",
    ],
)
def test_a_malformed_resource_is_reported_and_left_out(resource: Any) -> None:
    result = _load(markdown("x", {"prompt": "p", "resource": resource}))
    assert [m.content.type for m in result.prompts[0].messages] == ["text"]
    assert any("resource" in w for w in result.warnings)


def test_a_link_becomes_a_resource_link() -> None:
    link = {
        "uri": "https://docs/{{topic}}",
        "name": "docs",
        "title": "Docs",
        "description": "d",
        "mimeType": "text/html",
    }
    spec = _only(markdown("x", {"prompt": "p", "link": link}))
    assert render_prompt(spec, {"topic": "t"}).messages[1].content == ResourceLink(
        uri="https://docs/t", name="docs", title="Docs", description="d", mime_type="text/html"
    )


def test_a_link_without_a_name_is_reported() -> None:
    result = _load(markdown("x", {"prompt": "p", "link": {"uri": "https://x"}}))
    assert len(result.prompts[0].messages) == 1
    assert any("link must be an object with string 'uri' and 'name'" in w for w in result.warnings)


def test_annotations_go_on_every_block_of_the_cell_with_last_modified_from_the_file() -> None:
    from notebook_dicts import stream

    cell = code(
        "print(1)",
        {
            "prompt": "p",
            "annotations": {"audience": ["assistant"], "priority": 0.5},
            "link": {"uri": "u:", "name": "n"},
        },
        outputs=[stream("1\n")],
    )
    result = _load(cell, markdown("plain", {"prompt": "p"}), last_modified="2026-01-02T03:04:05Z")
    expected = Annotations(audience=("assistant",), priority=0.5, last_modified="2026-01-02T03:04:05Z")
    assert [m.content.annotations for m in result.prompts[0].messages] == [expected, expected, expected, None]


def test_a_last_modified_given_in_the_annotations_wins() -> None:
    result = _load(
        markdown("x", {"prompt": "p", "annotations": {"lastModified": "2020-01-01T00:00:00Z"}}),
        last_modified="2026-01-01T00:00:00Z",
    )
    assert result.prompts[0].messages[0].content.annotations == Annotations(last_modified="2020-01-01T00:00:00Z")


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ({"audience": ["system"]}, "audience must be a list"),
        ({"priority": 2}, "priority must be a number from 0 to 1"),
        ({"priority": True}, "priority must be a number from 0 to 1"),
        ("high", "annotations must be an object"),
    ],
)
def test_malformed_annotations_are_reported(annotations: Any, message: str) -> None:
    result = _load(markdown("x", {"prompt": "p", "annotations": annotations}))
    assert any(message in w for w in result.warnings), result.warnings


def test_source_and_outputs_flags_only_apply_to_code_cells() -> None:
    result = _load(markdown("x", {"prompt": "p", "outputs": False}))
    assert _texts(result.prompts[0]) == ["x"]
    assert any("only apply to code cells" in w for w in result.warnings)


def test_a_flag_that_is_not_true_or_false_is_reported_and_the_default_kept() -> None:
    from notebook_dicts import stream

    result = _load(code("print(1)", {"prompt": "p", "outputs": "no"}, outputs=[stream("1\n")]))
    assert len(result.prompts[0].messages) == 2
    assert any("outputs must be true or false" in w for w in result.warnings)


# -- the published cells table --------------------------------------------------------------------


def test_published_cells_are_keyed_by_cell_id() -> None:
    first, second = markdown("a", {"prompt": "p"}), markdown("b", tags=["prompt:p", "prompt:q"])
    result = _load(markdown("not published"), first, second)
    assert [(c.key, c.number, c.prompts) for c in result.cells] == [
        (first["id"], 2, ("p",)),
        (second["id"], 3, ("p", "q")),
    ]


def test_without_cell_ids_cells_are_keyed_by_position_from_one() -> None:
    nb = notebook(markdown("skip"), markdown("a", {"prompt": "p"}))
    for cell in nb["cells"]:
        del cell["id"]
    result = prompts_from_notebook(nb, origin="nb.ipynb")
    assert [c.key for c in result.cells] == ["2"]


def test_cells_of_a_refused_prompt_are_not_published() -> None:
    assert _load(markdown("bad", {"prompt": "bad name"})).cells == ()


def test_a_notebook_without_a_cell_list_is_reported() -> None:
    result = prompts_from_notebook({"nbformat": 4, "metadata": {}}, origin="x.ipynb")
    assert result == NotebookPrompts(prompts=(), warnings=("x.ipynb: the notebook has no list of cells",))
