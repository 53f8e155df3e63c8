"""How long a host's event loop stalls while a large notebook saved into the served folder is reloaded.

A reload reads, parses and builds a notebook; the loop that answers clients
must only switch meanwhile. Two hosts are measured, each while a probe asks
a cheap question every 10 ms and times every answer:

* `mcp-notebook serve FOLDER` over stdio, probed with `ping`;
* a Jupyter server with the mcp-notebook extension serving its root, probed
  with `GET /api/status` (its own REST API: every user, kernel and tab of that
  server waits on the same loop), and the same Jupyter server without the
  extension, as the floor.

The notebooks saved (atomically, as Jupyter saves: written beside, renamed
over) are a 40,000-cell notebook with one prompt, and a 60 MB data notebook
(one code cell with a large output) with no prompt at all. The figure is the
slowest answer in the few seconds after the save.

Targets: stdio `ping` within 200 ms during the 40,000-cell reload; the
Jupyter REST API within 150 ms for the 60 MB notebook and 250 ms for the
40,000-cell one. Example: `python -m benchmarks.bench_loop_stall`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .corpus import create_corpus
from .report import FigureTable, write_json
from .servers import ROOT, describe_environment, ours_command
from .stdio_rpc import RawStdioClient

__all__ = ["big_notebook", "data_notebook", "main"]

PROBE_INTERVAL = 0.010
STDIO_TARGET_MS = 200.0
JUPYTER_DATA_TARGET_MS = 150.0
JUPYTER_CELLS_TARGET_MS = 250.0
_JUPYTER_DEADLINE = 120.0
_RELOAD_DEADLINE = 60.0  # seconds past the window for a reload to be done


def big_notebook(cells: int) -> bytes:
    """A notebook of `cells` markdown cells, the last one a prompt (so its reload ends in `list_changed`)."""
    body = [{"cell_type": "markdown", "id": f"c{i}", "metadata": {}, "source": f"Note {i}."} for i in range(cells)]
    body.append(
        {"cell_type": "markdown", "id": "prompt", "metadata": {"mcp": {"prompt": "big"}}, "source": "Big {{x}}."}
    )
    return _notebook(body)


def data_notebook(megabytes: int) -> bytes:
    """A notebook holding one code cell whose output is `megabytes` MB of text, and no prompt."""
    text = ("0123456789abcdef" * 64 + "\n") * (megabytes * 1024 * 1024 // 1025)
    output = {"output_type": "stream", "name": "stdout", "text": text}
    return _notebook([{"cell_type": "code", "id": "data", "metadata": {}, "source": "print(data)", "outputs": [output],
                       "execution_count": 1}])  # fmt: skip


def _notebook(cells: list[dict[str, Any]]) -> bytes:
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    return json.dumps(document).encode()


def _save(folder: Path, name: str, content: bytes) -> float:
    """Save as Jupyter does (write beside, rename over); returns the time of the rename."""
    scratch = folder.parent / f".{name}.saving"
    scratch.write_bytes(content)
    at = time.perf_counter()
    os.replace(scratch, folder / name)
    return at


class _Probe:
    """Times a cheap question every 10 ms, from a thread of its own, until stopped."""

    def __init__(self, ask: Callable[[], object]) -> None:
        self._ask = ask
        self._stop = threading.Event()
        self.answers: list[tuple[float, float]] = []  # (asked at, seconds to the answer)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            asked = time.perf_counter()
            self._ask()
            self.answers.append((asked, time.perf_counter() - asked))
            self._stop.wait(PROBE_INTERVAL)

    def __enter__(self) -> _Probe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def slowest_after(self, start: float) -> float:
        """The slowest answer to a question asked after `start` or still waiting at it, in ms."""
        return 1000 * max((took for asked, took in self.answers if asked + took >= start), default=0.0)


# -- stdio ------------------------------------------------------------------------------------------------------


def _stdio_stall(
    corpus_folder: Path, content: bytes, name: str, window: float, env: dict[str, str], *, prompt: str | None
) -> float:
    """The slowest `ping` while `content` saved as `name` reloads; `prompt` must be served once it did."""
    with RawStdioClient(ours_command("serve", str(corpus_folder)), env=env) as client:
        client.open_session()
        client.request("prompts/list", {})
        lock = threading.Lock()

        def ping() -> None:
            with lock:
                client.request("ping", {}, timeout=60)

        with _Probe(ping) as probe:
            start = _save(corpus_folder, name, content)
            deadline = start + window
            while time.perf_counter() < deadline:
                time.sleep(0.05)
            # Probed until the reload is done (its prompt is served), however long past the window that is.
            while prompt is not None:
                with lock:
                    if prompt in _prompt_names(client):
                        break
                if time.perf_counter() > deadline + _RELOAD_DEADLINE:
                    raise RuntimeError(f"{name} was not reloaded within {_RELOAD_DEADLINE} s: no prompt {prompt!r}")
                time.sleep(0.05)
        (corpus_folder / name).unlink()
        return probe.slowest_after(start)


def _prompt_names(client: RawStdioClient) -> set[str]:
    names: set[str] = set()
    cursor: str | None = None
    while True:
        page = client.request("prompts/list", {"cursor": cursor} if cursor else {})
        names.update(listed["name"] for listed in page["prompts"])
        cursor = page.get("nextCursor")
        if not cursor:
            return names


# -- Jupyter server ---------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _jupyter(root: Path, home: Path, *, extension: bool) -> Iterator[tuple[int, str]]:
    port, token = _free_port(), "bench-token"
    config = home / "config"
    for part in ("config", "data", "runtime", "ipython"):
        (home / part).mkdir(parents=True, exist_ok=True)
    others = {name: False for name in ("jupyterlab", "jupyter_lsp", "notebook", "notebook_shim", "nbclassic")}
    extensions = {**others, "mcp_notebook": extension}
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"jpserver_extensions": extensions}}))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "JPY_"))}
    env |= {
        "JUPYTER_CONFIG_PATH": str(ROOT / "jupyter-config"),
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "MCP_NOTEBOOK_CACHE_DIR": str(home / "cache"),  # the extension's notebook index: this run's, not the user's
    }
    argv = [
        str(Path(sys.executable).parent / "jupyter-server"),
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    process = subprocess.Popen(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        _wait_ready(port, token, mcp=extension)
        yield port, token
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        log.close()


def _get(port: int, token: str, path: str, connection: http.client.HTTPConnection | None = None) -> int:
    own = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        own.request("GET", path, headers={"Authorization": f"token {token}"})
        response = own.getresponse()
        response.read()
        return response.status
    finally:
        if connection is None:
            own.close()


def _wait_ready(port: int, token: str, *, mcp: bool) -> None:
    deadline = time.monotonic() + _JUPYTER_DEADLINE
    while time.monotonic() < deadline:
        try:
            if _get(port, token, "/api/status") == 200:
                if not mcp:
                    return
                # The MCP endpoint has scanned its root once it answers a POST that is not JSON-RPC with 4xx.
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                headers = {"Authorization": f"token {token}", "Content-Type": "application/json",
                           "Accept": "application/json, text/event-stream"}  # fmt: skip
                body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                connection.request("POST", "/mcp", body=json.dumps(body), headers=headers)
                status = connection.getresponse().status
                connection.close()
                if status < 500:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the Jupyter server did not start")


def _jupyter_stall(root: Path, home: Path, content: bytes, name: str, window: float, *, extension: bool) -> float:
    with _jupyter(root, home, extension=extension) as (port, token):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        with _Probe(lambda: _get(port, token, "/api/status", connection)) as probe:
            start = _save(root, name, content)
            deadline = start + window
            while time.perf_counter() < deadline:
                time.sleep(0.05)
        connection.close()
        (root / name).unlink()
        return probe.slowest_after(start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=40_000, help="cells of the large notebook (default 40,000)")
    parser.add_argument("--megabytes", type=int, default=60, help="size of the data notebook (default 60 MB)")
    parser.add_argument("--window", type=float, default=4.0, help="seconds probed after each save (default 4)")
    parser.add_argument("--no-jupyter", action="store_true", help="measure the stdio server only")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    args = parser.parse_args(argv)

    cells, data = big_notebook(args.cells), data_notebook(args.megabytes)
    cells_label, data_label = f"{args.cells:,}-cell notebook", f"{args.megabytes} MB data notebook"
    table = FigureTable("Slowest answer while a saved notebook is reloaded (probed every 10 ms)")
    with tempfile.TemporaryDirectory(prefix="mcp-bench-stall-") as scratch:
        base = Path(scratch)
        corpus = create_corpus(base / "prompts", notebooks=20, prompts=5).folder
        env = {**os.environ, "MCP_NOTEBOOK_CACHE_DIR": str(base / "cache")}
        table.add(
            f"stdio `ping`, {cells_label} saved",
            _stdio_stall(corpus, cells, "big.ipynb", args.window, env, prompt="big"),
            target=STDIO_TARGET_MS,
        )
        data_stall = _stdio_stall(corpus, data, "data.ipynb", args.window, env, prompt=None)
        table.add(f"stdio `ping`, {data_label} saved", data_stall)
        if not args.no_jupyter:
            for extension in (True, False):
                who = "with the extension" if extension else "without it (the floor)"
                home = base / f"home-{extension}"
                table.add(
                    f"Jupyter `GET /api/status` {who}, {data_label} saved",
                    _jupyter_stall(corpus, home, data, "data.ipynb", args.window, extension=extension),
                    target=JUPYTER_DATA_TARGET_MS if extension else None,
                )
                table.add(
                    f"Jupyter `GET /api/status` {who}, {cells_label} saved",
                    _jupyter_stall(corpus, home, cells, "big.ipynb", args.window, extension=extension),
                    target=JUPYTER_CELLS_TARGET_MS if extension else None,
                )
    print(table)
    if args.json:
        write_json(args.json, [table], {"environment": describe_environment()})


if __name__ == "__main__":
    main()
