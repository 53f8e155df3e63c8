"""Our Host/Origin gate (`transports/http.py` + `hosts.py`) against the SDK's own, case by case.

The SDK guards its Streamable HTTP app with `mcp.server.transport_security`;
we turn that off and gate in front of it (the module docstring of
`transports/hosts.py` says why). This test sends the same generated table of
requests, one bind at a time, to both gates: the SDK's as its
`streamable_http_app(host=…)` configures it (or with the settings an SDK user
would write for the same names) and ours as `serve --http` configures it. The
two must agree on every case, except where `DIFFERENCES` names the case and
says which way each gate goes and why; a listed difference that no case shows
any more fails too, so the list stays true.

The fast tests run both ASGI apps in process; the slow one sends the
loopback table as raw bytes to a real `mcp-notebook serve --http` and to a
real SDK server under uvicorn, so the HTTP parser in front of each is part
of what is compared.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import anyio
import pytest
from client_harness import SDK_SERVER, running_url_process
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from notebook_files import write_notebook
from starlette.types import ASGIApp, Message

from mcp_notebook.transports.gate import MCP_PATH
from mcp_notebook.transports.hosts import LOOPBACK_NAMES, WILDCARD_HOSTS, bracketed, machine_names
from mcp_notebook.transports.http import allowed_hosts_for, create_http_app

DEADLINE = 10.0
PORT: Final = 8123
OTHER_PORT: Final = 9931
EVIL: Final = "evil.example"
IDN_LOOKALIKE: Final = "l\u043ecalhost"  # a Cyrillic "о": another name that looks the same
PUNYCODE_LOOKALIKE: Final = "xn--lcalhost-5of"

Verdict = Literal["host refused", "origin refused", "bad request", "passed"]


def verdict_of(status: int) -> Verdict:
    """What a gate decided, from the status: 421 Host, 403 Origin, 400 unparsable; anything else got past it."""
    return {421: "host refused", 403: "origin refused", 400: "bad request"}.get(status, "passed")  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Bind:
    """One way to run the server: the address, the port and the `--allowed-host` names."""

    label: str
    address: str
    port: int = PORT
    allowed: tuple[str, ...] = ()

    @property
    def wildcard(self) -> bool:
        return self.address in WILDCARD_HOSTS

    def sdk_security(self) -> TransportSecuritySettings | None:
        """None: the SDK's own default for the address; with `--allowed-host` names, what an SDK user would write."""
        if not self.allowed:
            return None
        hosts = [f"{bracketed(name)}:*" for name in sorted(LOOPBACK_NAMES)]
        origins = [f"http://{bracketed(name)}:*" for name in sorted(LOOPBACK_NAMES)]
        for entry in self.allowed:
            if ":" in entry:  # NAME:PORT: that port only
                hosts.append(entry)
                origins += [f"http://{entry}", f"https://{entry}"]
            else:  # NAME: any port, or none (the default port behind a proxy)
                hosts += [entry, f"{entry}:*"]
                origins += [f"{scheme}://{entry}{port}" for scheme in ("http", "https") for port in ("", ":*")]
        return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


BINDS: Final = (
    Bind("127.0.0.1", "127.0.0.1"),
    Bind("localhost", "localhost"),
    Bind("::1", "::1"),
    Bind("127.0.0.1 on port 80", "127.0.0.1", port=80),
    Bind("0.0.0.0", "0.0.0.0"),
    Bind("0.0.0.0 with --allowed-host", "0.0.0.0", allowed=("mcp.internal", "proxy.internal:8443")),
)


@dataclass(frozen=True, slots=True)
class Case:
    """The `Host` and `Origin` header lines of one request (none, one, or repeated)."""

    hosts: tuple[bytes, ...]
    origins: tuple[bytes, ...] = ()

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        return [(b"host", value) for value in self.hosts] + [(b"origin", value) for value in self.origins]

    def __str__(self) -> str:
        return f"Host {list(self.hosts)} Origin {list(self.origins)}"


def _machine_examples() -> list[str]:
    """This machine's host name and one interface address that is not loopback, as a wildcard bind sees them."""
    names = machine_names() - LOOPBACK_NAMES
    hostname = socket.gethostname().lower()
    addresses = sorted(name for name in names if name[:1].isdigit() or ":" in name)
    return sorted({hostname} & names) + addresses[:2]


def host_values(bind: Bind) -> list[str]:
    """Every kind of `Host` value: this server's names written every way, and names that are not this server."""
    port = bind.port
    names = ["localhost", "127.0.0.1", "[::1]"]
    if bind.wildcard:
        names += [bracketed(name) for name in _machine_examples()]
    values: list[str] = []
    for name in names:
        values += [
            f"{name}:{port}",
            name,  # no port
            f"{name}:{OTHER_PORT}",
            f"{name}:",  # an empty port
            f"{name}:0{port}",  # a zero-padded port
            f"{name.upper()}:{port}",
            f"{name}.:{port}",  # a trailing dot
            f"user@{name}:{port}",  # userinfo
            f"{name}:{port}@{EVIL}",
            f"{name}:{port}.{EVIL}",
        ]
    values += [
        f"{EVIL}:{port}",
        EVIL,
        f"localhost.{EVIL}:{port}",
        f"127.0.0.1.nip.io:{port}",
        f"::1:{port}",  # IPv6 without brackets
        f"[0:0:0:0:0:0:0:1]:{port}",  # ::1 written out
        f"[::ffff:127.0.0.1]:{port}",  # IPv4-mapped
        f"127.1:{port}",
        f"2130706433:{port}",  # 127.0.0.1 as one number
        f"{IDN_LOOKALIKE}:{port}",
        f"{PUNYCODE_LOOKALIKE}:{port}",
        "",
    ]
    for entry in bind.allowed:
        name, _, fixed = entry.partition(":")
        values += [entry, f"{name}:{fixed or port}", name, f"{name}:{OTHER_PORT}", f"{name.upper()}:{fixed or port}"]
        values += [f"{name}.{EVIL}:{fixed or port}", f"{EVIL}.{name}:{fixed or port}"]
    return list(dict.fromkeys(values))


def origin_values(bind: Bind) -> list[str]:
    """Every kind of `Origin`: local pages, foreign ones, browsers' `null`, and strings no browser would send."""
    port = bind.port
    values = [
        f"http://localhost:{port}",
        f"http://127.0.0.1:{OTHER_PORT}",  # another local page (an inspector on its own port)
        f"http://[::1]:{port}",
        "http://localhost",
        f"https://localhost:{port}",
        f"HTTP://LOCALHOST:{port}",
        f"http://localhost:{port}/",
        f"ws://localhost:{port}",
        "null",  # sandboxed frames, file: pages
        "",
        f"http://{EVIL}",
        f"https://{EVIL}:{port}",
        f"http://localhost.{EVIL}:{port}",
        f"http://localhost:{port}@{EVIL}",
        f"http://user@localhost:{port}",
        f"http://{IDN_LOOKALIKE}:{port}",
        f"http://{PUNYCODE_LOOKALIKE}:{port}",
        "file://",
        "chrome-extension://abcdefghijklmnop",
    ]
    if bind.wildcard:
        values += [f"http://{bracketed(name)}:{port}" for name in _machine_examples()]
    for entry in bind.allowed:
        name = entry.partition(":")[0]
        values += [f"https://{entry}", f"http://{name}:{OTHER_PORT}", f"http://{name}.{EVIL}"]
    return list(dict.fromkeys(values))


def cases_for(bind: Bind) -> list[Case]:
    good_host = f"127.0.0.1:{bind.port}".encode()
    good_origin = f"http://localhost:{bind.port}".encode()
    evil_host = f"{EVIL}:{bind.port}".encode()
    evil_origin = f"http://{EVIL}".encode()
    cases = [Case((value.encode(),)) for value in host_values(bind)]
    cases += [Case((good_host,), (value.encode(),)) for value in origin_values(bind)]
    cases += [
        Case(()),  # no Host at all
        Case((good_host, evil_host)),
        Case((evil_host, good_host)),
        Case((good_host, good_host)),
        Case((good_host,), (good_origin, evil_origin)),
        Case((good_host,), (evil_origin, good_origin)),
        Case((evil_host,), (evil_origin,)),
        Case((evil_host,), (good_origin,)),
    ]
    return cases


# --- where the gates differ on purpose ---------------------------------------------------------------------------


def _host(case: Case) -> str:
    return case.hosts[0].decode("utf-8", "replace") if case.hosts else ""


def _origin(case: Case) -> str:
    return case.origins[0].decode("utf-8", "replace") if case.origins else ""


def _sdk_wildcard_port_names(bind: Bind) -> list[str]:
    """The names the SDK's settings for `bind` accept as `NAME:<anything>` (its `NAME:*` patterns)."""
    settings = bind.sdk_security()
    if settings is None:
        return [] if bind.wildcard else ["127.0.0.1", "localhost", "[::1]"]
    return [entry[:-2] for entry in settings.allowed_hosts if entry.endswith(":*")]


def _is_ours(bind: Bind, host: str) -> bool:
    """Whether `host` is one of the exact values our allow list holds for `bind` (the bound port)."""
    return host in allowed_hosts_for(bind.address, bind.port, bind.allowed)


def _port_after(host: str, names: Sequence[str]) -> str | None:
    for name in names:
        if host.startswith(name + ":"):
            return host[len(name) + 1 :]
    return None


@dataclass(frozen=True, slots=True)
class Difference:
    """A deliberate difference: where `applies`, our gate says `ours` and the SDK's says `sdk`, for `reason`."""

    reason: str
    ours: Verdict
    sdk: Verdict
    applies: Callable[[Bind, Case], bool]


def unprotected(bind: Bind) -> bool:
    """Whether the SDK leaves Host and Origin unchecked for `bind` (its default on a wildcard bind)."""
    return bind.wildcard and bind.sdk_security() is None


def _has_port(host: str) -> bool:
    return host.rsplit("]", 1)[-1].count(":") == 1 if host.startswith("[") else host.count(":") == 1


def _sdk_no_protection_on_wildcard(bind: Bind, case: Case) -> bool:
    return unprotected(bind) and not _is_ours(bind, _host(case)) and len(case.hosts) <= 1


def _sdk_takes_any_text_after_the_colon(bind: Bind, case: Case) -> bool:
    if unprotected(bind) or len(case.hosts) != 1:
        return False
    host = _host(case)
    after = _port_after(host, _sdk_wildcard_port_names(bind))
    return after is not None and not _is_ours(bind, host)


def _host_case_differs(bind: Bind, case: Case) -> bool:
    host = _host(case)
    return not unprotected(bind) and len(case.hosts) == 1 and host != host.lower() and _is_ours(bind, host.lower())


def _host_without_port_80(bind: Bind, case: Case) -> bool:
    host = _host(case)
    return len(case.hosts) == 1 and bind.port == 80 and not _has_port(host) and _is_ours(bind, host)


def _our_machine_name(bind: Bind, case: Case) -> bool:
    host = _host(case)
    sdk_names = _sdk_wildcard_port_names(bind)
    return (
        len(case.hosts) == 1
        and bind.sdk_security() is not None
        and _is_ours(bind, host)
        and _port_after(host, sdk_names) is None
        and host not in (bind.sdk_security() or TransportSecuritySettings()).allowed_hosts
        and host.lower() == host
    )


def _repeated_host(bind: Bind, case: Case) -> bool:
    # The SDK reads the first Host; where that one would pass it, it passes.
    if len(case.hosts) < 2:
        return False
    return _sdk_verdict_for_host(bind, case.hosts[0].decode()) == "passed"


def _repeated_host_first_refused(bind: Bind, case: Case) -> bool:
    return len(case.hosts) > 1 and _sdk_verdict_for_host(bind, case.hosts[0].decode()) == "host refused"


def _sdk_verdict_for_host(bind: Bind, host: str) -> Verdict:
    settings = bind.sdk_security()
    if settings is None:
        if bind.wildcard:
            return "passed"
        settings = TransportSecuritySettings(allowed_hosts=[f"{name}:*" for name in _sdk_wildcard_port_names(bind)])
    if host in settings.allowed_hosts or _port_after(host, _sdk_wildcard_port_names(bind)) is not None:
        return "passed"
    return "host refused"


def _ours_takes_origin(bind: Bind, origin: str) -> bool:
    """Our rule, as `AccessGate` states it: an http(s) origin whose host is a loopback or allowed name."""
    parts = urlsplit(origin)
    names = set(LOOPBACK_NAMES) | set(allowed_hosts_for(bind.address, bind.port, bind.allowed).names)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in names


def _origin_ours_lenient(bind: Bind, case: Case) -> bool:
    """A local (or allowed) origin the SDK's patterns do not spell: https, no port, upper case."""
    origin = _origin(case)
    if len(case.origins) != 1 or not origin or unprotected(bind):
        return False
    return _ours_takes_origin(bind, origin) and not _sdk_origin_passes(bind, origin)


def _sdk_origin_passes(bind: Bind, origin: str) -> bool:
    settings = bind.sdk_security()
    allowed = (
        settings.allowed_origins
        if settings is not None
        else [f"http://{bracketed(name)}:*" for name in ("127.0.0.1", "localhost", "::1")]
    )
    if not origin or origin in allowed:
        return True
    return any(entry.endswith(":*") and origin.startswith(entry[:-1]) for entry in allowed)


def _origin_sdk_prefix_or_empty(bind: Bind, case: Case) -> bool:
    """An origin the SDK passes because it starts like a local one (or is empty), though it names no local host."""
    origin = _origin(case)
    if len(case.origins) != 1 or unprotected(bind):
        return False
    if not _sdk_origin_passes(bind, origin) or _sdk_verdict_for_host(bind, _host(case)) != "passed":
        return False
    return not _ours_takes_origin(bind, origin)


def _repeated_origin(bind: Bind, case: Case) -> bool:
    if len(case.origins) < 2 or unprotected(bind):
        return False
    return _sdk_origin_passes(bind, case.origins[0].decode()) and _sdk_verdict_for_host(bind, _host(case)) == "passed"


def _origin_on_unprotected_wildcard(bind: Bind, case: Case) -> bool:
    if not unprotected(bind) or not case.origins or not _is_ours(bind, _host(case)):
        return False
    return not all(_ours_takes_origin(bind, value.decode()) for value in case.origins)


DIFFERENCES: Final = (
    Difference(
        "The SDK protects only loopback binds by default (Server.streamable_http_app: no transport_security "
        "unless host is 127.0.0.1, localhost or ::1); on 0.0.0.0 or :: it takes any Host. A rebinding page "
        "reaches a wildcard bind through the loopback interface just the same, so ours keeps checking there.",
        ours="host refused",
        sdk="passed",
        applies=_sdk_no_protection_on_wildcard,
    ),
    Difference(
        "The same, for Origin: with no protection the SDK takes any Origin on a wildcard bind.",
        ours="origin refused",
        sdk="passed",
        applies=_origin_on_unprotected_wildcard,
    ),
    Difference(
        "The SDK's `NAME:*` pattern is a string prefix: anything after `NAME:` passes (another port, an empty "
        "or zero-padded one, `localhost:1@evil.example`, `127.0.0.1:1.evil.example`). Ours wants the bound "
        "port exactly, so a Host naming another local service's port is not taken for this server.",
        ours="host refused",
        sdk="passed",
        applies=_sdk_takes_any_text_after_the_colon,
    ),
    Difference(
        "Host names are case-insensitive (RFC 9110 4.2.3, RFC 3986 3.2.2); the SDK compares strings exactly.",
        ours="passed",
        sdk="host refused",
        applies=_host_case_differs,
    ),
    Difference(
        "On port 80 a Host may leave the port out (RFC 9110 7.2); the SDK's patterns all need one.",
        ours="passed",
        sdk="host refused",
        applies=_host_without_port_80,
    ),
    Difference(
        "With --allowed-host on a wildcard bind ours still accepts the machine's own names and addresses "
        "with the port (hosts.py), which the SDK's settings list only if the operator writes each out.",
        ours="passed",
        sdk="host refused",
        applies=_our_machine_name,
    ),
    Difference(
        "More than one Host line is a bad request (RFC 9112 3.2: the server MUST answer 400); the SDK reads "
        "the first, so a proxy that reads the last could be routing the request to a server of another name.",
        ours="bad request",
        sdk="passed",
        applies=_repeated_host,
    ),
    Difference(
        "The same request with a foreign first Host: both refuse it, ours as the bad request it is.",
        ours="bad request",
        sdk="host refused",
        applies=_repeated_host_first_refused,
    ),
    Difference(
        "Ours takes any local page's origin, http or https, with any port or none, in any case (the origin's "
        "host is what matters); the SDK's patterns spell only http://NAME:PORT in lower case.",
        ours="passed",
        sdk="origin refused",
        applies=_origin_ours_lenient,
    ),
    Difference(
        "The SDK passes an empty Origin, and any Origin that starts like `http://localhost:` (its prefix "
        "match: `http://localhost:1@evil.example` is evil.example); ours reads the origin's host.",
        ours="origin refused",
        sdk="passed",
        applies=_origin_sdk_prefix_or_empty,
    ),
    Difference(
        "With more than one Origin line the SDK reads the first; ours refuses unless every one is allowed.",
        ours="origin refused",
        sdk="passed",
        applies=_repeated_origin,
    ),
)


def expected_difference(bind: Bind, case: Case) -> Difference | None:
    found = [difference for difference in DIFFERENCES if difference.applies(bind, case)]
    assert len(found) <= 1, f"{bind.label}: {case} matches several differences: {[d.reason for d in found]}"
    return found[0] if found else None


def disagreements(bind: Bind, verdicts: Sequence[tuple[Case, Verdict, Verdict]]) -> list[str]:
    """Each case where the gates do not do what this module says they do, in words; and each unused difference."""
    problems: list[str] = []
    used: set[int] = set()
    for case, ours, sdk in verdicts:
        difference = expected_difference(bind, case)
        if difference is None:
            if ours != sdk:
                problems.append(f"{bind.label}: {case}: ours {ours}, the SDK {sdk} (no difference is listed)")
            continue
        used.add(id(difference))
        if (ours, sdk) != (difference.ours, difference.sdk):
            problems.append(
                f"{bind.label}: {case}: ours {ours}, the SDK {sdk}; "
                f"listed as ours {difference.ours}, the SDK {difference.sdk}: {difference.reason}"
            )
    return problems


# --- the two gates in process ------------------------------------------------------------------------------------


def request_scope(bind: Bind, case: Case) -> dict[str, Any]:
    """A GET of `/mcp` for the 2026-07-28 revision: both apps check Host and Origin before anything else."""
    headers = [*case.headers, (b"mcp-protocol-version", b"2026-07-28"), (b"accept", b"application/json")]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": MCP_PATH,
        "raw_path": MCP_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": (bind.address, bind.port),
    }


async def status_from(app: ASGIApp, scope: dict[str, Any]) -> int:
    statuses: list[int] = []
    delivered = anyio.Event()

    async def receive() -> Message:
        if delivered.is_set():
            await anyio.sleep_forever()
        delivered.set()
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    with anyio.fail_after(DEADLINE):
        await app(scope, receive, send)
    assert statuses, f"no response to {scope['headers']}"
    return statuses[0]


@asynccontextmanager
async def sdk_app_for(bind: Bind) -> AsyncIterator[ASGIApp]:
    """The SDK's own Streamable HTTP app as it configures itself for `bind`, started (its session manager runs)."""
    app = Server("sdk-gate").streamable_http_app(host=bind.address, transport_security=bind.sdk_security())
    async with app.router.lifespan_context(app):
        yield app


def our_app_for(bind: Bind) -> ASGIApp:
    """Our gate as `serve --http` builds it for `bind`; never started, so past the gate it answers 503."""
    return create_http_app(
        Server("our-gate"), allowed_hosts=allowed_hosts_for(bind.address, bind.port, list(bind.allowed))
    )


@pytest.mark.parametrize("bind", BINDS, ids=[bind.label for bind in BINDS])
async def test_our_gate_agrees_with_the_sdks_except_where_listed(bind: Bind) -> None:
    ours_app = our_app_for(bind)
    verdicts: list[tuple[Case, Verdict, Verdict]] = []
    async with sdk_app_for(bind) as sdk_app:
        for case in cases_for(bind):
            scope = request_scope(bind, case)
            ours = verdict_of(await status_from(ours_app, scope))
            sdk = verdict_of(await status_from(sdk_app, dict(scope)))
            verdicts.append((case, ours, sdk))
    problems = disagreements(bind, verdicts)
    assert not problems, "\n".join(problems)


async def test_every_listed_difference_is_shown_by_some_case() -> None:
    shown: set[str] = set()
    for bind in BINDS:
        for case in cases_for(bind):
            difference = expected_difference(bind, case)
            if difference is not None:
                shown.add(difference.reason)
    assert [d.reason for d in DIFFERENCES if d.reason not in shown] == []


def test_the_table_covers_every_kind_of_host_and_origin() -> None:
    cases = [case for bind in BINDS for case in cases_for(bind)]
    hosts = {value.decode("utf-8", "replace") for case in cases for value in case.hosts}
    origins = {value.decode("utf-8", "replace") for case in cases for value in case.origins}
    assert any(case.hosts == () for case in cases) and "" in hosts  # missing and empty Host
    assert any(len(case.hosts) > 1 for case in cases) and any(len(case.origins) > 1 for case in cases)
    assert {"[::1]:8123", "LOCALHOST:8123", "localhost.:8123", "user@localhost:8123", "::1:8123"} <= hosts
    assert {f"{IDN_LOOKALIKE}:8123", f"{PUNYCODE_LOOKALIKE}:8123"} <= hosts
    assert {"null", "", f"http://{EVIL}", "https://localhost:8123", f"http://{IDN_LOOKALIKE}:8123"} <= origins


# --- the same, over real sockets ---------------------------------------------------------------------------------


def raw_request(case: Case) -> bytes:
    lines = [b"GET /mcp HTTP/1.1"]
    lines += [b"Host: " + value for value in case.hosts]
    lines += [b"Origin: " + value for value in case.origins]
    lines += [b"MCP-Protocol-Version: 2026-07-28", b"Accept: application/json", b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def status_over_socket(port: int, request: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
        sock.sendall(request)
        head = bytearray()
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head.extend(chunk)
    status_line = bytes(head).split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 "), f"no HTTP answer to {request!r}: {bytes(head)!r}"
    return int(status_line.split()[1])


@pytest.fixture
def served_folder(tmp_path: Path) -> Path:
    write_notebook(tmp_path / "greet.ipynb", [{"source": "Hello {{who}}", "mcp": {"prompt": "greet"}}])
    return tmp_path


@pytest.mark.slow
def test_a_real_server_and_a_real_sdk_server_agree_except_where_listed(served_folder: Path) -> None:
    ours_argv = [sys.executable, "-m", "mcp_notebook", "serve", str(served_folder), "--http", "--port", "0"]
    sdk_argv = [sys.executable, str(SDK_SERVER), "--http"]  # the SDK's app with its loopback default
    with running_url_process(ours_argv) as ours_url, running_url_process(sdk_argv) as sdk_url:
        ours_port, sdk_port = int(urlsplit(ours_url).port or 0), int(urlsplit(sdk_url).port or 0)
        # The table is written for our port; the SDK's loopback default takes any port, so it sees the same names.
        bind = Bind("127.0.0.1 (real processes)", "127.0.0.1", port=ours_port)
        verdicts: list[tuple[Case, Verdict, Verdict]] = []
        for case in cases_for(bind):
            request = raw_request(case)
            ours = verdict_of(status_over_socket(ours_port, request))
            verdicts.append((case, ours, verdict_of(status_over_socket(sdk_port, request))))
    assert {ours for _, ours, _ in verdicts} == {"host refused", "origin refused", "bad request", "passed"}
    problems = disagreements(bind, verdicts)
    assert not problems, "\n".join(problems)


async def test_a_second_host_line_is_a_bad_request_that_says_so() -> None:
    bind = BINDS[0]
    statuses: list[int] = []
    bodies: list[bytes] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])
        else:
            bodies.append(message.get("body", b""))

    for hosts in ((b"127.0.0.1:8123", b"evil.example"), (b"127.0.0.1:8123", b"127.0.0.1:8123")):
        await our_app_for(bind)(request_scope(bind, Case(hosts)), receive, send)
    assert statuses == [400, 400]
    assert all(b"more than one Host header" in body for body in bodies), bodies
