"""The prompt model: frozen value objects that travel from notebooks to clients.

Sources turn notebooks (and kernels, and magics) into `PromptSpec`s; the
protocol seam translates them to MCP types; the client translates MCP results
back into `PromptSpec` (with no templates) and `RenderedPrompt`. Nothing here
imports the MCP SDK.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, overload
from urllib.parse import unquote, urlsplit

__all__ = [
    "Annotations",
    "AudioContent",
    "CompletionResult",
    "ContentBlock",
    "Deferred",
    "DeferredParts",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "MessageTemplate",
    "PromptArgument",
    "PromptMessage",
    "PromptSpec",
    "RenderedPrompt",
    "ResourceInfo",
    "ResourceLink",
    "Role",
    "Skill",
    "SkillFile",
    "TextContent",
]

Role = Literal["user", "assistant"]

T = TypeVar("T")


class DeferredParts(Protocol):
    """What a `Deferred` reads its items from: numbered parts, each a tuple, made when first asked for."""

    def part(self, position: int) -> tuple[Any, ...]: ...

    def made(self) -> bool:
        """Whether the parts are made already, so that asking for one reads nothing."""
        ...


class Deferred(Sequence[T]):
    """A tuple whose items are made on first use: part `position` of `parts`.

    It compares, hashes, prints and pickles as that tuple, so a value object
    holding one equals the same object built eagerly. Prompts taken from the
    persistent index hold their messages this way: a start needs only what
    `prompts/list` shows, the messages are read when a prompt is first asked for.
    """

    __slots__ = ("_items_made", "_parts", "_position")

    def __init__(self, parts: DeferredParts, position: int) -> None:
        self._parts = parts
        self._position = position
        self._items_made: tuple[T, ...] | None = None  # kept once made: a prompts/get asks at each request

    def _items(self) -> tuple[T, ...]:
        items = self._items_made
        if items is None:
            items = self._items_made = self._parts.part(self._position)
        return items

    @property
    def made(self) -> bool:
        """Whether the items are there already; until then, the first use reads them (files, a database)."""
        return self._items_made is not None or self._parts.made()

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._items()[index]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[T]:
        items = self._items_made
        return iter(items if items is not None else self._items())

    def __contains__(self, value: object) -> bool:
        return value in self._items()

    def __bool__(self) -> bool:
        return bool(self._items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Deferred):
            other = other._items()
        return self._items() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._items())

    def __add__(self, other: tuple[T, ...]) -> tuple[T, ...]:
        return self._items() + tuple(other)

    def __radd__(self, other: tuple[T, ...]) -> tuple[T, ...]:
        return tuple(other) + self._items()

    def __repr__(self) -> str:
        return repr(self._items())

    def __reduce__(self) -> tuple[type[tuple[T, ...]], tuple[tuple[T, ...]]]:
        return tuple, (self._items(),)


@dataclass(frozen=True, slots=True)
class Annotations:
    """Hints for clients about a content block: who it is for and how important."""

    audience: tuple[Role, ...] | None = None
    priority: float | None = None
    last_modified: str | None = None  # ISO 8601


@dataclass(frozen=True, slots=True)
class Icon:
    """An icon a client may show next to a prompt."""

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] | None = None
    theme: Literal["light", "dark"] | None = None


@dataclass(frozen=True, slots=True)
class TextContent:
    text: str
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImageContent:
    data: str  # base64
    mime_type: str
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None
    type: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class AudioContent:
    data: str  # base64
    mime_type: str
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None
    type: Literal["audio"] = "audio"


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """An embedded resource: exactly one of `text` or `blob` (base64) is set."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None
    type: Literal["resource"] = "resource"


@dataclass(frozen=True, slots=True)
class ResourceLink:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: tuple[Icon, ...] | None = None
    annotations: Annotations | None = None
    meta: Mapping[str, Any] | None = None
    type: Literal["resource_link"] = "resource_link"


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt. Values are always strings on the wire."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = True
    default: str | None = None
    completions: tuple[str, ...] = ()
    # Where live completions come from (e.g. "var", "var:DataFrame"); None = static only.
    source: str | None = None
    # The question a server may ask the user when a client omits this (required) argument; None = never asked.
    ask: str | None = None


@dataclass(frozen=True, slots=True)
class MessageTemplate:
    """One message of a prompt before its arguments are filled in.

    `substitute` says whether `{{placeholders}}` in the content's string fields
    are filled at render time (cell sources, resource and link fields) or kept
    as they are (cell outputs). `path`, for an embedded resource, names a file
    relative to the notebook whose bytes are read at render time.
    """

    role: Role
    content: ContentBlock
    substitute: bool = True
    path: str | None = None


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """A published prompt: what `prompts/list` shows and how `prompts/get` renders it.

    Prompts listed by a remote server have no `messages` (their templates live
    on that server). `messages` is a tuple, or a `Deferred` one that is read
    when first used.
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    icons: tuple[Icon, ...] = ()
    meta: Mapping[str, Any] | None = None
    messages: Sequence[MessageTemplate] = ()
    # Where it came from: a notebook path, "kernel", "magic", or a server name.
    origin: str | None = None
    # For notebook prompts: the served root that file reads must stay inside.
    root: str | None = None

    def argument(self, name: str) -> PromptArgument | None:
        for arg in self.arguments:
            if arg.name == name:
                return arg
        return None

    @property
    def required_arguments(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if a.required)


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: Role
    content: ContentBlock


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The answer to `prompts/get`: the messages with their arguments filled in."""

    messages: tuple[PromptMessage, ...]
    description: str | None = None
    name: str | None = None
    meta: Mapping[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class CompletionResult:
    """Suggested values for one argument (at most 100)."""

    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A readable resource, as `resources/list` shows it."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


SKILL_FILE = "SKILL.md"
SKILL_SCHEME = "skill://"
"""The scheme of every skill's URI: `skill://PATH/SKILL.md` and the files beside it."""
# The rest of a skill:// URI that `urlsplit` and `unquote` leave as it is: no escapes, query, fragment, IPv6
# brackets, or the tabs and line breaks it drops (tests/test_skill_paths.py holds the two ways to each other).
_PLAIN_URI_REST = re.compile(r"[^%?#\[\]\t\r\n]*")
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The Skills extension's identifier, declared under `capabilities.extensions` by servers that serve skills."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill, as its entry lists it: its path in the skill's folder (posix), the digest and size its
    bytes have (`sha256:` and 64 lowercase hex digits), and the URI its server listed it at (None: the skill's
    folder and `path`, as this server serves it)."""

    path: str
    digest: str
    size: int
    mime_type: str | None = None
    uri: str | None = None


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill (the Skills extension): the URI of its `SKILL.md`, its frontmatter and its files, `SKILL.md` first.

    Served and read alike. A client's skill names the `server` it came from
    (the same URI on two servers is two skills) and has `files` None when the
    server publishes no manifest ("dynamic"). A served skill says where it
    comes from (`origin`, which warnings name): a skill read from a folder has
    `folder` (relative to the served folder, symlinks resolved), one made from
    a notebook its files' bytes in `contents`.
    """

    uri: str
    frontmatter: Mapping[str, Any]
    files: tuple[SkillFile, ...] | None
    server: str = ""
    origin: str = ""
    folder: str | None = None
    contents: Mapping[str, bytes] | None = field(default=None, compare=False, repr=False)
    meta: Mapping[str, Any] | None = field(default=None, compare=False)
    path: str = field(init=False, compare=False, repr=False)
    """The skill's path in its server's namespace (the last segment is its name): `acme/billing/refunds`."""

    def __post_init__(self) -> None:
        base = self.base
        if base.startswith(SKILL_SCHEME) and _PLAIN_URI_REST.fullmatch(base, len(SKILL_SCHEME)):
            path = base[len(SKILL_SCHEME) :]  # what the split below makes of a URI with nothing to decode
        else:
            parts = urlsplit(base)
            path = unquote(f"{parts.netloc}{parts.path}")
        object.__setattr__(self, "path", path.strip("/"))

    @staticmethod
    def uri_at(path: str) -> str:
        """The `SKILL.md` URI of the skill served at `path`."""
        return f"{SKILL_SCHEME}{path}/{SKILL_FILE}"

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def dynamic(self) -> bool:
        """Whether the server publishes no manifest (its files cannot be verified)."""
        return self.files is None

    @property
    def base(self) -> str:
        """The URI of the skill's folder (its `SKILL.md` URI without `/SKILL.md`): relative paths resolve here."""
        return self.uri[: -len(SKILL_FILE) - 1]

    @property
    def reference(self) -> str:
        """How `%mcp skill` names it: `SERVER:NAME`."""
        return f"{self.server}:{self.name}"

    @property
    def size(self) -> int | None:
        return None if self.files is None else sum(f.size for f in self.files)

    def file(self, path: str) -> SkillFile | None:
        """The listed file at `path` (relative to the skill's folder, normalised), or None."""
        return next((each for each in self.files or () if each.path == path), None)

    def uri_of(self, path: str) -> str:
        """The resource URI of `path` inside the skill's folder (a listed file's own URI when there is one)."""
        listed = self.file(path)
        return (listed.uri if listed is not None else None) or f"{self.base}/{path}"
