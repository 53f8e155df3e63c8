"""One kernel's running MCP server: what `%mcp serve` starts and `%mcp stop` stops.

A `KernelServer` serves the kernel's prompts (its `%%prompt` cells, the
notebook file it is attached to, its magics) over Streamable HTTP on
127.0.0.1, on the background runtime's event loop (never a subprocess),
behind a random bearer token, and writes the connection file that tells
editors and `mcp-notebook connect` where it listens. The next server of the
same kernel takes the same port (when free) and token, so clients configured
from `%mcp serve`'s output keep working; the notebook of a Jupyter session is
followed when it is renamed (`session_path`).

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

import atexit
import contextlib
import logging
import os
import secrets
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..discovery import (
    is_default_runtime_dir,
    read_connection_file,
    register_connection_file,
    remove_connection_file,
    write_connection_file,
)
from ..exceptions import ResourceError, VariableArgumentError
from ..models import CompletionResult, EmbeddedResource, PromptSpec, RenderedPrompt, ResourceInfo, Skill
from ..registry import PromptRegistry
from ..rendering import render_prompt
from ..sources.kernel import KernelPromptSource, variable_references, variable_types
from ..sources.live_policy import refusal_reason
from ..sources.magics import (
    Listing,
    MagicPromptSource,
    build_live_invocation,
    render_magic_documentation,
    to_live_result,
)
from ..worker_threads import run_off_loop
from .client_config import client_config
from .display import ServeReport
from .kernel_endpoint import HttpEndpoint, start_endpoint, start_repeating, start_watch
from .live_magics import LiveMagicCall, MagicExecutionError, MainThreadScheduler, create_kernel_scheduler
from .loaded import wait_for_sdk_warm_up
from .namespace import NamespaceSnapshot, NamespaceWatcher, read_variables
from .session_path import SessionLookup, session_notebook

if TYPE_CHECKING:
    from ..client import PromptClient
    from ..sources.skills import SkillCatalog
    from ..sources.start_report import StartSummary

__all__ = ["LIVE_MAGIC_TIMEOUT", "KernelPromptState", "KernelServer", "ServeOptions"]

log = logging.getLogger(__name__)

LIVE_MAGIC_TIMEOUT = 60.0  # seconds a client waits for a live magic (it may queue behind a running cell)
_STOP_GRACE = 5.0  # seconds a live magic that ran past its limit gets to end once interrupted
_CLIENT_CLOSE_TIMEOUT = 10.0
_OWN_CLIENT_NAME = "this kernel"  # how the session's own forms name this server
FOLLOW_INTERVAL = 2.0  # seconds between two looks at the Jupyter session's notebook path (renames)


@dataclass(eq=False)
class KernelPromptState:
    """What one shell publishes: its registry, its `%%prompt` prompts, and its server while one runs."""

    registry: PromptRegistry
    cells: KernelPromptSource
    server: KernelServer | None = None
    current_cell_id: str | None = None
    # The last server's port and token: the next `%mcp serve` takes them again (the port when it is free), so
    # clients configured from its output still connect after `%mcp stop` and `%mcp serve`.
    last_port: int | None = None
    last_token: str | None = field(default=None, repr=False)
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
    magics: bool = False  # list the kernel's magics (`magic` and a few common ones), not only the live ones
    all_magics: bool = False  # list a prompt per magic (implies `magics`)
    live_timeout: float = LIVE_MAGIC_TIMEOUT
    new_token: bool = False  # a fresh token, not the last server's (clients configured with it are shut out)


def _kernel_id() -> str:
    """The kernel's id, from its connection file name (`kernel-<id>.json`); a fresh id outside a kernel."""
    with contextlib.suppress(Exception):
        from ipykernel.connect import get_connection_file

        stem = Path(get_connection_file()).stem
        if stem.startswith("kernel-") and len(stem) > len("kernel-"):
            return stem.removeprefix("kernel-")
    return uuid.uuid4().hex


def _kernel_notebook(shell: Any, requested: str | None, session: SessionLookup) -> Path | None:
    """The notebook file this kernel belongs to: `--notebook`, else the one its Jupyter server names."""
    if requested:
        path = Path(requested).expanduser()
        if not path.is_file():
            raise UsageError(f"--notebook: no such file: {requested}")
        return path.resolve()
    if session.found:  # the sessions API knows the notebook's name now, after any rename
        return session.path if session.path is not None and session.path.is_file() else None
    # jupyter-server starts a notebook's kernel with JPY_SESSION_NAME set to the notebook's path (never updated).
    for candidate in (os.environ.get("JPY_SESSION_NAME"), shell.user_ns.get("__session__")):
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = Path(candidate).expanduser()
            if not path.is_absolute():
                path = Path.cwd() / path
            if path.is_file():
                return path.resolve()
    return None


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
        self.token: str | None = None
        if options.token:
            kept = None if options.new_token else state.last_token
            self.token = kept or secrets.token_urlsafe(32)
        self.notes: list[str] = []  # what the user should know about this serve (a port that changed)
        self.url: str | None = None
        self.connection_file: Path | None = None
        self.notebook: Path | None = None
        listing: Listing = "all" if options.all_magics else "curated" if options.magics else "live"
        self.magics = MagicPromptSource(state.registry, live=options.live, listing=listing)
        self._namespace: NamespaceWatcher | None = None
        self._scheduler: MainThreadScheduler | None = None
        self._folder: Any = None
        self._skills: SkillCatalog | None = None  # the served notebook's skills (a notebook tagged as a skill)
        self.summary: StartSummary | None = None  # the start-up summary of the served notebook
        self._follow_session = False
        self._notebook_lock = threading.RLock()
        self._notebook_cleanups: list[Callable[[], None]] = []
        self._endpoint: HttpEndpoint | None = None
        self._own_client: PromptClient | None = None
        self._cleanups: list[Callable[[], None]] = []
        self._stopped = False
        self._created: float | None = None  # when the connection file was first written (kept on rewrites)

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
            await run_off_loop(call.finished.wait, _STOP_GRACE, abandon_on_cancel=True)
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
        session = SessionLookup(found=False) if self.options.notebook else session_notebook(self.kernel_id)
        self.notebook = _kernel_notebook(self.shell, self.options.notebook, session)
        # A notebook of a Jupyter session is followed through renames; then the resources are always offered.
        self._follow_session = session.found
        self._cleanups.append(self._drop_notebook)
        if self.notebook is not None:
            self._serve_notebook(self.notebook)
        offers_files = self._folder is not None or self._follow_session
        server = _create_prompt_server(
            self.state.registry,
            render=self.render,
            complete=self.complete,
            resources=_CurrentNotebook(self) if offers_files else None,
            read_file=self._read_file if offers_files else None,
            skills=self._read_skill if offers_files else None,
            name=f"mcp-notebook kernel {self.kernel_id[:8]}",
            instructions="Prompts published by a live Jupyter kernel: its %%prompt cells, its notebook, its magics.",
        )
        hint = (
            "the token of this kernel's MCP server (%mcp serve): it is in the kernel's connection file; "
            f"'mcp-notebook connect --kernel {self.kernel_id} --print-token' prints it. A client configured for "
            "an earlier kernel (before a restart, or --new-token) must be configured again with the lines "
            "%mcp serve printed"
        )
        self._endpoint = self._listen(server, hint)
        self._cleanups.append(self._endpoint.stop)
        self.url = self._endpoint.url
        self.state.last_port = _port_of(self.url)
        self.state.last_token = self.token or self.state.last_token
        self._write_connection_file()
        assert self.connection_file is not None
        try:
            register_connection_file(self.connection_file)
        except OSError as error:  # discovery from other shells suffers, serving does not
            log.warning("could not leave a pointer to %s in the state directory: %s", self.connection_file, error)
        atexit.register(self.stop)
        if self._follow_session:
            self._cleanups.append(start_repeating(self.follow_session, FOLLOW_INTERVAL))

    def _listen(self, server: Any, hint: str) -> HttpEndpoint:
        """Listen on `--port`, else on the last server's port when it is free, else on a free one."""
        kept = self.state.last_port if self.options.port == 0 else None
        if kept is not None:
            try:
                return start_endpoint(server, port=kept, token=self.token, token_hint=hint)
            except OSError:
                self.notes.append(
                    f"The last server's port {kept} is taken now, so the port changed: "
                    "configure your clients again with the lines below."
                )
        return start_endpoint(server, port=self.options.port, token=self.token, token_hint=hint)

    def _write_connection_file(self) -> None:
        assert self.url is not None
        created = None if self.connection_file is None else self._created
        self.connection_file = write_connection_file(
            url=self.url,
            token=self.token,
            kernel_id=self.kernel_id,
            notebook_path=str(self.notebook) if self.notebook is not None else None,
            created=created,
        )
        if created is None:
            connection = read_connection_file(self.connection_file)
            self._created = connection.created if connection is not None else None

    # -- the notebook, followed through renames -------------------------------------------------------------------

    def follow_session(self) -> None:
        """Serve the notebook the Jupyter session names now, when it was renamed (called off the main thread)."""
        if self._stopped:
            return
        session = session_notebook(self.kernel_id)
        if not session.found:
            return  # the server is gone or busy: keep what is served
        path = session.path if session.path is not None and session.path.is_file() else None
        if path is None and session.path is not None:
            return  # between JupyterLab's rename of the file and of the session: look again later
        with self._notebook_lock:
            if self._stopped or path == self.notebook:
                return
            log.info("the notebook was renamed: %s -> %s", self.notebook, path)
            self._drop_notebook()
            self.notebook = path
            self._write_connection_file()  # first: a client told of the new prompts finds the new name too
            if path is not None:
                self._serve_notebook(path)

    def _read_file(self, spec: PromptSpec, path: str) -> bytes:
        folder = self._folder
        if folder is None:
            raise ResourceError(path, f"Prompt {spec.name!r} embeds the file {path!r}, but no notebook is served")
        data: bytes = folder.read_file(spec, path)
        return data

    def _read_skill(self, skill: Skill, path: str) -> bytes:
        """A file of a skill of the served notebook (a notebook tagged as a skill), as the service reads it."""
        catalog = self._skills
        if catalog is None:
            raise ResourceError(skill.uri, "no notebook is served, so no skill is")
        return catalog.read_bytes(skill, path)

    def _serve_notebook(self, path: Path) -> None:
        from ..service import NotebookService, ServiceSettings

        with self._notebook_lock:
            # The kernel's protocol server also serves its magics and %%prompt cells: the notebook's prompts join
            # them in the kernel's registry; the index, the first scan and the summary are every host's.
            service = NotebookService(ServiceSettings.for_paths((str(path),)), registry=self.state.registry)
            service.start()
            self.summary = service.summary
            folder = service.source
            self._folder = folder
            self._skills = service.skills
            self._notebook_cleanups.append(service.close)
            self._notebook_cleanups.append(lambda: self.state.registry.update(dict.fromkeys(folder.notebooks)))
            self._notebook_cleanups.append(start_watch(service))

    def _drop_notebook(self) -> None:
        """Stop watching the served notebook and withdraw its prompts."""
        with self._notebook_lock:
            cleanups, self._notebook_cleanups = self._notebook_cleanups, []
            self._folder = None
            self._skills = None
            for cleanup in reversed(cleanups):
                try:
                    cleanup()
                except Exception:
                    log.exception("withdrawing the kernel's notebook: a cleanup step failed")

    def stop(self) -> None:
        """Stop serving: close the port, remove the connection file, withdraw magics and notebook prompts."""
        with self._notebook_lock:  # a rename being followed finishes first, and then none starts
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

    @property
    def custom_runtime_dir(self) -> str | None:
        """The connection file's folder when clients would not look there by default (`--runtime-dir`), else None."""
        folder = self.connection_file.parent if self.connection_file is not None else None
        return str(folder) if folder is not None and not is_default_runtime_dir(folder) else None

    def describe(self) -> ServeReport:
        """What `%mcp serve` shows: what is served, the endpoint and client configurations, never the token."""
        assert self.url is not None
        custom_dir = self.custom_runtime_dir
        config = client_config(
            url=self.url,
            token=self.token,
            kernel_id=self.kernel_id,
            connection_file=str(self.connection_file) if self.connection_file else None,
            stdio_proxy=self.options.stdio_proxy,
            runtime_dir=custom_dir,
            notebook=str(self.notebook) if self.notebook is not None else None,
        )
        served = [_cell_prompts(len(self.state.cells.names()))]
        if self.options.all_magics:
            served.append("every magic")
        elif self.options.magics:
            served.append("the kernel's magics (the `magic` prompt names them all)")
        if self.notebook is not None:
            # Its name only: this text is saved in the cell's output, and a full path says where the user's files are.
            served.append(f"the notebook {Path(self.notebook).name}")
        if self.options.live:
            served.append(f"live magics: {', '.join(self.options.live)}")
        if self.summary is not None and self.summary.skills:
            served.append(f"{self.summary.skills_counted} ({', '.join(self.summary.skills)})")
        warnings = [
            f"warning: --live {title} runs code: any client holding the token can run arbitrary code in this kernel "
            "through it"
            for title in self.magics.code_live()
        ]
        if self.summary is not None:  # what is wrong in the served notebook, as every host says it
            warnings.extend(self.summary.warnings)
        unknown = self.magics.unknown_live()
        if unknown:
            warnings.append(f"warning: --live names no magic of this kernel (yet): {', '.join(unknown)}")
        return ServeReport(f"Serving {', '.join(served)}.", tuple(warnings), config, tuple(self.notes))


def _cell_prompts(number: int) -> str:
    """`1 prompt from a %%prompt cell`, `2 prompts from %%prompt cells`, `no prompts from %%prompt cells`."""
    if number == 1:
        return "1 prompt from a %%prompt cell"
    return f"{number or 'no'} prompts from %%prompt cells"


def _port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


class _CurrentNotebook:
    """The resources of whichever notebook the kernel serves now (none between two, or before the first)."""

    def __init__(self, server: KernelServer) -> None:
        self._server = server

    def list_resources(self) -> Sequence[ResourceInfo]:
        folder = self._server._folder
        listing: Sequence[ResourceInfo] = folder.list_resources() if folder is not None else ()
        return listing

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        folder = self._server._folder
        if folder is None:
            raise ResourceError(uri, "no notebook is served by this kernel now")
        contents: Sequence[EmbeddedResource] = folder.read_resource(uri)
        return contents
