"""InputRequestForm: an elicitation schema becomes widgets, and the answers come back typed."""

from __future__ import annotations

import ipywidgets as widgets

from mcp_notebook.ipython.forms.input_form import InputRequestForm, to_schema_fields

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "as it should appear"},
        "count": {"type": "integer", "default": 3},
        "ratio": {"type": "number"},
        "public": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m", "l"], "enumNames": ["Small", "Medium", "Large"]},
        "tone": {"type": "string", "oneOf": [{"const": "dry", "title": "Dry"}, {"const": "warm", "title": "Warm"}]},
        "note": {"type": "string"},
    },
    "required": ["name", "size"],
}


def test_each_schema_property_gets_the_widget_of_its_type() -> None:
    form = InputRequestForm("Tell me more", SCHEMA)

    kinds = {name: type(editor) for name, editor in form.editors.items()}
    assert kinds == {
        "name": widgets.Text,
        "count": widgets.IntText,
        "ratio": widgets.FloatText,
        "public": widgets.Checkbox,
        "size": widgets.Dropdown,
        "tone": widgets.Dropdown,
        "note": widgets.Text,
    }
    assert form.editors["size"].options == (("Small", "s"), ("Medium", "m"), ("Large", "l"))
    assert form.editors["tone"].options == (("Dry", "dry"), ("Warm", "warm"))
    assert form.editors["count"].value == 3
    assert form.editors["public"].value is True


def test_titles_descriptions_and_required_marks_come_from_the_schema() -> None:
    fields = {f.name: f for f in to_schema_fields(SCHEMA)}

    assert fields["name"].title == "Your name"
    assert fields["name"].description == "as it should appear"
    assert fields["name"].required
    assert not fields["note"].required
    assert fields["size"].kind == "enum"


def test_submit_with_a_required_field_blank_says_so_beside_it_and_sends_nothing() -> None:
    form = InputRequestForm("Tell me more", SCHEMA)

    form.submit_button.click()

    assert not form.response.done()
    assert "Required" in form.errors["name"].value
    assert "Required" in form.errors["size"].value
    assert form.errors["note"].value == ""


def test_submit_sends_the_answers_typed_as_the_schema_says() -> None:
    form = InputRequestForm("Tell me more", SCHEMA)
    form.editors["name"].value = "Ada"
    form.editors["size"].value = "m"
    form.editors["ratio"].value = 0.5

    form.submit_button.click()

    assert form.response.result(timeout=0) == {
        "action": "accept",
        "content": {"name": "Ada", "count": 3, "ratio": 0.5, "public": True, "size": "m"},
    }
    assert form.submit_button.disabled


def test_decline_and_cancel_answer_without_content() -> None:
    declined = InputRequestForm("?", SCHEMA)
    cancelled = InputRequestForm("?", SCHEMA)

    declined.decline_button.click()
    cancelled.cancel_button.click()

    assert declined.response.result(timeout=0) == {"action": "decline"}
    assert cancelled.response.result(timeout=0) == {"action": "cancel"}


def test_only_the_first_answer_counts() -> None:
    form = InputRequestForm("?", {"type": "object", "properties": {}})

    form.decline_button.click()
    form.submit()

    assert form.response.result(timeout=0) == {"action": "decline"}
