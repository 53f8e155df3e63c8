"""`PromptForm`: fill in a prompt's arguments with the server's help, render it, keep the result.

The form never blocks the kernel's main thread: suggestions and rendering run
on the background runtime and come back through callbacks, so the front end's
keystrokes and clicks keep arriving while a server thinks. What the server
says wrong is shown in the form (beside the field it concerns when it names
one), never as a traceback in another cell.
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import json
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

import ipywidgets as widgets

from ...client import InputHandler, InputRequest
from ...exceptions import MCPNotebookError, ServerError
from ...models import CompletionResult, PromptSpec, RenderedPrompt
from .combobox_script import COMBOBOX_SCRIPT
from .error_text import mentioned_arguments, summarize_error
from .fields import ArgumentField
from .input_form import InputRequestForm
from .services import PromptService, RenderedPromptDisplay, TaskRunner
from .suggestions import DEFAULT_DEBOUNCE_SECONDS, SuggestionFetcher

__all__ = ["PromptForm", "create_form_input_handler", "current_form", "javascript_output"]

log = logging.getLogger(__name__)

ValueResolver = Callable[[str, str], str]
"""Turns (argument name, what its field holds) into the value to send (the `@name` rule); raises on a bad reference."""

CodeWriter = Callable[[str, str, Mapping[str, str]], str]
"""Writes the code (ending with a `%mcp get` line) that renders (server, prompt, arguments)."""

CellWriter = Callable[[str], bool]
"""Puts code into a new cell when it can (during a cell's execution); says whether it did."""

_MAX_VARIABLE_SUGGESTIONS = 100

current_form: contextvars.ContextVar[PromptForm | None] = contextvars.ContextVar("mcp_prompt_form", default=None)
"""The form whose render is running in this context; input requests of that render go to it."""


def _error_html(message: str, details: str | None = None) -> str:
    """A short error line; the full text, when there is more, folded under "Details"."""
    fold = (
        '<details style="color: var(--jp-ui-font-color1, inherit)"><summary style="cursor: pointer">Details'
        '</summary><pre style="white-space: pre-wrap; margin: 4px 0; font-size: var(--jp-code-font-size, 12px)">'
        f"{html.escape(details)}</pre></details>"
        if details
        else ""
    )
    return (
        '<div class="mcp-error" style="border-left: 3px solid var(--jp-error-color1, #d32f2f); padding-left: 6px">'
        f'<div style="color: var(--jp-error-color1, #d32f2f)">{html.escape(message)}</div>{fold}</div>'
    )


def javascript_output(code: str) -> dict[str, Any]:
    """An output that runs `code` in front ends that run scripts, and shows nothing elsewhere."""
    return {"output_type": "display_data", "data": {"application/javascript": code, "text/plain": ""}, "metadata": {}}


def _clipboard_script(text: str) -> str:
    # The text travels as a JSON string literal: data, never code.
    literal = json.dumps(text).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return (
        "(function (scope) {\n"
        f"  const text = {literal};\n"
        "  const node = scope && (scope.jquery ? scope[0] : scope);\n"
        "  const say = (words) => {\n"
        "    if (node) { node.textContent = words; node.classList.add('mcp-copy-outcome'); }\n"
        "  };\n"
        "  const fallback = () => say('Select the code above and copy it (Ctrl+C).');\n"
        "  if (navigator.clipboard && window.isSecureContext) {\n"
        "    navigator.clipboard.writeText(text).then(() => say('Copied to the clipboard.'), fallback);\n"
        "  } else { fallback(); }\n"
        "})(typeof element !== 'undefined' ? element : null);\n"
    )


class PromptForm:
    """A form for one prompt of one server: a field per argument, Render, Copy as code.

    After a successful render `result` holds the `RenderedPrompt` and `output`
    shows it as the magics do; after a failure `error` holds the exception and
    the form says what went wrong. `render()` returns a future of the result.
    """

    def __init__(
        self,
        spec: PromptSpec,
        service: PromptService,
        runner: TaskRunner,
        *,
        server: str,
        display: RenderedPromptDisplay,
        resolve_value: ValueResolver,
        write_code: CodeWriter,
        variables: Callable[[], list[str]] | None = None,
        debounce: float = DEFAULT_DEBOUNCE_SECONDS,
        write_cell: CellWriter | None = None,
    ) -> None:
        self.spec = spec
        self.server = server
        self._service = service
        self._runner = runner
        self._display = display
        self._resolve_value = resolve_value
        self._write_code = write_code
        self._variables = variables or (lambda: [])
        self._write_cell = write_cell
        self._lock = threading.Lock()
        self.result: RenderedPrompt | None = None
        self.error: BaseException | None = None
        self.pending: Future[RenderedPrompt] | None = None
        self.input_request: InputRequestForm | None = None  # the server's open question, while it waits

        self.fields: dict[str, ArgumentField] = {arg.name: ArgumentField(arg) for arg in spec.arguments}
        self.fetchers: dict[str, SuggestionFetcher] = {}
        for field in self.fields.values():
            if field.completes:
                self.fetchers[field.name] = self._create_fetcher(field, debounce)
            field.add_edit_listener(self._on_field_edit)
            for editor in (field.combobox, field.typed_editor):
                if editor is not None:
                    editor.on_msg(lambda _widget, content, _buffers, name=field.name: self._on_key(name, content))

        self.header = widgets.HTML(self._header_html())
        self.render_button = widgets.Button(description="Render", button_style="primary", icon="play")
        self.copy_button = widgets.Button(description="Copy as code", icon="code", tooltip="The same as a %mcp line")
        self.render_button.add_class("mcp-render")
        self.copy_button.add_class("mcp-copy-code")
        self.status = widgets.HTML("")
        self.status.add_class("mcp-form-status")
        # The form's message line for what is not about one value (the server cannot be reached for
        # suggestions): under the fields, at full width, so no field's layout changes when it comes or goes.
        self.notice = widgets.HTML("", layout=widgets.Layout(display="none"))
        self.notice.add_class("mcp-form-notice")
        self.input_area = widgets.VBox([])
        self.output = widgets.Output(_dom_classes=("mcp-form-output",))  # the class from the start: tests find it
        self.code = widgets.Textarea(value="", rows=1, layout=widgets.Layout(width="100%", display="none"))
        self.code.add_class("mcp-code")
        self.code_note = widgets.Output(layout=widgets.Layout(display="none"), _dom_classes=("mcp-code-note",))
        # The combobox behaviour of the fields, in front ends that run scripts (see combobox_script).
        self.scripts = widgets.Output(
            layout=widgets.Layout(height="0px", overflow="hidden"), _dom_classes=("mcp-form-scripts",)
        )
        self.scripts.outputs = (javascript_output(COMBOBOX_SCRIPT),)
        if not spec.arguments:
            no_args = widgets.HTML("<i>This prompt takes no arguments.</i>")
            field_widgets = [no_args]
        else:
            field_widgets = [f.widget for f in self.fields.values()]
        self.widget = widgets.VBox(
            [
                self.header,
                *field_widgets,
                self.notice,
                widgets.HBox([self.render_button, self.copy_button]),
                self.status,
                self.input_area,
                self.code,
                self.code_note,
                self.output,
                self.scripts,
            ],
            layout=widgets.Layout(border="1px solid var(--jp-border-color2, #ccc)", padding="8px"),
        )
        self.widget.add_class("mcp-prompt-form")
        self.render_button.on_click(lambda _: self.render())
        self.copy_button.on_click(lambda _: self.copy_as_code())
        for name, fetcher in self.fetchers.items():
            # The whole list, ready before the field gets focus, so suggestions show at once.
            fetcher.request("", self._context_for(name))

    # -- display -----------------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def close(self) -> None:
        """Stop asking the server and remove the form's widgets from the front end."""
        for fetcher in self.fetchers.values():
            fetcher.cancel()
        if self.pending is not None:
            self.pending.cancel()
        for field in self.fields.values():
            field.close()
        parts = (self.header, self.render_button, self.copy_button, self.status, self.notice, self.code, self.code_note)
        for part in (*parts, self.output, self.scripts):
            part.close()
        self.input_area.close()
        self.widget.close()

    # -- values ------------------------------------------------------------------------------------

    def arguments(self) -> dict[str, str]:
        """What the fields hold, as typed (`@name` kept); blank fields left out."""
        return {name: field.value for name, field in self.fields.items() if field.value != ""}

    def validate(self) -> dict[str, str] | None:
        """The argument values to send, or None after showing what is wrong beside each field."""
        values: dict[str, str] = {}
        problems = 0
        for name, field in self.fields.items():
            raw = field.value
            message: str | None = None
            if raw.strip() == "":
                if field.argument.required:
                    message = "Required: fill this in."
            elif field.type.kind in ("boolean", "integer", "number", "enum"):
                values[name] = raw  # already the text the server expects
            elif (message := field.problem()) is None:
                try:
                    values[name] = self._resolve_value(name, raw)
                except Exception as error:  # the rule's own message says what to fix
                    message = str(error) or type(error).__name__
            field.set_error(message)
            problems += message is not None
        return None if problems else values

    def copy_as_code(self) -> str:
        """The `%mcp get` code that renders the same prompt with the same arguments: copied, shown, returned.

        Called from a cell (`form.copy_as_code()`), the code also goes into a new
        cell under it. A click on the button reaches the kernel outside any cell
        execution, where a new cell cannot be made, so there the code is put on
        the clipboard (in browsers that allow it). Either way it is shown in the
        form, ready to select and copy.
        """
        code = self._write_code(self.server, self.spec.name, self.arguments())
        self.code.value = code
        self.code.rows = code.count("\n") + 1
        self.code.layout.display = ""
        if self._write_cell is not None and self._write_cell(code):
            self.code_note.outputs = (
                {"output_type": "stream", "name": "stdout", "text": "The code is in a new cell below this one.\n"},
            )
        else:
            self.code_note.outputs = (javascript_output(_clipboard_script(code)),)
        self.code_note.layout.display = ""
        return code

    # -- suggestions -------------------------------------------------------------------------------

    def _create_fetcher(self, field: ArgumentField, debounce: float) -> SuggestionFetcher:
        name = field.name

        async def complete(value: str, context: Mapping[str, str]) -> CompletionResult:
            result = await self._service.complete(self.spec.name, name, value, context or None)
            if value and tuple(result.values) == (value,):
                # The value is complete: offer the whole list again, for the next time the field gets focus.
                result = await self._service.complete(self.spec.name, name, "", context or None)
            return result

        def on_error(value: str, error: BaseException) -> None:
            field.drop_suggestions()
            self._set_notice(f"No suggestions for {field.argument.title or name}: {str(error) or type(error).__name__}")

        def on_suggestions(value: str, result: CompletionResult) -> None:
            field.show_suggestions(result)
            self._set_notice(None)  # the server answers again

        return SuggestionFetcher(
            self._runner, complete, on_suggestions=on_suggestions, on_error=on_error, delay=debounce
        )

    def _on_field_edit(self, field: ArgumentField, picked: bool) -> None:
        if field.error_message and field.value.strip():
            field.set_error(None)
        if not picked and field.completes:
            self.request_suggestions(field.name)

    def _on_key(self, name: str, content: Mapping[str, Any]) -> None:
        """Enter in a field: on to the next one, or render from the last."""
        if not isinstance(content, Mapping) or content.get("event") != "submit":
            return
        names = list(self.fields)
        position = names.index(name)
        if position + 1 < len(names):
            self.fields[names[position + 1]].focus()
        else:
            self.render()

    def request_suggestions(self, name: str) -> Future[CompletionResult | None] | None:
        """Ask for suggestions for what field `name` holds now (kernel variables after `@`)."""
        field = self.fields[name]
        fetcher = self.fetchers.get(name)
        if fetcher is None:
            return None  # a checkbox, number or drop-down: nothing to suggest
        value = field.value
        if value.startswith("@") and not value.startswith("@@"):
            fetcher.cancel()
            prefix = value[1:]
            names = sorted(n for n in self._variables() if n.startswith(prefix))
            shown = tuple(f"@{n}" for n in names[:_MAX_VARIABLE_SUGGESTIONS])
            field.show_suggestions(CompletionResult(values=shown, total=len(names), has_more=len(names) > len(shown)))
            return None
        return fetcher.request(value, self._context_for(name))

    def _context_for(self, name: str) -> dict[str, str]:
        """The other arguments already filled in, for `context.arguments` (kernel references left out)."""
        return {
            other: field.value
            for other, field in self.fields.items()
            if other != name and field.value.strip() and not field.value.startswith("@")
        }

    # -- rendering ---------------------------------------------------------------------------------

    def render(self) -> Future[RenderedPrompt] | None:
        """Validate the fields and render the prompt on the server; None if a field needs fixing."""
        values = self.validate()
        if values is None:
            self._set_status(_error_html("Some arguments need attention (see the fields above)."))
            return None
        self.render_button.disabled = True
        self._set_status("<i>Rendering…</i>")

        async def render() -> RenderedPrompt:
            current_form.set(self)  # this task's context: input requests of this render come back here
            return await self._service.get_prompt(self.spec.name, values)

        future = self._runner.start(render)
        with self._lock:
            self.pending = future
        future.add_done_callback(self._on_rendered)
        return future

    def _on_rendered(self, future: Future[RenderedPrompt]) -> None:
        self.render_button.disabled = False
        if future.cancelled():
            self._set_status("<i>Cancelled.</i>")
            return
        error = future.exception()
        if error is not None:
            self.error = error
            self._show_error(error)
            return
        rendered = future.result()
        try:
            bundle = self._display(rendered)
        except Exception as display_error:  # a display bug must not lose the result
            log.exception("displaying a rendered prompt failed")
            bundle = {"text/plain": f"{rendered!r}\n(display failed: {display_error})"}
        self.result = rendered
        self.error = None
        self.output.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)
        self._set_status("")
        self._set_notice(None)  # the server answered: what it could not do before is past

    def _show_error(self, error: BaseException) -> None:
        message = str(error) if isinstance(error, MCPNotebookError) else f"{type(error).__name__}: {error}"
        text = summarize_error(message)
        data = error.data if isinstance(error, ServerError) else None
        missing = data.get("missing") if isinstance(data, Mapping) else None
        for name in missing or ():
            if name in self.fields:
                self.fields[name].set_error("Required by the server.")
        if not missing:
            for name in mentioned_arguments(text.summary, self.fields):
                self.fields[name].set_error("The server did not accept this value (see below).")
        self._set_status(_error_html(f"Rendering failed: {text.summary}", text.details))

    def _set_status(self, text: str) -> None:
        self.status.value = text

    def _set_notice(self, message: str | None) -> None:
        """Show `message` in the form's message line, or clear it."""
        text = (
            f'<small><i style="color: var(--jp-warn-color1, #b26500)">{html.escape(message)}</i></small>'
            if message
            else ""
        )
        if self.notice.value != text:
            self.notice.value = text
            self.notice.layout.display = "" if message else "none"

    # -- input requests ----------------------------------------------------------------------------

    async def ask(self, request: InputRequest) -> Mapping[str, Any] | None:
        """Show the server's input request in this form and wait for the user's answer."""
        prompt_form = InputRequestForm(request.message, request.requested_schema)
        self.input_request = prompt_form
        self.input_area.children = (*self.input_area.children, prompt_form.widget)
        self._set_status("<i>The server needs more input to render this prompt.</i>")
        try:
            answer = await asyncio.wrap_future(prompt_form.response)
        finally:
            self.input_area.children = tuple(c for c in self.input_area.children if c is not prompt_form.widget)
            if self.input_request is prompt_form:
                self.input_request = None
            prompt_form.close()
        self._set_status("<i>Rendering…</i>")
        if answer.get("action") != "accept":
            return None
        content: Mapping[str, Any] = answer.get("content") or {}
        return content

    def _header_html(self) -> str:
        spec = self.spec
        title = html.escape(spec.title or spec.name)
        ident = html.escape(f"{self.server}:{spec.name}")
        desc = f"<div>{html.escape(spec.description)}</div>" if spec.description else ""
        return f"<div><b style='font-size: 1.15em'>{title}</b> <code>{ident}</code>{desc}</div>"


def create_form_input_handler(fallback: InputHandler | None = None) -> InputHandler:
    """An input handler that asks in the form whose render caused the request.

    Requests that no form caused (a `%mcp get` line) go to `fallback`, or are
    declined when there is none.
    """

    async def on_input_required(request: InputRequest) -> Mapping[str, Any] | None:
        form = current_form.get()
        if form is not None:
            return await form.ask(request)
        if fallback is not None:
            return await fallback(request)
        return None

    return on_input_required
