"""One form field per prompt argument: its editor, its help line, and its error message.

Only standard ipywidgets 8 widgets are used, so the field works wherever
widgets do (JupyterLab, Notebook 7, VS Code) with no front-end extension.

A text argument is edited in a `Combobox`: the server's suggestions are its
options, which the form's script (`combobox_script`) shows as a drop-down over
the page, on focus and as you type, with ↑/↓ and Enter; without the script the
browser's own datalist shows them. A toggle swaps the one-line editor for a
`Textarea` for long values. An argument whose server describes its type
(`mcp_notebook.argument_types`) gets the matching widget instead: a
`Checkbox`, a number field, a `Dropdown` of its choices; its value is sent as
the server expects it (JSON for anything but text).

The line under the editor is always there (help, type, "showing 100 of 150"),
so suggestions arriving or going never move the fields below.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ...argument_types import ArgumentType, argument_type, from_wire, help_text, to_wire
from ...models import CompletionResult, PromptArgument

__all__ = ["ArgumentField", "needs_multiline"]

_MULTILINE_LENGTH = 80  # a value longer than this opens in the Textarea

_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "—"})()  # a drop-down's "nothing chosen" entry

EditListener = Callable[["ArgumentField", bool], None]
"""Called with the field and whether the new value was picked from the suggestions."""


def needs_multiline(value: str) -> bool:
    """Whether a value is better edited in a Textarea than on one line."""
    return "\n" in value or len(value) > _MULTILINE_LENGTH


def _shown(widget: Any, visible: bool) -> None:
    widget.layout.display = "" if visible else "none"


def _choice_label(choice: Any) -> str:
    return choice if isinstance(choice, str) else json.dumps(choice)


class ArgumentField:
    """The widgets for one argument, and its current value as the string to send.

    Suggestion updates may come from the background loop's thread; they only
    replace traits, which ipywidgets sends to the front end from any thread.
    """

    def __init__(self, argument: PromptArgument) -> None:
        self.argument = argument
        self.type: ArgumentType = argument_type(argument)
        self._lock = threading.Lock()
        self._listeners: list[EditListener] = []
        self._setting = False  # the form, not the user, is changing a typed editor
        self.error_message: str | None = None  # what the error line beside the field says
        default = argument.default if argument.default is not None else self._schema_default()
        # A checkbox or number cannot be blank: an optional one is sent only once set (by a default or the user).
        self.touched = default is not None
        css = f"mcp-field-{argument.name}"

        self.label = widgets.HTML(self._label_html(), layout=widgets.Layout(width="12em", min_width="8em"))
        self.combobox = widgets.Combobox(
            value=default if self._is_text and default is not None else "",
            placeholder=self._placeholder(),
            ensure_option=False,
            continuous_update=True,
            tooltip=help_text(argument),
            layout=widgets.Layout(width="100%"),
        )
        self.textarea = widgets.Textarea(
            value=self.combobox.value,
            placeholder=self._placeholder(),
            rows=6,
            continuous_update=True,
            tooltip=help_text(argument),
            layout=widgets.Layout(width="100%"),
        )
        self.multiline = widgets.ToggleButton(
            value=needs_multiline(self.combobox.value),
            description="¶",
            tooltip="Edit on several lines",
            tabbable=False,  # Tab goes from field to field; the toggle is a click
            layout=widgets.Layout(width="2.5em"),
        )
        self.typed_editor: Any = self._create_typed_editor(default)
        self.help = widgets.HTML(self._help_html())
        self.suggestions_status = widgets.HTML("")
        self.error = widgets.HTML("")
        self.combobox.add_class("mcp-combobox")
        self.multiline.add_class("mcp-multiline")
        for part in (self.combobox, self.textarea, self.typed_editor):
            if part is not None:
                part.add_class("mcp-field-value")
        self.suggestions_status.add_class("mcp-suggestions-status")
        self.help.add_class("mcp-field-help")
        self.error.add_class("mcp-field-error")

        # The notes line keeps its height whether or not it has something to say: the layout never jumps.
        self.help.layout = widgets.Layout(flex="1 1 auto", min_width="0")
        self.suggestions_status.layout = widgets.Layout(flex="0 0 auto", margin="0 0 0 1em")
        self.notes = widgets.HBox(
            [self.help, self.suggestions_status],
            layout=widgets.Layout(min_height="1.6em", justify_content="space-between", align_items="baseline"),
        )
        editors = [self.combobox, self.textarea] if self.typed_editor is None else [self.typed_editor]
        self.column = widgets.VBox(
            [*editors, self.error, self.notes],
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="10em"),
        )
        side = [self.multiline] if self._is_text else []
        self.widget = widgets.HBox([self.label, self.column, *side], layout=widgets.Layout(align_items="flex-start"))
        self.widget.add_class("mcp-field")
        self.widget.add_class(css)
        self._show_editor()
        _shown(self.error, False)

        self.combobox.observe(self._on_editor_change, names="value")
        self.textarea.observe(self._on_editor_change, names="value")
        self.multiline.observe(self._on_multiline_toggle, names="value")
        if self.typed_editor is not None:
            self.typed_editor.observe(self._on_typed_change, names="value")

    # -- value -------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.argument.name

    @property
    def _is_text(self) -> bool:
        return self.type.kind in ("text", "json")

    @property
    def completes(self) -> bool:
        """Whether the server's suggestions help here (free text; a checkbox or drop-down has its own)."""
        return self._is_text

    @property
    def editor(self) -> Any:
        """The widget the user edits now: the Combobox, the Textarea for long values, or the typed widget."""
        if self.typed_editor is not None:
            return self.typed_editor
        return self.textarea if self.multiline.value else self.combobox

    @property
    def value(self) -> str:
        """The value as it will be sent: text as typed, a typed value as JSON; "" when there is none."""
        if self.typed_editor is None:
            return str(self.editor.value)
        value = self.typed_editor.value
        if value is None or value is _UNSET or not self.touched:
            return ""
        return to_wire(self.type.kind, value)

    @value.setter
    def value(self, text: str) -> None:
        """Set the field from a string as it is sent (`5`, `true`, a choice); raises ValueError if it does not fit."""
        if self.typed_editor is not None:
            self._set_typed(from_wire(self.type, text) if text != "" else None)
            return
        if needs_multiline(text) and not self.multiline.value:
            self.multiline.value = True
        self.editor.value = text

    def add_edit_listener(self, listener: EditListener) -> None:
        """Call `listener(field, picked)` whenever the value changes."""
        self._listeners.append(listener)

    def focus(self) -> None:
        """Put the keyboard's focus in this field's editor (in the browser showing it)."""
        self.editor.focus()

    # -- suggestions -------------------------------------------------------

    def show_suggestions(self, result: CompletionResult) -> None:
        """Offer the server's values in the field's drop-down, saying so when the list was cut."""
        values = tuple(result.values)
        offered = values if values != (self.value,) else ()  # the value itself is no suggestion
        self.combobox.options = offered
        status = self._cut_status(len(values), result)
        self.suggestions_status.value = status if offered else ""

    def drop_suggestions(self) -> None:
        """Offer nothing (the server could not be asked); the form says why in its message line."""
        self.combobox.options = ()
        self.suggestions_status.value = ""

    @staticmethod
    def _cut_status(shown: int, result: CompletionResult) -> str:
        if result.total is not None and result.total > shown:
            text = f"Showing {shown} of {result.total} matches; type more to narrow them."
        elif result.has_more:
            text = f"Showing the first {shown} matches; type more to narrow them."
        else:
            return ""
        return f"<small><i>{text}</i></small>"

    # -- validation --------------------------------------------------------

    def problem(self) -> str | None:
        """What is wrong with the value itself (not JSON where JSON is wanted), or None."""
        if self.type.kind != "json" or self.value.strip() == "" or self.value.startswith("@"):
            return None
        try:
            json.loads(self.value)
        except json.JSONDecodeError as error:
            return f"Not valid JSON ({error.msg} at character {error.pos + 1}); expected a {self.type.describe()}."
        return None

    def set_error(self, message: str | None) -> None:
        """Show `message` beside the field, or clear it."""
        self.error_message = message or None
        self.error.value = (
            f'<span style="color: var(--jp-error-color1, #d32f2f)">{html.escape(message)}</span>' if message else ""
        )
        _shown(self.error, bool(message))

    def close(self) -> None:
        for part in (
            self.label,
            self.combobox,
            self.textarea,
            self.multiline,
            self.typed_editor,
            self.help,
            self.suggestions_status,
            self.error,
            self.notes,
            self.column,
            self.widget,
        ):
            if part is not None:
                part.close()

    # -- typed editors -----------------------------------------------------

    def _schema_default(self) -> str | None:
        default = self.type.default
        return None if default is None else to_wire(self.type.kind, default)

    def _create_typed_editor(self, default: str | None) -> Any:
        kind = self.type.kind
        layout = widgets.Layout(width="auto", max_width="24em")
        try:
            initial = from_wire(self.type, default) if default is not None else None
        except ValueError:
            initial = None  # a default that does not fit the type: start from the widget's own
            self.touched = False
        if kind == "boolean":
            return widgets.Checkbox(value=bool(initial), indent=False, description="", layout=layout)
        if kind == "integer":
            return widgets.IntText(value=int(initial or 0), layout=layout)
        if kind == "number":
            return widgets.FloatText(value=float(initial or 0), layout=layout)
        if kind == "enum":
            options: list[tuple[str, Any]] = [(_choice_label(c), c) for c in self.type.choices]
            if initial is None:
                options.insert(0, ("—", _UNSET))  # nothing chosen yet: the server's default, or "required"
            return widgets.Dropdown(options=options, value=_UNSET if initial is None else initial, layout=layout)
        return None

    def _set_typed(self, value: Any) -> None:
        editor = self.typed_editor
        self._setting = True
        try:
            if value is not None:
                editor.value = value
            elif self.type.kind == "enum":
                if all(choice is not _UNSET for _, choice in editor.options):
                    editor.options = [("—", _UNSET), *editor.options]
                editor.value = _UNSET
            self.touched = value is not None
            self.help.value = self._help_html()
        finally:
            self._setting = False
        self._notify(picked=False)

    def _on_typed_change(self, change: dict[str, Any]) -> None:
        if not self._setting:
            self.touched = True
            self.help.value = self._help_html()
            self._notify(picked=True)

    # -- observers ---------------------------------------------------------

    def _notify(self, picked: bool) -> None:
        for listener in tuple(self._listeners):
            listener(self, picked)

    def _on_editor_change(self, change: dict[str, Any]) -> None:
        if change["owner"] is not self.editor:
            return
        self._notify(picked=False)

    def _on_multiline_toggle(self, change: dict[str, Any]) -> None:
        # Carry the text over so the switch loses nothing.
        source, target = (self.combobox, self.textarea) if change["new"] else (self.textarea, self.combobox)
        target.value = source.value
        self._show_editor()

    def _show_editor(self) -> None:
        if self.typed_editor is not None:
            _shown(self.combobox, False)
            _shown(self.textarea, False)
            return
        _shown(self.combobox, not self.multiline.value)
        _shown(self.textarea, bool(self.multiline.value))

    # -- text --------------------------------------------------------------

    def _label_html(self) -> str:
        arg = self.argument
        # Every label reads as a title: the argument's own, else its name as words ("focus_area": "Focus area").
        words = arg.name.replace("_", " ").strip() or arg.name
        title = html.escape(arg.title or words[:1].upper() + words[1:])
        mark = ' <span title="required" style="color: var(--jp-error-color1, #d32f2f)">*</span>' if arg.required else ""
        return f"<b>{title}</b>{mark}"

    def _help_html(self) -> str:
        """The description (without a schema note for machines; the argument's own name when it has none), the type."""
        arg = self.argument
        description = help_text(arg)
        parts = [html.escape(description)] if description else []
        if self.type.typed:
            parts.append(f"<i>{html.escape(self.type.describe())}</i>")
            if not arg.required and not self.touched and self.type.kind in ("boolean", "integer", "number"):
                parts.append("left to the server unless you change it")
        if not description and arg.title and arg.title != arg.name:
            parts.insert(0, f"argument <code>{html.escape(arg.name)}</code>")  # no description: at least its name
        if not parts:
            return ""
        return f'<small style="color: var(--jp-ui-font-color2, #666)">{" · ".join(parts)}</small>'

    def _placeholder(self) -> str:
        arg = self.argument
        words = f" {self.type.describe()}" if self.type.kind == "json" else ""
        if arg.required:
            return f"required{words}"
        return f"optional{words}, default: {arg.default}" if arg.default else f"optional{words}"
