"""A handshake-era MCP server over stdio, in plain Python (no SDK): starts in milliseconds.

It speaks one revision (``--version``, default 2024-11-05), answers
``server/discover`` with -32601 like every pre-2026 server, and offers prompts
that exercise the client:

* ``greet`` (``name`` required, ``lang`` optional with completions)
* ``media`` (image, audio, embedded text and blob resources, a resource link;
  only the blocks its revision allows)
* ``slow`` never answers; a ``notifications/cancelled`` for it is written to ``--log``
* ``grow`` adds a prompt and sends ``notifications/prompts/list_changed``
* ``ask`` sends ``elicitation/create`` (2025-06-18 and later) and renders the answer
* ``crash`` exits the process

``--extra N`` adds N generated prompts and ``--page-size N`` pages the listing
(``--loop-cursor``: every page points back to the first, a listing that never ends).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


class LegacyServer:
    def __init__(self, options: argparse.Namespace) -> None:
        self.version = options.version
        self.page_size = options.page_size
        self.log_path = options.log
        self.loop_cursor = options.loop_cursor
        self.prompts: list[dict[str, Any]] = [
            {
                "name": "greet",
                "description": "Say hello to someone.",
                "arguments": [
                    {"name": "name", "description": "who to greet", "required": True},
                    {"name": "lang", "description": "a programming language"},
                ],
            },
            {"name": "media", "description": "Every kind of content block."},
            {"name": "slow", "description": "Never answers."},
            {"name": "grow", "description": "Adds a prompt and announces it."},
            {"name": "ask", "description": "Asks the user for a colour first."},
            {"name": "crash", "description": "Stops the server."},
        ]
        self.prompts += [
            {"name": f"extra_{i:03d}", "description": f"Generated prompt {i}."} for i in range(options.extra)
        ]
        self.grown = 0
        self.client_capabilities: dict[str, Any] = {}
        self.pending: list[dict[str, Any]] = []
        self.next_id = 0

    def at_least(self, revision: str) -> bool:
        return REVISIONS.index(self.version) >= REVISIONS.index(revision)

    # -- wire ------------------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    def log(self, line: str) -> None:
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(line + "\n")

    def read(self) -> dict[str, Any] | None:
        if self.pending:
            return self.pending.pop(0)
        line = sys.stdin.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        return message

    def serve(self) -> None:
        print(f"legacy server {self.version} ready", file=sys.stderr, flush=True)
        self.log(f"pid {os.getpid()}")
        while (message := self.read()) is not None:
            self.handle(message)

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if "id" not in message:
            if method == "notifications/cancelled":
                self.log(f"cancelled {message['params']['requestId']}")
            return
        try:
            result = self.dispatch(method or "", message.get("params") or {})
        except RpcError as error:
            self.send({"id": message["id"], "error": error.payload})
            return
        if result is not None:
            self.send({"id": message["id"], "result": result})
        else:
            self.log(f"holding {message['id']}")

    def dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "initialize":
            asked = params.get("protocolVersion")
            self.client_capabilities = params.get("capabilities") or {}
            version = (
                asked
                if asked in REVISIONS and REVISIONS.index(asked) <= REVISIONS.index(self.version)
                else self.version
            )
            self.version = version
            capabilities: dict[str, Any] = {"prompts": {"listChanged": True}}
            if self.at_least("2025-03-26"):
                capabilities["completions"] = {}
            return {
                "protocolVersion": version,
                "capabilities": capabilities,
                "serverInfo": {"name": "legacy-test", "version": "1.0", "title": "Legacy test server"},
            }
        if method == "ping":
            return {}
        if method == "prompts/list":
            return self.list_prompts(params.get("cursor"))
        if method == "prompts/get":
            return self.get_prompt(params.get("name", ""), params.get("arguments") or {})
        if method == "completion/complete":
            value = params["argument"]["value"]
            values = [v for v in ("python", "rust", "ruby") if v.startswith(value)]
            return {"completion": {"values": values, "total": len(values), "hasMore": False}}
        raise RpcError(-32601, "Method not found", method)

    def list_prompts(self, cursor: str | None) -> dict[str, Any]:
        start = 0
        if cursor is not None:
            if not cursor.isdigit():
                raise RpcError(-32602, "Invalid cursor")
            start = int(cursor)
        size = self.page_size or len(self.prompts)
        page: dict[str, Any] = {"prompts": self.prompts[start : start + size]}
        if self.loop_cursor:
            page["nextCursor"] = "0"  # a broken server whose listing never ends
        elif start + size < len(self.prompts):
            page["nextCursor"] = str(start + size)
        return page

    def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any] | None:
        if name not in {p["name"] for p in self.prompts}:
            raise RpcError(-32602, f"Unknown prompt: {name}", {"name": name})
        if name == "greet":
            if "name" not in arguments:
                raise RpcError(-32602, "Missing required arguments: ['name']", {"missing": ["name"]})
            lang = arguments.get("lang", "plain words")
            return {
                "description": "A greeting",
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": f"Say hello to {arguments['name']} in {lang}."},
                    },
                    {"role": "assistant", "content": {"type": "text", "text": f"Hello, **{arguments['name']}**!"}},
                ],
            }
        if name == "media":
            return {"messages": self.media_messages()}
        if name == "slow":
            return None
        if name == "grow":
            self.grown += 1
            self.prompts.append({"name": f"grown_{self.grown}", "description": "Added at run time."})
            self.send({"method": "notifications/prompts/list_changed"})
            return {"messages": [{"role": "user", "content": {"type": "text", "text": f"grew {self.grown}"}}]}
        if name == "ask":
            return self.ask()
        if name == "crash":
            os._exit(3)
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"This is {name}."}}]}

    def media_messages(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [
            {"type": "text", "text": "# Look\nat *this*"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "notes"}},
            {"type": "resource", "resource": {"uri": "file:///pixel.png", "mimeType": "image/png", "blob": PNG}},
        ]
        if self.at_least("2025-03-26"):
            blocks.append({"type": "audio", "data": WAV, "mimeType": "audio/wav"})
        if self.at_least("2025-06-18"):
            blocks.append({"type": "resource_link", "uri": "https://example.com/doc", "name": "doc", "title": "A doc"})
        return [{"role": "user", "content": block} for block in blocks]

    def ask(self) -> dict[str, Any]:
        if not self.at_least("2025-06-18") or "elicitation" not in self.client_capabilities:
            raise RpcError(-32602, "This prompt needs a client that supports elicitation")
        self.next_id += 1
        request_id = f"srv-{self.next_id}"
        schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
        self.send(
            {
                "id": request_id,
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Which colour?", "requestedSchema": schema},
            }
        )
        while True:
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                break
            self.pending.append(message)
        answer = message.get("result") or {}
        colour = (answer.get("content") or {}).get("colour") if answer.get("action") == "accept" else "(declined)"
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Paint it {colour}."}}]}


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.payload: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            self.payload["data"] = data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default="2024-11-05", choices=REVISIONS)
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--extra", type=int, default=0)
    parser.add_argument("--loop-cursor", action="store_true")
    parser.add_argument("--log", default=os.environ.get("LEGACY_SERVER_LOG"))
    LegacyServer(parser.parse_args()).serve()


if __name__ == "__main__":
    main()
