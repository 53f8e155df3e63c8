"""The client table: every row has a source, and every rule is shown broken by one prompt and kept by another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_notebook.checking.clients import KINDS, client_names, client_rules, problems_of
from mcp_notebook.models import (
    EmbeddedResource,
    ImageContent,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    ResourceLink,
    TextContent,
)

TABLE = Path(__file__).resolve().parents[2] / "mcp_notebook" / "checking" / "clients.json"


def _prompt(name: str = "review", arguments: tuple[PromptArgument, ...] = (), *contents: object) -> PromptSpec:
    blocks = contents or (TextContent(text="Review it."),)
    messages = tuple(MessageTemplate(role="user", content=block) for block in blocks)  # type: ignore[arg-type]
    return PromptSpec(name=name, arguments=arguments, messages=messages)


ONE = (PromptArgument(name="code"),)
TWO = (PromptArgument(name="code"), PromptArgument(name="focus", required=False, default="bugs"))
IMAGE = ImageContent(data="aGk=", mime_type="image/png")
RESOURCE = EmbeddedResource(uri="file:///notes.md", mime_type="text/markdown", text="notes")

# Per client rule: (client, kind) -> a prompt that breaks it, and one that does not.
CASES: dict[tuple[str, str], tuple[PromptSpec, PromptSpec]] = {
    ("zed", "max_arguments"): (_prompt(arguments=TWO), _prompt(arguments=ONE)),
    ("claude-code", "split_on_spaces"): (_prompt(arguments=TWO), _prompt(arguments=ONE)),
    ("vscode", "name_prefix"): (_prompt("review.code", ONE), _prompt("review_code", ONE)),
    ("opencode", "min_arguments"): (_prompt(arguments=()), _prompt(arguments=ONE)),
    ("cursor", "content_types"): (
        _prompt("review", ONE, TextContent(text="Read:"), RESOURCE),
        _prompt("review", ONE, TextContent(text="Read:"), IMAGE),
    ),
    ("text-only", "content_types"): (
        _prompt("review", ONE, TextContent(text="Look:"), IMAGE),
        _prompt("review", ONE, TextContent(text="Look at the text.")),
    ),
}


def test_every_row_of_the_table_names_a_known_client_a_known_kind_and_a_source() -> None:
    document = json.loads(TABLE.read_text(encoding="utf-8"))
    assert document["rules"], "the table has rows"
    for row in document["rules"]:
        assert row["client"] in document["clients"]
        assert row["kind"] in KINDS
        assert row["source"].startswith("https://"), row
        assert row["says"]
    assert {(rule.client, rule.kind) for rule in client_rules()} == set(CASES), "each row has its case below"


@pytest.mark.parametrize(("client", "kind"), sorted(CASES))
def test_a_prompt_that_breaks_the_rule_is_reported_and_one_that_keeps_it_is_not(client: str, kind: str) -> None:
    (rule,) = [r for r in client_rules([client]) if r.kind == kind]
    breaks, keeps = CASES[client, kind]
    found = problems_of(breaks, [rule])
    assert len(found) == 1 and found[0][0] is rule
    assert found[0][1].startswith(rule.says.split("{")[0]), found[0][1]
    assert problems_of(keeps, [rule]) == []


def test_claude_code_is_told_of_a_known_value_with_a_space_even_for_one_argument() -> None:
    (rule,) = client_rules(["claude-code"])
    spaced = _prompt(arguments=(PromptArgument(name="style", required=False, default="very short"),))
    ((_, message),) = problems_of(spaced, [rule])
    assert "'very short'" in message


def test_the_messages_say_what_breaks() -> None:
    rules = client_rules(["zed", "text-only"])
    said = [message for _, message in problems_of(_prompt("r", TWO, TextContent(text="x"), IMAGE, RESOURCE), rules)]
    assert "(2 arguments)" in said[0]
    assert "image content, resource content" in said[1]
    link = ResourceLink(uri="https://example.org", name="example")
    assert "resource link content" in problems_of(_prompt("r", ONE, link), client_rules(["text-only"]))[0][1]


def test_clients_narrow_the_table_and_an_unknown_one_is_refused_with_the_known_ones() -> None:
    assert {rule.client for rule in client_rules(["zed", "vscode"])} == {"zed", "vscode"}
    with pytest.raises(ValueError, match=r"unknown client zedd: the known ones are claude-code, cursor"):
        client_rules(["zedd"])
    assert set(client_names()) == {"claude-code", "cursor", "opencode", "text-only", "vscode", "zed"}


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_media_known_from_the_scan_are_those_of_the_messages() -> None:
    from mcp_notebook.checking.clients import media_of
    from mcp_notebook.sources.cells import prompts_from_notebook

    seen = set()
    for path in sorted(EXAMPLES.glob("*.ipynb")):
        loaded = prompts_from_notebook(json.loads(path.read_text()), origin=path.name)
        media = dict(loaded.media)
        for spec in loaded.prompts:
            assert media.get(spec.name, ()) == media_of(spec)
            seen.update(media_of(spec))
    assert {"image", "audio", "resource", "resource_link"} <= seen


def test_a_prompt_renamed_for_a_clash_is_still_judged_by_its_content(tmp_path: Path) -> None:
    from notebook_files import write_notebook

    from mcp_notebook.checking.report import check_paths

    image = {"output_type": "display_data", "data": {"image/png": "aGk="}, "metadata": {}}
    cell = {"cell_type": "code", "source": "plot()", "mcp": {"prompt": "chart"}, "outputs": [image]}
    write_notebook(tmp_path / "a.ipynb", [cell])
    write_notebook(tmp_path / "b.ipynb", [cell])
    report = check_paths([tmp_path], clients=["text-only"])
    found = {key: [f.prompts for f in n.findings if f.kind == "client"] for key, n in report.notebooks.items()}
    assert found == {"a.ipynb": [("a.chart",)], "b.ipynb": [("b.chart",)], "": []}


def test_the_help_of_clients_names_every_client_of_the_table() -> None:
    import argparse

    from mcp_notebook.checking.command import add_check_arguments

    parser = argparse.ArgumentParser()
    add_check_arguments(parser)
    (option,) = [action for action in parser._actions if action.dest == "clients"]
    assert option.help is not None and f"{', '.join(sorted(client_names()))} (default: all)" in option.help
