"""Prompts a running kernel defines with `%%prompt` cells.

A `%%prompt` cell publishes its body as a prompt template; its first line names
the prompt and sets its fields:

    %%prompt review --title "Code review" --arg code="the code to review" --optional tone=friendly
    Review this code in a {{tone}} tone:
    {{code}}

`parse_prompt_cell` turns the line and body into a `PromptCell`;
`KernelPromptSource` keeps the kernel's prompts (group "kernel" of the
registry): running a cell replaces its prompt, `--append` adds a message, and
`unpublish` removes a prompt. The body is a template only: it is never
executed, and argument values are inserted literally at render time.

Arguments are declared with `--arg NAME[="description"]` (required),
`--ask NAME[="question"]` (required, and asked of the user when a client
leaves it out: the notebook format's `ask`) and `--optional NAME[=default]`;
without any declaration they are inferred from the `{{placeholders}}`, all
required. `--arg` and `--ask` may name the same argument: the first gives its
description, the second its question. `NAME:var` (or `NAME:var[Type,…]`)
marks an argument whose value names a variable of the kernel, so clients can
complete it from the kernel's namespace (only variables of those types when
types are given: a built-in type such as `int`, or a class with its module,
such as `pandas.DataFrame`); `variable_references` reads which variables a request names,
whose values the kernel then sends in their place.
"""

from __future__ import annotations

import argparse
import builtins
import re
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from ..exceptions import PromptCellError, VariableArgumentError
from ..models import MessageTemplate, PromptArgument, PromptSpec, Role, TextContent
from ..naming import is_valid_name
from ..registry import PromptRegistry
from ..rendering import placeholders
from .summaries import DESCRIPTION_LIMIT, readable

__all__ = [
    "KERNEL_GROUP",
    "KERNEL_ORIGIN",
    "KernelPromptSource",
    "PromptCell",
    "PromptCellError",
    "VariableReference",
    "parse_prompt_cell",
    "variable_references",
    "variable_types",
]

KERNEL_GROUP = "kernel"
KERNEL_ORIGIN = "kernel"

# NAME, then an optional `:var` or `:var[Type,…]`, then an optional `=value`.
_ARGUMENT_SPEC = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"
    r"(?::(?P<source>var)(?:\[(?P<types>[^\]]*)\])?)?"
    r"(?:=(?P<value>.*))?$",
    re.DOTALL,
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.+?)\s*#*\s*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True, slots=True)
class PromptCell:
    """One run of a `%%prompt` cell: what its first line asks for, and the template body."""

    name: str
    body: str
    title: str | None = None
    description: str | None = None
    role: Role = "user"
    # Declared arguments, in the order given; empty means "infer from placeholders".
    arguments: tuple[PromptArgument, ...] = ()
    append: bool = False


class _LineParser(argparse.ArgumentParser):
    """An argparse parser that raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise PromptCellError(f"%%prompt: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise PromptCellError(message or "%%prompt: invalid arguments")


def _create_line_parser() -> _LineParser:
    parser = _LineParser(prog="%%prompt", add_help=False, allow_abbrev=False)
    parser.add_argument("name")
    parser.add_argument("--title")
    parser.add_argument("--description")
    parser.add_argument("--role", choices=("user", "assistant"), default="user")
    # --arg and --ask share one list so that required arguments keep the order they were written in.
    parser.add_argument("--arg", action="append", default=[], dest="required", type=_tagged("--arg"))
    parser.add_argument("--ask", action="append", default=[], dest="required", type=_tagged("--ask"))
    parser.add_argument("--optional", action="append", default=[], type=_tagged("--optional"))
    parser.add_argument("--append", action="store_true")
    return parser


def _tagged(flag: str) -> Callable[[str], tuple[str, str]]:
    """An argparse `type` that remembers which option a value came with."""

    def tag(value: str) -> tuple[str, str]:
        return flag, value

    return tag


@dataclass(frozen=True, slots=True)
class _Declaration:
    """One `--arg`, `--ask` or `--optional` value, read but not yet turned into an argument."""

    flag: str
    name: str
    source: str | None
    value: str | None


def _read_declaration(flag: str, spec: str) -> _Declaration:
    match = _ARGUMENT_SPEC.match(spec)
    if match is None:
        raise PromptCellError(f"%%prompt: {flag} {spec!r} is not NAME, NAME=value, NAME:var or NAME:var[Type]")
    source: str | None = None
    if match.group("source"):
        types = [t.strip() for t in (match.group("types") or "").split(",") if t.strip()]
        for kind in types:
            if problem := _type_name_problem(kind):
                raise PromptCellError(f"%%prompt: {flag} {spec!r}: {problem}")
        source = "var:" + ",".join(types) if types else "var"
    return _Declaration(flag=flag, name=match.group("name"), source=source, value=match.group("value"))


_TYPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _type_name_problem(kind: str) -> str | None:
    """Why `kind` cannot name a variable's type in `var[…]`; None when it can (a built-in type, or module.Class)."""
    if not _TYPE_NAME.match(kind):
        return f"{kind!r} is not a type name"
    if "." not in kind and not isinstance(getattr(builtins, kind, None), type):
        return (
            f"{kind!r} is not a built-in type: name a class with its module, as in pandas.DataFrame "
            "(it matches the class of that name in that package, or a subclass of it)"
        )
    return None


def _default_question(name: str, description: str | None) -> str:
    # The notebook format's `"ask": true`: the description, else a question made from the name.
    return description or f"Value for {name}"


def _to_argument(declarations: Sequence[_Declaration]) -> PromptArgument:
    """The argument that one name's declarations make: one of them, or an `--arg` and an `--ask` together."""
    first = declarations[0]
    name = first.name
    flags = sorted(d.flag for d in declarations)
    if len(declarations) == 1:
        if first.flag == "--optional":
            return PromptArgument(name=name, required=False, default=first.value, source=first.source)
        if first.flag == "--ask":
            question = first.value or _default_question(name, None)
            return PromptArgument(name=name, required=True, source=first.source, ask=question)
        return PromptArgument(name=name, description=first.value or None, required=True, source=first.source)
    if flags == ["--arg", "--ask"]:
        declared, asked = sorted(declarations, key=lambda d: d.flag)
        description = declared.value or None
        question = asked.value or _default_question(name, description)
        source = asked.source or declared.source
        return PromptArgument(name=name, description=description, required=True, source=source, ask=question)
    if "--ask" in flags and "--optional" in flags:
        raise PromptCellError(
            f"%%prompt: argument {name!r} cannot be both --optional and --ask: only a required argument is asked for"
        )
    raise PromptCellError(f"%%prompt: argument {name!r} is declared twice")


def variable_types(argument: PromptArgument) -> tuple[str, ...] | None:
    """The type names an argument's variable must have; None when it does not take a variable.

    An empty tuple means a variable of any type.
    """
    source = argument.source
    if source is None or not (source == "var" or source.startswith("var:")):
        return None
    _, _, types = source.partition(":")
    return tuple(t for t in types.split(",") if t)


@dataclass(frozen=True, slots=True)
class VariableReference:
    """An argument of a request that names a kernel variable: the prompt sends that variable's value."""

    argument: str
    variable: str
    types: tuple[str, ...]  # the type names it must have; empty: any type


def variable_references(spec: PromptSpec, arguments: Mapping[str, str]) -> tuple[VariableReference, ...]:
    """The kernel variables a request names through its `NAME:var[…]` arguments; raises on anything but a name.

    A value is a variable's name (`sales`, or `@sales` as a `%mcp` line writes
    it). Anything else on one line — an attribute, an index, a call — is
    refused: the kernel reads a variable the user's prompt declared, it never
    evaluates what a client sent. A value of several lines is data already
    (what `%mcp get df=@sales` wrote out in a session) and is left as it is,
    as is an optional argument given its own default (text, `10`, not a name).
    """
    references: list[VariableReference] = []
    for argument in spec.arguments:
        types = variable_types(argument)
        value = arguments.get(argument.name)
        if types is None or value is None or "\n" in value.strip():
            continue
        name = value.strip()
        name = name[1:] if name.startswith("@") and not name.startswith("@@") else name
        if not name.isidentifier():
            if not argument.required and value == argument.default:
                continue
            kind = f"a {' or '.join(types)} variable" if types else "a variable"
            raise VariableArgumentError(
                spec.name,
                argument.name,
                f"{value!r} is not the name of {kind}; send a variable's name, such as the ones "
                "completion offers (expressions are never evaluated)",
            )
        references.append(VariableReference(argument=argument.name, variable=name, types=types))
    return tuple(references)


def parse_prompt_cell(line: str, body: str) -> PromptCell:
    """Read a `%%prompt` cell: `line` is what follows `%%prompt`, `body` the rest of the cell."""
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise PromptCellError(f"%%prompt: {error} in {line!r}") from None
    options = _create_line_parser().parse_args(words)
    if not is_valid_name(options.name):
        raise PromptCellError(
            f"%%prompt: {options.name!r} is not a valid prompt name (use letters, digits, '_', '.', '-'; at most 64)"
        )
    declarations: dict[str, list[_Declaration]] = {}
    for flag, spec in [*options.required, *options.optional]:
        declaration = _read_declaration(flag, spec)
        declarations.setdefault(declaration.name, []).append(declaration)
    # The line's own newline is not part of the template; trailing blank lines are noise.
    return PromptCell(
        name=options.name,
        body=body.rstrip("\n"),
        title=options.title,
        description=options.description,
        role=options.role,
        arguments=tuple(_to_argument(each) for each in declarations.values()),
        append=options.append,
    )


def _first_heading(text: str) -> str | None:
    match = _HEADING.search(text)
    return readable(match.group("text")) if match else None


def _first_sentence(text: str) -> str | None:
    # Headings give the title and fences wrap code: neither is the prose a description wants.
    lines = [ln.strip() for ln in readable(text).splitlines()]
    prose = " ".join(ln for ln in lines if ln and not ln.startswith(("#", "```"))).strip()
    if not prose:
        return None
    sentence = _SENTENCE_END.split(prose, maxsplit=1)[0]
    if len(sentence) > DESCRIPTION_LIMIT:
        sentence = sentence[: DESCRIPTION_LIMIT - 1].rstrip() + "…"
    return sentence


@dataclass(slots=True)
class _Part:
    cell_id: str | None
    role: Role
    body: str


@dataclass(slots=True)
class _Draft:
    """A prompt being assembled from cells; mutable, only touched under the source's lock."""

    name: str
    head_cell: str | None
    title: str | None = None
    description: str | None = None
    declared: dict[str, PromptArgument] = field(default_factory=dict)
    parts: list[_Part] = field(default_factory=list)

    def absorb(self, cell: PromptCell) -> None:
        # Fields given on any cell win over earlier ones: re-running a cell with a new
        # --title is how an author fixes it.
        if cell.title is not None:
            self.title = cell.title
        if cell.description is not None:
            self.description = cell.description
        for argument in cell.arguments:
            self.declared[argument.name] = argument

    def to_spec(self) -> tuple[PromptSpec, tuple[str, ...]]:
        bodies = [part.body for part in self.parts]
        used: dict[str, None] = {}
        for body in bodies:
            for name in placeholders(body):
                used.setdefault(name, None)
        warnings: list[str] = []
        if self.declared:
            arguments = tuple(self.declared.values())
            stray = [name for name in used if name not in self.declared]
            if stray:
                listing = ", ".join("{{" + name + "}}" for name in stray)
                warnings.append(f"prompt {self.name!r}: {listing} is not a declared argument and stays as written")
        else:
            arguments = tuple(PromptArgument(name=name) for name in used)
        text = "\n\n".join(bodies)
        spec = PromptSpec(
            name=self.name,
            title=self.title if self.title is not None else _first_heading(text),
            description=self.description if self.description is not None else _first_sentence(text),
            arguments=arguments,
            messages=tuple(MessageTemplate(role=part.role, content=TextContent(text=part.body)) for part in self.parts),
            origin=KERNEL_ORIGIN,
        )
        return spec, tuple(warnings)


class KernelPromptSource:
    """The prompts of one kernel's `%%prompt` cells, published as the registry group "kernel".

    Safe to call from any thread; the kernel calls it from its main thread.
    A `cell_id` (known when the front end sends one) lets a re-run cell
    replace its own contribution instead of adding another.
    """

    def __init__(self, registry: PromptRegistry, group: str = KERNEL_GROUP) -> None:
        self._registry = registry
        self._group = group
        self._lock = threading.Lock()
        self._drafts: dict[str, _Draft] = {}
        # Drafts of a name that another cell has since published, latest last: one comes back when that
        # cell is renamed, so two cells that publish one name never lose a prompt between them.
        self._shadowed: dict[str, list[_Draft]] = {}

    @property
    def group(self) -> str:
        return self._group

    def names(self) -> tuple[str, ...]:
        """The names of the prompts defined so far, in the order they were first defined."""
        with self._lock:
            return tuple(self._drafts)

    def define(self, cell: PromptCell, cell_id: str | None = None) -> tuple[PromptSpec, tuple[str, ...]]:
        """Publish a cell's prompt (or add its message with `--append`); returns the prompt and its warnings."""
        clash: str | None = None
        with self._lock:
            if cell_id is not None:
                self._forget_cell(cell_id, keep=cell.name if cell.append else None)
            draft = self._drafts.get(cell.name)
            part = _Part(cell_id=cell_id, role=cell.role, body=cell.body)
            if cell.append and draft is not None:
                draft.absorb(cell)
                self._place(draft, part)
            else:
                replaced = draft
                # A prompt's first cell (or any cell run without --append) starts the prompt afresh.
                draft = _Draft(name=cell.name, head_cell=None if cell.append else cell_id)
                draft.absorb(cell)
                draft.parts.append(part)
                self._drafts[cell.name] = draft
                if replaced is not None and cell_id is not None and replaced.head_cell not in (None, cell_id):
                    self._shadowed.setdefault(cell.name, []).append(replaced)
                    clash = (
                        f"prompt {cell.name!r} is also published by another cell; this cell's version is "
                        "served (the cell run last wins), and the other one comes back if this cell is renamed"
                    )
            spec, warnings = draft.to_spec()
            if clash is not None:
                warnings = (clash, *warnings)
            self._publish()
        return spec, warnings

    def unpublish(self, name: str) -> bool:
        """Remove a prompt; False when there was none of that name."""
        with self._lock:
            self._shadowed.pop(name, None)
            if self._drafts.pop(name, None) is None:
                return False
            self._publish()
        return True

    def clear(self) -> None:
        """Remove every prompt of this kernel from the registry."""
        with self._lock:
            self._drafts.clear()
            self._shadowed.clear()
            self._registry.remove_group(self._group)

    def _place(self, draft: _Draft, part: _Part) -> None:
        for index, existing in enumerate(draft.parts):
            if part.cell_id is not None and existing.cell_id == part.cell_id:
                draft.parts[index] = part  # a re-run appended cell keeps its place
                return
            if part.cell_id is None and existing.cell_id is None and existing == part:
                return  # re-running the same --append cell without an id must not repeat its message
        draft.parts.append(part)

    def _forget_cell(self, cell_id: str, keep: str | None) -> None:
        """Drop what an earlier run of this cell contributed to other prompts (it may have been renamed)."""
        for name in list(self._shadowed):
            kept = []
            for draft in self._shadowed[name]:
                if draft.head_cell == cell_id:
                    continue
                draft.parts = [p for p in draft.parts if p.cell_id != cell_id]
                if draft.parts:
                    kept.append(draft)
            if kept:
                self._shadowed[name] = kept
            else:
                del self._shadowed[name]
        for name in list(self._drafts):
            draft = self._drafts[name]
            if name == keep:
                continue
            if draft.head_cell == cell_id:
                del self._drafts[name]
            else:
                draft.parts = [p for p in draft.parts if p.cell_id != cell_id]
                if draft.parts:
                    continue
                del self._drafts[name]
            # Another cell's version of the name, hidden by this cell's, comes back.
            earlier = self._shadowed.get(name)
            if earlier:
                self._drafts[name] = earlier.pop()
                if not earlier:
                    del self._shadowed[name]

    def _publish(self) -> None:
        prompts: list[PromptSpec] = []
        warnings: list[str] = []
        for draft in self._drafts.values():
            spec, spec_warnings = draft.to_spec()
            prompts.append(spec)
            warnings.extend(spec_warnings)
        self._registry.set_group(self._group, prompts, warnings)
