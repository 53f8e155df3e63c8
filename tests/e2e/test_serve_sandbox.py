"""`mcp-notebook serve` answering bad file arguments and URIs: the right code, a short message, no server path.

One real stdio server per revision answers a table of failing requests;
every reply must carry the expected JSON-RPC code and must not contain where
the served folder is on the server (nor its parent), nor any secret.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from e2e_processes import MODERN, StdioServer, write_notebook

pytestmark = pytest.mark.slow

INVALID_PARAMS = -32602
NOT_FOUND = -32002  # resources/read up to 2025-11-25; 2026-07-28 answers -32602
SECRET = "OUTSIDE-SECRET"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("sandboxed")
    (base / "outside.txt").write_text(SECRET)
    served = base / "served"
    data = served / "data"
    data.mkdir(parents=True)
    (served / ".env").write_text(SECRET)
    (data / "ok.txt").write_text("ok")
    (data / ".hidden").write_text(SECRET)
    (data / "loop").symlink_to(data / "loop")
    (data / "link_out").symlink_to(base / "outside.txt")
    os.mkfifo(data / "fifo.txt")
    write_notebook(served / "nb.ipynb", [("A data file.", {"prompt": "datafile", "resource": {"path": "data/{{f}}"}})])
    return served


BAD_VALUES = {
    "missing": "missing.txt",
    "loop": "loop",
    "too long": "a" * 5000,
    "NUL": "ok\x00.txt",
    "folder": ".",
    "fifo": "fifo.txt",
    "traversal": "../.env",
    "hidden": ".hidden",
    "symlink out": "link_out",
    "absolute": "/etc/passwd",
    "notebook": "../nb.ipynb",
}

MISSING_URIS = {
    "missing": "notebook:///data/missing.txt",
    "loop": "notebook:///data/loop",
    "too long": "notebook:///data/" + "a" * 5000,
    "NUL": "notebook:///data/ok%00.txt",
    "fifo": "notebook:///data/fifo.txt",
    "hidden": "notebook:///data/.hidden",
    "hidden at the root": "notebook:///.env",
    "a notebook": "notebook:///data/nb.ipynb#cell=1",
    "no such cell": "notebook:///nb.ipynb#cell=99",
}

REFUSED_URIS = {
    "dot dot": "notebook:///../outside.txt",
    "encoded dot dot": "notebook:///data/%2e%2e/%2e%2e/outside.txt",
    "symlink out": "notebook:///data/link_out",
}


def _no_server_path(reply: dict[str, Any], root: Path) -> None:
    text = json.dumps(reply, ensure_ascii=False)
    assert str(root) not in text and str(root.parent) not in text, text
    assert SECRET not in text, text
    assert len(reply["error"]["message"]) < 400, reply["error"]["message"]


@pytest.mark.parametrize("revision", ["2025-11-25", MODERN])
def test_bad_file_requests_get_the_right_code_and_name_no_server_path(root: Path, revision: str) -> None:
    modern = revision == MODERN
    with StdioServer([str(root)]) as server:
        if not modern:
            server.initialize(revision)
        failures: list[str] = []

        def expect(case: str, method: str, params: dict[str, Any], code: int) -> None:
            reply = server.request(method, params, modern=modern)
            if reply.get("error", {}).get("code") != code:
                failures.append(f"{method} {case}: expected {code}, got {reply}"[:300])
                return
            try:
                _no_server_path(reply, root)
            except AssertionError as error:
                failures.append(f"{method} {case}: {error}"[:300])

        for case, value in BAD_VALUES.items():
            expect(case, "prompts/get", {"name": "datafile", "arguments": {"f": value}}, INVALID_PARAMS)
        for case, uri in MISSING_URIS.items():
            expect(case, "resources/read", {"uri": uri}, INVALID_PARAMS if modern else NOT_FOUND)
        for case, uri in REFUSED_URIS.items():
            expect(case, "resources/read", {"uri": uri}, INVALID_PARAMS)
        good = server.request("prompts/get", {"name": "datafile", "arguments": {"f": "ok.txt"}}, modern=modern)
        assert good["result"]["messages"][1]["content"]["resource"]["text"] == "ok"  # still serving
    assert not failures, "\n".join(failures)
