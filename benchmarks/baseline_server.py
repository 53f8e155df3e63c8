"""The comparison point: a bare MCP SDK `MCPServer` serving the same notebook prompts over stdio.

It is what a developer would write with the SDK alone: read every `.ipynb` of the
given folders with `json`, publish each cell that carries `metadata.mcp.prompt`
as an `MCPServer` prompt with the same name, title, description and arguments,
and answer `prompts/get` by filling `{{placeholders}}` in the cell source and
`completion/complete` with the argument's listed values that start with what was
typed. It
does no paging, no watching and no validation beyond what the SDK does, so it
is the fastest thing the SDK allows: the figure mcp-notebook is measured against.

This file imports only the standard library and the SDK, and runs as a script:
`python benchmarks/baseline_server.py FOLDER...`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from mcp.server import MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, PromptArgument, UserMessage
from mcp.types import Completion, CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference

__all__ = ["CellPromptRenderer", "create_baseline_http_app", "create_baseline_server", "main", "read_cell_prompts"]

# `{{ name }}` placeholders and the `\{{` escape, scanned together like the notebook prompt format says.
_PLACEHOLDER = re.compile(r"\\\{\{|\{\{[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*\}\}")


@dataclass(frozen=True, slots=True)
class CellPrompt:
    """One prompt read from a notebook: its listing fields and the sources of its cells."""

    name: str
    title: str | None
    description: str | None
    arguments: tuple[Mapping[str, Any], ...]
    cells: tuple[tuple[str, str], ...]  # (role, source)


class CellPromptRenderer:
    """Renders one prompt: fills each cell's placeholders and returns one message per cell."""

    def __init__(self, prompt: CellPrompt) -> None:
        self._prompt = prompt
        self._defaults = {str(a["name"]): str(a.get("default") or "") for a in prompt.arguments}

    async def __call__(self, **arguments: str) -> list[Message]:
        values = {**self._defaults, **arguments}

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name is None:
                return "{{"
            return values.get(name, match.group(0))

        messages: list[Message] = []
        for role, source in self._prompt.cells:
            text = _PLACEHOLDER.sub(fill, source)
            messages.append(AssistantMessage(text) if role == "assistant" else UserMessage(text))
        return messages


def _notebooks(folders: list[Path]) -> Iterator[Path]:
    for folder in folders:
        if folder.is_file():
            yield folder
        else:
            yield from sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def read_cell_prompts(folders: list[Path]) -> list[CellPrompt]:
    """Every prompt the notebooks under `folders` publish through `metadata.mcp`, in file and cell order."""
    prompts: list[CellPrompt] = []
    for path in _notebooks(folders):
        document = json.loads(path.read_text(encoding="utf-8"))
        by_name: dict[str, dict[str, Any]] = {}
        cells: dict[str, list[tuple[str, str]]] = {}
        for cell in document.get("cells", []):
            mcp = cell.get("metadata", {}).get("mcp")
            if not isinstance(mcp, dict) or not isinstance(mcp.get("prompt"), str):
                continue
            name = mcp["prompt"]
            by_name.setdefault(name, mcp)
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            cells.setdefault(name, []).append((str(mcp.get("role", "user")), text))
        for name, first in by_name.items():
            prompts.append(
                CellPrompt(
                    name=name,
                    title=first.get("title"),
                    description=first.get("description"),
                    arguments=tuple(first.get("arguments", ())),
                    cells=tuple(cells[name]),
                )
            )
    return prompts


def _described(argument: Mapping[str, Any]) -> str | None:
    # mcp-notebook tells an argument's default in words at the end of its description (for plain values).
    description, default = argument.get("description"), argument.get("default")
    if default is None:
        return description if description is None else str(description)
    return f"{description} (default: {default})" if description else f"Default: {default}"


def _values(argument: Mapping[str, Any]) -> list[str]:
    # The values a client may be offered: the argument's listed completions, then its default.
    values = [str(v) for v in argument.get("completions", ())]
    default = argument.get("default")
    if default is not None and str(default) not in values:
        values.append(str(default))
    return values


def create_baseline_server(folders: list[Path]) -> MCPServer[Any]:
    """An `MCPServer` that publishes the notebook prompts found under `folders`."""
    server: MCPServer[Any] = MCPServer(name="sdk-baseline")
    values: dict[tuple[str, str], list[str]] = {}

    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion:
        del context
        name = ref.name if isinstance(ref, PromptReference) else ""
        prefix = argument.value.casefold()
        matches = [v for v in values.get((name, argument.name), ()) if v.casefold().startswith(prefix)]
        return Completion(values=matches[:100], total=len(matches), has_more=len(matches) > 100)

    # The SDK's `completion` decorator is untyped; it returns the handler unchanged.
    register = cast("Callable[[], Callable[[Callable[..., Awaitable[Completion]]], object]]", server.completion)
    register()(complete)

    for prompt in read_cell_prompts(folders):
        for a in prompt.arguments:
            values[(prompt.name, str(a["name"]))] = _values(a)
        arguments = [
            PromptArgument(
                name=str(a["name"]),
                description=_described(a),
                required=bool(a.get("required", True)),
            )
            for a in prompt.arguments
        ]
        server.add_prompt(
            Prompt(
                name=prompt.name,
                title=prompt.title,
                description=prompt.description,
                arguments=arguments,
                fn=CellPromptRenderer(prompt),
                context_kwarg=None,
            )
        )
    return server


def create_baseline_http_app() -> Any:
    """The same server as a Streamable HTTP ASGI app, for `uvicorn --factory` (folders in `BASELINE_FOLDERS`)."""
    import os

    folders = [Path(p) for p in os.environ["BASELINE_FOLDERS"].split(os.pathsep) if p]
    return create_baseline_server(folders).streamable_http_app()


def main(argv: list[str] | None = None) -> None:
    folders = [Path(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    if not folders:
        raise SystemExit("usage: baseline_server.py FOLDER...")
    create_baseline_server(folders).run("stdio")


if __name__ == "__main__":
    main()
