"""Client lines printed by `%mcp serve` stay good: port and token survive `%mcp stop` / `%mcp serve`, a failing
token command registers nothing, and a refused client is named in the log with the fix."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shlex
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from kernel_server_harness import Kernel, isolate_runtime_dir, running_kernel

from mcp_notebook.ipython.kernel_server import kernel_prompt_state, serve_command

pytestmark = pytest.mark.slow  # real HTTP servers (in this process)

BASH = "/bin/bash"


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_runtime_dir(tmp_path, monkeypatch)


@pytest.fixture
def kernel(runtime_dir: Path) -> Iterator[Kernel]:
    with running_kernel() as kernel:
        yield kernel


def _serve_printing(kernel: Kernel, *argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        kernel.main.run(lambda: serve_command(kernel.shell, argv, scheduler=kernel.scheduler))
    return out.getvalue()


def _port(url: str | None) -> int:
    assert url is not None
    return int(url.rsplit(":", 1)[1].split("/")[0])


def test_stop_and_serve_keep_the_port_and_the_token_and_new_token_changes_only_the_token(kernel: Kernel) -> None:
    first = kernel.serve()
    url, token = first.url, first.token
    kernel.stop()
    second = kernel.serve()
    assert (second.url, second.token) == (url, token)
    kernel.stop()
    third = kernel.serve("--new-token")
    assert third.url == url and third.token and third.token != token
    kernel.stop()
    assert kernel.serve().token == third.token  # the new one is kept from then on


def test_a_port_taken_meanwhile_gives_a_new_port_and_says_so(kernel: Kernel) -> None:
    first = kernel.serve()
    port, token = _port(first.url), first.token
    kernel.stop()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        printed = _serve_printing(kernel)
    server = kernel_prompt_state(kernel.shell).server
    assert server is not None and _port(server.url) != port and server.token == token
    assert (
        f"The last server's port {port} is taken now, so the port changed: configure your clients again "
        "with the lines below.\n" in printed
    )


def _claude_line(printed: str) -> str:
    return printed.split("Claude Code:\n  ", 1)[1].split("\n", 1)[0]


def _fake_claude(folder: Path) -> tuple[dict[str, str], Path]:
    """A `claude` on PATH that records its arguments, one per line; the environment to run the line in."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    record = folder / "claude-args"
    script = bin_dir / "claude"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(record))}\n', encoding="utf-8")
    script.chmod(0o755)
    # A shell that knows nothing of this kernel: no JUPYTER_RUNTIME_DIR (the line names the directory itself).
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_RUNTIME_DIR"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env, record


def test_the_printed_claude_line_registers_the_token_and_registers_nothing_once_the_kernel_is_gone(
    kernel: Kernel, tmp_path: Path
) -> None:
    printed = _serve_printing(kernel)
    server = kernel_prompt_state(kernel.shell).server
    assert server is not None and server.token
    line = _claude_line(printed)
    env, record = _fake_claude(tmp_path)

    ran = subprocess.run([BASH, "-c", line], env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert record.read_text(encoding="utf-8").splitlines() == [
        "mcp",
        "add",
        "--transport",
        "http",
        f"kernel-{server.kernel_id[:8]}",
        server.url,
        "--header",
        f"Authorization: Bearer {server.token}",
    ]

    record.unlink()
    kernel.stop()
    for shell in ([BASH, "-c"], ["/bin/sh", "-c"]):
        failed = subprocess.run([*shell, line], env=env, capture_output=True, text=True, timeout=60)
        assert failed.returncode == 2
        assert not record.exists()  # claude never ran: no server registered with an empty token
        assert failed.stderr.startswith("mcp-notebook connect: ")
        assert f"no running kernel {server.kernel_id!r} serves MCP" in failed.stderr
        assert "run %mcp serve in its notebook and use the lines it prints" in failed.stderr


async def test_a_refused_client_is_named_in_the_log_with_the_fix(
    kernel: Kernel, caplog: pytest.LogCaptureFixture
) -> None:
    server = kernel.serve()
    assert server.url is not None
    caplog.set_level(logging.WARNING, logger="mcp_notebook.transports.gate")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream", "User-Agent": "claude-code/2.0.14"}
    async with httpx2.AsyncClient() as http:
        missing = await http.post(server.url, json=ping, headers=accept)
        wrong = await http.post(server.url, json=ping, headers={**accept, "Authorization": "Bearer stale"})
    assert (missing.status_code, wrong.status_code) == (401, 401)
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_notebook.transports.gate"]
    assert len(lines) == 2
    fix = (
        "the client must send 'Authorization: Bearer <token>' with the token of this kernel's MCP server "
        "(%mcp serve): it is in the kernel's connection file; "
        f"'mcp-notebook connect --kernel {server.kernel_id} --print-token' prints it. A client configured for an "
        "earlier kernel (before a restart, or --new-token) must be configured again with the lines %mcp serve "
        "printed"
    )
    for line, kind in zip(lines, ("no", "wrong"), strict=True):
        assert line.startswith("refused POST /mcp from 'claude-code/2.0.14' at 127.0.0.1:")
        assert line.endswith(f": HTTP 401 ({kind} token); {fix}")
