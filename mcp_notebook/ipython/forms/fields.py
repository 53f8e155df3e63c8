"""One form field per prompt argument: editor, help, suggestions list and error message.

Only standard ipywidgets 8 widgets are used, so the field works wherever
widgets do (JupyterLab, Notebook 7, VS Code) with no front-end extension.
The editor is a `Combobox` (the browser shows its options as a drop-down while
typing); the same suggestions also appear in a `Select` list under it, which
every front end renders, and a line says when the server cut the list short.
A toggle swaps the one-line editor for a `Textarea` for long values.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ...models import CompletionResult, PromptArgument

__all__ = ["SUGGESTION_ROWS", "ArgumentField", "needs_multiline"]

SUGGESTION_ROWS = 6  # visible rows of the suggestions list; more scroll
_MULTILINE_LENGTH = 80  # a value longer than this opens in the Textarea

EditListener = Callable[["ArgumentField", bool], None]
"""Called with the field and whether the new value was picked from the suggestions."""


def needs_multiline(value: str) -> bool:
    """Whether a value is better edited in a Textarea than on one line."""
    return "\n" in value or len(value) > _MULTILINE_LENGTH


def _shown(widget: Any, visible: bool) -> None:
    widget.layout.display = "" if visible else "none"


class ArgumentField:
    """The widgets for one argument, and its current value.

    Suggestion updates may come from the background loop's thread; they only
    replace traits, which ipywidgets sends to the front end from any thread.
    """

    def __init__(self, argument: PromptArgument) -> None:
        self.argument = argument
        self._lock = threading.Lock()
        self._updating_list = False
        self._picked: str | None = None
        self._listeners: list[EditListener] = []
        self.error_message: str | None = None  # what the error line beside the field says
        default = argument.default or ""
        css = f"mcp-field-{argument.name}"

        self.label = widgets.HTML(self._label_html(), layout=widgets.Layout(width="12em", min_width="8em"))
        self.combobox = widgets.Combobox(
            value=default,
            placeholder=self._placeholder(),
            ensure_option=False,
            continuous_update=True,
            tooltip=argument.description,
            layout=widgets.Layout(width="100%"),
        )
        self.textarea = widgets.Textarea(
            value=default,
            placeholder=self._placeholder(),
            rows=6,
            continuous_update=True,
            tooltip=argument.description,
            layout=widgets.Layout(width="100%"),
        )
        self.multiline = widgets.ToggleButton(
            value=needs_multiline(default),
            description="¶",
            tooltip="Edit on several lines",
            layout=widgets.Layout(width="2.5em"),
        )
        self.help = widgets.HTML(self._help_html())
        self.error = widgets.HTML("")
        self.suggestions = widgets.Select(options=(), value=None, rows=SUGGESTION_ROWS)
        self.suggestions_status = widgets.HTML("")
        self.suggestions.layout.width = "100%"
        self.combobox.add_class("mcp-field-value")
        self.textarea.add_class("mcp-field-value")
        self.suggestions.add_class("mcp-suggestions")
        self.suggestions_status.add_class("mcp-suggestions-status")
        self.error.add_class("mcp-field-error")

        # Everything under the editor sits in its column, so the list lines up with what it completes.
        self.column = widgets.VBox(
            [self.combobox, self.textarea, self.error, self.help, self.suggestions, self.suggestions_status],
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="10em"),
        )
        self.widget = widgets.HBox(
            [self.label, self.column, self.multiline], layout=widgets.Layout(align_items="flex-start")
        )
        self.widget.add_class("mcp-field")
        self.widget.add_class(css)
        self._show_editor()
        _shown(self.help, bool(self.help.value))
        _shown(self.error, False)
        _shown(self.suggestions, False)
        _shown(self.suggestions_status, False)

        self.combobox.observe(self._on_editor_change, names="value")
        self.textarea.observe(self._on_editor_change, names="value")
        self.multiline.observe(self._on_multiline_toggle, names="value")
        self.suggestions.observe(self._on_suggestion_pick, names="value")

    # -- value -------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.argument.name

    @property
    def editor(self) -> Any:
        """The widget the user types in now: the Combobox, or the Textarea for long values."""
        return self.textarea if self.multiline.value else self.combobox

    @property
    def value(self) -> str:
        return str(self.editor.value)

    @value.setter
    def value(self, text: str) -> None:
        if needs_multiline(text) and not self.multiline.value:
            self.multiline.value = True
        self.editor.value = text

    def add_edit_listener(self, listener: EditListener) -> None:
        """Call `listener(field, picked)` whenever the value changes."""
        self._listeners.append(listener)

    # -- suggestions -------------------------------------------------------

    def show_suggestions(self, result: CompletionResult) -> None:
        """Offer the server's values under the field, saying so when the list was cut."""
        values = tuple(result.values)
        offered = values if values != (self.value,) else ()  # the value itself is no suggestion
        with self._lock:
            self._updating_list = True
            try:
                self.suggestions.index = None
                self.suggestions.options = offered
                self.suggestions.index = None
            finally:
                self._updating_list = False
        self.combobox.options = offered
        self.suggestions.rows = max(2, min(SUGGESTION_ROWS, len(offered)))
        _shown(self.suggestions, bool(offered))
        status = self._cut_status(len(values), result)
        self.suggestions_status.value = status
        _shown(self.suggestions_status, bool(status and offered))

    def show_suggestion_error(self, message: str) -> None:
        self.clear_suggestions()
        self.suggestions_status.value = f"<small><i>No suggestions: {html.escape(message)}</i></small>"
        _shown(self.suggestions_status, True)

    def clear_suggestions(self) -> None:
        self.show_suggestions(CompletionResult(values=()))

    @staticmethod
    def _cut_status(shown: int, result: CompletionResult) -> str:
        if result.total is not None and result.total > shown:
            text = f"Showing {shown} of {result.total} matches; type more to narrow them."
        elif result.has_more:
            text = f"Showing the first {shown} matches; more exist, type more to narrow them."
        else:
            return ""
        return f"<small><i>{text}</i></small>"

    # -- validation --------------------------------------------------------

    def set_error(self, message: str | None) -> None:
        """Show `message` beside the field, or clear it."""
        self.error_message = message or None
        self.error.value = (
            f'<span style="color: var(--jp-error-color1, #d32f2f)">⚠ {html.escape(message)}</span>' if message else ""
        )
        _shown(self.error, bool(message))

    def close(self) -> None:
        for part in (
            self.label,
            self.combobox,
            self.textarea,
            self.multiline,
            self.help,
            self.error,
            self.suggestions,
            self.suggestions_status,
            self.column,
            self.widget,
        ):
            part.close()

    # -- observers ---------------------------------------------------------

    def _on_editor_change(self, change: dict[str, Any]) -> None:
        if change["owner"] is not self.editor:
            return
        picked = self._picked is not None and change["new"] == self._picked
        self._picked = None
        if picked:
            self.clear_suggestions()
        for listener in tuple(self._listeners):
            listener(self, picked)

    def _on_multiline_toggle(self, change: dict[str, Any]) -> None:
        # Carry the text over so the switch loses nothing.
        source, target = (self.combobox, self.textarea) if change["new"] else (self.textarea, self.combobox)
        target.value = source.value
        self._show_editor()

    def _on_suggestion_pick(self, change: dict[str, Any]) -> None:
        if self._updating_list or change["new"] is None:
            return
        self._picked = str(change["new"])
        self.value = self._picked

    def _show_editor(self) -> None:
        _shown(self.combobox, not self.multiline.value)
        _shown(self.textarea, bool(self.multiline.value))

    # -- text --------------------------------------------------------------

    def _label_html(self) -> str:
        arg = self.argument
        title = html.escape(arg.title or arg.name)
        mark = ' <span title="required" style="color: var(--jp-error-color1, #d32f2f)">*</span>' if arg.required else ""
        return f"<b>{title}</b>{mark}"

    def _help_html(self) -> str:
        """The description, and the argument's own name when the label shows its title instead."""
        arg = self.argument
        parts = [html.escape(arg.description)] if arg.description else []
        if arg.title and arg.title != arg.name:
            parts.append(f"argument <code>{html.escape(arg.name)}</code>")
        return f'<small style="color: var(--jp-ui-font-color2, #666)">{" · ".join(parts)}</small>' if parts else ""

    def _placeholder(self) -> str:
        arg = self.argument
        if arg.required:
            return "required"
        return f"optional, default: {arg.default}" if arg.default else "optional"
