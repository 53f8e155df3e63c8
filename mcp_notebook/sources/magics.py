"""IPython magics as prompts: `magic.<name>` in documentation mode, or live for allowed magics.

Every line and cell magic of the kernel becomes a prompt named `magic.<name>`
(a cell magic whose line twin exists is `magic.cell.<name>`), titled `%name`
or `%%name` and described by the first paragraph of its docstring.

* Documentation mode (every magic): the arguments come from the magic's
  `@magic_arguments` parser when it has one (one per option or positional,
  with its help), otherwise one optional `line`; cell magics also take an
  optional `body`. Rendering gives the usage, the docstring and the exact
  invocation built from the arguments. Nothing runs.
* Live mode (only magics the user allows, within `live_policy`): rendering
  runs the invocation in the kernel and returns what it printed and displayed.
  Running is the IPython layer's job; this module checks the values and builds
  the invocation, and `magic_output` turns the captured output into content
  blocks. A live prompt's `_meta` says whether it executes code.

A kernel lists its magics only when asked: `listing="curated"` is the one
`magic` prompt, whose `name` argument completes every magic and renders its
documentation, the live magics and a few common ones; `"all"` is every magic;
`"live"` (what `%mcp serve` lists unless asked for its magics) the live ones.

The prompt specs and the listing are `magic_listing`'s, the invocations
`magic_invocation`'s, what a live magic may be passed `live_policy`'s; this
module reads the magics and keeps them published (`MagicPromptSource`).

This module reads the magics table by duck typing and never imports IPython.
A magic still declared lazily (its extension not imported yet) is listed from
its name alone: reading anything else from it would load the extension.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from ..exceptions import UnknownMagicError
from ..models import PromptMessage, PromptSpec, RenderedPrompt, TextContent
from ..registry import PromptRegistry
from ..rendering import render_prompt
from ..transcript import fence
from .live_policy import LivePolicy
from .magic_invocation import ESCAPES, MagicInvocation, MagicKind, build_invocation, build_live_invocation
from .magic_listing import (
    CURATED_MAGICS,
    GENERIC_MARKER,
    GENERIC_PROMPT,
    MAGIC_META_KEY,
    MAGIC_ORIGIN,
    MAX_LISTED_MAGICS,
    Listing,
    live_policies,
    to_magic_prompts,
)

# Re-exported: whoever renders magic prompts needs the live half too.
from .magic_output import CapturedOutput, to_content_blocks, to_live_result

__all__ = [
    "CURATED_MAGICS",
    "GENERIC_PROMPT",
    "MAGICS_GROUP",
    "MAGIC_META_KEY",
    "MAGIC_ORIGIN",
    "MAX_LISTED_MAGICS",
    "CapturedOutput",
    "Listing",
    "MagicInfo",
    "MagicInvocation",
    "MagicKind",
    "MagicOption",
    "MagicPromptSource",
    "UnknownMagicError",
    "build_invocation",
    "build_live_invocation",
    "describe_magic",
    "describe_magics",
    "render_magic_documentation",
    "to_content_blocks",
    "to_live_result",
    "to_magic_prompts",
]

# Groups are listed in the order of their keys: "~" sorts after notebook paths and "kernel", so a client's
# menu shows the user's own prompts before any magic. The qualified name of a clashing magic stays `magics.NAME`.
MAGICS_GROUP = "~/magics"


@dataclass(frozen=True, slots=True)
class MagicOption:
    """One option or positional of a magic's `@magic_arguments` parser, as a prompt argument."""

    argument: str  # the prompt argument's name (the parser's dest)
    flag: str | None  # "--number"; None for a positional
    help: str | None = None
    takes_value: bool = True  # False for switches such as --quiet
    multiple: bool = False  # a positional that takes several words
    required: bool = False
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MagicInfo:
    """What a prompt needs to know about one magic, read once on the kernel's main thread."""

    name: str
    kind: MagicKind
    doc: str = ""
    summary: str | None = None
    usage: str | None = None
    # None: the magic has no parser and takes one free-form `line`.
    options: tuple[MagicOption, ...] | None = None
    # The extension that provides a magic not loaded yet ("module" of a lazy declaration).
    provider: str | None = None
    # The module that defines the magic (its Magics class's, or the function's); None when unknown.
    module: str | None = None

    @property
    def title(self) -> str:
        return f"{ESCAPES[self.kind]}{self.name}"

    @property
    def body_argument(self) -> str | None:
        """The prompt argument that carries a cell magic's body; None for line magics."""
        if self.kind != "cell":
            return None
        taken = {option.argument for option in self.options or ()}
        return "body" if "body" not in taken else "cell_body"


def _is_lazy(fn: object) -> bool:
    # IPython's LazyMagic imports its extension on *any* attribute read it does not
    # define itself, so only the type and the instance dict may be looked at.
    return type(fn).__name__ == "LazyMagic"


def _lazy_provider(fn: object) -> str | None:
    spec = getattr(fn, "__dict__", {}).get("spec")
    return str(spec).partition(":")[0] if spec is not None else None


def _first_paragraph(text: str | None) -> str | None:
    if not text:
        return None
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        stripped = paragraph.strip()
        # A parser-made docstring starts with a `::` usage block: that is not prose.
        if stripped and stripped != "::" and not stripped.startswith("%"):
            return " ".join(line.strip() for line in stripped.splitlines())
    return None


def _expand_help(action: argparse.Action, prog: str) -> str | None:
    if not action.help or action.help == argparse.SUPPRESS:
        return None
    try:
        text = action.help % {**vars(action), "prog": prog}
    except (KeyError, TypeError, ValueError):
        text = action.help
    # Parser help is written as indented docstring text; one line reads better in a client.
    return " ".join(text.split()) or None


def _to_option(action: argparse.Action, prog: str) -> MagicOption | None:
    if isinstance(action, argparse._HelpAction) or action.dest == argparse.SUPPRESS:
        return None
    choices = tuple(str(c) for c in action.choices) if action.choices else ()
    if not action.option_strings:
        return MagicOption(
            argument=action.dest,
            flag=None,
            help=_expand_help(action, prog),
            multiple=action.nargs in ("*", "+", argparse.REMAINDER) or isinstance(action.nargs, int),
            required=action.nargs not in ("?", "*", argparse.REMAINDER),
            choices=choices,
        )
    flag = max(action.option_strings, key=lambda s: (s.startswith("--"), len(s)))
    return MagicOption(
        argument=action.dest,
        flag=flag,
        help=_expand_help(action, prog),
        takes_value=action.nargs != 0,
        multiple=action.nargs in ("*", "+") or (isinstance(action.nargs, int) and action.nargs > 1),
        required=bool(action.required),
        choices=choices,
    )


def _defining_module(fn: object) -> str | None:
    owner = getattr(fn, "__self__", None)  # a Magics method: the class says who defined it
    module = type(owner).__module__ if owner is not None else getattr(fn, "__module__", None)
    return module if isinstance(module, str) else None


def describe_magic(name: str, kind: MagicKind, fn: object) -> MagicInfo:
    """Read a magic's docstring and parser (never loading a lazily declared magic)."""
    if _is_lazy(fn):
        provider = _lazy_provider(fn)
        return MagicInfo(name=name, kind=kind, provider=provider, module=provider)
    doc = inspect.cleandoc(getattr(fn, "__doc__", None) or "")
    module = _defining_module(fn)
    parser = getattr(fn, "parser", None)
    if not isinstance(parser, argparse.ArgumentParser):
        return MagicInfo(name=name, kind=kind, doc=doc, summary=_first_paragraph(doc), module=module)
    options = tuple(o for o in (_to_option(a, parser.prog) for a in parser._actions) if o is not None)
    return MagicInfo(
        name=name,
        kind=kind,
        doc=doc,
        summary=_first_paragraph(parser.description) or _first_paragraph(doc),
        usage=parser.format_usage().strip().removeprefix("usage:").strip(),
        options=options,
        module=module,
    )


def describe_magics(table: Mapping[str, Mapping[str, object]]) -> tuple[MagicInfo, ...]:
    """Every magic of a magics table (`{"line": {name: fn}, "cell": {name: fn}}`), line magics first."""
    infos: list[MagicInfo] = []
    for kind in ("line", "cell"):
        for name, fn in sorted(table.get(kind, {}).items()):
            infos.append(describe_magic(name, kind, fn))
    return tuple(infos)


def _validated_values(spec: PromptSpec, arguments: Mapping[str, str] | None) -> dict[str, str]:
    # render_prompt with no messages checks unknown, missing and oversized arguments by the shared rules.
    render_prompt(replace(spec, messages=()), arguments)
    return dict(arguments or {})


def _documentation(info: MagicInfo, invocation: MagicInvocation, spec: PromptSpec, note: str | None) -> RenderedPrompt:
    parts = [f"The IPython magic `{info.title}`."]
    if info.provider is not None:
        parts.append(f"It is provided by `{info.provider}`, which is imported when the magic is first used.")
    if info.usage:
        parts.append(f"Usage:\n\n    {info.usage}")
    if info.doc:
        parts.append(info.doc)
    # A line break after the source, inside the fence: an empty cell body shows as an empty line.
    code = fence(invocation.source + "\n", "python")
    parts.append(f"To run it, put this in a notebook cell:\n\n{code}")
    if note:
        parts.append(note)
    text = "\n\n".join(parts)
    message = PromptMessage(role="user", content=TextContent(text=text))
    return RenderedPrompt(messages=(message,), description=spec.description, name=spec.name)


def render_magic_documentation(
    info: MagicInfo, spec: PromptSpec, arguments: Mapping[str, str] | None
) -> RenderedPrompt:
    """A documentation-mode magic prompt: usage, docstring and the invocation to paste. Nothing runs."""
    invocation = build_invocation(info, _validated_values(spec, arguments), spec.name)
    return _documentation(info, invocation, spec, None)


@dataclass(frozen=True, slots=True)
class _Catalog:
    key: tuple[tuple[str, str, int], ...]
    by_title: Mapping[str, MagicInfo]
    live: frozenset[str]
    policies: Mapping[str, LivePolicy | None] = field(default_factory=lambda: MappingProxyType({}))
    listed: frozenset[str] = frozenset()  # titles that have a prompt of their own in the listing

    def find(self, typed: str) -> MagicInfo | None:
        """The magic a client named: `timeit`, `%timeit`, `%%timeit`, `magic.timeit` or `magic.cell.timeit`."""
        name = typed.strip()
        if name.startswith("magic.cell."):
            return self.by_title.get("%%" + name.removeprefix("magic.cell."))
        name = name.removeprefix("magic.")
        if name.startswith("%"):
            return self.by_title.get(name)
        return self.by_title.get(f"%{name}") or self.by_title.get(f"%%{name}")


class MagicPromptSource:
    """The kernel's magics as the registry group "magics", refreshed when magics come and go.

    `refresh(table)` runs on the kernel's main thread (after each cell); the
    server thread only calls `magic_for`, `policy_for` and `render_generic`,
    which read an immutable catalog. `listing` is "all" (a prompt per magic),
    "curated" or "live" (see `to_magic_prompts`).
    """

    def __init__(
        self,
        registry: PromptRegistry,
        live: Sequence[str] = (),
        group: str = MAGICS_GROUP,
        *,
        listing: Listing = "all",
    ) -> None:
        self._registry = registry
        self._group = group
        self._lock = threading.Lock()
        self._live = tuple(live)
        self._listing: Listing = listing
        self._catalog = _Catalog(key=(), by_title=MappingProxyType({}), live=frozenset())

    @property
    def live(self) -> tuple[str, ...]:
        """The magics allowed to run live, as the user named them."""
        return self._live

    def set_live(self, live: Sequence[str]) -> None:
        """Change the allow-list; takes effect at the next `refresh`."""
        with self._lock:
            self._live = tuple(live)
            self._catalog = replace(self._catalog, key=())  # force a rebuild

    def refresh(self, table: Mapping[str, Mapping[str, object]]) -> bool:
        """Re-read the magics table; republish only when it changed. True when it did."""
        # Identity of every callable: cheap to compare, and a changed magic is a new object.
        key = tuple(
            sorted((kind, name, id(fn)) for kind in ("line", "cell") for name, fn in table.get(kind, {}).items())
        )
        with self._lock:
            if key == self._catalog.key and key:
                return False
            infos = describe_magics(table)
            prompts = to_magic_prompts(infos, self._live, listing=self._listing)
            by_title = {info.title: info for info in infos}
            policies = live_policies(infos, self._live)
            live = frozenset(title for title, policy in policies.items() if policy is not None)
            listed = frozenset(str((p.meta or {})[MAGIC_META_KEY]["magic"]) for p in prompts)
            self._catalog = _Catalog(
                key=key,
                by_title=MappingProxyType(by_title),
                live=live,
                policies=MappingProxyType(policies),
                listed=listed,
            )
            self._registry.set_group(self._group, prompts)
        return True

    def magic_for(self, spec: PromptSpec) -> tuple[MagicInfo, bool] | None:
        """The magic behind a prompt and whether it may run live; None for other prompts (and `magic`)."""
        marker = (spec.meta or {}).get(MAGIC_META_KEY)
        if spec.origin != MAGIC_ORIGIN or not isinstance(marker, Mapping):
            return None
        catalog = self._catalog
        info = catalog.by_title.get(str(marker.get("magic")))
        if info is None:
            return None
        return info, info.title in catalog.live

    def policy_for(self, info: MagicInfo) -> LivePolicy | None:
        """How a live magic may be called; None when it may not run live."""
        catalog = self._catalog
        return catalog.policies.get(info.title) if info.title in catalog.live else None

    def render_generic(self, spec: PromptSpec, arguments: Mapping[str, str] | None) -> RenderedPrompt | None:
        """Render the `magic` prompt (documentation of the magic `name`); None for any other prompt."""
        marker = (spec.meta or {}).get(MAGIC_META_KEY)
        if spec.origin != MAGIC_ORIGIN or not isinstance(marker, Mapping) or marker.get("magic") != GENERIC_MARKER:
            return None
        values = _validated_values(spec, arguments)
        catalog = self._catalog
        typed = values.get("name", "")
        info = catalog.find(typed)
        if info is None:
            keys = [title.lstrip("%") for title in catalog.by_title]
            wanted = typed.strip().lstrip("%")
            # A name is short: anything longer gets no suggestions, and costs nothing to compare.
            close = difflib.get_close_matches(wanted, keys, n=3) if len(wanted) <= 64 else []
            raise UnknownMagicError(typed[:64], close, prompt=GENERIC_PROMPT)
        line = values.get("line", "").strip()
        body = values.get("body", "") if info.kind == "cell" else None
        invocation = MagicInvocation(name=info.name, kind=info.kind, line=line, body=body)
        note = None
        if info.title in catalog.live:
            note = f"Clients may run {info.title} in this kernel through its own prompt (listed beside this one)."
        return _documentation(info, invocation, spec, note)

    def info(self, title: str) -> MagicInfo:
        """The magic of a title (`%who`, `%%bash`) as of the last refresh; KeyError when there is none."""
        return self._catalog.by_title[title]

    def refused_live(self) -> tuple[str, ...]:
        """The titles of magics the allow-list names that may never run live."""
        return tuple(title for title, policy in self._catalog.policies.items() if policy is None)

    def code_live(self) -> tuple[str, ...]:
        """The titles of allowed magics through which a client can run code."""
        policies = self._catalog.policies
        return tuple(title for title, policy in policies.items() if policy is not None and policy.executes_code)

    def unknown_live(self) -> tuple[str, ...]:
        """The allowed names (as the user wrote them) that match no magic of the last refresh."""
        catalog = self._catalog
        names = {info.name for info in catalog.by_title.values() if info.kind == "line"}
        prompts = {f"magic.{n}" for n in names} | {f"magic.cell.{i.name}" for i in catalog.by_title.values()}
        return tuple(m for m in self._live if m not in catalog.by_title and m not in names and m not in prompts)

    def clear(self) -> None:
        """Withdraw every magic prompt."""
        with self._lock:
            self._catalog = _Catalog(key=(), by_title=MappingProxyType({}), live=frozenset())
            self._registry.remove_group(self._group)
