"""Every error mcp-notebook raises, in one tree.

    MCPNotebookError
    ├── PromptError                 bad prompt input; the server answers -32602
    │   ├── UnknownPromptError          .name, .suggestions
    │   ├── MissingArgumentsError       .prompt, .missing
    │   │   └── DeclinedArgumentsError      the user was asked for them and declined; .action
    │   ├── UnknownArgumentsError       .prompt, .unknown
    │   ├── InvalidCursorError          .cursor
    │   ├── ArgumentTooLargeError       .prompt, .argument, .size, .limit
    │   ├── UnknownMagicError           the `magic` prompt asked for a magic the kernel lacks; .name, .suggestions
    │   ├── InvalidMagicArgumentError   a value a live magic does not accept (nothing ran); .prompt, .argument
    │   └── VariableArgumentError       a `var[…]` argument naming no variable the prompt may read; .prompt, .argument
    ├── AmbiguousPromptError        a bare prompt name several servers offer; .name, .candidates
    ├── PromptCellError             a `%%prompt` first line that cannot be understood
    ├── PromptExecutionError        a prompt that runs something (a live magic) failed; -32603 with its message; .prompt
    │   └── MagicExecutionError         a live magic failed or ran past its limit; .magic
    ├── NotebookFormatError         a notebook that cannot be read or breaks the format; .path
    ├── ResourceError               a resource that cannot be read; .uri
    │   ├── PathOutsideRootError        a path that escapes the served root; .path
    │   │   └── PathRefusedError            a path no request may name (outside, hidden, ...); names no server path
    │   └── EmbeddedFileArgumentError   an argument names an unreadable embedded file; -32602 (a PromptError)
    ├── ServerError                 a remote MCP server answered with an error; .code, .data
    │   ├── ServerConnectionError       it could not be reached or went away; .server
    │   └── SkillsNotOfferedError       it does not declare the Skills extension, so has no skills; .server
    ├── UnknownSkillError           no skill (or several) of that name on the connected servers; .name, .suggestions
    └── ConfigError                 an MCP configuration file or entry is unusable; .path

Each edge translates these once: the protocol seam into JSON-RPC errors, the
IPython magics into `UsageError`, the LSP bridge into editor messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "AmbiguousPromptError",
    "ArgumentTooLargeError",
    "ConfigError",
    "DeclinedArgumentsError",
    "EmbeddedFileArgumentError",
    "InvalidCursorError",
    "InvalidMagicArgumentError",
    "MCPNotebookError",
    "MagicExecutionError",
    "MissingArgumentsError",
    "NotebookFormatError",
    "PathOutsideRootError",
    "PathRefusedError",
    "PromptCellError",
    "PromptError",
    "PromptExecutionError",
    "ResourceError",
    "ServerConnectionError",
    "ServerError",
    "SkillsNotOfferedError",
    "UnknownArgumentsError",
    "UnknownMagicError",
    "UnknownPromptError",
    "UnknownSkillError",
    "VariableArgumentError",
]


class MCPNotebookError(Exception):
    """Root of every error raised by mcp-notebook."""


class PromptError(MCPNotebookError):
    """Bad input for a prompt request (JSON-RPC -32602 on the wire)."""

    def data(self) -> dict[str, Any]:
        """Structured details for the JSON-RPC error's `data`."""
        return {}


class UnknownPromptError(PromptError):
    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"Unknown prompt: {name}{hint}")

    def data(self) -> dict[str, Any]:
        return {"name": self.name, "suggestions": list(self.suggestions)}


class MissingArgumentsError(PromptError):
    def __init__(self, prompt: str, missing: Sequence[str]) -> None:
        self.prompt = prompt
        self.missing = tuple(missing)
        super().__init__(f"Missing required arguments for prompt {prompt!r}: {', '.join(self.missing)}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "missing": list(self.missing)}

    def how_to_call(self, command: str, call: str) -> str:
        """What a front end tells the user: only the missing arguments, and the call that gives them.

        `command` names the prompt as the user wrote it (`mine:translate`);
        `call` is the user's call so far, in the front end's syntax
        (`%mcp get mine:translate lang=German`), to which the missing
        arguments are added: `Missing required argument for mine:translate:
        text. Call it as: %mcp get mine:translate lang=German text=…`.
        """
        plural = "s" if len(self.missing) != 1 else ""
        additions = " ".join(f"{name}=…" for name in self.missing)
        return (
            f"Missing required argument{plural} for {command}: {', '.join(self.missing)}{self._note()}. "
            f"Call it as: {call} {additions}"
        )

    def _note(self) -> str:
        """Said after the missing names: why they are missing, when more than "not given" is known."""
        return ""


class DeclinedArgumentsError(MissingArgumentsError):
    """Required arguments the server asked the user for, and the user declined (or cancelled) to give.

    `action` is the user's answer: "decline" (said no) or "cancel" (dismissed the question).
    """

    def __init__(self, prompt: str, missing: Sequence[str], action: str) -> None:
        super().__init__(prompt, missing)
        self.action = action

    def __str__(self) -> str:
        return f"{super().__str__()}{self._note()}"

    def _note(self) -> str:
        answer = "cancelled the question" if self.action == "cancel" else "declined to answer"
        return f" (the user was asked and {answer})"

    def data(self) -> dict[str, Any]:
        return {**super().data(), "action": self.action}


class UnknownArgumentsError(PromptError):
    """Arguments the prompt does not take; `suggestions` are the names meant, most likely (`naming.closest_names`)."""

    def __init__(
        self, prompt: str, unknown: Sequence[str], expected: Sequence[str] = (), suggestions: Sequence[str] = ()
    ) -> None:
        self.prompt = prompt
        self.unknown = tuple(unknown)
        self.expected = tuple(expected)
        self.suggestions = tuple(suggestions)
        known = f" (it takes: {', '.join(self.expected)})" if self.expected else " (it takes no arguments)"
        meant = f". Did you mean {', '.join(f'{name}=' for name in self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"Unknown arguments for prompt {prompt!r}: {', '.join(self.unknown)}{known}{meant}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "unknown": list(self.unknown), "expected": list(self.expected)}


class InvalidCursorError(PromptError):
    def __init__(self, cursor: str) -> None:
        self.cursor = cursor
        super().__init__("Invalid cursor")

    def data(self) -> dict[str, Any]:
        return {"cursor": self.cursor}


class ArgumentTooLargeError(PromptError):
    def __init__(self, prompt: str, argument: str, size: int, limit: int) -> None:
        self.prompt = prompt
        self.argument = argument
        self.size = size
        self.limit = limit
        super().__init__(f"Argument {argument!r} of prompt {prompt!r} is {size} bytes; the limit is {limit}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "argument": self.argument, "size": self.size, "limit": self.limit}


class PromptExecutionError(MCPNotebookError):
    """A prompt whose rendering runs something (a live magic in a kernel) failed.

    The message is meant for the client: the server answers -32603 with it.
    """

    def __init__(self, prompt: str, message: str) -> None:
        self.prompt = prompt
        super().__init__(message)

    def data(self) -> dict[str, Any]:
        """Structured details for the JSON-RPC error's `data`."""
        return {"prompt": self.prompt}


class NotebookFormatError(MCPNotebookError):
    """A notebook that cannot be read, or that breaks the prompt format."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class ResourceError(MCPNotebookError):
    """A resource that does not exist or cannot be read."""

    def __init__(self, uri: str, message: str) -> None:
        self.uri = uri
        super().__init__(message)


class PathOutsideRootError(ResourceError):
    def __init__(self, path: str, root: str) -> None:
        self.path = path
        self.root = root
        super().__init__(path, f"Refused: {path!r} is outside the served folder {root!r}")


class ServerError(MCPNotebookError):
    """A remote MCP server answered a request with an error."""

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        self.code = code
        self.data = data
        super().__init__(message)


class ServerConnectionError(ServerError):
    """A remote MCP server could not be started, reached, or went away."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        super().__init__(f"{server}: {message}")


class SkillsNotOfferedError(ServerError):
    """A server that does not declare the Skills extension (`io.modelcontextprotocol/skills`): it has no skills."""

    def __init__(self, server: str, protocol_version: str | None) -> None:
        self.server = server
        era = (
            f" It speaks protocol {protocol_version}; some servers (FastMCP 4.2) offer skills only to 2026-07-28 "
            "clients: connect it with mode 2026-07-28 or auto."
            if protocol_version is not None and protocol_version < "2026"
            else ""
        )
        extension = "io.modelcontextprotocol/skills"
        super().__init__(f"{server} offers no skills: it does not declare the Skills extension ({extension}).{era}")


class UnknownSkillError(MCPNotebookError):
    """No skill of that name on the servers searched, or several (then `suggestions` are the qualified names)."""

    def __init__(self, name: str, suggestions: Sequence[str] = (), *, ambiguous: bool = False) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        if ambiguous:
            message = f"Several servers offer a skill {name!r}: say which, as {' or '.join(self.suggestions)}"
        else:
            hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
            message = f"Unknown skill: {name}{hint}"
        super().__init__(message)


class ConfigError(MCPNotebookError):
    """An MCP configuration file or server entry that cannot be used."""

    def __init__(self, path: str | None, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class PathRefusedError(PathOutsideRootError):
    """A path a request may not name: outside the served folder, or hidden, a notebook, or outside
    the folder a templated embedded path selects from. The message quotes the path as the request
    gave it and never the served folder's location on the server."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.root = ""  # deliberately unknown: the message goes to clients
        self.reason = reason
        ResourceError.__init__(self, path, f"Refused: {_shown(path)} {reason}")


class EmbeddedFileArgumentError(PromptError, ResourceError):
    """A prompt argument that selects an embedded file which is missing or cannot be read (-32602).

    `reason` says what is wrong with the file, naming it relative to the served folder.
    """

    def __init__(self, prompt: str, path: str, reason: str) -> None:
        self.prompt = prompt
        self.path = path
        self.reason = reason
        ResourceError.__init__(self, path, f"Prompt {prompt!r}: {reason}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "path": self.path}


class UnknownMagicError(PromptError):
    """The `magic` prompt was asked for a magic this kernel does not have (-32602)."""

    def __init__(self, name: str, suggestions: Sequence[str] = (), prompt: str = "magic") -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        self.prompt = prompt
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"this kernel has no magic {name!r}{hint}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "magic": self.name, "suggestions": list(self.suggestions)}


class InvalidMagicArgumentError(PromptError):
    """An argument value a live magic does not accept (JSON-RPC -32602); nothing ran."""

    def __init__(self, prompt: str, argument: str, message: str) -> None:
        self.prompt = prompt
        self.argument = argument
        super().__init__(f"{prompt}: argument {argument!r} {message}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "argument": self.argument}


class VariableArgumentError(PromptError):
    """A `NAME:var` argument whose value names no variable the prompt may read (-32602 on the wire)."""

    def __init__(self, prompt: str, argument: str, message: str) -> None:
        self.prompt = prompt
        self.argument = argument
        super().__init__(f"Prompt {prompt!r}, argument {argument!r}: {message}")

    def data(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "argument": self.argument}


class AmbiguousPromptError(MCPNotebookError):
    """A bare prompt name that several servers offer."""

    def __init__(self, name: str, candidates: Sequence[str]) -> None:
        self.name = name
        self.candidates = tuple(candidates)
        super().__init__(f"Prompt {name!r} is offered by several servers; name one: {', '.join(self.candidates)}")


class PromptCellError(MCPNotebookError):
    """A `%%prompt` line that cannot be understood (the magic shows it as a usage error)."""


class MagicExecutionError(PromptExecutionError):
    """A live magic failed, or could not run in time; clients get its message (JSON-RPC -32603)."""

    def __init__(self, magic: str, message: str, prompt: str | None = None) -> None:
        self.magic = magic
        super().__init__(prompt or magic, f"{magic} failed: {message}")


def _shown(text: str, limit: int = 200) -> str:
    """`text` quoted for a message, cut short: an error never echoes a huge request back."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text)} characters)"
