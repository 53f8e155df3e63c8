"""The text flow that stands in for the forms where no widget front end exists (terminal IPython).

The same steps as the form, one question per argument: its title, help,
default and the server's first suggestions are printed, the answer is read
with `input()`, required arguments are asked again until answered (an empty
line or end of input gives up).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...models import CompletionResult, PromptArgument, PromptSpec

__all__ = ["SUGGESTIONS_SHOWN", "ask_arguments", "describe_prompts", "describe_suggestions"]

SUGGESTIONS_SHOWN = 8  # enough to show what kind of value is wanted, short enough for a terminal line

Ask = Callable[[str], str]
Write = Callable[[str], None]
Suggest = Callable[[PromptArgument, Mapping[str, str]], CompletionResult | None]
"""The server's suggestions for an empty value of an argument (None when it has none or failed)."""


def describe_suggestions(result: CompletionResult | None) -> str:
    """`one of: a, b, c (+12 more)` for a terminal line, or "" when there is nothing to offer."""
    if result is None or not result.values:
        return ""
    shown = result.values[:SUGGESTIONS_SHOWN]
    total = result.total if result.total is not None else len(result.values)
    more = total - len(shown)
    extra = f" (+{more} more)" if more > 0 else (" (and more)" if result.has_more else "")
    return f"suggestions: {', '.join(shown)}{extra}"


def _question(argument: PromptArgument) -> str:
    title = argument.title or argument.name
    name = f" [{argument.name}]" if argument.title and argument.title != argument.name else ""
    if argument.required:
        hint = "required"
    elif argument.default:
        hint = f"optional, Enter for {argument.default!r}"
    else:
        hint = "optional, Enter to skip"
    return f"{title}{name} ({hint}): "


def ask_arguments(
    spec: PromptSpec, *, ask: Ask, write: Write, suggest: Suggest | None = None, attempts: int = 3
) -> dict[str, str] | None:
    """Ask for each argument of `spec` in turn; None if the user gave up on a required one."""
    header = spec.title or spec.name
    write(f"{header}" + (f": {spec.description}" if spec.description else ""))
    values: dict[str, str] = {}
    for argument in spec.arguments:
        if argument.description:
            write(f"  {argument.description}")
        hint = describe_suggestions(suggest(argument, values) if suggest else None)
        if hint:
            write(f"  {hint}")
        for _ in range(attempts):
            try:
                answer = ask(_question(argument))
            except EOFError:
                return None
            if answer != "":
                values[argument.name] = answer
                break
            if not argument.required:
                break  # the server fills in the default
            write(f"  {argument.title or argument.name} is required.")
        else:
            return None
    return values


def describe_prompts(listing: Mapping[str, Sequence[PromptSpec] | BaseException]) -> str:
    """Every server's prompts as text, grouped by server, for `%mcp picker` in a terminal."""
    if not listing:
        return "No MCP servers are connected. Connect one with %mcp connect."
    lines: list[str] = []
    for server, prompts in listing.items():
        if isinstance(prompts, BaseException):
            lines.append(f"{server}: cannot list prompts: {prompts}")
            continue
        lines.append(f"{server} ({len(prompts)} prompts)")
        for spec in sorted(prompts, key=lambda s: s.name):
            about = spec.title or spec.description or ""
            lines.append(f"  {server}:{spec.name}" + (f" — {about}" if about else ""))
    lines.append("Fill one in with: %mcp form SERVER:PROMPT")
    return "\n".join(lines)
