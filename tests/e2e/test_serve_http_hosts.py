"""DNS rebinding: the Host header must name this server on every bind, loopback and `0.0.0.0` alike."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_processes import write_corpus
from served_http import ServedHttp, json_post, raw_exchange

pytestmark = pytest.mark.slow

LISTING = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
EXTRA = "prompts.example.com"

# (Host header, where {port} is the bound port; served on a wildcard bind?, served on a loopback bind?)
CASES = [
    ("127.0.0.1:{port}", True, True),
    ("localhost:{port}", True, True),
    ("LOCALHOST:{port}", True, True),
    ("[::1]:{port}", True, True),
    ("{hostname}:{port}", True, False),
    ("{fqdn}:{port}", True, False),
    (f"{EXTRA}", True, True),
    (f"{EXTRA}:443", True, True),
    (f"{EXTRA.upper()}:8080", True, True),
    ("evil.example:{port}", False, False),
    ("evil.example", False, False),
    ("127.0.0.1.evil.example:{port}", False, False),
    ("localhost.evil.example:{port}", False, False),
    (f"{EXTRA}.evil.example", False, False),
    (f"evil.{EXTRA}", False, False),
    ("127.0.0.1:{wrong}", False, False),
    ("localhost", False, False),
    ("", False, False),
    ("127.0.0.1:{port}@evil.example", False, False),
    ("[::1]evil:{port}", False, False),
]


def _host(template: str, port: int) -> str:
    return template.format(
        port=port, wrong=port + 1, hostname=socket.gethostname().lower(), fqdn=socket.getfqdn().lower()
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hosts") / "prompts"
    write_corpus(path)
    return path


@pytest.fixture(scope="module")
def everywhere(folder: Path) -> Iterator[ServedHttp]:
    with ServedHttp([folder], "--host", "0.0.0.0", "--allow-remote", "--allowed-host", EXTRA) as server:
        yield server


@pytest.fixture(scope="module")
def loopback(folder: Path) -> Iterator[ServedHttp]:
    with ServedHttp([folder], "--allowed-host", EXTRA) as server:
        yield server


def _status(server: ServedHttp, host: str) -> int:
    reply = raw_exchange(server.port, json_post(host, "/mcp", LISTING))
    return int(reply.split(b" ", 2)[1])


@pytest.mark.parametrize(("template", "on_wildcard", "on_loopback"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_the_host_header_is_checked_on_a_wildcard_bind(
    everywhere: ServedHttp, template: str, on_wildcard: bool, on_loopback: bool
) -> None:
    status = _status(everywhere, _host(template, everywhere.port))
    assert (status == 200) is on_wildcard, status
    assert status in (200, 421)


@pytest.mark.parametrize(("template", "on_wildcard", "on_loopback"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_the_host_header_is_checked_on_a_loopback_bind(
    loopback: ServedHttp, template: str, on_wildcard: bool, on_loopback: bool
) -> None:
    host = _host(template, loopback.port)
    # A machine whose own name is "localhost" names loopback by it.
    expected = on_loopback or host == f"localhost:{loopback.port}"
    status = _status(loopback, host)
    assert (status == 200) is expected, status
    assert status in (200, 421)


def test_a_missing_host_header_is_refused(everywhere: ServedHttp) -> None:
    request = json_post("x", "/mcp", LISTING).replace(b"Host: x\r\n", b"")
    reply = raw_exchange(everywhere.port, request.replace(b"HTTP/1.1", b"HTTP/1.0", 1))
    assert reply.split(b" ", 2)[1] == b"421"


def test_the_machine_addresses_are_served_on_a_wildcard_bind(everywhere: ServedHttp) -> None:
    # Whatever address the connection came in on, naming it is naming this server.
    with socket.create_connection(("127.0.0.1", everywhere.port)) as probe:
        local = probe.getsockname()[0]
    assert _status(everywhere, f"{local}:{everywhere.port}") == 200
