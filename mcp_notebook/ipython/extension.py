"""`%load_ext mcp_notebook` / `%unload_ext mcp_notebook`: what loading adds, unloading removes.

Loading registers `%mcp`, the `%%prompt` cell magic (imported on first use),
display formatters so any `RenderedPrompt` shows as a conversation, and Tab
completion for `%mcp` lines (a matcher of IPython's completer). It
imports neither the MCP SDK nor anyio: after the first cell has run, a
background thread warms the SDK import up so the first `%mcp` call is quick.
Unloading disconnects every server (stopping stdio server processes), stops
this kernel's own MCP server if one runs, removes the magics and formatters,
and stops the background runtime thread.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from ..models import RenderedPrompt
from .completion import MCPCompleter
from .display import conversation_markdown, conversation_text
from .loaded import WARM_UP_THREAD, forget_pool, loaded_pool, remember_pool, wait_for_sdk_warm_up
from .magics import MCPMagics
from .servers import ServerPool

__all__ = ["load", "loaded_pool", "unload", "wait_for_sdk_warm_up"]

_KERNEL_SERVER = "mcp_notebook.ipython.kernel_server"
_WIDGETS = "mcp_notebook.ipython.widgets"


@dataclass(eq=False)
class _Loaded:
    magics: MCPMagics
    pool: ServerPool
    warm_up: threading.Thread | None = None
    undo: list[Any] = field(default_factory=list)


_loaded: dict[int, _Loaded] = {}


def load(shell: Any) -> None:
    """Register `%mcp`, `%%prompt` and the conversation display on `shell`."""
    if id(shell) in _loaded:
        return
    pool = ServerPool()
    magics = MCPMagics(shell, pool)
    shell.register_magics(magics)
    state = _Loaded(magics=magics, pool=pool)
    _loaded[id(shell)] = state
    remember_pool(shell, pool)
    shell.register_magic_function(_prompt_cell_magic(shell), magic_kind="cell", magic_name="prompt")
    _register_formatters(shell, state)
    _register_completer(shell, state)

    def on_first_cell_done(*_: Any) -> None:
        _unregister_event(shell, "post_run_cell", on_first_cell_done)
        state.warm_up = threading.Thread(target=_warm_up, name=WARM_UP_THREAD, daemon=True)
        state.warm_up.start()

    shell.events.register("post_run_cell", on_first_cell_done)
    state.undo.append(lambda: _unregister_event(shell, "post_run_cell", on_first_cell_done))


def unload(shell: Any) -> None:
    """Undo `load`: close connections, stop this kernel's server, remove magics, formatters and threads."""
    state = _loaded.pop(id(shell), None)
    if state is None:
        return
    forget_pool(shell)
    state.pool.close()
    # Only what was used needs undoing; importing these modules here would cost.
    if _KERNEL_SERVER in sys.modules:
        sys.modules[_KERNEL_SERVER].unload_kernel_server(shell)
    if _WIDGETS in sys.modules and not _loaded:
        sys.modules[_WIDGETS].uninstall_form_input_handler()
    for undo in reversed(state.undo):
        undo()
    line_magics = shell.magics_manager.magics["line"]
    if getattr(line_magics.get("mcp"), "__self__", None) is state.magics:
        del line_magics["mcp"]
    cell_magics = shell.magics_manager.magics["cell"]
    if getattr(cell_magics.get("prompt"), "_mcp_notebook_stub", False):
        del cell_magics["prompt"]
    shell.magics_manager.registry.pop(type(state.magics).__name__, None)
    if state.warm_up is not None:
        state.warm_up.join(timeout=10)
    if not _loaded:
        from ..runtime import get_runtime

        get_runtime().shutdown()


def _prompt_cell_magic(shell: Any) -> Any:
    """`%%prompt`, imported on first use: the kernel-server code pulls in anyio."""

    def prompt(line: str, cell: str) -> Any:
        module = __import__(_KERNEL_SERVER, fromlist=["register_kernel_server"])
        module.register_kernel_server(shell)  # replaces this stand-in with the real magic
        return shell.run_cell_magic("prompt", line, cell)

    prompt.__doc__ = (
        "Publish this cell's text as an MCP prompt of this kernel; the cell itself never runs.\n\n"
        "    %%prompt NAME [--title T] [--description D] [--role user|assistant]\n"
        '                  [--arg NAME[="description"]] [--ask NAME[="question"]]\n'
        "                  [--optional NAME[=default]] [--append]\n\n"
        "`{{name}}` placeholders in the body become the prompt's arguments. `%mcp serve` serves the prompts.\n"
        "Example::\n\n    %%prompt explain --optional style=short\n    Explain {{topic}} in a {{style}} answer.\n"
    )
    prompt._mcp_notebook_stub = True  # type: ignore[attr-defined]
    return prompt


def _register_formatters(shell: Any, state: _Loaded) -> None:
    formatters = shell.display_formatter.formatters
    markdown, plain = formatters["text/markdown"], formatters["text/plain"]
    markdown.for_type(RenderedPrompt, conversation_markdown)
    plain.for_type(RenderedPrompt, lambda obj, printer, cycle: printer.text(conversation_text(obj)))
    state.undo.append(lambda: markdown.pop(RenderedPrompt, None))
    state.undo.append(lambda: plain.pop(RenderedPrompt, None))


def _register_completer(shell: Any, state: _Loaded) -> None:
    completer = getattr(shell, "Completer", None)
    if completer is None:
        return
    matcher = MCPCompleter(shell, state.magics).matcher
    completer.custom_matchers.append(matcher)

    def remove() -> None:
        with contextlib.suppress(ValueError):
            completer.custom_matchers.remove(matcher)

    state.undo.append(remove)


def _unregister_event(shell: Any, event: str, callback: Any) -> None:
    with contextlib.suppress(ValueError):
        shell.events.unregister(event, callback)


def _warm_up() -> None:
    # The SDK costs over a second to import; do it before the user's first %mcp needs it.
    from ..client import import_sdk

    with contextlib.suppress(Exception):  # a broken install shows up on first real use, with a proper message
        import_sdk()
