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
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

import ipywidgets as widgets

from ...client import InputHandler, InputRequest
from ...exceptions import MCPNotebookError, ServerError
from ...models import CompletionResult, PromptSpec, RenderedPrompt
from .fields import ArgumentField
from .input_form import InputRequestForm
from .services import PromptService, RenderedPromptDisplay, TaskRunner
from .suggestions import DEFAULT_DEBOUNCE_SECONDS, SuggestionFetcher

__all__ = ["PromptForm", "create_form_input_handler", "current_form"]

log = logging.getLogger(__name__)

ValueResolver = Callable[[str, str], str]
"""Turns (argument name, what its field holds) into the value to send (the `@name` rule); raises on a bad reference."""

CodeWriter = Callable[[str, str, Mapping[str, str]], str]
"""Writes the code (ending with a `%mcp get` line) that renders (server, prompt, arguments)."""

_MAX_VARIABLE_SUGGESTIONS = 100

current_form: contextvars.ContextVar[PromptForm | None] = contextvars.ContextVar("mcp_prompt_form", default=None)
"""The form whose render is running in this context; input requests of that render go to it."""


def _error_html(message: str) -> str:
    return (
        '<div style="color: var(--jp-error-color1, #d32f2f); border-left: 3px solid currentColor; '
        f'padding-left: 6px; white-space: pre-wrap">{html.escape(message)}</div>'
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
    ) -> None:
        self.spec = spec
        self.server = server
        self._service = service
        self._runner = runner
        self._display = display
        self._resolve_value = resolve_value
        self._write_code = write_code
        self._variables = variables or (lambda: [])
        self._lock = threading.Lock()
        self.result: RenderedPrompt | None = None
        self.error: BaseException | None = None
        self.pending: Future[RenderedPrompt] | None = None
        self.input_request: InputRequestForm | None = None  # the server's open question, while it waits

        self.fields: dict[str, ArgumentField] = {arg.name: ArgumentField(arg) for arg in spec.arguments}
        self.fetchers: dict[str, SuggestionFetcher] = {}
        for field in self.fields.values():
            self.fetchers[field.name] = self._create_fetcher(field, debounce)
            field.add_edit_listener(self._on_field_edit)

        self.header = widgets.HTML(self._header_html())
        self.render_button = widgets.Button(description="Render", button_style="primary", icon="play")
        self.copy_button = widgets.Button(description="Copy as code", icon="code", tooltip="The same as a %mcp line")
        self.render_button.add_class("mcp-render")
        self.copy_button.add_class("mcp-copy-code")
        self.status = widgets.HTML("")
        self.status.add_class("mcp-form-status")
        self.input_area = widgets.VBox([])
        self.code = widgets.Textarea(value="", rows=1, layout=widgets.Layout(width="100%", display="none"))
        self.code.add_class("mcp-code")
        self.output = widgets.Output()
        self.output.add_class("mcp-form-output")
        if not spec.arguments:
            no_args = widgets.HTML("<i>This prompt takes no arguments.</i>")
            field_widgets = [no_args]
        else:
            field_widgets = [f.widget for f in self.fields.values()]
        self.widget = widgets.VBox(
            [
                self.header,
                *field_widgets,
                widgets.HBox([self.render_button, self.copy_button]),
                self.status,
                self.input_area,
                self.code,
                self.output,
            ],
            layout=widgets.Layout(border="1px solid var(--jp-border-color2, #ccc)", padding="8px"),
        )
        self.widget.add_class("mcp-prompt-form")
        self.render_button.on_click(lambda _: self.render())
        self.copy_button.on_click(lambda _: self.copy_as_code())

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
        for part in (self.header, self.render_button, self.copy_button, self.status, self.code, self.output):
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
            else:
                try:
                    values[name] = self._resolve_value(name, raw)
                except Exception as error:  # the rule's own message says what to fix
                    message = str(error) or type(error).__name__
            field.set_error(message)
            problems += message is not None
        return None if problems else values

    def copy_as_code(self) -> str:
        """Show the `%mcp get` code that renders the same prompt with the same arguments, ready to copy.

        It is shown in the form rather than put in a new cell: a click reaches the
        kernel outside any cell execution, where `set_next_input` would only
        take effect at some later, unrelated execution.
        """
        code = self._write_code(self.server, self.spec.name, self.arguments())
        self.code.value = code
        self.code.rows = code.count("\n") + 1
        self.code.layout.display = ""
        return code

    # -- suggestions -------------------------------------------------------------------------------

    def _create_fetcher(self, field: ArgumentField, debounce: float) -> SuggestionFetcher:
        name = field.name

        async def complete(value: str, context: Mapping[str, str]) -> CompletionResult:
            return await self._service.complete(self.spec.name, name, value, context or None)

        def on_error(value: str, error: BaseException) -> None:
            field.show_suggestion_error(str(error) or type(error).__name__)

        return SuggestionFetcher(
            self._runner,
            complete,
            on_suggestions=lambda value, result: field.show_suggestions(result),
            on_error=on_error,
            delay=debounce,
        )

    def _on_field_edit(self, field: ArgumentField, picked: bool) -> None:
        if field.error_message and field.value.strip():
            field.set_error(None)
        if not picked:
            self.request_suggestions(field.name)

    def request_suggestions(self, name: str) -> Future[CompletionResult | None] | None:
        """Ask for suggestions for what field `name` holds now (kernel variables after `@`)."""
        field = self.fields[name]
        fetcher = self.fetchers[name]
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

    def _show_error(self, error: BaseException) -> None:
        if isinstance(error, ServerError) and isinstance(error.data, Mapping):
            for name in error.data.get("missing") or ():
                if name in self.fields:
                    self.fields[name].set_error("Required by the server.")
        message = str(error) if isinstance(error, MCPNotebookError) else f"{type(error).__name__}: {error}"
        self._set_status(_error_html(f"Rendering failed: {message}"))

    def _set_status(self, text: str) -> None:
        self.status.value = text

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
