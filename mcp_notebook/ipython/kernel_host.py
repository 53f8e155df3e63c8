"""One kernel's running MCP server: what `%mcp serve` starts and `%mcp stop` stops.

A `KernelServer` serves the kernel's prompts (its `%%prompt` cells, the
notebook file it is attached to, its magics) over Streamable HTTP on
127.0.0.1, on the background runtime's event loop (never a subprocess),
behind a random bearer token, and writes the connection file that tells
editors and `mcp-notebook connect` where it listens.

The server is the product's `PromptServer`; the kernel takes part through its
two hooks: `KernelServer.render` renders magic prompts (documentation, or
running an allowed magic) and `KernelServer.complete` offers variable names.

Threads: `start` and `stop` run on the kernel's main thread, which publishes
immutable snapshots into the registry; the server only reads snapshots. Live
magics are handed back to the main thread between cells
(`live_magics.MainThreadScheduler`); completions of variable names read a
namespace snapshot taken after each cell.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import secrets
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..discovery import (
    default_runtime_dir,
    register_connection_file,
    remove_connection_file,
    write_connection_file,
)
from ..models import CompletionResult, PromptSpec, RenderedPrompt
from ..registry import PromptRegistry
from ..rendering import render_prompt
from ..sources.kernel import KernelPromptSource, VariableArgumentError, variable_references, variable_types
from ..sources.live_policy import refusal_reason
from ..sources.magics import (
    Listing,
    MagicPromptSource,
    build_live_invocation,
    render_magic_documentation,
    to_live_result,
)
from .client_config import format_client_config
from .kernel_endpoint import HttpEndpoint, start_endpoint, start_watch
from .live_magics import LiveMagicCall, MagicExecutionError, MainThreadScheduler, create_kernel_scheduler
from .loaded import wait_for_sdk_warm_up
from .namespace import NamespaceSnapshot, NamespaceWatcher, read_variables

if TYPE_CHECKING:
    from ..client import PromptClient

__all__ = ["LIVE_MAGIC_TIMEOUT", "KernelPromptState", "KernelServer", "ServeOptions"]

log = logging.getLogger(__name__)

LIVE_MAGIC_TIMEOUT = 60.0  # seconds a client waits for a live magic (it may queue behind a running cell)
_STOP_GRACE = 5.0  # seconds a live magic that ran past its limit gets to end once interrupted
_CLIENT_CLOSE_TIMEOUT = 10.0
_OWN_CLIENT_NAME = "this kernel"  # how the session's own forms name this server


@dataclass(eq=False)
class KernelPromptState:
    """What one shell publishes: its registry, its `%%prompt` prompts, and its server while one runs."""

    registry: PromptRegistry
    cells: KernelPromptSource
    server: KernelServer | None = None
    current_cell_id: str | None = None
    _unhook: Callable[[], None] | None = field(default=None, repr=False)

    def on_pre_run_cell(self, info: Any) -> None:
        # The front end's cell id lets a re-run `%%prompt --append` cell replace its own message.
        self.current_cell_id = getattr(info, "cell_id", None)


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """What `%mcp serve` was asked for."""

    port: int = 0
    token: bool = True
    live: tuple[str, ...] = ()
    notebook: str | None = None
    stdio_proxy: bool = False
    all_magics: bool = False  # list a prompt per magic, not the curated few and `magic`
    live_timeout: float = LIVE_MAGIC_TIMEOUT


def _kernel_id() -> str:
    """The kernel's id, from its connection file name (`kernel-<id>.json`); a fresh id outside a kernel."""
    with contextlib.suppress(Exception):
        from ipykernel.connect import get_connection_file

        stem = Path(get_connection_file()).stem
        if stem.startswith("kernel-") and len(stem) > len("kernel-"):
            return stem.removeprefix("kernel-")
    return uuid.uuid4().hex


def _kernel_notebook(shell: Any, requested: str | None) -> Path | None:
    """The notebook file this kernel belongs to: `--notebook`, else the one jupyter-server named."""
    if requested:
        path = Path(requested).expanduser()
        if not path.is_file():
            raise UsageError(f"--notebook: no such file: {requested}")
        return path.resolve()
    # jupyter-server starts a notebook's kernel with JPY_SESSION_NAME set to the notebook's path.
    for candidate in (os.environ.get("JPY_SESSION_NAME"), shell.user_ns.get("__session__")):
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = Path(candidate).expanduser()
            if not path.is_absolute():
                path = Path.cwd() / path
            if path.is_file():
                return path.resolve()
    return None


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _close_client(client: PromptClient) -> None:
    from ..runtime import get_runtime

    try:
        get_runtime().call(client.close, timeout=_CLIENT_CLOSE_TIMEOUT)
    except RuntimeError:
        pass  # the runtime is already down (interpreter exit): nothing is left to close
    except TimeoutError:
        log.warning("closing this kernel's own client took over %s s; left to the runtime", _CLIENT_CLOSE_TIMEOUT)


def _create_prompt_server(registry: PromptRegistry, **options: Any) -> Any:
    # Imported here, not at module level: the MCP SDK costs a second to import and `%load_ext` must stay fast.
    wait_for_sdk_warm_up()
    from ..protocol.server import create_server

    return create_server(registry, **options)


class KernelServer:
    """One kernel's running MCP server. Start and stop it on the kernel's main thread."""

    def __init__(self, shell: Any, state: KernelPromptState, options: ServeOptions) -> None:
        self.shell = shell
        self.state = state
        self.options = options
        self.kernel_id = _kernel_id()
        self.token = secrets.token_urlsafe(32) if options.token else None
        self.url: str | None = None
        self.connection_file: Path | None = None
        self.notebook: Path | None = None
        listing: Listing = "all" if options.all_magics else "curated"
        self.magics = MagicPromptSource(state.registry, live=options.live, listing=listing)
        self._namespace: NamespaceWatcher | None = None
        self._scheduler: MainThreadScheduler | None = None
        self._folder: Any = None
        self._endpoint: HttpEndpoint | None = None
        self._own_client: PromptClient | None = None
        self._cleanups: list[Callable[[], None]] = []
        self._stopped = False

    # -- what the server thread calls --------------------------------------------------------------------------------

    def namespace(self) -> NamespaceSnapshot:
        """The kernel's variables as of the end of the last cell (safe from any thread)."""
        return self._namespace.snapshot if self._namespace is not None else NamespaceSnapshot()

    async def render(self, spec: PromptSpec, arguments: Mapping[str, str]) -> RenderedPrompt | None:
        """Render a magic prompt, in documentation or live mode; None for any other prompt (the server's to render)."""
        generic = self.magics.render_generic(spec, arguments)
        if generic is not None:
            return generic
        found = self.magics.magic_for(spec)
        if found is None:
            return await self._render_variables(spec, arguments)
        info, _ = found
        policy = self.magics.policy_for(info)
        if policy is None:
            return render_magic_documentation(info, spec, arguments)
        render_prompt(replace(spec, messages=()), arguments)  # refuse bad arguments before anything runs
        invocation = build_live_invocation(info, policy, dict(arguments), spec.name)
        if self._scheduler is None:
            message = "live magics need a Jupyter kernel (no main loop to run them on)"
            raise MagicExecutionError(info.title, message, spec.name)
        call = LiveMagicCall(self.shell, invocation)
        try:
            captured = await self._scheduler.run(call, self.options.live_timeout)
        except TimeoutError:
            raise MagicExecutionError(info.title, await self._overran(call), spec.name) from None
        except MagicExecutionError as error:
            error.prompt = spec.name  # the client knows the prompt, not the magic
            raise
        except RuntimeError as error:  # the scheduler stopped, or the magic ended the call abnormally
            raise MagicExecutionError(info.title, str(error), spec.name) from error
        return to_live_result(spec, invocation, captured)

    async def _render_variables(self, spec: PromptSpec, arguments: Mapping[str, str]) -> RenderedPrompt | None:
        """A prompt whose `NAME:var` arguments name kernel variables, rendered with their values; None otherwise.

        The variables are read on the main thread between cells, as live magics run.
        """
        references = variable_references(spec, arguments)
        if not references:
            return None
        render_prompt(replace(spec, messages=()), arguments)  # refuse bad arguments before reading anything
        from ..api import argument_text

        hidden = getattr(self.shell, "user_ns_hidden", {})
        read = partial(read_variables, spec.name, self.shell.user_ns, references, argument_text, hidden)
        if self._scheduler is None:
            values = read()
        else:
            try:
                values = await self._scheduler.run(read, self.options.live_timeout)
            except TimeoutError:
                message = (
                    f"the kernel was busy with a cell for {self.options.live_timeout:g} s, and its variables are "
                    "read between cells; try again (from a cell of this kernel, pass NAME=@variable instead)"
                )
                raise VariableArgumentError(spec.name, references[0].argument, message) from None
        return render_prompt(spec, {**arguments, **values})

    async def _overran(self, call: LiveMagicCall) -> str:
        """Stop a live magic that ran past its limit; what the client is told."""
        limit = f"{self.options.live_timeout:g} s"
        outcome = call.stop(f"it ran past its {limit} limit and was stopped")
        if outcome == "not running":
            if not call.started:
                return f"it never ran: the kernel was busy with a cell for {limit}; try again between cells"
            return f"it ran past its {limit} limit"  # and has just ended
        if outcome == "stopped":
            await asyncio.to_thread(call.finished.wait, _STOP_GRACE)
            if call.finished.is_set():
                return f"it ran past its {limit} limit and was stopped"
        return f"it ran past its {limit} limit and could not be stopped; it goes on in the kernel"

    async def complete(
        self, spec: PromptSpec, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult | None:
        """Variable names of the kernel for an argument declared `NAME:var[…]`; None for any other argument."""
        declared = spec.argument(argument)
        types = variable_types(declared) if declared is not None else None
        if types is None:
            return None
        return self.namespace().complete(value, types)

    # -- the session's own client (main thread) -------------------------------------------------------------------

    def own_client(self) -> PromptClient:
        """A client of this very server (its URL and token), for this session's own picker and forms.

        Made on first use and closed by `stop`. Its requests take the path an
        editor's take, over HTTP on the background runtime: nothing waits on
        the main thread, which stays free to run live magics between cells.
        """
        if self._own_client is None:
            if self.url is None or self._stopped:
                raise RuntimeError("the kernel's MCP server is not running")
            from ..client import PromptClient
            from ..config import ServerConfig
            from .servers import on_input_required

            headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
            config = ServerConfig(name=_OWN_CLIENT_NAME, url=self.url, headers=headers, source="%mcp serve")
            client = PromptClient(config, on_input_required=on_input_required)
            self._own_client = client
            # Cleanups run last first: the client closes before the endpoint stops, not under an open session.
            self._cleanups.append(partial(_close_client, client))
        return self._own_client

    # -- lifecycle (main thread) -------------------------------------------------------------------------------------

    def _refresh_magics(self, *_: Any) -> None:
        manager = self.shell.magics_manager
        # IPython declares its own magics lazily by class; importing those is cheap and safe. Magics that an
        # extension provides stay declared only, so that listing them never runs the extension.
        load_classes = getattr(manager, "load_all_lazy_magics", None)
        if load_classes is not None:
            try:
                load_classes()
            except Exception:
                log.exception("loading IPython's own magics failed")
        self.magics.refresh(manager.magics)

    def _on(self, event: str, callback: Callable[..., None]) -> None:
        self.shell.events.register(event, callback)

        def off() -> None:
            with contextlib.suppress(ValueError):
                self.shell.events.unregister(event, callback)

        self._cleanups.append(off)

    def start(self, scheduler: MainThreadScheduler | None = None) -> None:
        """Publish the magics and the notebook, start HTTP, write the connection file."""
        try:
            self._start(scheduler)
        except BaseException:
            self.stop()
            raise

    def _start(self, scheduler: MainThreadScheduler | None) -> None:
        self._refresh_magics()
        refused = self.magics.refused_live()
        if refused:
            info = self.magics.info(refused[0])
            raise UsageError(f"%mcp serve: --live {refused[0]} is refused: {refusal_reason(info)}")
        self._on("post_run_cell", self._refresh_magics)
        self._cleanups.append(self.magics.clear)
        self._namespace = NamespaceWatcher(self.shell)
        self._cleanups.append(self._namespace.close)
        self._scheduler = scheduler if scheduler is not None else create_kernel_scheduler(self.shell)
        if self._scheduler is not None:
            self._cleanups.append(self._scheduler.close)
        self.notebook = _kernel_notebook(self.shell, self.options.notebook)
        if self.notebook is not None:
            self._serve_notebook(self.notebook)
        server = _create_prompt_server(
            self.state.registry,
            render=self.render,
            complete=self.complete,
            resources=self._folder,
            read_file=self._folder.read_file if self._folder is not None else None,
            name=f"mcp-notebook kernel {self.kernel_id[:8]}",
            instructions="Prompts published by a live Jupyter kernel: its %%prompt cells, its notebook, its magics.",
        )
        hint = (
            "the token of this kernel's MCP server (%mcp serve): it is in the kernel's connection file; "
            f"'mcp-notebook connect --kernel {self.kernel_id} --print-token' prints it"
        )
        self._endpoint = start_endpoint(server, port=self.options.port, token=self.token, token_hint=hint)
        self._cleanups.append(self._endpoint.stop)
        self.url = self._endpoint.url
        self.connection_file = write_connection_file(
            url=self._endpoint.url,
            token=self.token,
            kernel_id=self.kernel_id,
            notebook_path=str(self.notebook) if self.notebook is not None else None,
        )
        try:
            register_connection_file(self.connection_file)
        except OSError as error:  # discovery from other shells suffers, serving does not
            log.warning("could not leave a pointer to %s in the state directory: %s", self.connection_file, error)
        atexit.register(self.stop)

    def _serve_notebook(self, path: Path) -> None:
        from ..sources.folder import NotebookFolderSource

        folder = NotebookFolderSource([path], self.state.registry)
        folder.scan()
        self._folder = folder
        self._cleanups.append(lambda: self.state.registry.update(dict.fromkeys(folder.notebooks)))
        self._cleanups.append(start_watch(folder))

    def stop(self) -> None:
        """Stop serving: close the port, remove the connection file, withdraw magics and notebook prompts."""
        if self._stopped:
            return
        self._stopped = True
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if self.connection_file is not None:
            remove_connection_file(self.connection_file)
        for cleanup in reversed(self._cleanups):
            try:
                cleanup()
            except Exception:
                log.exception("stopping the kernel's MCP server: a cleanup step failed")
        self._cleanups.clear()

    def describe(self) -> str:
        """The text `%mcp serve` prints: endpoint and client configurations, never the token (outputs are saved)."""
        assert self.url is not None
        folder = self.connection_file.parent if self.connection_file is not None else None
        custom_dir = str(folder) if folder is not None and not _same_dir(folder, default_runtime_dir()) else None
        text = format_client_config(
            url=self.url,
            token=self.token,
            kernel_id=self.kernel_id,
            connection_file=str(self.connection_file) if self.connection_file else None,
            stdio_proxy=self.options.stdio_proxy,
            runtime_dir=custom_dir,
        )
        magics = "every magic" if self.options.all_magics else "the kernel's magics (the `magic` prompt names them all)"
        served = [f"{len(self.state.cells.names())} %%prompt prompt(s)", magics]
        if self.notebook is not None:
            served.append(f"the notebook {self.notebook}")
        if self.options.live:
            served.append(f"live magics: {', '.join(self.options.live)}")
        lines = [f"Serving {', '.join(served)}."]
        for title in self.magics.code_live():
            lines.append(
                f"warning: --live {title} runs code: any client holding the token can run arbitrary code "
                "in this kernel through it"
            )
        unknown = self.magics.unknown_live()
        if unknown:
            lines.append(f"warning: --live names no magic of this kernel (yet): {', '.join(unknown)}")
        return "\n".join([*lines, text])
