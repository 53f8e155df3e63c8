"""Running prompt tests (`sources/test_cells.py`): render the prompt as `render` does, compare, update snapshots.

A prompt is rendered by the one renderer (`rendering.render_prompt`) and
written out as `mcp-notebook render` prints it (`RENDER_LAYOUT`): the text that
`contains` and `regex` look into and that a snapshot holds. A failure carries
the rendered result beside what was expected, and a diff for a snapshot.
"""

from __future__ import annotations

import difflib
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import MCPNotebookError, UnknownPromptError
from ..models import PromptSpec, RenderedPrompt
from ..naming import suggest_names
from ..rendering import FileReader, render_prompt
from ..sources.test_cells import PromptTest
from ..transcript import Layout, clipped, to_transcript
from .bounded_regex import RegexSearcher, RegexTimeout

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "RENDER_LAYOUT",
    "TestResult",
    "rendered_text",
    "run_tests",
    "snapshot_path",
]

# How `mcp-notebook render` prints a rendered prompt, and so what tests look into and snapshots hold.
RENDER_LAYOUT = Layout(
    blocks="text", sections="message", headings="always", heading="markdown-as-sent", title="markdown"
)
MAX_SNAPSHOT_BYTES = 1_000_000  # a snapshot is for reading in review; a larger one is refused, read or written
_SHOWN = 2_000  # characters of a rendered result a failure shows
_DIFF_LINES = 200


def rendered_text(rendered: RenderedPrompt) -> str:
    """A rendered prompt as `mcp-notebook render` prints it."""
    return to_transcript(rendered, RENDER_LAYOUT)


@dataclass(frozen=True, slots=True)
class TestResult:
    """The outcome of one prompt test of notebook `notebook`."""

    __test__ = False  # not a pytest test class

    notebook: str
    test: PromptTest
    passed: bool
    failure: str | None = None  # one line: what went wrong
    detail: str | None = None  # the rendered result beside the expectation, or the snapshot's diff
    seconds: float = 0.0
    updated: str | None = None  # the snapshot file written by --update-snapshots


def snapshot_path(notebook: Path, test: PromptTest) -> Path:
    """Where `test`'s snapshot lives: the file it names, else `<notebook stem>.snapshots/<test>.txt` beside it."""
    if test.snapshot:
        return notebook.parent / test.snapshot
    stem = test.name if not test.name.endswith(f"(cell {test.cell})") else test.prompt
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.") or "test"
    return notebook.parent / f"{notebook.stem}.snapshots" / f"{slug}.txt"


def _inside(path: Path, folder: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real.startswith(top.rstrip(os.sep) + os.sep)


def _shown(text: str) -> str:
    return clipped(text, _SHOWN)


class _Failed(Exception):
    def __init__(self, failure: str, detail: str | None = None) -> None:
        super().__init__(failure)
        self.failure = failure
        self.detail = detail


def _read_snapshot(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SNAPSHOT_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _Failed(f"cannot read the snapshot {path.name}: {error.strerror or error}") from None
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise _Failed(
            f"the snapshot {path.name} is over {MAX_SNAPSHOT_BYTES:,} bytes, so it is not compared: "
            "test part of the result with contains or regex instead"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Failed(f"the snapshot {path.name} is not UTF-8 text") from None


def _diff(expected: str, actual: str, name: str) -> str:
    lines = list(
        difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), f"{name} (snapshot)", "rendered now"
        )
    )
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"... {len(lines) - _DIFF_LINES} more lines of diff\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")


class _Run:
    """One notebook's tests: its prompts by their own names, its file, and what the run may do."""

    def __init__(
        self,
        key: str,
        notebook: Path,
        prompts: Sequence[PromptSpec],
        read_file: FileReader,
        searcher: RegexSearcher,
        update: bool,
    ) -> None:
        self.key = key
        self.notebook = notebook
        self.prompts = {spec.name: spec for spec in prompts}
        self.read_file = read_file
        self.searcher = searcher
        self.update = update
        self.snapshots: dict[Path, str] = {}  # snapshot file -> the test that uses it

    def run(self, test: PromptTest) -> TestResult:
        started = time.perf_counter()
        updated = None
        try:
            if test.problem is not None:
                raise _Failed(f"the test cell is malformed: {test.problem}")
            updated = self._check(test)
        except _Failed as failed:
            seconds = time.perf_counter() - started
            return TestResult(self.key, test, False, failed.failure, failed.detail, seconds)
        return TestResult(self.key, test, True, seconds=time.perf_counter() - started, updated=updated)

    def _check(self, test: PromptTest) -> str | None:
        spec = self.prompts.get(test.prompt)
        try:
            if spec is None:
                raise UnknownPromptError(test.prompt, suggest_names(test.prompt, self.prompts))
            rendered = render_prompt(spec, dict(test.arguments), read_file=self.read_file)
        except MCPNotebookError as error:
            raise _Failed(f"{error}".replace("Unknown prompt", "no such prompt in this notebook")) from None
        text = rendered_text(rendered)
        roles = tuple(message.role for message in rendered.messages)
        for needle in test.contains:
            if needle not in text:
                raise _Failed(f"the rendered prompt does not contain {needle!r}", self._beside(f"{needle!r}", text))
        for pattern in test.regex:
            try:
                found = self.searcher.search(pattern, text)
            except re.error as error:
                raise _Failed(f"the regex {pattern!r} is malformed: {error}") from None
            except OSError as error:
                raise _Failed(f"the regex {pattern!r} could not be searched: {error}") from None
            except RegexTimeout as timeout:
                raise _Failed(
                    f"the regex {pattern!r} was stopped: {timeout}; nested repetition such as (a+)+ can run for ever"
                ) from None
            if not found:
                raise _Failed(f"no match for the regex {pattern!r}", self._beside(f"/{pattern}/", text))
        if test.messages is not None and len(roles) != test.messages:
            raise _Failed(
                f"{len(roles)} messages rendered, {test.messages} expected",
                self._beside(f"{test.messages} messages", text),
            )
        if test.roles is not None and roles != test.roles:
            raise _Failed(
                f"roles {', '.join(roles) or '(none)'} rendered, {', '.join(test.roles) or '(none)'} expected",
                self._beside(", ".join(test.roles), text),
            )
        if test.snapshot is not None:
            return self._snapshot(test, text)
        return None

    @staticmethod
    def _beside(expected: str, text: str) -> str:
        return f"expected: {expected}\nrendered:\n{_shown(text)}"

    def _snapshot(self, test: PromptTest, text: str) -> str | None:
        path = snapshot_path(self.notebook, test)
        if not _inside(path, self.notebook.parent):
            raise _Failed(f"the snapshot {test.snapshot!r} is outside the notebook's folder, so it is not used")
        if (other := self.snapshots.setdefault(path, test.name)) != test.name:
            raise _Failed(f"{other!r} uses the snapshot {path.name} too: give each test its own name or snapshot")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_SNAPSHOT_BYTES:
            raise _Failed(
                f"the rendered prompt is over {MAX_SNAPSHOT_BYTES:,} bytes, too large for a snapshot: "
                "test part of it with contains or regex instead"
            )
        stored = _read_snapshot(path)
        if stored == text:
            return None
        if self.update:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            except OSError as error:
                raise _Failed(f"cannot write the snapshot {path}: {error.strerror or error}") from None
            return str(path)
        if stored is None:
            raise _Failed(
                f"no snapshot yet ({path.name}): run with --update-snapshots to write it",
                f"rendered:\n{_shown(text)}",
            )
        raise _Failed(f"the rendered prompt differs from the snapshot {path.name}", _diff(stored, text, path.name))


def run_tests(
    tests: Mapping[str, tuple[Sequence[PromptSpec], Sequence[PromptTest]]],
    notebooks: Mapping[str, Path],
    read_file: FileReader,
    *,
    update_snapshots: bool = False,
    regex_timeout: float | None = None,
    on_result: Callable[[TestResult], None] | None = None,
) -> list[TestResult]:
    """Run the prompt tests of each notebook (`NotebookFolderSource.prompt_tests()`), in notebook order."""
    results = []
    with RegexSearcher() if regex_timeout is None else RegexSearcher(regex_timeout) as searcher:
        for key in sorted(tests):
            prompts, cases = tests[key]
            run = _Run(key, notebooks[key], prompts, read_file, searcher, update_snapshots)
            for test in cases:
                result = run.run(test)
                results.append(result)
                if on_result is not None:
                    on_result(result)
    return results
