"""Which `Host` header values name this server: the DNS-rebinding guard, on every bind.

A page on a hostile site can make a browser resolve the site's own name to
this machine and talk to the server as if it were that site; the request
then carries the hostile name in `Host`. So `Host` must name this server,
whatever address it is bound to:

* bound to one address: that address and the loopback names, with the port;
* bound to every interface (`0.0.0.0`, `::`): also the machine's host name,
  its fully qualified name, and the addresses of its interfaces, with the port;
* always: each name given with `--allowed-host` (a load balancer's or a
  Service's name), with any port, or exactly `NAME:PORT` when a port is given.

Why not the SDK's own check (`mcp.server.transport_security`, which
`sessions.py` turns off): it guards only a server bound to a loopback name,
and checks nothing on `0.0.0.0` or `::`, though a rebinding page reaches a
wildcard bind through loopback just the same; its `NAME:*` patterns are
string prefixes, so any port passes and so does `localhost:1@evil.example`
(ours wants the bound port); it compares names case-sensitively; it reads
only the first of repeated `Host` or `Origin` lines (`http.py` answers 400 to
a second `Host` and checks every `Origin`); and it has no notion of the
machine's own names. The differential test of the two gates
(`tests/transports/test_host_gate_differential.py`) lists each difference
with its reason; everywhere else they agree.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["LOOPBACK_NAMES", "WILDCARD_HOSTS", "HostAllowList", "bracketed", "machine_names"]

LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_HOSTS: Final = frozenset({"", "0.0.0.0", "::"})
_SIOCGIFADDR: Final = 0x8915  # Linux: the IPv4 address of one interface


def bracketed(host: str) -> str:
    """An IPv6 literal as it appears in a `Host` header or URL."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _interface_ipv4() -> Iterator[str]:
    try:
        import fcntl  # not on Windows, where the resolved host names have to do

        interfaces = socket.if_nameindex()
    except (ImportError, OSError):
        return
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in interfaces:
            with contextlib.suppress(OSError):
                request = struct.pack("256s", name.encode()[:15])
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
                yield socket.inet_ntoa(answer[20:24])


def _interface_ipv6() -> Iterator[str]:
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = line.split()[0]
            if len(raw) == 32:
                packed = bytes.fromhex(raw)
                yield socket.inet_ntop(socket.AF_INET6, packed)


def _resolved(names: Iterable[str]) -> Iterator[str]:
    for name in names:
        with contextlib.suppress(OSError, UnicodeError):
            for *_, address in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM):
                yield str(address[0])


def machine_names() -> frozenset[str]:
    """This machine's names and addresses (lower case, IPv6 unbracketed), best effort."""
    names = {socket.gethostname(), socket.getfqdn()}
    found = set(names) | set(_resolved(names)) | set(_interface_ipv4()) | set(_interface_ipv6())
    return frozenset(name.lower().split("%", 1)[0] for name in found if name) | LOOPBACK_NAMES


@dataclass(frozen=True, slots=True)
class HostAllowList:
    """`Host` values this server answers: `exact` (name:port) and names accepted with any port."""

    exact: frozenset[str]
    any_port: frozenset[str] = frozenset()

    @classmethod
    def for_bind(cls, host: str, port: int, extra: Iterable[str] = ()) -> HostAllowList:
        """The names for a server bound to `host`:`port`, plus the operator's `extra` names."""
        names = set(LOOPBACK_NAMES) | ({host.lower()} if host not in WILDCARD_HOSTS else set(machine_names()))
        shown = {bracketed(name) for name in names}
        exact = {f"{name}:{port}" for name in shown} | (shown if port == 80 else set())
        any_port: set[str] = set()
        for entry in extra:
            entry = entry.strip().lower()
            if not entry:
                continue
            name, port_text = _split_host(entry)
            if port_text:
                exact.add(f"{bracketed(name)}:{port_text}")
            else:
                any_port.add(bracketed(name))
        return cls(exact=frozenset(exact), any_port=frozenset(any_port))

    def __contains__(self, host: object) -> bool:
        if not isinstance(host, str):
            return False
        host = host.lower()
        if host in self.exact:
            return True
        name, _ = _split_host(host)
        return bracketed(name) in self.any_port

    @property
    def names(self) -> frozenset[str]:
        """The bare names (no port, IPv6 unbracketed), for checking `Origin`."""
        return frozenset(_split_host(entry)[0] for entry in self.exact | self.any_port)


def _split_host(value: str) -> tuple[str, str]:
    """`name`, `port` of a Host value (`[::1]:80`, `a.b:8`, `a.b`, bare `::1`); port may be ''."""
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest.removeprefix(":")
    if value.count(":") == 1:
        name, _, port = value.partition(":")
        return name, port
    return value, ""
