"""The commands that start the two servers under test, and the facts a benchmark report records.

Both servers are started the way a user starts them: ours through its console
script (`mcp-notebook serve FOLDER`), the baseline as a plain script. Both
run with the same interpreter, environment and working directory, and with
their bytecode compiled, as after an install (`pip` compiles what it
installs; a checkout under `PYTHONDONTWRITEBYTECODE` would otherwise compile
our edited modules again at every start and time that instead).
"""

from __future__ import annotations

import compileall
import datetime
import functools
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from mcp_notebook.sources.index import RACY_SECONDS

from .stdio_rpc import RawStdioClient

__all__ = [
    "BASELINE_SCRIPT",
    "ROOT",
    "baseline_command",
    "describe_environment",
    "ours_command",
    "wall_times",
    "warm_index",
]

ROOT = Path(__file__).resolve().parents[1]
BASELINE_SCRIPT = ROOT / "benchmarks" / "baseline_server.py"
_STARTUP = 60.0  # seconds a server may take to answer its first listing


@functools.cache
def _compile_bytecode() -> None:
    for package in ("mcp_notebook", "lsp_bridge", "benchmarks"):
        compileall.compile_dir(ROOT / package, quiet=2)


def ours_command(*args: str) -> list[str]:
    """`mcp-notebook ARGS...` through the console script installed next to this interpreter."""
    _compile_bytecode()
    script = Path(sys.executable).parent / "mcp-notebook"
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "mcp_notebook", *args]


def warm_index(folder: Path) -> Path:
    """A notebook index of `folder` beside it, holding every notebook, as any start after the first finds it.

    It waits, if need be, until the newest file of `folder` is old enough to be stored.

    Ours is measured as users run it: started before, so its start reads the index. A first start writes
    the index in the server's idle time, or, under load, some seconds later; that one-off write would
    otherwise fall into what is measured (at 500 prompts, about 12,000 instructions a request over
    2,000 requests)."""
    index = folder.parent / f"{folder.name}.index"
    if index.exists():  # warmed for an earlier server of this run
        return index
    # A file changed within the last RACY_SECONDS is not stored (a second write could keep its stamp).
    newest = max(entry.stat().st_ctime for entry in folder.rglob("*"))
    time.sleep(max(0.0, newest + RACY_SECONDS + 0.1 - time.time()))
    with RawStdioClient(ours_command("serve", str(folder), "--no-watch", "--cache-dir", str(index))) as client:
        client.open_session(timeout=_STARTUP)
        client.request("prompts/list", {}, timeout=_STARTUP)
    return index  # the server writes the index as it closes, at the latest


def baseline_command(folders: Sequence[Path]) -> list[str]:
    """The bare SDK `MCPServer` serving the same notebooks (see `baseline_server.py`)."""
    return [sys.executable, str(BASELINE_SCRIPT), *(str(f) for f in folders)]


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def describe_environment() -> dict[str, str]:
    """Date, machine, load and versions, as printed at the head of every report."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "load average (1, 5, 15 min)": _load(),
        "machine": f"{platform.machine()}, {os.cpu_count()} vCPU, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "mcp-notebook": _version("mcp-notebook"),
        "mcp": _version("mcp"),
        "ipython": _version("ipython"),
        "nbformat": _version("nbformat"),
        "watchfiles": _version("watchfiles"),
    }


def wall_times(argv: Sequence[str], repeats: int, *, env: dict[str, str] | None = None) -> list[float]:
    """Seconds from spawn to exit of `argv`, `repeats` times (after one unmeasured warm-up run)."""
    samples: list[float] = []
    for index in range(repeats + 1):
        began = time.perf_counter()
        subprocess.run(list(argv), cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if index:
            samples.append(time.perf_counter() - began)
    return samples
