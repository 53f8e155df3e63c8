"""The Python API: MCP prompts from plain synchronous code, mirroring the `%mcp` magics.

    import mcp_notebook

    docs = mcp_notebook.connect("docs")                  # a server from your MCP configuration
    docs = mcp_notebook.connect(command="uvx", args=["some-mcp-server"])
    docs = mcp_notebook.connect("https://host/mcp", headers={"Authorization": "Bearer …"})
    docs.prompts()                                       # every prompt, all pages
    msgs = docs.get("code_review", code=my_code, language="python")   # what %mcp get returns
    msgs.to_openai()                                     # or .to_anthropic()
    docs.complete("code_review", "language", "py")
    docs.skills()                                        # the server's skills (the Skills extension)
    docs.read_skill("pdf-processing").text              # its SKILL.md, checked against its digest
    docs.read_skill("pdf-processing", "references/FORMS.md")
    docs.close()

`connect()` reaches nothing: the connection opens on first use (or at
`.connect()`), and that call raises what went wrong, naming the URL or command.

Every call runs on the process-wide background runtime, so this works the
same in scripts, plain IPython and Jupyter (no "event loop is already
running"); Ctrl-C cancels the request in flight.
"""

from __future__ import annotations

import dataclasses
import functools
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlparse

from .client import InputHandler as AsyncInputHandler
from .client import InputRequest, PromptClient, Skill, SkillContent
from .config import ServerConfig, default_config_paths, load_server_configs
from .exceptions import (
    ConfigError,
    MCPNotebookError,
    MissingArgumentsError,
    ServerError,
    UnknownArgumentsError,
    UnknownPromptError,
)
from .llm import Conversation
from .models import CompletionResult, PromptSpec
from .naming import closest_names, suggest_names
from .runtime import BackgroundRuntime, get_runtime, run_in_caller
from .trust import UntrustedConfig

__all__ = [
    "Connection",
    "InputHandler",
    "argument_text",
    "ask_with_input",
    "check_arguments",
    "connect",
    "resolve_server",
]

P = ParamSpec("P")
T = TypeVar("T")

InputHandler = Callable[[InputRequest], Mapping[str, Any] | None]
"""Asks the user what a server needs; runs on the thread that made the request. None declines."""


def _one_error(method: Callable[P, T]) -> Callable[P, T]:
    """Errors leave `method` as one exception of ours with its message, without the machinery behind it.

    Below this edge a failure travels through task groups (exception groups)
    and is chained to the transport error that caused it: dozens of lines of
    traceback that say less than the message. The innermost error of ours is
    raised alone; anything else from inside a group becomes a `ServerError`
    naming it.
    """

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except (MCPNotebookError, BaseExceptionGroup) as error:
            raise _plain(error).with_traceback(None) from None

    return call


def _plain(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        ours = [e for e in error.exceptions if isinstance(e, MCPNotebookError | BaseExceptionGroup)]
        error = (ours or list(error.exceptions))[0]
    if isinstance(error, MCPNotebookError | KeyboardInterrupt):
        return error
    return ServerError(f"{type(error).__name__}: {error}")


class Connection:
    """One MCP server's prompts, used synchronously. Connects on first use, stays connected until `close()`.

    When a server needs input in the middle of a request, `input_handler`
    (default: questions with `input()`) runs on the calling thread; pass
    `on_input_required` instead to answer from the event loop (async).
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        mode: str = "auto",
        timeout: float = 30.0,
        input_handler: InputHandler | None = None,
        on_input_required: AsyncInputHandler | None = None,
        runtime: BackgroundRuntime | None = None,
    ) -> None:
        self.config = config
        self.input_handler: InputHandler = input_handler or ask_with_input
        self._runtime = runtime or get_runtime()
        self.client = PromptClient(
            config,
            mode=mode,
            request_timeout=timeout,
            connect_timeout=timeout,
            on_input_required=on_input_required or self._ask,
        )
        self._forget_shutdown = self._runtime.on_shutdown(self.client.close)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def connected(self) -> bool:
        return self.client.connected

    def __repr__(self) -> str:
        # Nothing is reached until first use: say so, or a wrong URL or token looks accepted.
        state = (
            f"connected, {self.client.protocol_version}"
            if self.connected
            else "not connected yet: connects on first use"
        )
        return f"<Connection {self.name!r} to {self.config.describe()} ({state})>"

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @_one_error
    def connect(self) -> Connection:
        """Connect now rather than on first use (to surface configuration errors early)."""
        self._runtime.call(self.client.connect)
        return self

    @_one_error
    def prompts(self, *, refresh: bool = False) -> tuple[PromptSpec, ...]:
        """Every prompt the server offers (cached until the server announces a change)."""
        return self._runtime.call(functools.partial(self.client.list_prompts, refresh=refresh))

    @_one_error
    def prompt(self, name: str) -> PromptSpec:
        """The listing entry of one prompt; `UnknownPromptError` (with close names) if there is none."""
        specs = self.prompts()
        for spec in specs:
            if spec.name == name:
                return spec
        raise UnknownPromptError(name, suggest_names(name, [s.name for s in specs]))

    @_one_error
    def get(self, name: str, /, **arguments: Any) -> Conversation:
        """Render prompt `name` with `arguments`; values that are not strings go through `argument_text`.

        The result is what `%mcp get` returns: a `RenderedPrompt` with
        `.to_openai()`, `.to_anthropic()` and `.to_dicts()`.

        Checked here first, so mistakes get a clear error without a round trip:
        an unknown prompt (`UnknownPromptError`, with close names), missing
        required arguments (`MissingArgumentsError`), unknown argument names
        (`UnknownArgumentsError`).
        """
        spec = self.prompt(name)
        values = {key: argument_text(value) for key, value in arguments.items()}
        check_arguments(spec, values)
        return Conversation.of(self._runtime.call(self.client.get_prompt, name, values))

    @_one_error
    def complete(self, name: str, argument: str, prefix: str = "", /, **context: Any) -> CompletionResult:
        """Values the server suggests for `argument` of prompt `name`, starting from `prefix`."""
        values = {key: argument_text(value) for key, value in context.items()}
        return self._runtime.call(self.client.complete, name, argument, prefix, values or None)

    @_one_error
    def skills(self) -> tuple[Skill, ...]:
        """Every skill the server lists, through the Skills extension (`io.modelcontextprotocol/skills`).

        A server that does not declare the extension raises `SkillsNotOfferedError`.
        """
        return self._runtime.call(self.client.list_skills)

    @_one_error
    def skill(self, name: str) -> Skill:
        """One skill: by name, by its path (`acme/billing/refunds`), or by the URI of its `SKILL.md`.

        A URI is asked of the server (`skills/get`), so a skill the listing
        leaves out is found too. An unknown name raises `UnknownSkillError`
        with close names; a name several skills share, with their paths.
        """
        if "://" in name:
            return self._runtime.call(self.client.get_skill, name)
        from .client.skills import find_skill

        return find_skill(self.skills(), name)

    @_one_error
    def read_skill(self, skill: Skill | str, path: str = "SKILL.md") -> SkillContent:
        """A file of a skill (default its `SKILL.md`), checked against the digest and size the server listed.

        `skill` is a `Skill` or what `skill()` takes; `path` is relative to the
        skill's folder (`references/FORMS.md`). `.text` is the file's text,
        `.body` a `SKILL.md`'s instructions without the frontmatter.
        """
        chosen = skill if isinstance(skill, Skill) else self.skill(skill)
        return self._runtime.call(self.client.read_skill_file, chosen, path)

    def close(self) -> None:
        """Disconnect (a stdio server process is stopped). Using the connection again reconnects."""
        self._forget_shutdown()
        if self._runtime.running:
            self._runtime.call(self.client.close)

    async def _ask(self, request: InputRequest) -> Mapping[str, Any] | None:
        # The handler may block on the user (input(), a form): run it on the waiting caller's thread.
        return await run_in_caller(self.input_handler, request)


def check_arguments(spec: PromptSpec, values: Mapping[str, str]) -> None:
    """Raise the `PromptError` a server would, before asking it: missing or unknown arguments."""
    missing = [name for name in spec.required_arguments if name not in values]
    if missing:
        raise MissingArgumentsError(spec.name, missing)
    known = {a.name for a in spec.arguments}
    unknown = [name for name in values if name not in known]
    if unknown:
        declared = [a.name for a in spec.arguments]
        raise UnknownArgumentsError(spec.name, unknown, declared, closest_names(unknown, declared))


def connect(
    target: str | ServerConfig | None = None,
    *,
    name: str | None = None,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    config: str | Path | Sequence[str | Path] | None = None,
    mode: str = "auto",
    timeout: float = 30.0,
    input_handler: InputHandler | None = None,
) -> Connection:
    """A `Connection` to an MCP server, which connects on first use (`.prompts()`, `.get()`, …), not here.

    So a wrong URL or token raises nothing here: the first call raises a
    `ServerConnectionError` naming the URL and the cause (for a refused token,
    the HTTP status and which token to send). Call `.connect()` on the result
    to connect at once.

    `target` is a server name from your MCP configuration files (Claude
    Desktop, Cursor, VS Code, `.mcp.json`, `mcp.json`, or the files passed as
    `config`), an `http(s)://` URL, a command line (`"uvx some-mcp-server"`),
    or a `ServerConfig`. Alternatively give `command` (+ `args`, `env`,
    `cwd`) or `url` (+ `headers`). `mode` pins the protocol era (`"legacy"`,
    `"2026-07-28"`); `timeout` bounds connecting and each request.
    """
    server = resolve_server(
        target, name=name, command=command, args=args, env=env, cwd=cwd, url=url, headers=headers, config=config
    )
    return Connection(server, mode=mode, timeout=timeout, input_handler=input_handler)


def resolve_server(
    target: str | ServerConfig | None = None,
    *,
    name: str | None = None,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    config: str | Path | Sequence[str | Path] | None = None,
    configured: Mapping[str, ServerConfig] | None = None,
) -> ServerConfig:
    """Turn what the user typed into a `ServerConfig` (see `connect` for the accepted forms)."""
    if isinstance(target, ServerConfig):
        return target
    if target is not None and (command is not None or url is not None):
        raise ConfigError(None, "give either a target or command=/url=, not both")
    if target is not None and _is_url(target):
        url, target = target, None
    if url is not None:
        return ServerConfig(name=name or urlparse(url).hostname or "remote", url=url, headers=headers)
    if command is not None:
        return ServerConfig(name=name or Path(command).stem, command=command, args=tuple(args), env=env, cwd=cwd)
    if target is None:
        raise ConfigError(None, "say which server: a name from your MCP configuration, a URL, or command=")
    if configured is None:
        untrusted: list[UntrustedConfig] = []
        configured = load_server_configs(_paths(config), on_error=_warn, on_untrusted=untrusted.append)
        for file in untrusted:
            what = dict(file.servers).get(target)
            if what is not None and target not in configured:
                raise ConfigError(
                    None,
                    f"MCP server {target!r} is in {file.path}, which you have not trusted: it would start {what}. "
                    f"If you trust this project, run `mcp-notebook trust {file.path}` and try again.",
                )
    if target in configured:
        server = configured[target]
        return server if name is None else dataclasses.replace(server, name=name)
    words = shlex.split(target)
    if len(words) > 1 or shutil.which(target):
        return ServerConfig(name=name or Path(words[0]).stem, command=words[0], args=tuple(words[1:]), env=env, cwd=cwd)
    known = ", ".join(sorted(configured)) or "none"
    hint = suggest_names(target, configured)
    did_you_mean = f" Did you mean {', '.join(hint)}?" if hint else ""
    searched = ", ".join(str(p) for p in default_config_paths() if p.is_file()) or "no configuration files found"
    raise ConfigError(
        None,
        f"no MCP server named {target!r} (configured: {known}; read from {searched}).{did_you_mean} "
        "Pass a URL, a command line, or command=/url=.",
    )


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _paths(config: str | Path | Sequence[str | Path] | None) -> list[Path]:
    if config is None:
        return []
    if isinstance(config, str | Path):
        return [Path(config)]
    return [Path(p) for p in config]


def _warn(error: ConfigError) -> None:
    print(f"mcp-notebook: skipping a configuration entry: {error}", file=sys.stderr)


def argument_text(value: Any) -> str:
    """A Python value as prompt-argument text (arguments are always strings on the wire).

    Strings pass unchanged; pandas DataFrames and Series become a Markdown
    table (`transcript.frame_markdown`, no `tabulate` needed) with a blank line
    before and after, so that inside a sentence it still reads as a table;
    NumPy arrays print in full for small arrays, summarised for big ones;
    bytes are decoded as UTF-8. The value is only formatted, never evaluated.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    kind = type(value)
    module = kind.__module__.split(".")[0]
    if module == "pandas" and kind.__name__ in ("DataFrame", "Series"):
        from .transcript import frame_markdown

        return f"\n\n{frame_markdown(value)}\n\n"
    if module == "numpy" and kind.__name__ == "ndarray":
        numpy: Any = sys.modules["numpy"]  # loaded, since one of its arrays exists
        with numpy.printoptions(threshold=1000):
            return str(numpy.array2string(value, separator=", "))
    return str(value)


def ask_with_input(request: InputRequest) -> Mapping[str, Any] | None:
    """Ask for what a server needs on the console with `input()`, one field at a time.

    Empty answers skip optional fields; values are converted to the types
    the schema asks for. End of input (Ctrl-D) declines.
    """
    print(request.message)
    try:
        if request.url is not None:
            print(f"Open {request.url}")
            answer = input("Press Enter when done, or type 'no' to decline: ").strip().lower()
            return None if answer in ("n", "no") else {}
        properties: Mapping[str, Any] = request.requested_schema.get("properties") or {}
        required = set(request.requested_schema.get("required") or ())
        values: dict[str, Any] = {}
        for field_name, schema in properties.items():
            value = _ask_field(field_name, schema, field_name in required)
            if value is not None:
                values[field_name] = value
        return values
    except EOFError:
        return None


def _ask_field(field_name: str, schema: Mapping[str, Any], required: bool) -> Any:
    label = schema.get("title") or field_name
    choices = [str(c) for c in schema.get("enum", ())]
    kind = schema.get("type", "string")
    hints = [f"one of {', '.join(choices)}" if choices else "", "yes/no" if kind == "boolean" else ""]
    hint = "; ".join(h for h in hints if h)
    question = f"{label}{f' ({hint})' if hint else ''}{'' if required else ' [optional]'}: "
    if schema.get("description"):
        print(f"  {schema['description']}")
    while True:
        text = input(question).strip()
        if not text and "default" in schema:
            return schema["default"]
        if not text and not required:
            return None
        try:
            return _typed(text, kind, choices)
        except ValueError as error:
            print(f"  {error}")


def _typed(text: str, kind: str, choices: Sequence[str]) -> Any:
    if not text:
        raise ValueError("an answer is required")
    if choices and text not in choices:
        raise ValueError(f"choose one of {', '.join(choices)}")
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    return text
