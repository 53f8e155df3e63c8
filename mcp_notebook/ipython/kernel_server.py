"""The `%mcp serve`, `%mcp stop` and `%mcp unpublish` subcommands, and the `%%prompt` cell magic.

`%%prompt` publishes a cell as a prompt of this kernel; `%mcp serve` starts a
`KernelServer` (see `kernel_host`) that serves those prompts, the kernel's
notebook and its magics over HTTP, `%mcp stop` stops it. `%load_ext
mcp_notebook` calls `register_kernel_server`, `%unload_ext` calls
`unload_kernel_server`, which undoes everything. Everything here runs on the
kernel's main thread.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

from ..exceptions import MCPNotebookError
from ..registry import PromptRegistry
from ..sources.kernel import KernelPromptSource, PromptCellError, parse_prompt_cell
from .kernel_host import LIVE_MAGIC_TIMEOUT, KernelPromptState, KernelServer, ServeOptions
from .live_magics import MainThreadScheduler
from .subcommands import serve_parser, stop_parser, unpublish_parser

__all__ = [
    "KernelPromptState",
    "KernelServer",
    "PromptMagics",
    "ServeOptions",
    "kernel_prompt_state",
    "parse_serve_options",
    "published_cell_names",
    "register_kernel_server",
    "serve_command",
    "stop_command",
    "unload_kernel_server",
    "unpublish_command",
]


# --- per-shell state ------------------------------------------------------------------------------------------------


_states: weakref.WeakKeyDictionary[Any, KernelPromptState] = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def kernel_prompt_state(shell: Any) -> KernelPromptState:
    """The shell's prompt state, created on first use (main thread)."""
    with _states_lock:
        state = _states.get(shell)
        if state is None:
            registry = PromptRegistry()
            state = KernelPromptState(registry=registry, cells=KernelPromptSource(registry))
            shell.events.register("pre_run_cell", state.on_pre_run_cell)

            def unhook() -> None:
                with contextlib.suppress(ValueError):
                    shell.events.unregister("pre_run_cell", state.on_pre_run_cell)

            state._unhook = unhook
            _states[shell] = state
        return state


def published_cell_names(shell: Any) -> list[str]:
    """The names of the `%%prompt` cells `shell` publishes now (none before its prompt state exists)."""
    with _states_lock:
        state = _states.get(shell)
    return list(state.cells.names()) if state is not None else []


def register_kernel_server(shell: Any) -> None:
    """Give `shell` the `%%prompt` magic and its prompt state (`%load_ext mcp_notebook` calls this)."""
    kernel_prompt_state(shell)
    shell.register_magics(PromptMagics)


def unload_kernel_server(shell: Any) -> None:
    """Undo everything this module did to `shell`: stop the server, drop its prompts and hooks (`%unload_ext`)."""
    with _states_lock:
        state = _states.pop(shell, None)
    if state is None:
        return
    if state.server is not None:
        state.server.stop()
        state.server = None
    state.cells.clear()
    if state._unhook is not None:
        state._unhook()
    cell_magics = getattr(getattr(shell, "magics_manager", None), "magics", {}).get("cell", {})
    registered = cell_magics.get("prompt")
    # Only a bound method is looked into: any attribute read of a lazy placeholder would import its extension.
    if inspect.ismethod(registered) and isinstance(registered.__self__, PromptMagics):
        del cell_magics["prompt"]


# --- the %mcp subcommands and %%prompt ------------------------------------------------------------------------------


def parse_serve_options(argv: Sequence[str]) -> ServeOptions:
    """`%mcp serve [--port N] [--no-token] [--live MAGIC,...] [--notebook PATH] [--stdio-proxy] …` as options."""
    options = _read_serve_options(argv)
    if options is None:
        raise UsageError("%mcp serve: --help asks for the help, not for options")
    return options


def _read_serve_options(argv: Sequence[str]) -> ServeOptions | None:
    """The options of `%mcp serve`; None when `argv` asked for `--help` (then printed)."""
    parser = serve_parser()
    options = parser.parse(argv)
    if options is None:
        return None
    if options.live_timeout is None:
        options.live_timeout = LIVE_MAGIC_TIMEOUT
    if not 0 <= options.port <= 65535:
        parser.error(f"--port {options.port} is not a port number")
    if not 0 < options.live_timeout <= 86400:
        parser.error(f"--live-timeout {options.live_timeout:g} is not a number of seconds (0 to 86400)")
    live = tuple(dict.fromkeys(m.strip() for group in options.live for m in group.split(",") if m.strip()))
    return ServeOptions(
        port=options.port,
        token=not options.no_token,
        live=live,
        notebook=options.notebook,
        stdio_proxy=options.stdio_proxy,
        magics=options.magics or options.all_magics,
        all_magics=options.all_magics,
        live_timeout=options.live_timeout,
        new_token=options.new_token,
    )


def serve_command(shell: Any, argv: Sequence[str], *, scheduler: MainThreadScheduler | None = None) -> None:
    """`%mcp serve`: serve this kernel's prompts to MCP clients, and print how to connect them.

    `%mcp serve --help` (see `subcommands.serve_parser`) tells the user what
    is served, to whom, and what `--live` allows.
    """
    options = _read_serve_options(argv)
    if options is None:
        return
    state = kernel_prompt_state(shell)
    if state.server is not None:
        raise UsageError(f"%mcp serve: already serving at {state.server.url}; run %mcp stop first")
    server = KernelServer(shell, state, options)
    try:
        server.start(scheduler)
    except (OSError, RuntimeError, MCPNotebookError) as error:
        raise UsageError(f"%mcp serve: {error}") from error
    state.server = server
    from IPython.display import display

    # HTML in Jupyter (a short summary, each client's configuration folded away), all of it as text in a terminal.
    display(server.describe())  # type: ignore[no-untyped-call]


def stop_command(shell: Any, argv: Sequence[str] = ()) -> None:
    """`%mcp stop`: stop serving this kernel's prompts; the port closes and the connection file is removed.

    The `%%prompt` prompts stay defined for the next `%mcp serve`.
    """
    if stop_parser().parse(argv) is None:
        return
    state = kernel_prompt_state(shell)
    if state.server is None:
        print("The kernel's MCP server is not running.")
        return
    url = state.server.url
    state.server.stop()
    state.server = None
    print(f"Stopped the kernel's MCP server at {url}.")


def unpublish_command(shell: Any, argv: Sequence[str]) -> None:
    """`%mcp unpublish NAME [NAME ...]`: withdraw `%%prompt` prompts; connected clients hear of it at once."""
    options = unpublish_parser().parse(argv)
    if options is None:
        return
    names: list[str] = options.names
    cells = kernel_prompt_state(shell).cells
    unknown = [name for name in names if name not in cells.names()]
    if unknown:
        known = ", ".join(cells.names()) or "none"
        raise UsageError(f"%mcp unpublish: no %%prompt prompt named {', '.join(unknown)} (defined: {known})")
    for name in names:
        cells.unpublish(name)
    print(f"Unpublished {', '.join(names)}.")


@magics_class
class PromptMagics(Magics):
    """The `%%prompt` cell magic: publish a cell as an MCP prompt of this kernel."""

    @cell_magic
    def prompt(self, line: str, cell: str) -> None:
        """Publish this cell's text as an MCP prompt; the cell itself never runs.

        %%prompt NAME [--title T] [--description D] [--role user|assistant]
                      [--arg NAME[="description"]] [--ask NAME[="question"]]
                      [--optional NAME[=default]] [--append]

        The body is the prompt's template: `{{name}}` placeholders are filled with
        the client's argument values, literally. Without --arg/--ask/--optional
        every placeholder is a required argument. `--ask NAME="question"` declares
        a required argument that the server asks the user for (the question, in a
        form the client shows) when a client leaves it out; give it a description
        too with `--arg NAME="description"`. `--arg df:var` (or
        `df:var[pandas.DataFrame]`, also with --ask) declares an argument that
        names a kernel variable: clients complete it from this kernel's
        variables (of that type: a class with its module, or a built-in type
        such as `int`). Re-running the cell replaces the prompt; --append adds this
        cell as another message. `%mcp serve` serves the prompts; `%mcp
        unpublish NAME` withdraws one.

        Examples::

            %%prompt explain --arg df:var[pandas.DataFrame]="the table" --optional style=short
            Explain the columns of {{df}} in a {{style}} answer.

            %%prompt review --ask code="Paste the code to review"
            Review this code: {{code}}
        """
        try:
            parsed = parse_prompt_cell(line, cell)
        except PromptCellError as error:
            raise UsageError(str(error)) from None
        state = kernel_prompt_state(self.shell)
        spec, warnings = state.cells.define(parsed, cell_id=state.current_cell_id)
        arguments = ", ".join(a.name if a.required else f"[{a.name}]" for a in spec.arguments) or "no arguments"
        verb = "Added a message to" if parsed.append else "Published"
        serving = "" if state.server is not None else " (not served yet: run %mcp serve)"
        asked = ", ".join(a.name for a in spec.arguments if a.ask is not None)
        asking = f"; asks the user for {asked} when a client leaves it out" if asked else ""
        print(f"{verb} prompt {spec.name!r} ({arguments}){asking}{serving}")
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
