"""The pure parts of HTTP serving: which Host names the server, limits and settings from the environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from mcp_notebook.asgi import ServeSettings
from mcp_notebook.service import ServiceSettings
from mcp_notebook.transports.hosts import HostAllowList, machine_names
from mcp_notebook.transports.limits import HttpLimits, connection_cap

# (bound host, extra names, Host header, accepted?)
HOST_CASES = [
    ("127.0.0.1", (), "127.0.0.1:8000", True),
    ("127.0.0.1", (), "127.0.0.1:8001", False),
    ("127.0.0.1", (), "[::1]:8000", True),
    ("127.0.0.1", (), "::1:8000", False),
    ("::1", (), "[::1]:8000", True),
    ("127.0.0.1", (), "LocalHost:8000", True),
    ("127.0.0.1", ("svc.example",), "svc.example", True),
    ("127.0.0.1", ("svc.example",), "svc.example:1", True),
    ("127.0.0.1", ("svc.example:443",), "svc.example:443", True),
    ("127.0.0.1", ("svc.example:443",), "svc.example:80", False),
    ("127.0.0.1", ("svc.example:443",), "svc.example", False),
    ("127.0.0.1", ("fd00::1",), "[fd00::1]:9", True),
    ("127.0.0.1", ("[fd00::1]",), "[fd00::1]", True),
    ("127.0.0.1", ("svc.example",), "svc.example.evil", False),
    ("127.0.0.1", ("svc.example",), "evil-svc.example", False),
    ("10.0.0.5", (), "10.0.0.5:8000", True),
    ("10.0.0.5", (), "10.0.0.6:8000", False),
    ("0.0.0.0", (), "127.0.0.1:8000", True),
    ("0.0.0.0", (), "evil.example:8000", False),
    ("0.0.0.0", (), "", False),
    ("0.0.0.0", (), ":8000", False),
    ("0.0.0.0", (" ",), "", False),
]


@pytest.mark.parametrize(("bound", "extra", "header", "accepted"), HOST_CASES)
def test_a_host_header_is_accepted_only_when_it_names_this_server(
    bound: str, extra: tuple[str, ...], header: str, accepted: bool
) -> None:
    assert (header in HostAllowList.for_bind(bound, 8000, extra)) is accepted


def test_port_80_may_be_left_out_of_the_host_header() -> None:
    assert "localhost" in HostAllowList.for_bind("127.0.0.1", 80)
    assert "localhost" not in HostAllowList.for_bind("127.0.0.1", 8000)


def test_a_wildcard_bind_accepts_the_machine_names_and_addresses() -> None:
    names = machine_names()
    allowed = HostAllowList.for_bind("0.0.0.0", 8000)
    assert {"localhost", "127.0.0.1", "::1"} <= names
    for name in names:
        shown = f"[{name}]" if ":" in name else name
        assert f"{shown}:8000" in allowed


def test_limits_come_from_the_environment_and_go_back_to_it() -> None:
    limits = HttpLimits(header_timeout=2.5, max_connections=100, max_sessions=7)
    assert HttpLimits.from_env(limits.to_env()) == limits
    assert HttpLimits.from_env({}) == HttpLimits()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("MCP_NOTEBOOK_HEADER_TIMEOUT", "soon", "MCP_NOTEBOOK_HEADER_TIMEOUT must be a number of seconds, got 'soon'"),
        ("MCP_NOTEBOOK_MAX_SESSIONS", "1.5", "MCP_NOTEBOOK_MAX_SESSIONS must be a whole number, got '1.5'"),
        ("MCP_NOTEBOOK_BODY_TIMEOUT", "0", "MCP_NOTEBOOK_BODY_TIMEOUT must be at least 0.5 seconds, got '0'"),
        ("MCP_NOTEBOOK_MAX_CONNECTIONS", "-3", "MCP_NOTEBOOK_MAX_CONNECTIONS must be at least 1, got '-3'"),
    ],
)
def test_a_bad_limit_in_the_environment_is_a_clear_error(variable: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        HttpLimits.from_env({variable: value})


def test_the_connection_cap_leaves_room_below_the_descriptor_limit() -> None:
    code = (
        "import resource;"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]));"
        "from mcp_notebook.transports.limits import HttpLimits, connection_cap;"
        "print(connection_cap(HttpLimits()), connection_cap(HttpLimits(max_connections=1000)),"
        " connection_cap(HttpLimits(max_connections=10)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["192", "192", "10"]
    assert connection_cap(HttpLimits(max_connections=5)) == 5


def test_settings_go_to_the_environment_of_workers_and_come_back() -> None:
    settings = ServeSettings(
        service=ServiceSettings(
            paths=(os.path.abspath("a"), os.path.abspath("b")),
            page_size=7,
            name="team",
            watch=False,
            cache_dir="/var/cache/prompts",
        ),
        host="0.0.0.0",
        port=8765,
        token="t",
        token_hint="the token in the vault",
        allowed_hosts=("svc", "svc.ns:80"),
        stateless=True,
        limits=HttpLimits(session_idle_timeout=60.0, max_connections=40),
        worker_dir="/run/x",
    )
    assert ServeSettings.from_env(settings.to_env()) == settings


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, "set MCP_NOTEBOOK_PATHS"),
        ({"MCP_NOTEBOOK_PATHS": os.pathsep}, "set MCP_NOTEBOOK_PATHS"),
        ({"MCP_NOTEBOOK_PATHS": "p", "MCP_NOTEBOOK_STATELESS": "maybe"}, "must be 1 or 0"),
        ({"MCP_NOTEBOOK_PATHS": "p", "MCP_NOTEBOOK_PAGE_SIZE": "many"}, "must be a whole number"),
        ({"MCP_NOTEBOOK_PATHS": "p", "MCP_NOTEBOOK_PORT": "70000"}, "MCP_NOTEBOOK_PORT must be a port number"),
    ],
)
def test_bad_settings_in_the_environment_are_clear_errors(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ServeSettings.from_env(environ)


@pytest.mark.parametrize(
    "options", [["--workers", "2"], ["--stateless"], ["--allowed-host", "x"], ["--header-timeout", "3"]]
)
def test_http_serving_options_need_http(options: list[str]) -> None:
    from mcp_notebook.cli import main

    assert main(["serve", ".", *options]) == 2
