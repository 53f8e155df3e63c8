"""`%mcp form` and `%mcp picker`: MCP prompts as widget forms, or as questions in a terminal.

In a notebook (JupyterLab, Notebook 7, VS Code) `%mcp form SERVER:PROMPT`
shows a `PromptForm` and `%mcp picker` a `PromptPicker`; both are built from
standard ipywidgets only. Without a widget front end (terminal IPython) the
same commands ask one question per argument and print the listing instead.

Forms use what the magics use: the connected servers of `%mcp`, the `@name`
rule for arguments, and the conversation display of `%mcp get`. While a form
renders, a server's request for more input opens a form inside it (the
session's input handler is wrapped once, on first use).

While this kernel serves its own prompts (`%mcp serve`), the picker shows them
too, as the group "this kernel": a client of the kernel's own server lists,
completes and renders them over HTTP, exactly as an editor would, so the main
thread is never waited on and stays free to run live magics.
"""

from __future__ import annotations

import builtins
import dataclasses
import os
import re
import shlex
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..api import Connection
from ..client import InputHandler, PromptClient
from ..exceptions import MCPNotebookError, PromptError, UnknownPromptError
from ..models import CompletionResult, PromptArgument, PromptSpec, RenderedPrompt
from ..naming import closest_names
from ..runtime import BackgroundRuntime
from ..sources.kernel import variable_types
from . import servers
from .arguments import parse_arguments
from .display import PromptConversation, conversation_markdown, conversation_text
from .forms import PromptForm, PromptPicker, create_form_input_handler
from .forms.prompt_form import CodeWriter
from .forms.terminal import ask_arguments, describe_prompts
from .loaded import loaded_pool
from .namespace import is_user_variable
from .servers import ServerPool
from .subcommands import form_parser, picker_parser

if TYPE_CHECKING:
    from .kernel_host import KernelServer

__all__ = [
    "create_prompt_form",
    "create_prompt_picker",
    "form_command",
    "has_widget_frontend",
    "install_form_input_handler",
    "kernel_connect_line",
    "own_prompts_hint",
    "picker_command",
    "to_display_bundle",
    "to_get_code",
    "uninstall_form_input_handler",
]

Ask = Callable[[str], str]

_KERNEL_SERVER_MODULE = "mcp_notebook.ipython.kernel_server"
_KERNEL_CONNECTION = "this_kernel"  # the %mcp name the copied code gives this kernel's own server


def has_widget_frontend(shell: Any) -> bool:
    """Whether widgets can show here: a kernel with a front end, not terminal IPython."""
    if shell is None or type(shell).__name__ == "TerminalInteractiveShell":
        return False
    return getattr(shell, "kernel", None) is not None


def to_display_bundle(rendered: RenderedPrompt) -> dict[str, Any]:
    """The display `%mcp get` gives a rendered prompt: the conversation as Markdown, and as text."""
    return {"text/markdown": conversation_markdown(rendered), "text/plain": conversation_text(rendered)}


def to_get_code(server: str, prompt: str, arguments: Mapping[str, str]) -> str:
    """The code that renders `prompt` with `arguments`: a `%mcp get` line.

    A value on several lines cannot sit on a magic's line, so it goes into a
    variable first and the line passes it as `NAME=@variable`.
    """
    assignments: list[str] = []
    words = [f"%mcp get {server}:{prompt}"]
    for name, value in arguments.items():
        if "\n" in value or "\r" in value:
            variable = re.sub(r"\W", "_", name) + "_text"
            assignments.append(f"{variable} = {value!r}")
            words.append(f"{name}=@{variable}")
        else:
            words.append(f"{name}={shlex.quote(value)}")
    return "\n".join([*assignments, " ".join(words)])


def _with_references(write: CodeWriter, variables: Collection[str]) -> CodeWriter:
    """Copied code that passes a kernel variable argument as `NAME=@variable`.

    A cell waits for its `%mcp get`, and the kernel's server reads a variable
    only between cells: so the cell sends the value itself, as `@` does.
    """

    def write_with_references(server: str, prompt: str, arguments: Mapping[str, str]) -> str:
        values = {k: f"@{v}" if k in variables and v.isidentifier() else v for k, v in arguments.items()}
        return write(server, prompt, values)

    return write_with_references


def kernel_connect_line(kernel_id: str, runtime_dir: str | None = None) -> str:
    """The `%mcp connect` line that gives this kernel's own server the name `this_kernel` in its own `%mcp`.

    `runtime_dir`: the folder of the kernel's connection file, when clients would not look there by default.
    """
    folder = f" --runtime-dir {shlex.quote(runtime_dir)}" if runtime_dir is not None else ""
    return f"%mcp connect {_KERNEL_CONNECTION} -- mcp-notebook connect --kernel {kernel_id}{folder}"


def own_prompts_hint(shell: Any) -> str:
    """How a cell reaches this kernel's own prompts while `%mcp serve` runs ("" when it does not run)."""
    kernel = _serving_kernel(shell)
    if kernel is None:
        return ""
    return (
        f". This kernel's own prompts (%mcp serve) are reached by connecting to it first: "
        f"{kernel_connect_line(kernel.kernel_id, kernel.custom_runtime_dir)}, then %mcp get {_KERNEL_CONNECTION}:NAME "
        "(the picker's Copy as code writes both)"
    )


def _kernel_code_writer(kernel_id: str, runtime_dir: str | None = None) -> CodeWriter:
    """Copied code for this kernel's own prompts: connect to it through `mcp-notebook connect`, then `%mcp get`.

    The stdio proxy reads the token from the connection file, so no token ends
    up in the notebook.
    """
    connect = kernel_connect_line(kernel_id, runtime_dir)

    def write(server: str, prompt: str, arguments: Mapping[str, str]) -> str:
        return "\n".join([connect, to_get_code(_KERNEL_CONNECTION, prompt, arguments)])

    return write


# -- the input handler --------------------------------------------------------------------------------

_installed: tuple[InputHandler, InputHandler] | None = None  # (the forms' handler, the one it wraps)


def install_form_input_handler() -> None:
    """Route input requests of renders started by a form to that form; others keep the current handler."""
    global _installed
    if _installed is not None and servers.input_handler is _installed[0]:
        return
    previous = servers.input_handler
    handler = create_form_input_handler(fallback=previous)
    servers.input_handler = handler
    _installed = (handler, previous)


def uninstall_form_input_handler() -> None:
    """Put back the input handler that `install_form_input_handler` wrapped."""
    global _installed
    if _installed is not None and servers.input_handler is _installed[0]:
        servers.input_handler = _installed[1]
    _installed = None


# -- building forms ------------------------------------------------------------------------------------


def _variables(shell: Any) -> list[str]:
    hidden = getattr(shell, "user_ns_hidden", {})
    return [n for n in shell.user_ns if is_user_variable(n, hidden)]


def _cell_writer(shell: Any) -> Callable[[str], bool]:
    """Puts code into a new cell under the running one; only a cell's execution can (not a click)."""

    def write(code: str) -> bool:
        header = (getattr(shell, "parent_header", None) or {}).get("header") or {}
        if header.get("msg_type") != "execute_request":
            return False
        shell.set_next_input(code, replace=False)
        return True

    return write


def _resolve_value(shell: Any, name: str, raw: str, kernel_variables: Collection[str] = ()) -> str:
    """The `@name` / `@file:path` / `@@` rule of the magics, applied to one field.

    An argument in `kernel_variables` (a `NAME:var` argument of this kernel's
    own server) sends the variable's name: the server reads its value.
    """
    if name in kernel_variables and raw.startswith("@") and raw[1:].isidentifier():
        return raw[1:]
    try:
        return parse_arguments([f"{name}={raw}"], shell.user_ns, cwd=Path(os.getcwd()))[name]
    except UsageError as error:
        raise ValueError(str(error)) from None


def create_prompt_form(
    shell: Any,
    client: PromptClient,
    spec: PromptSpec,
    *,
    server: str,
    runtime: BackgroundRuntime,
    values: Mapping[str, str] | None = None,
    write_code: CodeWriter = to_get_code,
    kernel_variables: Collection[str] = (),
) -> PromptForm:
    """A `PromptForm` wired to the session: `@name` values, `%mcp get` display and code, input requests.

    `write_code(server, prompt, arguments)` writes what "Copy as code" shows
    (a `%mcp get` line by default). `kernel_variables` names the arguments
    that this kernel's own server reads as variables (`NAME:var`).
    """
    install_form_input_handler()
    form = PromptForm(
        spec,
        client,
        runtime,
        server=server,
        display=to_display_bundle,
        resolve_value=lambda name, raw: _resolve_value(shell, name, raw, kernel_variables),
        write_code=write_code,
        variables=lambda: _variables(shell),
        write_cell=_cell_writer(shell),
    )
    for name, value in (values or {}).items():
        try:
            form.fields[name].value = value
        except ValueError as error:  # a typed argument given a value of another type
            form.close()
            raise UsageError(f"argument {name!r}: {error}") from None
    return form


def create_prompt_picker(
    shell: Any,
    clients: Mapping[str, PromptClient],
    *,
    runtime: BackgroundRuntime,
    search: str = "",
    kernel: KernelServer | None = None,
) -> PromptPicker:
    """A `PromptPicker` over `clients` whose chosen prompts open session-wired forms; starts loading at once.

    With `kernel` (this kernel's running server) its own prompts come first,
    as the group "this kernel", listed, completed and rendered through a
    client of that server.
    """
    services = dict(clients)
    writers: dict[str, CodeWriter] = {}
    if kernel is not None:
        own = kernel.own_client()
        services = {own.name: own, **{name: c for name, c in clients.items() if name != own.name}}
        writers[own.name] = _kernel_code_writer(kernel.kernel_id, kernel.custom_runtime_dir)

    def create_form(server: str, spec: PromptSpec) -> PromptForm:
        write_code = writers.get(server, to_get_code)
        variables: tuple[str, ...] = ()
        if kernel is not None and server in writers:
            published = kernel.state.registry.snapshot().get(spec.name)
            arguments = published.arguments if published is not None else ()
            variables = tuple(a.name for a in arguments if variable_types(a) is not None)
            write_code = _with_references(write_code, variables)
        return create_prompt_form(
            shell,
            services[server],
            spec,
            server=server,
            runtime=runtime,
            write_code=write_code,
            kernel_variables=variables,
        )

    picker = PromptPicker(services, runtime, create_form)
    picker.search.value = search
    picker.refresh()
    return picker


def _serving_kernel(shell: Any) -> KernelServer | None:
    """This kernel's own MCP server while `%mcp serve` runs; None otherwise."""
    module = sys.modules.get(_KERNEL_SERVER_MODULE)
    if module is None:
        return None  # never imported, so never served: importing it here would only cost
    server: KernelServer | None = module.kernel_prompt_state(shell).server
    return server


# -- the subcommands -------------------------------------------------------------------------------------


def _pool(shell: Any) -> ServerPool:
    pool = loaded_pool(shell)
    if pool is None:
        raise UsageError("%mcp is not loaded; run %load_ext mcp_notebook first")
    return pool


def _resolve_prompt(pool: ServerPool, reference: str) -> tuple[Connection, PromptSpec]:
    try:
        return pool.resolve(reference)
    except UnknownPromptError as error:
        server = reference.partition(":")[0] if ":" in reference else None
        names = [f"{server}:{s}" if server and ":" not in s else s for s in error.suggestions]
        hint = f" Did you mean {', '.join(names)}?" if names else ""
        listing = f"%mcp prompts {server}" if server else "%mcp prompts"
        raise UsageError(f"Unknown prompt {reference!r}.{hint} ({listing} lists them)") from None


def _prefilled(spec: PromptSpec, tokens: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for token in tokens:
        name, equals, value = token.partition("=")
        if not equals:
            raise UsageError(f"expected NAME=VALUE after the prompt, got {token!r}")
        if spec.argument(name) is None:
            known = ", ".join(a.name for a in spec.arguments) or "none"
            meant = closest_names([name], [a.name for a in spec.arguments])
            hint = f" Did you mean {meant[0]}=?" if meant else ""
            raise UsageError(f"prompt {spec.name!r} has no argument {name!r} (its arguments: {known}).{hint}")
        values[name] = value
    return values


def form_command(shell: Any, argv: Sequence[str], *, ask: Ask | None = None) -> PromptForm | Any:
    """`%mcp form SERVER:PROMPT [NAME=VALUE ...]`: a prompt's arguments in a form, or asked in a terminal.

    The user's help is `%mcp form --help` (`subcommands.form_parser`).
    """
    parser = form_parser()
    # The words after the prompt are NAME=VALUE, read by _prefilled (argparse would take -1 for an option).
    if parser.asks_for_help(argv):
        parser.print_help()
        return None
    reference, *tokens = argv
    pool = _pool(shell)
    connection, spec = _resolve_prompt(pool, reference)
    values = _prefilled(spec, tokens)
    if has_widget_frontend(shell):
        return create_prompt_form(
            shell, connection.client, spec, server=connection.name, runtime=pool.runtime, values=values
        )
    return _render_in_terminal(shell, connection, spec, values, ask or builtins.input)


def _render_in_terminal(
    shell: Any, connection: Connection, spec: PromptSpec, given: Mapping[str, str], ask: Ask
) -> PromptConversation | None:
    remaining = dataclasses.replace(spec, arguments=tuple(a for a in spec.arguments if a.name not in given))

    def suggest(argument: PromptArgument, context: Mapping[str, str]) -> CompletionResult | None:
        try:
            return connection.complete(spec.name, argument.name, "", **{**given, **context})
        except MCPNotebookError:
            return None  # suggestions are a help, never a reason to stop

    answers = ask_arguments(remaining, ask=ask, write=print, suggest=suggest)
    if answers is None:
        print("Cancelled.")
        return None
    raw = {**given, **answers}
    arguments = parse_arguments([f"{k}={v}" for k, v in raw.items()], shell.user_ns, cwd=Path(os.getcwd()))
    try:
        rendered = connection.get(spec.name, **arguments)
    except PromptError as error:
        raise UsageError(str(error)) from None
    return PromptConversation.of(rendered)


def picker_command(shell: Any, argv: Sequence[str]) -> PromptPicker | None:
    """`%mcp picker [--all] [SEARCH ...]`: browse, search and open prompts; printed as a listing in a terminal.

    The user's help is `%mcp picker --help` (`subcommands.picker_parser`).
    """
    options = picker_parser().parse(argv)
    if options is None:
        return None
    pool = _pool(shell)
    names = sorted(pool.configs()) if options.all else sorted(pool.connected())
    if not has_widget_frontend(shell):
        print(describe_prompts(dict(pool.listings(names)) if names else {}))
        return None
    clients = {name: pool.connection(name).client for name in names}
    search = " ".join(options.search)
    return create_prompt_picker(shell, clients, runtime=pool.runtime, search=search, kernel=_serving_kernel(shell))
