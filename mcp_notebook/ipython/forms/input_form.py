"""A form for a server's request for more input while a prompt renders (2026-07-28).

A server may answer `prompts/get` with an input-required result that carries
an elicitation request: a message and a flat JSON schema whose properties are
strings, numbers, integers, booleans or enums. `InputRequestForm` shows one
widget per property, checks the required ones, and resolves `response` with
the elicitation answer (`{"action": "accept", "content": {...}}`, or
`decline` / `cancel`) that the client sends back when it retries.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

__all__ = ["InputRequestForm", "SchemaField", "to_schema_fields"]

ElicitationResponse = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One property of a requested schema, as the form shows it."""

    name: str
    kind: str  # "string", "number", "integer", "boolean" or "enum"
    title: str
    description: str | None = None
    required: bool = False
    default: Any = None
    choices: tuple[tuple[str, str], ...] = ()  # (label, value) for enums


def _choices(prop: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    if isinstance(prop.get("enum"), list):
        values = [str(v) for v in prop["enum"]]
        names = prop.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) and len(names) == len(values) else values
        return tuple(zip(labels, values, strict=True))
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
            return tuple((str(o.get("title", o["const"])), str(o["const"])) for o in options)
    return ()


def to_schema_fields(schema: Mapping[str, Any]) -> tuple[SchemaField, ...]:
    """The fields of a requested schema, in its property order."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fields = []
    for name, prop in properties.items():
        prop = prop if isinstance(prop, Mapping) else {}
        choices = _choices(prop)
        kind = "enum" if choices else str(prop.get("type", "string"))
        if kind not in ("string", "number", "integer", "boolean", "enum"):
            kind = "string"
        fields.append(
            SchemaField(
                name=str(name),
                kind=kind,
                title=str(prop.get("title") or name),
                description=prop.get("description"),
                required=name in required,
                default=prop.get("default"),
                choices=choices,
            )
        )
    return tuple(fields)


def _create_editor(field: SchemaField) -> Any:
    common: dict[str, Any] = {"layout": widgets.Layout(width="auto", flex="1 1 auto")}
    if field.kind == "boolean":
        return widgets.Checkbox(value=bool(field.default), indent=False, **common)
    if field.kind == "integer":
        return widgets.IntText(value=int(field.default or 0), **common)
    if field.kind == "number":
        return widgets.FloatText(value=float(field.default or 0), **common)
    if field.kind == "enum":
        values = [value for _, value in field.choices]
        default = str(field.default) if field.default is not None and str(field.default) in values else None
        return widgets.Dropdown(options=list(field.choices), value=default, **common)
    return widgets.Text(value="" if field.default is None else str(field.default), **common)


class InputRequestForm:
    """The widgets for one elicitation request; `response` resolves when the user answers."""

    def __init__(self, message: str, schema: Mapping[str, Any]) -> None:
        self.message = message
        self.fields = to_schema_fields(schema)
        self.response: Future[ElicitationResponse] = Future()
        self.editors: dict[str, Any] = {f.name: _create_editor(f) for f in self.fields}
        self.errors: dict[str, Any] = {f.name: widgets.HTML("") for f in self.fields}
        self.submit_button = widgets.Button(description="Submit", button_style="primary")
        self.decline_button = widgets.Button(description="Decline")
        self.cancel_button = widgets.Button(description="Cancel")
        rows: list[Any] = [widgets.HTML(f"<b>The server asks:</b> {html.escape(message)}")]
        self._parts: list[Any] = []
        for f in self.fields:
            mark = ' <span style="color: var(--jp-error-color1, #d32f2f)">*</span>' if f.required else ""
            label = widgets.HTML(f"{html.escape(f.title)}{mark}", layout=widgets.Layout(width="12em"))
            rows.append(widgets.HBox([label, self.editors[f.name], self.errors[f.name]]))
            self._parts.append(label)
            if f.description:
                rows.append(widgets.HTML(f"<small>{html.escape(f.description)}</small>"))
        rows.append(widgets.HBox([self.submit_button, self.decline_button, self.cancel_button]))
        self.widget = widgets.VBox(rows, layout=widgets.Layout(border="1px solid #f0ad4e", padding="6px"))
        self._parts.extend(rows)
        self._parts.extend((self.submit_button, self.decline_button, self.cancel_button, self.widget))
        self.widget.add_class("mcp-input-request")
        self.submit_button.on_click(lambda _: self.submit())
        self.decline_button.on_click(lambda _: self._answer({"action": "decline"}))
        self.cancel_button.on_click(lambda _: self._answer({"action": "cancel"}))

    def content(self) -> dict[str, Any]:
        """The values entered so far, typed as the schema says (blank optional fields left out)."""
        content: dict[str, Any] = {}
        for f in self.fields:
            value = self.editors[f.name].value
            if f.kind in ("string", "enum") and (value is None or value == "") and not f.required:
                continue
            content[f.name] = value
        return content

    def validate(self) -> dict[str, str]:
        """Messages for required fields left blank, by field name; shown beside each field."""
        problems = {}
        for f in self.fields:
            value = self.editors[f.name].value
            if f.required and f.kind in ("string", "enum") and (value is None or value == ""):
                problems[f.name] = "Required"
        for name, box in self.errors.items():
            message = problems.get(name)
            box.value = (
                f'<span style="color: var(--jp-error-color1, #d32f2f)">⚠ {html.escape(message)}</span>'
                if message
                else ""
            )
        return problems

    def submit(self) -> bool:
        """Send the entered values if the required ones are there; says whether it did."""
        if self.validate():
            return False
        self._answer({"action": "accept", "content": self.content()})
        return True

    def close(self) -> None:
        """Remove every widget of this form from the front end."""
        for part in (*self.editors.values(), *self.errors.values(), *self._parts):
            part.close()

    def _answer(self, response: ElicitationResponse) -> None:
        if self.response.done():
            return
        for button in (self.submit_button, self.decline_button, self.cancel_button):
            button.disabled = True
        self.response.set_result(response)
