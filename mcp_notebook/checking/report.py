"""`mcp-notebook check`: what `list` warns about, what each known client does wrong, and the prompt tests.

`check_paths` loads notebooks and skills as `list` does (the same folder source
and skill catalog, so the same warnings and errors; the skills' under
`SKILLS`), looks at every prompt with the client table
(`clients.py`) and runs the prompt tests (`prompt_tests.py`). `check_prompts`
does the client part for prompts from anywhere (a kernel's `%%prompt` cells).
The `Report` is grouped by notebook, worst first, and written for people
(`text`), as JSON (`as_json`) or as JUnit XML (`junit_xml`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree

from ..models import PromptSpec
from .clients import ClientRule, ProblemFinder, client_names, client_rules
from .prompt_tests import TestResult, run_tests

__all__ = ["SKILLS", "Finding", "NotebookReport", "Report", "check_paths", "check_prompts"]

Severity = Literal["error", "warning"]
GENERAL = ""  # findings about no one notebook (a name two notebooks publish)
SKILLS = "skills"  # findings about the skills (a SKILL.md that is not served, a file left out of its skill)


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong: a notebook that cannot be read, a format warning, a client's limit, a failed test."""

    severity: Severity
    kind: Literal["notebook", "format", "client", "test", "skill"]
    message: str
    prompts: tuple[str, ...] = ()  # the prompts it is about (a client's limit, grouped)
    client: str | None = None
    source: str | None = None  # where a client's limit is documented
    detail: str | None = None  # a failed test's rendered result beside the expectation, or diff


@dataclass(slots=True)
class NotebookReport:
    notebook: str
    findings: list[Finding] = field(default_factory=list)
    tests: list[TestResult] = field(default_factory=list)
    prompts: int = 0

    @property
    def errors(self) -> int:
        return sum(finding.severity == "error" for finding in self.findings)

    @property
    def warnings(self) -> int:
        return sum(finding.severity == "warning" for finding in self.findings)


@dataclass(slots=True)
class Report:
    """Everything a check found, by notebook."""

    notebooks: dict[str, NotebookReport] = field(default_factory=dict)
    clients: tuple[str, ...] = ()
    seconds: float = 0.0
    skills: int = 0  # the skills that would be served

    def of(self, notebook: str) -> NotebookReport:
        found = self.notebooks.get(notebook)
        if found is None:
            found = self.notebooks[notebook] = NotebookReport(notebook)
        return found

    def worst_first(self) -> list[NotebookReport]:
        return sorted(self.notebooks.values(), key=lambda n: (-n.errors, -n.warnings, n.notebook))

    @property
    def errors(self) -> int:
        return sum(n.errors for n in self.notebooks.values())

    @property
    def warnings(self) -> int:
        return sum(n.warnings for n in self.notebooks.values())

    @property
    def tests(self) -> list[TestResult]:
        return [result for n in self.notebooks.values() for result in n.tests]

    def exit_code(self, *, strict: bool = False) -> int:
        """1 on errors (and on warnings when `strict`), else 0."""
        return 1 if self.errors or (strict and self.warnings) else 0

    # -- for people ----------------------------------------------------------------------------

    def summary(self) -> str:
        prompts = sum(n.prompts for n in self.notebooks.values())
        notebooks = sum(1 for key in self.notebooks if key.endswith(".ipynb"))
        # "%%prompt cells": the groups of prompts that are no notebook's
        others = [key for key in self.notebooks if key not in (GENERAL, SKILLS) and not key.endswith(".ipynb")]
        tests = self.tests
        failed = sum(not result.passed for result in tests)
        ran = f", {_count(len(tests), 'prompt test')} ({len(tests) - failed} passed, {failed} failed)" if tests else ""
        skills = f", {_count(self.skills, 'skill')}" if self.skills or SKILLS in self.notebooks else ""
        return (
            f"{_count(prompts, 'prompt')} in {' and '.join([_count(notebooks, 'notebook'), *others])}{skills}{ran}: "
            f"{_count(self.errors, 'error')}, "
            f"{_count(self.warnings, 'warning')} (clients: {', '.join(self.clients) or 'none'})"
        )

    def text(self, *, verbose: bool = False) -> str:
        """The report for people: each notebook with something to say, worst first, then the summary."""
        lines: list[str] = []
        for notebook in self.worst_first():
            updated = any(result.updated for result in notebook.tests)
            if not notebook.findings and not updated and not (verbose and notebook.tests):
                continue
            title = notebook.notebook or "(all notebooks)"
            lines.append(f"{title}: {_count(notebook.errors, 'error')}, {_count(notebook.warnings, 'warning')}")
            for finding in sorted(notebook.findings, key=lambda f: f.severity != "error"):
                lines.append(f"  {finding.severity:<7}  {_one_line(finding)}")
                if finding.detail:
                    lines.extend(f"             {line}" for line in finding.detail.splitlines())
            if verbose:
                lines.extend(f"  passed   test {result.test.name}" for result in notebook.tests if result.passed)
            for result in notebook.tests:
                if result.updated:
                    lines.append(f"  updated  snapshot {result.updated}")
            lines.append("")
        lines.append(self.summary())
        return "\n".join(lines)

    # -- for machines --------------------------------------------------------------------------

    def as_json(self) -> dict[str, Any]:
        return {
            "notebooks": [
                {
                    "notebook": n.notebook,
                    "prompts": n.prompts,
                    "errors": n.errors,
                    "warnings": n.warnings,
                    "findings": [_finding_record(f) for f in n.findings],
                    "tests": [_test_record(t) for t in n.tests],
                }
                for n in self.worst_first()
            ],
            "clients": {client: client_names()[client] for client in self.clients},
            "skills": self.skills,
            "errors": self.errors,
            "warnings": self.warnings,
            "summary": self.summary(),
        }

    def junit_xml(self, *, strict: bool = False) -> bytes:
        """JUnit XML: a suite per notebook, a case per prompt test, and a case for the notebook's other checks
        (failed by its errors, and by its warnings when `strict`; otherwise they are its output)."""
        suites = ElementTree.Element("testsuites", name="mcp-notebook check")
        total = failures = 0
        for notebook in self.worst_first():
            name = notebook.notebook or "(all notebooks)"
            suite = ElementTree.SubElement(suites, "testsuite", name=name)
            cases = 0
            failed = 0
            for result in notebook.tests:
                case = ElementTree.SubElement(
                    suite, "testcase", classname=name, name=result.test.name, time=f"{result.seconds:.3f}"
                )
                cases += 1
                if not result.passed:
                    failed += 1
                    failure = ElementTree.SubElement(case, "failure", message=result.failure or "failed")
                    failure.text = result.detail or result.failure
            others = [f for f in notebook.findings if f.kind != "test"]
            checks = "served as skills" if notebook.notebook == SKILLS else "format and clients"
            case = ElementTree.SubElement(suite, "testcase", classname=name, name=checks)
            cases += 1
            failing = [f for f in others if f.severity == "error" or strict]
            if failing:
                failed += 1
                failure = ElementTree.SubElement(case, "failure", message=_one_line(failing[0]))
                failure.text = "\n".join(f"{f.severity}: {_one_line(f)}" for f in failing)
            elif others:
                ElementTree.SubElement(case, "system-out").text = "\n".join(
                    f"{f.severity}: {_one_line(f)}" for f in others
                )
            suite.set("tests", str(cases))
            suite.set("failures", str(failed))
            suite.set("errors", "0")
            total += cases
            failures += failed
        suites.set("tests", str(total))
        suites.set("failures", str(failures))
        suites.set("errors", "0")
        suites.set("time", f"{self.seconds:.3f}")
        written: bytes = ElementTree.tostring(suites, encoding="utf-8", xml_declaration=True)
        return written


def _count(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def _one_line(finding: Finding) -> str:
    if finding.kind == "client":
        names = ", ".join(finding.prompts[:5]) + (
            f" and {len(finding.prompts) - 5} more" if len(finding.prompts) > 5 else ""
        )
        return f"{finding.client}: {finding.message} [{names}] (source: {finding.source})"
    return finding.message


def _finding_record(finding: Finding) -> dict[str, Any]:
    record: dict[str, Any] = {"severity": finding.severity, "kind": finding.kind, "message": finding.message}
    for key in ("prompts", "client", "source", "detail"):
        value = getattr(finding, key)
        if value:
            record[key] = list(value) if isinstance(value, tuple) else value
    return record


def _test_record(result: TestResult) -> dict[str, Any]:
    test = result.test
    record: dict[str, Any] = {"name": test.name, "prompt": test.prompt, "cell": test.cell, "passed": result.passed}
    if result.failure:
        record["failure"] = result.failure
    if result.detail:
        record["detail"] = result.detail
    if result.updated:
        record["updated"] = result.updated
    return record


# -- checking ----------------------------------------------------------------------------------


def _clients_of(
    problems: ProblemFinder,
    report: NotebookReport,
    specs: Iterable[PromptSpec],
    known: tuple[frozenset[str], Mapping[str, tuple[str, ...]]] | None = None,
) -> None:
    """The client findings of `specs`: one finding per rule and message, naming every prompt that breaks it.

    `known`: the names of the notebook's prompts as it names them, and their kinds of media (`content_kinds`),
    so that the messages of a prompt taken from the index need not be read (a prompt renamed for a clash is)."""
    grouped: dict[tuple[ClientRule, str], list[str]] = {}
    names, media = known if known is not None else (frozenset(), {})
    for spec in specs:
        report.prompts += 1
        for rule, message in problems(spec, media.get(spec.name, ()) if spec.name in names else None):
            grouped.setdefault((rule, message), []).append(spec.name)
    for (rule, message), breaking in grouped.items():
        report.findings.append(
            Finding("warning", "client", message, tuple(breaking), client=rule.client, source=rule.source)
        )


def check_prompts(
    groups: Mapping[str, Iterable[PromptSpec]], *, clients: Collection[str] | None = None, report: Report | None = None
) -> Report:
    """The client findings of prompts from anywhere, by group (a notebook's key, "kernel", ...)."""
    problems = ProblemFinder(client_rules(clients))
    report = report or Report()
    report.clients = tuple(sorted(clients)) if clients is not None else tuple(client_names())
    for key, specs in groups.items():
        _clients_of(problems, report.of(key), specs)
    return report


def _owner(message: str, keys: Sequence[str]) -> tuple[str, str]:
    """The notebook a warning is about (it starts with its key) and the warning without it."""
    head, colon, rest = message.partition(": ")
    if colon and head in keys:
        return head, rest
    return GENERAL, message


def check_paths(
    paths: Sequence[str | Path],
    *,
    clients: Collection[str] | None = None,
    update_snapshots: bool = False,
    regex_timeout: float | None = None,
    on_result: Callable[[TestResult], None] | None = None,
) -> Report:
    """Check the notebooks at `paths` (files or folders). Raises `FileNotFoundError` / `ValueError` for bad paths
    and `ValueError` for an unknown client."""
    from ..registry import PromptRegistry
    from ..sources.folder import NotebookFolderSource, sources_unlogged
    from ..sources.skills import SkillCatalog

    started = time.perf_counter()
    rules = client_rules(clients)  # an unknown client fails before anything is read
    registry = PromptRegistry()
    with sources_unlogged():  # every problem is in the report, once
        source = NotebookFolderSource(list(paths), registry)  # a bad path raises here, before anything is open
    catalog = SkillCatalog.of_source(registry, source)
    try:
        collecting = gc.isenabled()
        gc.disable()  # a scan makes millions of objects and hardly a cycle (see `first_scan`); nothing is frozen here
        try:
            with sources_unlogged():
                listed = catalog.listing()  # one walk of the tree, for the notebooks and the skills (as `serve`)
                source.scan(workers=None, listed=listed)  # shared with forked children when large, as `serve`
                catalog.scan(listed)
        finally:
            if collecting:
                gc.enable()
        snapshot = registry.snapshot()
        keys = sorted(source.notebooks)
        report = Report(clients=tuple(sorted(clients)) if clients is not None else tuple(client_names()))
        report.skills = len(snapshot.skills)
        for key in keys:
            report.of(key)
        errors = source.errors
        for key, message in errors.items():
            report.of(key).findings.append(Finding("error", "notebook", _owner(message, keys)[1]))
        of_skills = set(catalog.warnings)
        for warning in snapshot.warnings:
            if warning in errors.values():
                continue
            if warning in of_skills:
                report.of(SKILLS).findings.append(Finding("warning", "skill", warning))
                continue
            key, message = _owner(warning, keys)
            report.of(key).findings.append(Finding("warning", "format", message))
        by_notebook: dict[str, list[PromptSpec]] = {}
        for spec in snapshot.prompts:
            by_notebook.setdefault(spec.origin or GENERAL, []).append(spec)
        kinds, problems = source.content_kinds(), ProblemFinder(rules)  # one finder: prompts alike across notebooks
        for key, specs in by_notebook.items():
            _clients_of(problems, report.of(key), specs, kinds.get(key))
        results = run_tests(
            source.prompt_tests(),
            source.notebooks,
            source.read_file,
            update_snapshots=update_snapshots,
            regex_timeout=regex_timeout,
            on_result=on_result,
        )
        for result in results:
            notebook = report.of(result.notebook)
            notebook.tests.append(result)
            if not result.passed:
                message = f"test {result.test.name}: {result.failure}"
                notebook.findings.append(Finding("error", "test", message, (result.test.prompt,), detail=result.detail))
    finally:
        catalog.close()
        source.close()
    report.seconds = time.perf_counter() - started
    return report
