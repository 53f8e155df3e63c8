"""The pytest plugin: `pytest --mcp-prompts PATH` collects each prompt test of the notebooks at PATH as a test item.

Registered through the `pytest11` entry point, so installing mcp-notebook is
enough. Each test cell becomes an item named after the test, under its notebook;
a notebook that cannot be read becomes a failing item, so that it is not passed
over in silence. Failures show what `mcp-notebook check` shows: the rendered
result beside the expectation, or the snapshot's diff. `--mcp-update-snapshots`
rewrites snapshots that differ or are new.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # every pytest run loads this plugin: the rest of mcp-notebook only when --mcp-prompts is given
    from ..models import PromptSpec
    from ..sources.test_cells import PromptTest
    from .prompt_tests import TestResult

__all__ = ["pytest_addoption", "pytest_collection_modifyitems", "pytest_configure", "pytest_unconfigure"]

_SOURCES = pytest.StashKey[list[Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-notebook", "prompt tests of notebooks (mcp-notebook)")
    group.addoption(
        "--mcp-prompts",
        action="append",
        default=[],
        metavar="PATH",
        help="collect the prompt tests (test:NAME cells) of the notebooks at PATH, a file or folder; repeatable",
    )
    group.addoption(
        "--mcp-update-snapshots",
        action="store_true",
        default=False,
        help="rewrite the snapshots of prompt tests that differ or are new",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SOURCES] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    for source in config.stash.get(_SOURCES, []):
        source.close()


class PromptTestFailed(Exception):
    """A prompt test did not hold: its message is what `mcp-notebook check` says."""


class NotebookFile(pytest.File):
    """The prompt tests of one notebook."""

    def setup_with(self, key: str, source: Any, error: str | None) -> NotebookFile:
        self.key = key
        self.source = source
        self.error = error
        return self

    def collect(self) -> Iterator[pytest.Item]:
        if self.error is not None:
            yield UnreadableNotebook.from_parent(self, name="the notebook loads").setup_with(self.error)
            return
        prompts, tests = self.source.prompt_tests().get(self.key, ((), ()))
        for test in tests:
            yield PromptTestItem.from_parent(self, name=test.name).setup_with(prompts, test)


class _Item(pytest.Item):
    # Items that are not functions have no fixtures; some plugins' hooks (pytest-lsp's) expect the attribute anyway.
    funcargs: dict[str, Any] = {}  # noqa: RUF012  (never written)


class PromptTestItem(_Item):
    """One test cell: renders its prompt and checks the result."""

    def setup_with(self, prompts: tuple[PromptSpec, ...], test: PromptTest) -> PromptTestItem:
        self.prompts = prompts
        self.test = test
        return self

    def runtest(self) -> None:
        from .prompt_tests import run_tests

        parent = self.parent
        assert isinstance(parent, NotebookFile)
        source = parent.source
        update = bool(self.config.getoption("mcp_update_snapshots"))
        (result,) = run_tests(
            {parent.key: (self.prompts, (self.test,))},
            {parent.key: source.notebooks[parent.key]},
            source.read_file,
            update_snapshots=update,
        )
        if not result.passed:
            raise PromptTestFailed(_said(result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, PromptTestFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, self.test.cell - 1, f"{self.test.name} (prompt {self.test.prompt}, cell {self.test.cell})"


class UnreadableNotebook(_Item):
    def setup_with(self, error: str) -> UnreadableNotebook:
        self.error = error
        return self

    def runtest(self) -> None:
        raise PromptTestFailed(self.error)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "the notebook loads"


def _said(result: TestResult) -> str:
    lines = [f"prompt test {result.test.name} (prompt {result.test.prompt}, cell {result.test.cell}): {result.failure}"]
    if result.detail:
        lines.append(result.detail)
    return "\n".join(lines)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    paths = config.getoption("mcp_prompts")
    if not paths:
        return
    from ..registry import PromptRegistry
    from ..sources.folder import NotebookFolderSource

    for path in paths:
        try:
            source = NotebookFolderSource([path], PromptRegistry())
        except (FileNotFoundError, ValueError) as error:
            raise pytest.UsageError(f"--mcp-prompts {path}: {error}") from None
        source.scan()
        config.stash[_SOURCES].append(source)
        errors, tested = source.errors, source.prompt_tests()
        for key, notebook in source.notebooks.items():
            if key not in errors and key not in tested:
                continue
            file = NotebookFile.from_parent(session, path=notebook).setup_with(key, source, errors.get(key))
            items.extend(file.collect())
