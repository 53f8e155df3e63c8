"""A tiny stdio MCP server for lifecycle tests: starts in milliseconds, and can misbehave on purpose.

Usage: python tiny_mcp_server.py MODE [PIDFILE]

* `ok`: answers `initialize` and `prompts/list` (one prompt, `hello`), nothing else.
* `hang`: reads every message and never answers (a server stuck at start).
* `stubborn`: like `hang`, and also ignores SIGTERM and the end of its input:
  only SIGKILL ends it.
* `stall`: answers `initialize` and `prompts/list`, then nothing more (every
  later request hangs), and ignores SIGTERM and the end of its input.
* `forking`: like `ok`, and first starts a grandchild process that sleeps in
  the same process group (as `npx` leaves `node` behind).

With PIDFILE, the server (and its grandchild) append their pids to it.
No MCP SDK: plain JSON-RPC lines, so hundreds of starts stay cheap.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

HELLO = {"name": "hello", "description": "Say hello", "arguments": [{"name": "who", "required": False}]}


def _answer(message: dict[str, object]) -> dict[str, object] | None:
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    if method == "initialize":
        params = message.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        result: dict[str, object] = {
            "protocolVersion": version or "2025-06-18",
            "capabilities": {"prompts": {"listChanged": False}},
            "serverInfo": {"name": "tiny", "version": "1"},
        }
    elif method == "prompts/list":
        result = {"prompts": [HELLO]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    mode = sys.argv[1]
    pid_file = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    if pid_file is not None:
        with pid_file.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
    if mode == "forking":
        code = "import signal, threading; signal.pthread_sigmask(signal.SIG_BLOCK, []); threading.Event().wait()"
        child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)
        if pid_file is not None:
            with pid_file.open("a") as handle:
                handle.write(f"{child.pid}\n")
    if mode in ("stubborn", "stall"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    answers = mode in ("ok", "forking", "stall")
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        if mode == "stall" and message.get("method") not in ("initialize", "prompts/list"):
            continue
        if answers and (reply := _answer(message)) is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    if mode in ("stubborn", "stall"):
        threading.Event().wait()  # input closed: stay anyway


if __name__ == "__main__":
    main()
