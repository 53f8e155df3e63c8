"""Placeholders, literal substitution, argument checks, embedded files and static completion."""

from __future__ import annotations

import base64

import pytest

import mcp_notebook.rendering
from mcp_notebook.exceptions import (
    ArgumentTooLargeError,
    DeclinedArgumentsError,
    MissingArgumentsError,
    PathOutsideRootError,
    ResourceError,
    UnknownArgumentsError,
)
from mcp_notebook.models import (
    Annotations,
    EmbeddedResource,
    ImageContent,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    ResourceLink,
    TextContent,
)
from mcp_notebook.rendering import (
    complete_argument,
    is_textual_mime_type,
    placeholders,
    render_prompt,
    substitute,
)


def _text_prompt(text: str, *arguments: PromptArgument, name: str = "p") -> PromptSpec:
    return PromptSpec(
        name=name,
        description="a prompt",
        arguments=arguments,
        messages=(MessageTemplate(role="user", content=TextContent(text=text)),),
    )


def _texts(spec: PromptSpec, arguments: dict[str, str] | None = None) -> list[str]:
    rendered = render_prompt(spec, arguments)
    return [m.content.text for m in rendered.messages if isinstance(m.content, TextContent)]


def test_the_public_surface_of_rendering_is_pinned() -> None:
    assert sorted(mcp_notebook.rendering.__all__) == [
        "FileReader",
        "MAX_COMPLETIONS",
        "PLACEHOLDER_PATTERN",
        "argument_values",
        "complete_argument",
        "is_textual_mime_type",
        "placeholders",
        "render_prompt",
        "substitute",
    ]


# -- placeholders ---------------------------------------------------------------------------


def test_placeholders_are_listed_in_order_of_first_use_without_duplicates() -> None:
    assert placeholders("{{b}} and {{ a }} then {{b}} and {{c}}") == ("b", "a", "c")


def test_spaces_and_tabs_inside_the_braces_are_allowed() -> None:
    assert placeholders("{{  name\t}}") == ("name",)


def test_escaped_braces_are_not_a_placeholder() -> None:
    assert placeholders(r"\{{literal}} and {{real}}") == ("real",)


def test_braces_around_something_that_is_not_a_name_are_not_a_placeholder() -> None:
    assert placeholders("{{ 'a': 1 }} {{x + 1}} {{}} {{1abc}}") == ()


def test_names_may_hold_dots_and_dashes() -> None:
    assert placeholders("{{file.path}} {{max-lines}} {{_private}}") == ("file.path", "max-lines", "_private")


# -- substitute -----------------------------------------------------------------------------


def test_substitution_fills_every_placeholder_with_its_value() -> None:
    assert substitute("Hi {{ who }}, {{who}}!", {"who": "Ada"}) == "Hi Ada, Ada!"


def test_a_value_holding_a_placeholder_is_inserted_as_is() -> None:
    assert substitute("{{a}} / {{b}}", {"a": "{{b}}", "b": "B"}) == "{{b}} / B"


def test_an_escaped_placeholder_becomes_literal_braces() -> None:
    assert substitute(r"\{{who}} is {{who}}", {"who": "Ada"}) == "{{who}} is Ada"


def test_placeholders_without_a_value_stay_as_written() -> None:
    assert substitute("{{known}} {{ unknown }}", {"known": "k"}) == "k {{ unknown }}"


def test_names_restrict_which_placeholders_are_filled() -> None:
    assert substitute("{{a}} {{b}}", {"a": "1", "b": "2"}, names={"a"}) == "1 {{b}}"


def test_values_are_never_formatted_or_evaluated() -> None:
    values = {"x": "{0} %s ${HOME} {{x}} {x.__class__}"}
    assert substitute("<{{x}}>", values) == "<{0} %s ${HOME} {{x}} {x.__class__}>"


def test_a_backslash_value_is_inserted_without_regex_escapes() -> None:
    assert substitute("{{x}}", {"x": r"C:\new\1 \g<0>"}) == r"C:\new\1 \g<0>"


# -- render_prompt: arguments -----------------------------------------------------------------


def test_rendering_fills_declared_arguments() -> None:
    spec = _text_prompt("Review {{code}}", PromptArgument(name="code"))
    rendered = render_prompt(spec, {"code": "x = 1"})
    assert rendered.name == "p"
    assert rendered.description == "a prompt"
    assert [m.role for m in rendered.messages] == ["user"]
    assert _texts(spec, {"code": "x = 1"}) == ["Review x = 1"]


def test_an_unknown_argument_name_is_refused_and_named() -> None:
    spec = _text_prompt("{{a}}", PromptArgument(name="a"))
    with pytest.raises(UnknownArgumentsError) as caught:
        render_prompt(spec, {"a": "1", "zzz": "2"})
    assert caught.value.unknown == ("zzz",)
    assert caught.value.expected == ("a",)
    assert "zzz" in str(caught.value)


def test_missing_required_arguments_are_all_listed() -> None:
    spec = _text_prompt("{{a}} {{b}} {{c}}", PromptArgument(name="a"), PromptArgument(name="b"), PromptArgument("c"))
    with pytest.raises(MissingArgumentsError) as caught:
        render_prompt(spec, {"b": "x"})
    assert caught.value.missing == ("a", "c")
    assert caught.value.prompt == "p"


def test_how_to_call_names_only_the_missing_arguments_and_completes_the_call() -> None:
    spec = _text_prompt("{{a}} {{b}} {{c}}", PromptArgument(name="a"), PromptArgument(name="b"), PromptArgument("c"))
    with pytest.raises(MissingArgumentsError) as caught:
        render_prompt(spec, {"b": "x"})
    assert caught.value.how_to_call("nb:p", "run nb:p b=x") == (
        "Missing required arguments for nb:p: a, c. Call it as: run nb:p b=x a=… c=…"
    )


def test_how_to_call_says_when_the_user_declined_to_give_them() -> None:
    error = DeclinedArgumentsError("review", ["context"], "decline")
    assert error.how_to_call("nb:review", "run nb:review") == (
        "Missing required argument for nb:review: context (the user was asked and declined to answer). "
        "Call it as: run nb:review context=…"
    )


def test_no_arguments_at_all_is_the_same_as_an_empty_mapping() -> None:
    spec = _text_prompt("{{a}}", PromptArgument(name="a"))
    with pytest.raises(MissingArgumentsError):
        render_prompt(spec, None)


def test_an_empty_string_is_a_given_value() -> None:
    spec = _text_prompt("[{{a}}]", PromptArgument(name="a"))
    assert _texts(spec, {"a": ""}) == ["[]"]


def test_an_absent_optional_argument_renders_as_its_default() -> None:
    spec = _text_prompt("lang={{lang}}", PromptArgument(name="lang", required=False, default="python"))
    assert _texts(spec) == ["lang=python"]
    assert _texts(spec, {"lang": "rust"}) == ["lang=rust"]


def test_an_absent_optional_argument_without_default_renders_as_empty_text() -> None:
    spec = _text_prompt("[{{note}}]", PromptArgument(name="note", required=False))
    assert _texts(spec) == ["[]"]


def test_an_oversize_value_is_refused_with_its_size_and_the_limit() -> None:
    spec = _text_prompt("{{a}}", PromptArgument(name="a"))
    with pytest.raises(ArgumentTooLargeError) as caught:
        render_prompt(spec, {"a": "é" * 6}, max_argument_bytes=10)
    assert (caught.value.argument, caught.value.size, caught.value.limit) == ("a", 12, 10)


def test_a_value_at_the_limit_is_accepted() -> None:
    spec = _text_prompt("{{a}}", PromptArgument(name="a"))
    assert _texts(spec, {"a": "x" * 10}) == ["x" * 10]


def test_only_declared_arguments_are_filled() -> None:
    spec = _text_prompt("{{a}} {{b}}", PromptArgument(name="a"))
    assert _texts(spec, {"a": "1"}) == ["1 {{b}}"]


def test_escapes_are_resolved_even_in_a_prompt_without_arguments() -> None:
    assert _texts(_text_prompt(r"use \{{name}} in templates")) == ["use {{name}} in templates"]


def test_templates_that_are_not_substituted_are_passed_through_untouched() -> None:
    output = MessageTemplate(role="assistant", content=TextContent(text=r"{{a}} \{{b}}"), substitute=False)
    spec = PromptSpec(name="p", arguments=(PromptArgument(name="a"),), messages=(output,))
    assert _texts(spec, {"a": "1"}) == [r"{{a}} \{{b}}"]


def test_images_pass_through_with_their_annotations() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png", annotations=Annotations(priority=0.5))
    spec = PromptSpec(name="p", messages=(MessageTemplate(role="user", content=image),))
    assert render_prompt(spec, {}).messages[0].content == image


def test_resource_and_link_string_fields_are_filled() -> None:
    resource = EmbeddedResource(uri="file:///{{name}}.txt", mime_type="text/plain", text="about {{name}}")
    link = ResourceLink(uri="https://x/{{name}}", name="{{name}}", title="T {{name}}", description="D {{name}}")
    spec = PromptSpec(
        name="p",
        arguments=(PromptArgument(name="name"),),
        messages=(MessageTemplate(role="user", content=resource), MessageTemplate(role="user", content=link)),
    )
    first, second = (m.content for m in render_prompt(spec, {"name": "n"}).messages)
    assert first == EmbeddedResource(uri="file:///n.txt", mime_type="text/plain", text="about n")
    assert second == ResourceLink(uri="https://x/n", name="n", title="T n", description="D n")


# -- render_prompt: embedded files ------------------------------------------------------------


def _file_prompt(path: str, mime_type: str | None = None) -> PromptSpec:
    resource = EmbeddedResource(uri="notebook:///{{f}}", mime_type=mime_type)
    return PromptSpec(
        name="files",
        arguments=(PromptArgument(name="f"),),
        messages=(MessageTemplate(role="user", content=resource, path=path),),
        origin="nb.ipynb",
    )


def test_an_embedded_file_is_read_at_render_time_with_its_path_filled() -> None:
    asked: list[tuple[str, str]] = []

    def read_file(spec: PromptSpec, path: str) -> bytes:
        asked.append((spec.name, path))
        return "café\n".encode()

    rendered = render_prompt(_file_prompt("data/{{f}}"), {"f": "notes.md"}, read_file=read_file)
    assert asked == [("files", "data/notes.md")]
    assert rendered.messages[0].content == EmbeddedResource(
        uri="notebook:///notes.md", mime_type="text/markdown", text="café\n"
    )


def test_a_binary_file_is_embedded_as_base64() -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\xff"
    rendered = render_prompt(_file_prompt("{{f}}"), {"f": "a.png"}, read_file=lambda spec, path: data)
    content = rendered.messages[0].content
    assert isinstance(content, EmbeddedResource)
    assert (content.mime_type, content.text) == ("image/png", None)
    assert content.blob is not None and base64.b64decode(content.blob) == data


def test_a_textual_file_that_is_not_utf8_is_embedded_as_base64() -> None:
    rendered = render_prompt(_file_prompt("{{f}}"), {"f": "latin.txt"}, read_file=lambda spec, path: b"caf\xe9")
    content = rendered.messages[0].content
    assert isinstance(content, EmbeddedResource)
    assert content.text is None and content.blob == base64.b64encode(b"caf\xe9").decode()
    assert content.mime_type == "text/plain"


def test_a_file_of_unknown_type_is_text_when_it_decodes() -> None:
    rendered = render_prompt(_file_prompt("{{f}}"), {"f": "Makefile"}, read_file=lambda spec, path: b"all:\n")
    expected = EmbeddedResource(uri="notebook:///Makefile", mime_type="text/plain", text="all:\n")
    assert rendered.messages[0].content == expected


def test_a_declared_mime_type_wins_over_the_guess() -> None:
    spec = _file_prompt("{{f}}", mime_type="application/json")
    rendered = render_prompt(spec, {"f": "x.data"}, read_file=lambda spec, path: b"{}")
    expected = EmbeddedResource(uri="notebook:///x.data", mime_type="application/json", text="{}")
    assert rendered.messages[0].content == expected


def test_refusals_of_the_file_reader_reach_the_caller() -> None:
    def read_file(spec: PromptSpec, path: str) -> bytes:
        raise PathOutsideRootError(path, "/served")

    with pytest.raises(PathOutsideRootError):
        render_prompt(_file_prompt("{{f}}"), {"f": "../secret"}, read_file=read_file)


def test_an_embedded_file_without_a_file_reader_is_a_resource_error() -> None:
    with pytest.raises(ResourceError, match="no files are served"):
        render_prompt(_file_prompt("{{f}}"), {"f": "a.txt"})


@pytest.mark.parametrize(
    ("mime_type", "textual"),
    [
        ("text/csv", True),
        ("application/json", True),
        ("application/vnd.api+json", True),
        ("image/svg+xml", True),
        ("application/x-yaml", True),
        ("image/png", False),
        ("application/pdf", False),
        (None, True),
    ],
)
def test_textual_mime_types_are_recognised(mime_type: str | None, textual: bool) -> None:
    assert is_textual_mime_type(mime_type) is textual


# -- complete_argument ------------------------------------------------------------------------


def _completing(*values: str) -> PromptSpec:
    return PromptSpec(name="p", arguments=(PromptArgument(name="lang", completions=values),))


def test_completion_filters_by_prefix_ignoring_case() -> None:
    result = complete_argument(_completing("Python", "perl", "Rust", "PHP"), "lang", "P")
    assert result.values == ("Python", "perl", "PHP")
    assert (result.total, result.has_more) == (3, False)


def test_an_empty_value_offers_every_completion_in_declared_order() -> None:
    assert complete_argument(_completing("b", "a"), "lang", "").values == ("b", "a")


def test_completion_is_capped_at_100_values_with_the_total_and_has_more() -> None:
    result = complete_argument(_completing(*(f"v{i:03}" for i in range(150))), "lang", "v")
    assert len(result.values) == 100
    assert result.values[0] == "v000" and result.values[-1] == "v099"
    assert (result.total, result.has_more) == (150, True)


def test_exactly_100_matches_have_nothing_more() -> None:
    result = complete_argument(_completing(*(f"v{i}" for i in range(100))), "lang", "")
    assert (len(result.values), result.total, result.has_more) == (100, 100, False)


def test_completing_an_unknown_argument_gives_nothing() -> None:
    result = complete_argument(_completing("python"), "nope", "p", {"lang": "python"})
    assert (result.values, result.total, result.has_more) == ((), 0, False)


def test_no_match_gives_an_empty_result() -> None:
    assert complete_argument(_completing("python"), "lang", "z").values == ()
