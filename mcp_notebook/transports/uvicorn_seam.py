"""Every reach into uvicorn's internals, in one place, each watched by a canary test.

uvicorn's public API is `Config`, `Server.serve/run` and its command line;
the limits need more than that, so these private parts are used, with the
uvicorn versions they are tested with in pyproject.toml:

* `HttpToolsProtocol` (`uvicorn.protocols.http.httptools_impl`): subclassed by
  `limits.GuardedHttpToolsProtocol` for the header timeout and size, the
  connection cap and the absolute-form rule (uvicorn has no option for
  these with httptools): its `url`, `headers`, `transport`, `loop`,
  `server_state` attributes and the parser callbacks it extends;
* `Server.main_loop`, `Server.on_tick` and the `should_exit` attribute:
  `ticks.SleepingServer` wakes once a second instead of ten times;
* `Multiprocess` (`uvicorn.supervisors.multiprocess`), its `init_processes`,
  `processes`, `should_exit` and `Process.wait_until_ready`: `workers.py`;
  there too, each worker's own socket: every place that starts a worker
  (`init_processes`, `keep_subprocess_alive`, `restart_all`, `handle_ttin`)
  reads `self.sockets` as `Process(self.config, self.sockets)`;
* `Config.load` calling the application factory (`protect_loading_config`):
  under `uvicorn --factory mcp_notebook.asgi:create_app`, whose command line
  cannot name a protocol class, the factory swaps uvicorn's protocol for the
  guarded one, so the limits hold there too.

`missing_touchpoints()` names whichever of these a uvicorn release moved; the
canary tests (tests/transports/test_uvicorn_seam.py) fail on it.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Final

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.supervisors.multiprocess import Multiprocess, Process

__all__ = [
    "TESTED_VERSIONS",
    "HttpToolsProtocol",
    "Multiprocess",
    "missing_touchpoints",
    "protect_loading_config",
]

TESTED_VERSIONS: Final = ">=0.51,<0.55"
"""The uvicorn versions these touchpoints are tested with (kept equal to the pin in pyproject.toml)."""

_PROTOCOL_PARTS: Final = (
    "on_message_begin",
    "on_url",
    "on_header",
    "on_headers_complete",
    "on_body",
    "on_message_complete",
    "on_response_complete",
    "shutdown",
    "connection_made",
    "connection_lost",
    "data_received",
    "send_400_response",
    "timeout_keep_alive_handler",
)

# What the guarded protocol reads of a connection's state, as uvicorn sets it up.
_PROTOCOL_STATE: Final = ("headers", "transport", "loop", "server_state")


def missing_touchpoints() -> list[str]:
    """The private parts of uvicorn this project uses that the installed uvicorn lacks (empty: all there)."""
    missing = [
        f"HttpToolsProtocol.{name}" for name in _PROTOCOL_PARTS if not callable(getattr(HttpToolsProtocol, name, None))
    ]
    setup = inspect.getsource(HttpToolsProtocol.__init__)
    missing += [
        f"HttpToolsProtocol.{name}" for name in _PROTOCOL_STATE if not re.search(rf"self\.{name}\b(:[^=\n]*)? =", setup)
    ]
    for name in ("main_loop", "on_tick"):
        if not callable(getattr(uvicorn.Server, name, None)):
            missing.append(f"Server.{name}")
    if "should_exit" not in vars(uvicorn.Server(uvicorn.Config(app="unused:app"))):
        missing.append("Server.should_exit")
    for name in ("init_processes", "keep_subprocess_alive", "restart_all", "handle_ttin"):
        method = getattr(Multiprocess, name, None)
        if not callable(method):
            missing.append(f"Multiprocess.{name}")
        elif name != "init_processes" and "Process(self.config, self.sockets)" not in inspect.getsource(method):
            missing.append(f"Multiprocess.{name} starts a worker with Process(self.config, self.sockets)")
    if "Process(self.config, self.sockets)" not in inspect.getsource(Multiprocess.init_processes):
        missing.append("Multiprocess.init_processes starts each worker with Process(self.config, self.sockets)")
    if "Process(" in inspect.getsource(Multiprocess.run):
        missing.append("Multiprocess.run starts a worker itself")
    if not callable(getattr(Process, "wait_until_ready", None)):
        missing.append("Process.wait_until_ready")
    if "http_protocol_class" not in inspect.getsource(uvicorn.Config.load):
        missing.append("Config.load sets http_protocol_class before calling the factory")
    return missing


def protect_loading_config(protocol: type[Any]) -> bool:
    """When uvicorn's `Config.load` is calling our factory, serve its connections with `protocol`.

    uvicorn picks the protocol class before it loads the application, and
    its command line cannot name one of ours; so the factory, called from
    `Config.load`, finds that `Config` on the call stack and replaces an
    httptools protocol with `protocol`. False when not loaded by uvicorn
    (gunicorn, hypercorn, a test) or when uvicorn was told to use h11.
    """
    frame = inspect.currentframe()
    try:
        while frame is not None:
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, uvicorn.Config) and frame.f_code.co_name == "load":
                current = getattr(candidate, "http_protocol_class", None)
                # "auto" is httptools, a dependency of ours; h11, when asked for, is left alone.
                if not (isinstance(current, type) and issubclass(current, HttpToolsProtocol)):
                    return False
                candidate.http_protocol_class = protocol
                return True
            frame = frame.f_back
        return False
    finally:
        del frame
