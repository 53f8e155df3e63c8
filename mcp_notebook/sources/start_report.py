"""What a server says about its folder as it starts: one summary, each notebook's problem in it once.

A notebook that fails to load is logged as the first scan meets it, listed
again among the summary's warnings, and logged a third time by the watch's
fresh look once it is in place (after the URL line, over HTTP). `StartReport`
keeps the summary as the one place that says it: the folder's warnings of the
first scan are held back, and the same words said again before the watch is in
place are dropped. A problem that is new, or a later save, is logged as usual.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..registry import PromptRegistry
    from .folder import NotebookFolderSource

__all__ = [
    "FORMAT_GUIDE",
    "StartReport",
    "StartSummary",
    "claim_the_report",
    "start_summary",
    "summary_lines",
    "then_for",
]

FORMAT_GUIDE = "mcp-notebook help format"  # how to write a prompt (a page every install has), for a folder with none
_FOLDER_LOG = __name__.rpartition(".")[0] + ".folder"  # the logger of sources/folder.py


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def then_for(*, watching: bool) -> str:
    """How a server's summary ends its advice to a folder with no prompt: what makes a new one appear."""
    return " and save; this server reloads on save." if watching else ", then start this server again."


@dataclass(frozen=True, slots=True)
class StartSummary:
    """What a start served: how many prompts from where (`head`), the skills' URIs, each warning's line."""

    head: str
    skills: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # each "warning: ..."

    @property
    def skills_counted(self) -> str:
        """`1 skill`, `2 skills`."""
        return _plural(len(self.skills), "skill")

    @property
    def skills_line(self) -> str | None:
        """`2 skills: skill://a/SKILL.md, skill://b/SKILL.md`; None when none is served."""
        return f"{self.skills_counted}: {', '.join(self.skills)}" if self.skills else None

    @property
    def lines(self) -> list[str]:
        """The summary as a host says it: the head, the skills' line, the warnings."""
        return [self.head, *([self.skills_line] if self.skills_line else []), *self.warnings]


def start_summary(registry: PromptRegistry, source: NotebookFolderSource, *, then: str) -> StartSummary:
    """How many prompts from how many notebooks, the skills, the warnings; with nothing served, how to write a
    prompt (a folder of skills alone is told nothing about prompts).

    `then` ends that advice: what makes the new prompt appear (a save, for a server that watches).
    """
    snapshot = registry.snapshot()
    count, found = len(snapshot.prompts), len(source.notebooks)
    groups = registry.groups()
    if groups.keys() - source.notebooks.keys():  # a registry shared with other prompts (a kernel's): count ours
        own = {spec.name for key in source.notebooks for spec in groups.get(key, ())}
        count = sum(1 for spec in snapshot.prompts if spec.name in own)
    read = found - len(source.errors)
    if count:
        head = f"{_plural(count, 'prompt')} from {_plural(found, 'notebook')} in {source.root}"
    elif snapshot.skills:
        if not found:
            notebooks = "no notebook"
        elif read:
            notebooks = f"{_plural(read, 'notebook')} read"
        else:
            notebooks = "no notebook could be read: the warnings below say why"
        head = f"0 prompts in {source.root} ({notebooks})"
    elif not found:
        head = (
            f"0 prompts: no notebook (.ipynb) was found in {source.root}. "
            f"Write one with a cell tagged prompt:NAME (the format: {FORMAT_GUIDE}){then}"
        )
    elif not read:
        head = f"0 prompts: no notebook in {source.root} could be read (the warnings below say why)"
    else:
        which = "the one notebook read" if read == 1 else f"none of the {read} notebooks read"
        has = "has no" if read == 1 else "has a"
        head = (
            f"0 prompts: {which} in {source.root} {has} cell tagged prompt:NAME. "
            f"Tag a cell prompt:NAME (the format: {FORMAT_GUIDE}){then}"
        )
    return StartSummary(
        head,
        tuple(skill.uri for skill in snapshot.skills),
        tuple(f"warning: {warning}" for warning in snapshot.warnings),
    )


def summary_lines(registry: PromptRegistry, source: NotebookFolderSource, *, then: str) -> list[str]:
    """`start_summary(...).lines`: the head, the skills' line, the warnings."""
    return start_summary(registry, source, then=then).lines


def claim_the_report(worker_dir: str | None) -> bool:
    """Whether this process reports the start: always alone; of `serve --workers N`, the first worker only."""
    if worker_dir is None:
        return True
    try:
        os.close(os.open(Path(worker_dir) / "start-reported", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


class StartReport(logging.Filter):
    """From its creation to `end()`, the folder's load problems are left to the summary (module docstring).

    Create it before the first scan, call `summarized()` once the summary is out
    (or would be, in another worker), and `end()` once the watch is in place.
    """

    def __init__(self) -> None:
        super().__init__()
        self._said: set[str] = set()
        self._summarized = False
        self._logger = logging.getLogger(_FOLDER_LOG)
        self._logger.addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:  # errors with a traceback are the details the summary points to
            return True
        message = record.getMessage()
        if not self._summarized:
            self._said.add(message)  # the summary lists it among its warnings
            return False
        return message not in self._said

    def summarized(self) -> None:
        self._summarized = True

    def end(self) -> None:
        self._logger.removeFilter(self)
