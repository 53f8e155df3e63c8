"""The ASGI application factory: `mcp_notebook.asgi:create_app`, for any ASGI server and process manager.

    MCP_NOTEBOOK_PATHS=/srv/prompts uvicorn --factory mcp_notebook.asgi:create_app --workers 4
    MCP_NOTEBOOK_PATHS=/srv/prompts gunicorn -w 4 -k uvicorn.workers.UvicornWorker 'mcp_notebook.asgi:create_app()'
    MCP_NOTEBOOK_PATHS=/srv/prompts hypercorn --workers 4 'mcp_notebook.asgi:create_app()'

Each process builds its own application from the environment (every
variable is listed in `ServeSettings.from_env` and docs/deployment.md),
indexes the folder during start-up (so it accepts requests only once it has
prompts to serve) and watches the folder, so a save reaches the clients of
every process. Cursors are derived from the listing (`protocol/paging.py`),
so any process accepts a cursor another one issued.

Under uvicorn the factory also puts the connection limits in place
(`transports/limits.py`: header timeout, connection cap, absolute-form
targets), which uvicorn's own protocol lacks; under other servers, their own
timeouts apply. `MCP_NOTEBOOK_WORKER_DIR` must be a folder of this user's
with mode 0700 (`transports/affinity.py`); anything else stops the worker
with one line.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .sources.index import CACHE_DIR_ENV, default_cache_dir
from .transports.limits import ENV_PREFIX, HttpLimits

if TYPE_CHECKING:
    from .transports.http import AccessGate

__all__ = ["ServeSettings", "create_app"]

PROG: Final = "mcp-notebook"
_STARTUP_FAILURE: Final = 3  # uvicorn's exit code for a worker that cannot start: it stops, not restarts
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def _flag(environ: Mapping[str, str], name: str, default: bool) -> bool:
    text = environ.get(ENV_PREFIX + name, "").strip().lower()
    if not text:
        return default
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise ValueError(f"{ENV_PREFIX}{name} must be 1 or 0 (true/false), got {text!r}")


def _number(environ: Mapping[str, str], name: str, default: int) -> int:
    text = environ.get(ENV_PREFIX + name, "").strip()
    try:
        return int(text) if text else default
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name} must be a whole number, got {text!r}") from None


def _poll_seconds(environ: Mapping[str, str]) -> float | None:
    from .sources.polling import poll_interval_from_env  # anyio: not for `--help`

    return poll_interval_from_env(environ)


_ENV_TOKEN_HINT: Final = f"the token in ${ENV_PREFIX}TOKEN, which this server was started with"


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """What one HTTP server process serves and how; the CLI and the environment both fill it."""

    paths: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int | None = None  # None: the port each request arrived on
    token: str | None = None
    token_hint: str | None = None  # how this server was given its token, in its 401's words (None: the environment)
    allowed_hosts: tuple[str, ...] = ()
    stateless: bool = False
    page_size: int = 500
    name: str = PROG
    watch: bool = True
    poll: float | None = None  # seconds between looks for changes instead of inotify; None: where inotify is blind
    limits: HttpLimits = field(default_factory=HttpLimits)
    worker_dir: str | None = None  # set by `serve --workers N`: where sibling workers route sessions
    index_folder: str | None = None  # the persistent notebook index (sources/index.py); None: none

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServeSettings:
        """Settings from `MCP_NOTEBOOK_PATHS` (required; `os.pathsep`-separated) and the optional variables."""
        environ = os.environ if environ is None else environ
        paths = tuple(p for p in environ.get(ENV_PREFIX + "PATHS", "").split(os.pathsep) if p.strip())
        if not paths:
            raise ValueError(f"set {ENV_PREFIX}PATHS to the notebooks or folders to serve")
        port = environ.get(ENV_PREFIX + "PORT", "").strip()
        hosts = environ.get(ENV_PREFIX + "ALLOWED_HOSTS", "")
        return cls(
            paths=paths,
            host=environ.get(ENV_PREFIX + "HOST", "").strip() or "0.0.0.0",
            port=_number(environ, "PORT", 0) if port else None,
            token=environ.get(ENV_PREFIX + "TOKEN") or None,
            token_hint=environ.get(ENV_PREFIX + "TOKEN_HINT") or None,
            allowed_hosts=tuple(h.strip() for h in hosts.split(",") if h.strip()),
            stateless=_flag(environ, "STATELESS", False),
            page_size=_number(environ, "PAGE_SIZE", 500),
            name=environ.get(ENV_PREFIX + "NAME", "").strip() or PROG,
            watch=_flag(environ, "WATCH", True),
            poll=_poll_seconds(environ),
            limits=HttpLimits.from_env(environ),
            worker_dir=environ.get(ENV_PREFIX + "WORKER_DIR") or None,
            index_folder=str(default_cache_dir(environ)) if _flag(environ, "CACHE", True) else None,
        )

    def to_env(self) -> dict[str, str]:
        """The variables `from_env` reads back into these settings (for worker processes)."""
        env = {
            ENV_PREFIX + "PATHS": os.pathsep.join(os.path.abspath(p) for p in self.paths),
            ENV_PREFIX + "HOST": self.host,
            ENV_PREFIX + "ALLOWED_HOSTS": ",".join(self.allowed_hosts),
            ENV_PREFIX + "STATELESS": "1" if self.stateless else "0",
            ENV_PREFIX + "PAGE_SIZE": str(self.page_size),
            ENV_PREFIX + "NAME": self.name,
            ENV_PREFIX + "WATCH": "1" if self.watch else "0",
            **self.limits.to_env(),
        }
        if self.poll is not None:
            env[ENV_PREFIX + "POLL"] = repr(self.poll)
        if self.port is not None:
            env[ENV_PREFIX + "PORT"] = str(self.port)
        if self.token:
            env[ENV_PREFIX + "TOKEN"] = self.token
        if self.token_hint:
            env[ENV_PREFIX + "TOKEN_HINT"] = self.token_hint
        if self.worker_dir:
            env[ENV_PREFIX + "WORKER_DIR"] = self.worker_dir
        env[ENV_PREFIX + "CACHE"] = "1" if self.index_folder else "0"
        if self.index_folder:
            env[CACHE_DIR_ENV] = self.index_folder
        return env


def _say(line: str) -> None:
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)


def create_app(
    settings: ServeSettings | None = None,
    *,
    on_indexed: Callable[[list[str]], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> AccessGate:
    """The ASGI application serving `settings` (by default read from the environment).

    `on_indexed(lines)` gets the summary once the folder is indexed (by default
    it is printed on stderr); `on_ready()` is called once requests are served.
    """
    import anyio

    from .protocol.server import create_server
    from .registry import PromptRegistry
    from .sources.folder import NotebookFolderSource
    from .sources.start_report import StartReport, claim_the_report, summary_lines, then_for
    from .transports.affinity import worker_dir_problem
    from .transports.hosts import HostAllowList
    from .transports.http import create_http_app
    from .transports.limits import GuardedHttpToolsProtocol
    from .transports.uvicorn_seam import protect_loading_config

    settings = settings or ServeSettings.from_env()
    if settings.worker_dir and (problem := worker_dir_problem(Path(settings.worker_dir))) is not None:
        _say(problem)
        raise SystemExit(_STARTUP_FAILURE)
    protect_loading_config(GuardedHttpToolsProtocol, mcp_limits=settings.limits)
    registry = PromptRegistry()
    index_folder = Path(settings.index_folder) if settings.index_folder else None
    source = NotebookFolderSource(list(settings.paths), registry, index_folder=index_folder)
    server = create_server(
        registry, resources=source, read_file=source.read_file, page_size=settings.page_size, name=settings.name
    )

    def print_summary(lines: list[str]) -> None:
        for line in lines:
            _say(line)

    report = on_indexed or print_summary
    # One summary, before the URL line: of `--workers N`, the first worker's; each problem in it once.
    reporting, start = claim_the_report(settings.worker_dir), StartReport()

    async def index() -> None:
        await anyio.to_thread.run_sync(source.first_scan)
        if reporting:
            report(summary_lines(registry, source, then=then_for(watching=settings.watch)))
        start.summarized()
        if not settings.watch:
            start.end()

    async def close_at_shutdown() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            start.end()  # if it stops before the watch was in place
            with anyio.CancelScope(shield=True):  # the index is written and closed before the worker exits
                await anyio.to_thread.run_sync(source.close)

    watch = functools.partial(source.watch, ready=start.end, poll=settings.poll)
    known_port = settings.port is not None
    gate = create_http_app(
        server,
        allowed_hosts=HostAllowList.for_bind(settings.host, settings.port or 0, settings.allowed_hosts)
        if known_port
        else None,
        token=settings.token,
        token_hint=settings.token_hint or _ENV_TOKEN_HINT,  # without the CLI's word, it came from the environment
        limits=settings.limits,
        stateless=settings.stateless,
        prepare=index,
        tasks=[*([watch] if settings.watch else []), close_at_shutdown],
        on_ready=on_ready,
        worker_dir=Path(settings.worker_dir) if settings.worker_dir else None,
    )
    if settings.port is None:
        gate.hosts_for_port = lambda port: HostAllowList.for_bind("0.0.0.0", port, settings.allowed_hosts)
    return gate
