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
timeouts apply. Processes share no handshake sessions: with more than one,
set `MCP_NOTEBOOK_STATELESS=1` (docs/deployment.md says why). A variable with a
bad value (`MCP_NOTEBOOK_POLL must be at least 0.1 seconds, got '1e-300'`)
stops the worker with one line and exit code 3: uvicorn's and gunicorn's code
for a worker that cannot start, which they do not restart.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from . import settings as declared
from .service import ServiceSettings
from .transports.limits import HttpLimits

if TYPE_CHECKING:
    from .transports.gate import AccessGate

__all__ = ["ServeSettings", "create_app"]

PROG: Final = "mcp-notebook"
_STARTUP_FAILURE: Final = 3  # uvicorn's exit code for a worker that cannot start: it stops, not restarts
_HTTP_OPTIONS: Final = ("host", "port", "token", "token_hint", "allowed_hosts", "stateless", "worker_dir")
_ENV_TOKEN_HINT: Final = f"the token in ${declared.option('token').env}, which this server was started with"


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """What one HTTP server process serves and how; the CLI and the environment both fill it (`settings.py`)."""

    service: ServiceSettings
    host: str = "127.0.0.1"
    port: int | None = None  # None: the port each request arrived on
    token: str | None = None
    token_hint: str | None = None  # how this server was given its token, in its 401's words (None: the environment)
    allowed_hosts: tuple[str, ...] = ()
    stateless: bool = False
    limits: HttpLimits = field(default_factory=HttpLimits)
    worker_dir: str | None = None  # set by `serve --workers N`: where its workers agree which one reports

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServeSettings:
        """Settings from `MCP_NOTEBOOK_PATHS` (required; `os.pathsep`-separated) and the optional variables."""
        values = declared.from_env(_HTTP_OPTIONS, environ)
        values.setdefault("host", declared.option("host").default_on(declared.ENV))
        return cls(service=ServiceSettings.from_env(environ), limits=HttpLimits.from_env(environ), **values)

    def to_env(self) -> dict[str, str]:
        """The variables `from_env` reads back into these settings (for worker processes)."""
        return {
            **self.service.to_env(),
            **declared.to_env({name: getattr(self, name) for name in _HTTP_OPTIONS}),
            **self.limits.to_env(),
        }


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

    from .service import NotebookService
    from .sources.start_report import claim_the_report
    from .transports.hosts import HostAllowList
    from .transports.http import create_http_app
    from .transports.limits import GuardedHttpToolsProtocol
    from .transports.uvicorn_seam import protect_loading_config

    if settings is None:
        try:
            settings = ServeSettings.from_env()
        except ValueError as error:  # a bad variable: one line, as `serve` says it, and no restart
            _say(str(error))
            raise SystemExit(_STARTUP_FAILURE) from None
    service = NotebookService(settings.service)

    def print_summary(lines: list[str]) -> None:
        for line in lines:
            _say(line)

    report = on_indexed or print_summary
    # One summary, before the URL line: of `--workers N`, the first worker's; each problem in it once.
    reporting = claim_the_report(settings.worker_dir)

    async def index() -> None:
        lines = await service.start_in_thread(report=reporting)
        if reporting:
            report(lines)

    async def close_at_shutdown() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):  # the index is written and closed before the worker exits
                await service.close_in_thread()

    known_port = settings.port is not None
    gate = create_http_app(
        service.server,
        allowed_hosts=HostAllowList.for_bind(settings.host, settings.port or 0, settings.allowed_hosts)
        if known_port
        else None,
        token=settings.token,
        token_hint=settings.token_hint or _ENV_TOKEN_HINT,  # without the CLI's word, it came from the environment
        limits=settings.limits,
        stateless=settings.stateless,
        prepare=index,
        tasks=[service.watch, close_at_shutdown],
        on_ready=on_ready,
    )
    if settings.port is None:
        gate.hosts_for_port = lambda port: HostAllowList.for_bind("0.0.0.0", port, settings.allowed_hosts)
    protect_loading_config(GuardedHttpToolsProtocol.bounded_by(settings.limits))
    return gate
