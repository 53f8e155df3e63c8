"""A real `jupyter server` with the mcp_notebook extension enabled as an install enables it, read line by line.

The extension is enabled by the very file the package installs
(`jupyter-config/jupyter_server_config.d/mcp_notebook.json`), found through
`JUPYTER_CONFIG_PATH`: an editable install does not copy data files. Every
other Jupyter directory is private to the test. Waits have deadlines and wait
on log lines or responses, never on time.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from client_harness import stop_process

__all__ = [
    "DEADLINE",
    "REPO",
    "JupyterServer",
    "jupyter_env",
    "wait_for_log_line",
]

REPO = Path(__file__).resolve().parents[2]
CONFIG_PATH = REPO / "jupyter-config"
DEADLINE = 90.0  # a Jupyter server on a busy 2-core machine can take tens of seconds to start
MCP_URL_LINE = re.compile(r"MCP prompts served at (\S+)")
BIN = Path(sys.executable).parent

# Server extensions other packages in this environment enable: not needed here, and slow to load.
_OTHERS_OFF = {
    name: False for name in ("jupyterlab", "jupyter_lsp", "notebook", "notebook_shim", "nbclassic", "jupyterlab_chat")
}


def jupyter_env(home: Path, *, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment whose Jupyter and IPython directories are all under `home` (created)."""
    dirs = {name: home / name for name in ("config", "data", "runtime", "ipython")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    config = dirs["config"] / "jupyter_server_config.json"
    if not config.exists():
        config.write_text(json.dumps({"ServerApp": {"jpserver_extensions": _OTHERS_OFF}}), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "JPY_"))}
    env |= {
        "JUPYTER_CONFIG_PATH": str(CONFIG_PATH),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["ipython"]),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONUNBUFFERED": "1",
    }
    return env | dict(extra or {})


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


class JupyterServer:
    """`jupyter server` on 127.0.0.1 (a free port) serving `root`, token `token`; `url` is its MCP endpoint."""

    def __init__(
        self,
        root: Path,
        home: Path,
        *,
        token: str = "jupyter-test-token",
        args: Sequence[str] = (),
        wait_for_mcp: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.token = token
        argv = [
            str(BIN / "jupyter-server"),
            "--no-browser",
            "--ip=127.0.0.1",
            "--port=0",
            "--port-retries=0",
            f"--ServerApp.root_dir={root}",
            f"--IdentityProvider.token={token}",
            *(["--allow-root"] if os.geteuid() == 0 else []),
            *args,
        ]
        self.process = subprocess.Popen(
            argv,
            cwd=home,
            env=jupyter_env(home, extra=env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        assert self.process.stdout is not None
        threading.Thread(target=_pump, args=(self.process.stdout, self.lines), daemon=True).start()
        self.url = ""
        if wait_for_mcp:
            try:
                match = MCP_URL_LINE.search(self.wait_for_line(MCP_URL_LINE))
            except BaseException:
                self.close()
                raise
            assert match is not None
            self.url = match.group(1)

    @property
    def base(self) -> str:
        """The server's own URL (scheme, host, port, base URL), ending in '/'."""
        return self.url.removesuffix("mcp")

    def wait_for_line(self, pattern: re.Pattern[str] | str, timeout: float = DEADLINE) -> str:
        """The first log line matching `pattern` (a regex), waiting for it within `timeout`."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        return wait_for_log_line(
            self, regex.search, f"no log line matching {regex.pattern!r}", "jupyter server", timeout
        )

    def auth(self) -> dict[str, str]:
        """The header Jupyter's other API clients send."""
        return {"Authorization": f"token {self.token}"}

    def close(self) -> int:
        code = stop_process(self.process, timeout=DEADLINE)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code

    def __enter__(self) -> JupyterServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_for_log_line(
    server: Any, found: Callable[[str], object], missing: str, name: str, timeout: float = DEADLINE
) -> str:
    """The first line of `server`'s log (its `seen` lines, then its `lines` queue, None at its end) that
    `found` accepts, waiting within `timeout`; fails with the log when it does not come or the process ends."""
    for line in server.seen:
        if found(line):
            return str(line)
    while True:
        try:
            line = server.lines.get(timeout=timeout)
        except queue.Empty:
            log = "\n".join(server.seen)
            raise AssertionError(f"{missing}; the log:\n{log}") from None
        if line is None:
            log = "\n".join(server.seen)
            raise AssertionError(f"{name} exited ({server.process.poll()}); the log:\n{log}")
        server.seen.append(line)
        if found(line):
            return str(line)
