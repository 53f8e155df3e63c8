"""Every option of a served folder, declared once.

The `serve` command's flags, the `MCP_NOTEBOOK_*` variables (the ASGI factory
and `serve --workers`) and the `c.MCPNotebook.*` traitlets of the Jupyter
server extension are all derived from `OPTIONS`: one name, one default, one
check, one help text each. The names follow one rule: the option `page_size`
is `--page-size`, `MCP_NOTEBOOK_PAGE_SIZE` and `c.MCPNotebook.page_size`; a
flag that turns on what is on by default is spelled `--no-NAME`. An option
that departs from the rule, or is missing from a surface, says why.

Only the standard library is imported, and not much of it: `mcp-notebook
--help` builds its parser from this module.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow `--help`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

__all__ = [
    "CLI",
    "ENV",
    "ENV_PREFIX",
    "JUPYTER",
    "OPTIONS",
    "Option",
    "from_env",
    "option",
    "shown",
    "to_env",
]

ENV_PREFIX = "MCP_NOTEBOOK_"
CLI, ENV, JUPYTER = "cli", "env", "jupyter"
_EVERYWHERE = frozenset({CLI, ENV, JUPYTER})
_OUTSIDE_JUPYTER = frozenset({CLI, ENV})
_NOT_IN_JUPYTER = "a Jupyter server listens, checks logins and limits connections itself"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


# -- kinds: how a value is read from text and checked --------------------------------------------------------------


class Kind:
    """How an option's value is written as text, read back and checked."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def read(self, text: str) -> Any:
        """The value `text` stands for, checked; ValueError with the rule alone ("must be at least 1")."""
        value = self.convert(text.strip())
        self.check(value)
        return value

    def convert(self, text: str) -> Any:
        return text

    def check(self, value: Any) -> None:
        """Raise ValueError with the rule alone when `value` (already of the right type) breaks it."""

    def write(self, value: Any) -> str:
        return str(value)


class Whole(Kind):
    __slots__ = ("least", "most")

    def __init__(self, least: int = 1, most: int = 1_000_000_000) -> None:
        super().__init__("int")
        self.least = least
        self.most = most

    def convert(self, text: str) -> int:
        digits = text.lstrip("+-")
        if digits.isdigit() and len(digits) > len(str(self.most)):  # before int(): thousands of digits cost
            least, most = f"must be at least {self.least}", f"must be at most {self.most}"
            raise ValueError(least if text.startswith("-") else most)
        try:
            return int(text)
        except ValueError:
            raise ValueError("must be a whole number") from None

    def check(self, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be a whole number")
        if value < self.least:
            raise ValueError(f"must be at least {self.least}")
        if value > self.most:
            raise ValueError(f"must be at most {self.most}")


_MONTH = 30 * 24 * 3600.0


class Seconds(Kind):
    """A duration or an interval: finite, and at least `least` seconds (each option's sane minimum)."""

    __slots__ = ("least", "most")

    def __init__(self, least: float, most: float = _MONTH) -> None:
        super().__init__("float")
        self.least = least
        self.most = most

    def convert(self, text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise ValueError("must be a number of seconds") from None

    def check(self, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("must be a number of seconds")
        if value != value or value in (float("inf"), float("-inf")):  # nan, or infinite
            raise ValueError("must be a finite number of seconds")
        if value < self.least:
            raise ValueError(f"must be at least {self.least:g} second{'' if self.least == 1 else 's'}")
        if value > self.most:
            raise ValueError(f"must be at most {self.most:g} seconds (30 days)")

    def write(self, value: Any) -> str:
        return repr(float(value))


class Port(Whole):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0)

    def convert(self, text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise ValueError("must be a port number") from None

    def check(self, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            raise ValueError("must be a port number from 0 to 65535 (0: any free port)")


class Flag(Kind):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("bool")

    def convert(self, text: str) -> bool:
        lowered = text.lower()
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
        raise ValueError("must be 1 or 0 (true/false)")

    def check(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise ValueError("must be 1 or 0 (true/false)")

    def write(self, value: Any) -> str:
        return "1" if value else "0"


class Text(Kind):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("str")

    def check(self, value: Any) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("must not be empty")


class Names(Kind):
    """Several names: a comma-separated list in a variable, one name per flag on the command line."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("names")

    def convert(self, text: str) -> tuple[str, ...]:
        return tuple(name.strip() for name in text.split(",") if name.strip())

    def check(self, value: Any) -> None:
        if not isinstance(value, tuple) or not all(isinstance(name, str) and name.strip() for name in value):
            raise ValueError("must be names separated by commas")

    def write(self, value: Any) -> str:
        return ",".join(value)


class Paths(Kind):
    """Notebooks or folders: separated by `os.pathsep` in a variable, one per word on the command line."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("paths")

    def convert(self, text: str) -> tuple[str, ...]:
        return tuple(path for path in text.split(os.pathsep) if path.strip())

    def check(self, value: Any) -> None:
        if not value:
            raise ValueError("must name at least one notebook or folder")

    def write(self, value: Any) -> str:
        return os.pathsep.join(os.path.abspath(path) for path in value)


# -- the declaration ---------------------------------------------------------------------------------------------


class Option:
    """One setting: its name, default, kind and help, and the surfaces it appears on.

    `default` may differ by surface (`defaults`), and the flag or trait may be
    named otherwise than the rule says (`flag`, `trait`): each such departure,
    and each surface left out, carries its reason in `why`.
    """

    __slots__ = (
        "cli_reads_env",
        "default",
        "defaults",
        "flag_help",
        "flag_name",
        "help",
        "kind",
        "metavar",
        "name",
        "off",
        "surfaces",
        "trait_name",
        "unset",
        "why",
    )

    def __init__(
        self,
        name: str,
        kind: Kind,
        default: Any,
        help: str,
        *,
        surfaces: frozenset[str] = _EVERYWHERE,
        metavar: str | None = None,
        flag: str | None = None,
        trait: str | None = None,
        defaults: Mapping[str, Any] | None = None,
        cli_reads_env: bool = False,
        unset: str | None = None,
        off: str | None = None,
        flag_help: str | None = None,
        why: str = "",
    ) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.help = help
        self.surfaces = surfaces
        self.metavar = metavar
        self.flag_name = flag
        self.trait_name = trait
        self.defaults = dict(defaults or {})
        self.cli_reads_env = cli_reads_env  # the flag's default is the variable, when it is set
        self.unset = unset  # what a default of None means, in words
        self.off = off  # the help of a `--no-NAME` flag
        self.flag_help = flag_help  # the flag's own words, where the command does more than the variable says
        self.why = why

    def __repr__(self) -> str:
        return f"Option({self.name!r})"

    @property
    def env(self) -> str:
        """The environment variable: `MCP_NOTEBOOK_` and the name in capitals."""
        return ENV_PREFIX + self.name.upper()

    @property
    def flag(self) -> str:
        """The `serve` flag: `--page-size`; `--no-watch` for what is on unless turned off."""
        if self.flag_name is not None:
            return self.flag_name
        spelled = self.name.replace("_", "-")
        return f"--no-{spelled}" if self.kind.name == "bool" and self.default is True else f"--{spelled}"

    @property
    def trait(self) -> str:
        """The `c.MCPNotebook.<trait>` name."""
        return self.trait_name or self.name

    def default_on(self, surface: str) -> Any:
        return self.defaults.get(surface, self.default)

    def check(self, value: Any) -> None:
        """ValueError (the rule) when `value` is not allowed; None is allowed where it is the default (unset)."""
        if value is None and self.default is None:
            return
        self.kind.check(value)

    def read(self, text: str) -> Any:
        return self.kind.read(text)


_TIMEOUT_WHY = "the Jupyter server's own timeouts apply there"

OPTIONS: tuple[Option, ...] = (
    # -- what is served, in every host
    Option(
        "paths",
        Paths(),
        (),
        "notebook files or folders to serve",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="PATH",
        why="a command-line word each; in Jupyter the server's root is served (MCPNotebook.root)",
    ),
    Option(
        "root",
        Kind("str"),
        "",
        "Folder whose notebooks are served as prompts, relative to the server's root directory "
        "(ContentsManager.root_dir), searched recursively; hidden folders are skipped. "
        "Default: the whole root. Example: --MCPNotebook.root=prompts",
        surfaces=frozenset({JUPYTER}),
        why="a Jupyter server serves a folder of its own root; elsewhere, `paths`",
    ),
    Option("page_size", Whole(1), 500, "prompts (and resources) per prompts/list page", metavar="N"),
    Option(
        "name",
        Text(),
        "mcp-notebook",
        "the server name MCP clients show for these prompts",
        trait="server_name",
        why="`name` is the Jupyter extension's own name",
    ),
    Option(
        "watch",
        Flag(),
        True,
        "reload a notebook when it is saved, and tell connected clients (notifications/list_changed)",
        off="do not reload notebooks when they change on disk",
    ),
    Option(
        "poll",
        Seconds(0.1),
        None,
        "look for changes every SECONDS instead of asking the kernel",
        metavar="SECONDS",
        cli_reads_env=True,
        unset="only on network file systems such as NFS, every 2 s",
    ),
    Option(
        "cache",
        Flag(),
        True,
        "keep an index of loaded notebooks, so a restart reads only what changed",
        off="neither read nor write the notebook index",
    ),
    Option(
        "skills",
        Flag(),
        True,
        "serve skills too (the MCP Skills extension): folders with a SKILL.md, notebooks tagged as skills",
        off="serve no skills (no skills/list, no skill:// resources)",
    ),
    Option(
        "cache_dir",
        Text(),
        None,
        "where the index of loaded notebooks is kept (delete it to clear)",
        metavar="DIR",
        cli_reads_env=True,
        unset="~/.cache/mcp-notebook, or under $XDG_CACHE_HOME",
    ),
    # -- serving HTTP: the command and the ASGI factory (a Jupyter server does all of this itself)
    Option(
        "host",
        Text(),
        "127.0.0.1",
        "the address the ASGI server was bound to, for the Host check",
        surfaces=_OUTSIDE_JUPYTER,
        defaults={ENV: "0.0.0.0"},
        flag_help="the address to listen on; an address other machines can reach also needs --allow-remote",
        why="the command binds the address itself and keeps to this machine unless told; under an ASGI server "
        "the variable names an address bound by that server, usually every interface of a container. "
        + _NOT_IN_JUPYTER,
    ),
    Option(
        "port",
        Port(),
        None,
        "the port the ASGI server was bound to, for the Host check (unset: the port each request arrived on)",
        surfaces=_OUTSIDE_JUPYTER,
        flag_help="the port to listen on",
        unset="any free port",
        why=_NOT_IN_JUPYTER,
    ),
    Option(
        "token",
        Text(),
        None,
        "require 'Authorization: Bearer TOKEN'",
        surfaces=_OUTSIDE_JUPYTER,
        cli_reads_env=True,
        unset="no token",
        flag_help="require 'Authorization: Bearer TOKEN'; every local user can read a flag in the process list: "
        "prefer --token-file or $MCP_NOTEBOOK_TOKEN",
        why="a Jupyter server checks its own token",
    ),
    Option(
        "allowed_hosts",
        Names(),
        (),
        "other names clients reach this server by (a load balancer's). The Host header must name this server: "
        "its address, this machine's names, or one of these",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="NAME[:PORT]",
        flag="--allowed-host",
        flag_help="another name clients reach this server by (a load balancer's). The Host header must name this "
        "server: its address, this machine's names, or one of these",
        why="one name per flag, repeatable; the variable lists them separated by commas. " + _NOT_IN_JUPYTER,
    ),
    Option(
        "workers",
        Whole(1),
        1,
        "worker processes sharing the port; more than one serves handshake clients without sessions, as "
        "--stateless does (mcp-notebook help deployment)",
        surfaces=frozenset({CLI}),
        metavar="N",
        why="an ASGI server or process manager starts its own workers (--workers of uvicorn, gunicorn, hypercorn)",
    ),
    Option(
        "stateless",
        Flag(),
        False,
        "no handshake sessions: any process answers any request, no affinity needed (mcp-notebook help deployment)",
        surfaces=_OUTSIDE_JUPYTER,
        why=_NOT_IN_JUPYTER,
    ),
    Option(
        "header_timeout",
        Seconds(0.5),
        10.0,
        "seconds a client has to send headers",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="S",
        why=_TIMEOUT_WHY,
    ),
    Option(
        "body_timeout",
        Seconds(0.5),
        30.0,
        "seconds a client has to send a request body",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="S",
        why=_TIMEOUT_WHY,
    ),
    Option(
        "keep_alive_timeout",
        Whole(1),
        5,
        "seconds an idle keep-alive connection stays open",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="S",
        why=_TIMEOUT_WHY,
    ),
    Option(
        "max_connections",
        Whole(1),
        None,
        "open connections",
        surfaces=_OUTSIDE_JUPYTER,
        unset="below the file descriptor limit",
        metavar="N",
        why=_NOT_IN_JUPYTER,
    ),
    Option(
        "session_idle_timeout",
        Seconds(1.0),
        300.0,
        "end a handshake session idle this long",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="S",
        flag="--session-timeout",
        why="the flag keeps its first, shorter name. " + _NOT_IN_JUPYTER,
    ),
    Option(
        "max_sessions",
        Whole(1),
        1000,
        "open handshake sessions",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="N",
        why=_NOT_IN_JUPYTER,
    ),
    Option(
        "max_sessions_per_peer",
        Whole(1),
        None,
        "handshake sessions one client address may hold",
        surfaces=_OUTSIDE_JUPYTER,
        unset="half of --max-sessions",
        metavar="N",
        why=_NOT_IN_JUPYTER,
    ),
    Option(
        "session_evict_after",
        Seconds(1.0),
        60.0,
        "seconds a session must have been idle before a newcomer may end it to make room",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="S",
        why=_NOT_IN_JUPYTER,
    ),
    Option(
        "drain_timeout",
        Seconds(0.1),
        10.0,
        "on SIGTERM, seconds to finish requests in flight",
        surfaces=_OUTSIDE_JUPYTER,
        metavar="S",
        why=_NOT_IN_JUPYTER,
    ),
    # -- set by one surface for another
    Option(
        "token_hint",
        Text(),
        None,
        "where clients get the token, as the 401 tells them",
        surfaces=frozenset({ENV}),
        why="the command says it itself (the flag or file the token came from), and tells its workers so",
    ),
    Option(
        "worker_dir",
        Text(),
        None,
        "a directory the workers of one server share: the first to start prints the summary of the folder",
        surfaces=frozenset({ENV}),
        why="`serve --workers N` makes one for its workers; under a process manager each process prints its own",
    ),
)

_BY_NAME = {option.name: option for option in OPTIONS}

# The limits of `transports/limits.py`, by the name of their field there.
LIMITS: tuple[str, ...] = (
    "header_timeout",
    "body_timeout",
    "keep_alive_timeout",
    "max_connections",
    "session_idle_timeout",
    "max_sessions",
    "max_sessions_per_peer",
    "session_evict_after",
    "drain_timeout",
)


_SHOWN = 40  # characters of a refused value that are repeated back


def shown(value: Any) -> str:
    """A refused value as a refusal repeats it: its repr, cut short (a 5,000-digit number is not echoed whole)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(value, str) and len(value) > _SHOWN:
        return f"{value[:_SHOWN]!r}… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}… ({len(text):,} characters)"


def option(name: str) -> Option:
    """The option called `name`."""
    return _BY_NAME[name]


def on(surface: str) -> tuple[Option, ...]:
    """The options a surface (`CLI`, `ENV`, `JUPYTER`) has, in the declared order."""
    return tuple(option for option in OPTIONS if surface in option.surfaces)


def from_env(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The values of the options called `names` that `environ` sets; ValueError naming the variable when one is bad."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for name in names:
        declared = _BY_NAME[name]
        text = environ.get(declared.env, "")
        if not text.strip():
            continue
        try:
            values[name] = declared.read(text)
        except ValueError as error:
            raise ValueError(f"{declared.env} {error}, got {shown(text.strip())}") from None
    return values


def to_env(values: Mapping[str, Any]) -> dict[str, str]:
    """The variables `from_env` reads back into `values` (an option left None is left out)."""
    return {_BY_NAME[name].env: _BY_NAME[name].kind.write(value) for name, value in values.items() if value is not None}


def check_values(values: Mapping[str, Any]) -> None:
    """ValueError naming the first option of `values` (by name) whose value its declaration refuses."""
    for name, value in values.items():
        try:
            _BY_NAME[name].check(value)
        except ValueError as error:
            raise ValueError(f"{name} {error}, got {shown(value)}") from None


def problem_in_trait(name: str, value: Any) -> str | None:
    """Why a Jupyter setting's value is refused (`MCPNotebook.page_size must be at least 1, got 0`), or None."""
    declared = _BY_NAME[name]
    try:
        declared.check(value)
    except ValueError as error:
        return f"MCPNotebook.{declared.trait} {error}, got {shown(value)}"
    return None


def argparse_type(name: str) -> Callable[[str], Any]:
    """The `type=` of the option's flag: the value, or argparse's error with the rule (`must be at least 1`)."""
    declared = _BY_NAME[name]

    def read(text: str) -> Any:
        import argparse

        try:
            return declared.read(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{error}, got {shown(text)}") from None

    read.__name__ = declared.kind.name  # argparse names the type in some of its messages
    return read
