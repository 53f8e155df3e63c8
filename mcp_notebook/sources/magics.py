"""IPython magics as prompts: `magic.<name>` in documentation mode, or live for allowed magics.

Every line and cell magic of the kernel becomes a prompt named `magic.<name>`
(a cell magic whose line twin exists is `magic.cell.<name>`), titled `%name`
or `%%name` and described by the first paragraph of its docstring.

* Documentation mode (every magic): the arguments come from the magic's
  `@magic_arguments` parser when it has one (one per option or positional,
  with its help), otherwise one optional `line`; cell magics also take an
  optional `body`. Rendering gives the usage, the docstring and the exact
  invocation built from the arguments. Nothing runs.
* Live mode (only magics the user allows): rendering runs the invocation in
  the kernel and returns what it printed and displayed. Running is the IPython
  layer's job; this module builds the invocation, and `magic_output` turns the
  captured output into content blocks.

This module reads the magics table by duck typing and never imports IPython.
A magic still declared lazily (its extension not imported yet) is listed from
its name alone: reading anything else from it would load the extension.
"""

from __future__ import annotations

import argparse
import inspect
import shlex
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

from ..models import PromptArgument, PromptMessage, PromptSpec, RenderedPrompt, TextContent
from ..naming import is_valid_name
from ..registry import PromptRegistry
from ..rendering import render_prompt

# Re-exported: whoever renders magic prompts needs the live half too.
from .magic_output import CapturedOutput, to_content_blocks, to_live_result

__all__ = [
    "MAGICS_GROUP",
    "MAGIC_META_KEY",
    "MAGIC_ORIGIN",
    "CapturedOutput",
    "MagicInfo",
    "MagicInvocation",
    "MagicKind",
    "MagicOption",
    "MagicPromptSource",
    "build_invocation",
    "describe_magic",
    "describe_magics",
    "render_magic_documentation",
    "to_content_blocks",
    "to_live_result",
    "to_magic_prompts",
]

MagicKind = Literal["line", "cell"]

MAGICS_GROUP = "magics"
MAGIC_ORIGIN = "magic"
# Marks a magic prompt in its `_meta`, so it is recognised under any (qualified) name.
MAGIC_META_KEY = "io.github.mcp-notebook/magic"

_FALSE_WORDS = frozenset({"", "0", "false", "no", "off", "n", "f"})
_ESCAPES: Mapping[MagicKind, str] = {"line": "%", "cell": "%%"}


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

    @property
    def title(self) -> str:
        return f"{_ESCAPES[self.kind]}{self.name}"

    @property
    def body_argument(self) -> str | None:
        """The prompt argument that carries a cell magic's body; None for line magics."""
        if self.kind != "cell":
            return None
        taken = {option.argument for option in self.options or ()}
        return "body" if "body" not in taken else "cell_body"


@dataclass(frozen=True, slots=True)
class MagicInvocation:
    """A magic call built from prompt arguments: what to run, or to paste into a cell."""

    name: str
    kind: MagicKind
    line: str
    body: str | None = None

    @property
    def source(self) -> str:
        head = f"{_ESCAPES[self.kind]}{self.name}" + (f" {self.line}" if self.line else "")
        return head if self.kind == "line" else f"{head}\n{self.body or ''}"


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


def describe_magic(name: str, kind: MagicKind, fn: object) -> MagicInfo:
    """Read a magic's docstring and parser (never loading a lazily declared magic)."""
    if _is_lazy(fn):
        return MagicInfo(name=name, kind=kind, provider=_lazy_provider(fn))
    doc = inspect.cleandoc(getattr(fn, "__doc__", None) or "")
    parser = getattr(fn, "parser", None)
    if not isinstance(parser, argparse.ArgumentParser):
        return MagicInfo(name=name, kind=kind, doc=doc, summary=_first_paragraph(doc))
    options = tuple(o for o in (_to_option(a, parser.prog) for a in parser._actions) if o is not None)
    return MagicInfo(
        name=name,
        kind=kind,
        doc=doc,
        summary=_first_paragraph(parser.description) or _first_paragraph(doc),
        usage=parser.format_usage().strip().removeprefix("usage:").strip(),
        options=options,
    )


def describe_magics(table: Mapping[str, Mapping[str, object]]) -> tuple[MagicInfo, ...]:
    """Every magic of a magics table (`{"line": {name: fn}, "cell": {name: fn}}`), line magics first."""
    infos: list[MagicInfo] = []
    for kind in ("line", "cell"):
        for name, fn in sorted(table.get(kind, {}).items()):
            infos.append(describe_magic(name, kind, fn))
    return tuple(infos)


def _prompt_name(info: MagicInfo, line_names: frozenset[str]) -> str:
    if info.kind == "cell" and info.name in line_names:
        return f"magic.cell.{info.name}"
    return f"magic.{info.name}"


def _arguments(info: MagicInfo) -> tuple[PromptArgument, ...]:
    if info.options is None:
        arguments = [PromptArgument(name="line", description=f"What follows {info.title} on its line", required=False)]
    else:
        arguments = []
        for option in info.options:
            if option.flag is not None and not option.takes_value:
                description = f"{option.flag}: " + (option.help or "a switch") + " (true to pass it)"
                arguments.append(
                    PromptArgument(
                        name=option.argument,
                        description=description,
                        required=False,
                        completions=("true", "false"),
                    )
                )
                continue
            label = option.flag or option.argument
            description = f"{label}: {option.help}" if option.help else label
            arguments.append(
                PromptArgument(
                    name=option.argument,
                    description=description,
                    required=option.required,
                    completions=option.choices,
                )
            )
    body = info.body_argument
    if body is not None:
        arguments.append(PromptArgument(name=body, description=f"The cell body under {info.title}", required=False))
    return tuple(arguments)


def _description(info: MagicInfo, live: bool) -> str:
    if info.provider is not None:
        text = f"The magic {info.title}, provided by {info.provider} (not loaded yet)."
    else:
        text = info.summary or f"The IPython magic {info.title}."
    return f"{text} [runs in the kernel]" if live else text


def to_magic_prompts(infos: Sequence[MagicInfo], live: Sequence[str] = ()) -> tuple[PromptSpec, ...]:
    """The prompts for a set of magics; those whose title (`%who`, `%%bash`) or name is in `live` run live.

    Magics whose names cannot be prompt names (`%%!`) are left out.
    """
    line_names = frozenset(i.name for i in infos if i.kind == "line")
    allowed = frozenset(live)
    prompts: list[PromptSpec] = []
    for info in infos:
        name = _prompt_name(info, line_names)
        if not is_valid_name(name):
            continue
        is_live = info.title in allowed or (info.name in allowed and info.kind == "line") or name in allowed
        prompts.append(
            PromptSpec(
                name=name,
                title=info.title,
                description=_description(info, is_live),
                arguments=_arguments(info),
                meta=MappingProxyType({MAGIC_META_KEY: {"magic": info.title, "live": is_live}}),
                origin=MAGIC_ORIGIN,
            )
        )
    return tuple(prompts)


def _quote(value: str) -> str:
    return shlex.quote(value) if value else "''"


def build_invocation(info: MagicInfo, values: Mapping[str, str]) -> MagicInvocation:
    """The magic call the arguments ask for: switches that are true, options and positionals that are set."""
    body_name = info.body_argument
    body = values.get(body_name, "") if body_name is not None else None
    if info.options is None:
        return MagicInvocation(name=info.name, kind=info.kind, line=values.get("line", "").strip(), body=body)
    words: list[str] = []
    positionals: list[str] = []
    for option in info.options:
        value = values.get(option.argument, "")
        if option.flag is None:
            if value.strip():
                # Several words are passed as the user wrote them; one word is quoted as one.
                positionals.append(value.strip() if option.multiple else _quote(value))
        elif not option.takes_value:
            if value.strip().lower() not in _FALSE_WORDS:
                words.append(option.flag)
        elif value.strip():
            words.append(f"{option.flag} {value.strip() if option.multiple else _quote(value)}")
    return MagicInvocation(name=info.name, kind=info.kind, line=" ".join([*words, *positionals]), body=body)


def _validated_values(spec: PromptSpec, arguments: Mapping[str, str] | None) -> dict[str, str]:
    # render_prompt with no messages checks unknown, missing and oversized arguments by the shared rules.
    render_prompt(replace(spec, messages=()), arguments)
    return dict(arguments or {})


def render_magic_documentation(
    info: MagicInfo, spec: PromptSpec, arguments: Mapping[str, str] | None
) -> RenderedPrompt:
    """A documentation-mode magic prompt: usage, docstring and the invocation to paste. Nothing runs."""
    invocation = build_invocation(info, _validated_values(spec, arguments))
    parts = [f"The IPython magic `{info.title}`."]
    if info.provider is not None:
        parts.append(f"It is provided by `{info.provider}`, which is imported when the magic is first used.")
    if info.usage:
        parts.append(f"Usage:\n\n    {info.usage}")
    if info.doc:
        parts.append(info.doc)
    parts.append(f"To run it, put this in a notebook cell:\n\n```python\n{invocation.source}\n```")
    text = "\n\n".join(parts)
    message = PromptMessage(role="user", content=TextContent(text=text))
    return RenderedPrompt(messages=(message,), description=spec.description, name=spec.name)


@dataclass(frozen=True, slots=True)
class _Catalog:
    key: tuple[tuple[str, str, int], ...]
    by_title: Mapping[str, MagicInfo]
    live: frozenset[str]


class MagicPromptSource:
    """The kernel's magics as the registry group "magics", refreshed when magics come and go.

    `refresh(table)` runs on the kernel's main thread (after each cell); the
    server thread only calls `magic_for`, which reads an immutable catalog.
    """

    def __init__(self, registry: PromptRegistry, live: Sequence[str] = (), group: str = MAGICS_GROUP) -> None:
        self._registry = registry
        self._group = group
        self._lock = threading.Lock()
        self._live = tuple(live)
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
            prompts = to_magic_prompts(infos, self._live)
            by_title = {info.title: info for info in infos}
            live = frozenset(
                str(p.meta[MAGIC_META_KEY]["magic"]) for p in prompts if p.meta and p.meta[MAGIC_META_KEY]["live"]
            )
            self._catalog = _Catalog(key=key, by_title=MappingProxyType(by_title), live=live)
            self._registry.set_group(self._group, prompts)
        return True

    def magic_for(self, spec: PromptSpec) -> tuple[MagicInfo, bool] | None:
        """The magic behind a prompt and whether it may run live; None for other prompts."""
        marker = (spec.meta or {}).get(MAGIC_META_KEY)
        if spec.origin != MAGIC_ORIGIN or not isinstance(marker, Mapping):
            return None
        catalog = self._catalog
        info = catalog.by_title.get(str(marker.get("magic")))
        if info is None:
            return None
        return info, info.title in catalog.live

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
