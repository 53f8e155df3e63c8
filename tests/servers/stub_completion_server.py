"""A small stdio MCP server (2024-11-05 handshake) whose answers can be slow, for completion tests.

Prompt `p` has arguments `fast` (completes at once with the context it was
sent: `ctx:NAME=VALUE,…` after the prefix), `slow` (answers after
`--complete-delay` seconds) and `other`. `--list-delay` delays `prompts/list` (by default
`$STUB_LIST_DELAY` seconds: a delay that is not part of the command line).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

PROMPT = {
    "name": "p",
    "description": "a prompt for completion tests",
    "arguments": [
        {"name": "other", "required": False},
        {"name": "fast", "required": True},
        {"name": "slow", "required": False},
    ],
}
_write = threading.Lock()


def send(message: dict[str, Any]) -> None:
    with _write:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def answer(request: dict[str, Any], options: argparse.Namespace) -> None:
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        result: Any = {
            "protocolVersion": "2024-11-05",
            "capabilities": {"prompts": {}, "completions": {}},
            "serverInfo": {"name": "stub", "version": "1"},
        }
    elif method == "prompts/list":
        time.sleep(options.list_delay)
        result = {"prompts": [PROMPT]}
    elif method == "completion/complete":
        argument = params["argument"]
        if argument["name"] == "slow":
            time.sleep(options.complete_delay)
        context = (params.get("context") or {}).get("arguments") or {}
        shown = ",".join(f"{k}={v}" for k, v in sorted(context.items()))
        result = {"completion": {"values": [f"{argument['value']}ctx:{shown}"]}}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no {method}"}})
        return
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--list-delay", type=float, default=float(os.environ.get("STUB_LIST_DELAY") or 0))
    parser.add_argument("--complete-delay", type=float, default=0.0)
    options = parser.parse_args()
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request and "method" in request:
            threading.Thread(target=answer, args=(request, options), daemon=True).start()


if __name__ == "__main__":
    main()
