"""Magics as prompt specs: names, arguments, descriptions, and which of them a listing shows.

Every magic becomes `magic.<name>` (`magic.cell.<name>` for a cell magic
whose line twin exists). A listing is "all" (one prompt per magic),
"curated": the live magics, the one `magic` prompt whose `name` completes
every magic, and a few common ones, at most `MAX_LISTED_MAGICS`; or "live":
the live magics alone (what a kernel serves unless asked for its magics). A
live prompt says in its description and `_meta` whether it executes code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from ..models import PromptArgument, PromptSpec
from ..naming import is_valid_name
from .live_policy import LivePolicy, live_policy

if TYPE_CHECKING:
    from .magics import MagicInfo

__all__ = [
    "CURATED_MAGICS",
    "GENERIC_MARKER",
    "GENERIC_PROMPT",
    "MAGIC_META_KEY",
    "MAGIC_ORIGIN",
    "MAX_LISTED_MAGICS",
    "Listing",
    "live_policies",
    "to_magic_prompts",
]

Listing = Literal["all", "curated", "live"]

MAX_LISTED_MAGICS = 10  # magic prompts a default listing shows (more only when more are live)
GENERIC_PROMPT = "magic"  # the one prompt that documents any magic
GENERIC_MARKER = "*"
# The common magics a default listing shows beside `magic` and the live ones, most useful first.
CURATED_MAGICS = ("%timeit", "%time", "%run", "%pip", "%who", "%whos", "%history", "%matplotlib", "%load_ext")
MAGIC_ORIGIN = "magic"
# Marks a magic prompt in its `_meta`, so it is recognised under any (qualified) name.
MAGIC_META_KEY = "io.github.mcp-notebook/magic"


def _prompt_name(info: MagicInfo, line_names: frozenset[str]) -> str:
    if info.kind == "cell" and info.name in line_names:
        return f"magic.cell.{info.name}"
    return f"magic.{info.name}"


def _arguments(info: MagicInfo, excluded: Mapping[str, str] | None = None) -> tuple[PromptArgument, ...]:
    if info.options is None:
        arguments = [PromptArgument(name="line", description=f"What follows {info.title} on its line", required=False)]
    else:
        arguments = []
        for option in info.options:
            if excluded and option.argument in excluded:
                continue  # not offered live: the option would write files or run code
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


_LIVE_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "reads": "[runs in the kernel]",
        "runs-code": "[runs in the kernel: executes the code or commands a client sends]",
        "unknown": "[runs in the kernel: may execute code (a magic mcp-notebook does not know)]",
    }
)


def _description(info: MagicInfo, policy: LivePolicy | None) -> str:
    if info.provider is not None:
        text = f"The magic {info.title}, provided by {info.provider} (not loaded yet)."
    else:
        text = info.summary or f"The IPython magic {info.title}."
    return f"{text} {_LIVE_LABELS[policy.effect]}" if policy is not None else text


def _is_allowed(info: MagicInfo, name: str, allowed: frozenset[str]) -> bool:
    return info.title in allowed or (info.name in allowed and info.kind == "line") or name in allowed


def _magic_prompt(info: MagicInfo, name: str, policy: LivePolicy | None) -> PromptSpec:
    marker = {"magic": info.title, "live": policy is not None, "executes_code": bool(policy and policy.executes_code)}
    return PromptSpec(
        name=name,
        title=info.title,
        description=_description(info, policy),
        arguments=_arguments(info, policy.excluded if policy is not None else None),
        meta=MappingProxyType({MAGIC_META_KEY: marker}),
        origin=MAGIC_ORIGIN,
    )


def live_policies(infos: Sequence[MagicInfo], live: Sequence[str]) -> dict[str, LivePolicy | None]:
    """Title → policy (None: refused) of every magic that `live` names."""
    line_names = frozenset(i.name for i in infos if i.kind == "line")
    allowed = frozenset(live)
    return {
        info.title: live_policy(info) for info in infos if _is_allowed(info, _prompt_name(info, line_names), allowed)
    }


def to_magic_prompts(
    infos: Sequence[MagicInfo], live: Sequence[str] = (), *, listing: Listing = "all"
) -> tuple[PromptSpec, ...]:
    """The prompts for a set of magics; those whose title (`%who`, `%%bash`) or name is in `live` run live.

    A magic named in `live` runs live only when `live_policy` lets it (refused
    ones stay documentation). Magics whose names cannot be prompt names (`%%!`)
    are left out. `listing="curated"` lists the live magics, the one `magic`
    prompt that documents any magic, and a few common ones: at most
    `MAX_LISTED_MAGICS` (more only when more are live); `"all"` lists each magic;
    `"live"` only the live ones.
    """
    line_names = frozenset(i.name for i in infos if i.kind == "line")
    policies = live_policies(infos, live)
    prompts: list[PromptSpec] = []
    for info in infos:
        name = _prompt_name(info, line_names)
        if not is_valid_name(name):
            continue
        prompts.append(_magic_prompt(info, name, policies.get(info.title)))
    if listing == "all":
        return tuple(prompts)
    if listing == "live":
        return tuple(_live(prompts))
    return _curated(prompts, infos, line_names)


def _live(prompts: Sequence[PromptSpec]) -> list[PromptSpec]:
    return [prompt for prompt in prompts if (prompt.meta or {})[MAGIC_META_KEY]["live"]]


def _curated(
    prompts: Sequence[PromptSpec], infos: Sequence[MagicInfo], line_names: frozenset[str]
) -> tuple[PromptSpec, ...]:
    by_title = {p.title: p for p in prompts}
    chosen = {prompt.name: prompt for prompt in _live(prompts)}
    for title in CURATED_MAGICS:
        if len(chosen) + 1 >= MAX_LISTED_MAGICS:
            break
        found = by_title.get(title)
        if found is not None:
            chosen.setdefault(found.name, found)
    return (_generic_prompt(infos, line_names), *chosen.values())


def _generic_key(info: MagicInfo, line_names: frozenset[str]) -> str:
    # What a client types as `name`: a line magic's bare name, `%%name` for a cell magic with a line twin.
    return info.name if info.kind == "line" or info.name not in line_names else f"%%{info.name}"


def _generic_prompt(infos: Sequence[MagicInfo], line_names: frozenset[str]) -> PromptSpec:
    keys = tuple(_generic_key(info, line_names) for info in infos)
    return PromptSpec(
        name=GENERIC_PROMPT,
        title="Any IPython magic",
        description=(
            f"The documentation of any of this kernel's {len(keys)} magics and the line that runs it "
            "(name completes every magic). Nothing runs."
        ),
        arguments=(
            PromptArgument(name="name", description="The magic: timeit, who, %%bash, … (completes)", completions=keys),
            PromptArgument(name="line", description="What follows the magic on its line", required=False),
            PromptArgument(name="body", description="The cell body, for a cell magic", required=False),
        ),
        meta=MappingProxyType({MAGIC_META_KEY: {"magic": GENERIC_MARKER, "live": False, "executes_code": False}}),
        origin=MAGIC_ORIGIN,
    )
