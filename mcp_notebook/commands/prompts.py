"""`mcp-notebook list` and `render`: the prompts notebooks publish, and one of them rendered, from a single scan.

Only the standard library is imported up front; the notebook sources, the
rendering and the transcript are imported once the command runs (never the MCP SDK).
"""

from __future__ import annotations

import argparse
import re
import sys

from .usage import EXIT_USAGE, PROG, UsageProblem, say

TYPE_CHECKING = False  # not typing's: importing typing would make `--help` slower
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..models import PromptSpec
    from ..registry import PromptRegistry
    from ..sources.folder import NotebookFolderSource

__all__ = ["LIST_HELP", "RENDER_HELP", "add_list_arguments", "add_render_arguments", "load", "run_list", "run_render"]

_ARGUMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=")

LIST_HELP = """\
List the prompts the notebooks publish: name, title, arguments and the notebook
each comes from; then the skills (folders with a SKILL.md, notebooks tagged as
skills) with their skill:// URI; then any warnings about the notebooks and
skills (on stderr). Exits with 1 when a notebook cannot be read, so it can
guard a commit or a CI job.

examples:
  mcp-notebook list prompts/
  mcp-notebook list prompts/ --json | jq '.prompts[].name'
"""

RENDER_HELP = """\
Render one prompt as a client would receive it, with arguments given as
NAME=VALUE after the prompt name. Prints each message under its role; images
and audio show as [mime/type, N bytes]. Exits with 2 when the prompt is unknown
or arguments are missing or unknown, and says how to call it.

examples:
  mcp-notebook render prompts/ summarize_cell cell=3
  mcp-notebook render analysis.ipynb explain style=short "question=What does it do?"
"""


def add_list_arguments(listing: argparse.ArgumentParser) -> None:
    """The notebooks to list, and `--json`."""
    listing.add_argument("paths", nargs="+", metavar="PATH", help="notebook files or folders")
    listing.add_argument(
        "--json", action="store_true", help="print one JSON document (prompts, skills, warnings, errors)"
    )


def add_render_arguments(render: argparse.ArgumentParser) -> None:
    """The notebooks, then the prompt's name, then its arguments (one list: argparse cannot tell them apart)."""
    render.add_argument(
        "items", nargs="+", metavar="PATH... NAME [ARG=VALUE ...]", help="notebooks, the prompt name, its arguments"
    )


def _load_quietly(paths: Sequence[str], *, skills: bool = False) -> tuple[PromptRegistry, NotebookFolderSource]:
    """`load` for one-shot commands, which report every notebook error themselves, once; with `skills`, the
    skills of the folders too."""
    from ..sources.folder import sources_unlogged

    with sources_unlogged():
        return load(paths, skills=skills)


def load(paths: Sequence[str], *, skills: bool = False) -> tuple[PromptRegistry, NotebookFolderSource]:
    """The notebooks at `paths`, scanned once (for `list` and `render`; `serve` runs a `NotebookService`); with
    `skills`, the skills of the folders and notebooks too."""
    from ..registry import PromptRegistry
    from ..sources.folder import NotebookFolderSource

    registry = PromptRegistry()
    try:
        source = NotebookFolderSource(list(paths), registry)
    except (FileNotFoundError, ValueError) as error:
        raise UsageProblem(str(error)) from None
    if not skills:
        source.first_scan()
        return registry, source
    from ..sources.skills import SkillCatalog

    catalog = SkillCatalog.of_source(registry, source)
    listed = catalog.listing()  # one walk of the tree, for the notebooks and the skills alike (as `serve` does)
    source.first_scan(listed=listed)
    catalog.scan(listed)
    return registry, source


def _summary(registry: PromptRegistry, source: NotebookFolderSource, *, then: str = ".") -> list[str]:
    from ..sources.start_report import summary_lines

    return summary_lines(registry, source, then=then)


def _spec_record(spec: PromptSpec) -> dict[str, Any]:
    arguments = [
        {
            "name": a.name,
            "title": a.title,
            "description": a.description,
            "required": a.required,
            "default": a.default,
            "completions": list(a.completions),
        }
        for a in spec.arguments
    ]
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "arguments": arguments,
        "origin": spec.origin,
    }


def run_list(args: argparse.Namespace) -> int:
    """Print the prompts (as text, or one JSON document); exit 1 when a notebook cannot be read."""
    import json

    registry, source = _load_quietly(args.paths, skills=True)
    snapshot = registry.snapshot()
    if args.json:
        records = [_spec_record(spec) for spec in snapshot.prompts]
        skills = [
            {
                "uri": skill.uri,
                "name": skill.name,
                "description": skill.description,
                "frontmatter": dict(skill.frontmatter),
                "files": [{"path": f.path, "size": f.size, "digest": f.digest} for f in skill.files or ()],
                "origin": skill.origin,
            }
            for skill in snapshot.skills
        ]
        document = {
            "prompts": records,
            "skills": skills,
            "warnings": list(snapshot.warnings),
            "errors": dict(source.errors),
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for spec in snapshot.prompts:
            title = f" — {spec.title}" if spec.title else ""
            print(f"{spec.name}{title}  ({spec.origin})")
            if spec.description:
                print(f"    {spec.description}")
            for arg in spec.arguments:
                need = "required" if arg.required else f"optional, default {arg.default!r}"
                about = f": {arg.description}" if arg.description else ""
                print(f"    {arg.name} ({need}){about}")
        for skill in snapshot.skills:
            files = skill.files or ()
            size = sum(f.size for f in files)
            print(f"skill {skill.name}  ({skill.uri}, from {skill.origin})")
            print(f"    {skill.description}")
            print(f"    {len(files)} file{'s' * (len(files) != 1)}, {size} bytes")
        for line in _summary(registry, source):
            print(line, file=sys.stderr)
    return 1 if source.errors else 0


def _call_line(paths: Sequence[str], spec: PromptSpec) -> str:
    import shlex

    placeholders = [f"{a.name}=<{a.name}>" if a.required else f"[{a.name}=...]" for a in spec.arguments]
    return " ".join([shlex.join([PROG, "render", *paths, spec.name]), *placeholders])


def run_render(args: argparse.Namespace) -> int:
    """Print one prompt as a client receives it; exit 2, saying how to call it, when it cannot be rendered."""
    import shlex

    from ..checking.prompt_tests import rendered_text
    from ..exceptions import MCPNotebookError, MissingArgumentsError, UnknownArgumentsError, UnknownPromptError
    from ..naming import suggest_names
    from ..rendering import render_prompt

    items: list[str] = list(args.items)
    values: dict[str, str] = {}
    while items and _ARGUMENT.match(items[-1]):
        key, _, value = items.pop().partition("=")
        values.setdefault(key, value)
    if len(items) < 2:
        raise UsageProblem("render needs at least one notebook or folder, then a prompt name (see --help)")
    if (unsaid := _words_without_values(items)) is not None:
        return unsaid
    *paths, name = items
    registry, source = _load_quietly(paths)
    snapshot = registry.snapshot()
    spec = snapshot.get(name)
    try:
        if spec is None:
            raise UnknownPromptError(name, suggest_names(name, snapshot.by_name))
        rendered = render_prompt(spec, values, read_file=source.read_file)
    except MissingArgumentsError as error:
        assert spec is not None
        given = [f"{key}={value}" for key, value in reversed(values.items())]  # in the order typed
        say(error.how_to_call(spec.name, shlex.join([PROG, "render", *paths, spec.name, *given])))
        return EXIT_USAGE
    except UnknownArgumentsError as error:
        assert spec is not None
        say(str(error))
        say(f"call it as: {_call_line(paths, spec)}")
        return EXIT_USAGE
    except UnknownPromptError as error:
        say(str(error))
        say(f"available: {', '.join(snapshot.by_name) or '(none)'}")
        for problem in source.errors.values():
            say(f"not read, so its prompts are missing: {problem}")
        return EXIT_USAGE
    except MCPNotebookError as error:
        say(str(error))
        return EXIT_USAGE
    if text := rendered_text(rendered):  # what prompt tests look into and snapshots hold
        print(text, end="\n\n")
    return 0


def _words_without_values(items: list[str]) -> int | None:
    """`render PATH NAME lang`: the exit code after saying that `lang` needs `lang=…`; None if that is not it.

    A word that is no path, followed by other words, is taken for the prompt name when the
    paths before it serve such a prompt; the words after it are then arguments missing `=`.
    """
    from pathlib import Path

    cut = next((i for i, item in enumerate(items[:-1]) if not Path(item).expanduser().exists()), None)
    if not cut:  # every path exists (or the very first is missing: an error about that path)
        return None
    paths, name, words = items[:cut], items[cut], items[cut + 1 :]
    spec = _load_quietly(paths)[0].snapshot().get(name)
    if spec is None:
        return None
    known = [argument.name for argument in spec.arguments]
    for word in words:
        if _ARGUMENT.match(word):
            continue
        if word in known:
            say(f"{word} needs a value: {word}=…")
        else:
            takes = ", ".join(f"{k}=…" for k in known) or "no arguments"
            say(f"{word!r} is not NAME=VALUE: {name} takes {takes}")
    say(f"call it as: {_call_line(paths, spec)}")
    return EXIT_USAGE
