"""The fast suite runs anywhere: no wall-clock bounds in it, and Ctrl-C tests that work where SIGINT is ignored.

`pytest -m "not slow"` is what the README tells everyone to run, on a laptop
or on a loaded CI machine, in a terminal or as a background job. So:

* a test not marked slow asserts nothing about how long something took (a
  wait has a deadline, `anyio.fail_after`, but no assertion measures time);
  a test whose point is a time bound is marked slow;
* a test that delivers SIGINT installs Python's handler itself (the
  `sigint_raises_keyboard_interrupt` fixture): under `nohup` or `&` SIGINT is
  ignored, and the test would wait forever for a KeyboardInterrupt.

That the fast suite needs nothing from `.tools/` is shown by running it from
an unpacked sdist, which has none (`test_packaging.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SLOW_MARKS = ("slow", "interop", "browser")  # conftest.py makes the last two slow as well
CLOCKS = frozenset({"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"})
SIGINT_FIXTURE = "sigint_raises_keyboard_interrupt"

Test = ast.FunctionDef | ast.AsyncFunctionDef


def _is_marked_slow(decorators: list[ast.expr]) -> bool:
    return any(f"mark.{mark}" in ast.unparse(decorator) for decorator in decorators for mark in SLOW_MARKS)


def _module_is_slow(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "pytestmark" for target in node.targets):
            return any(f"mark.{mark}" in ast.unparse(node.value) for mark in SLOW_MARKS)
    return False


def collected_tests(tree: ast.Module) -> Iterator[tuple[Test, bool]]:
    """Each test function of a module, and whether it is marked slow (itself, its class or its module)."""
    module_slow = _module_is_slow(tree)

    def walk(body: list[ast.stmt], slow: bool) -> Iterator[tuple[Test, bool]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield from walk(node.body, slow or _is_marked_slow(node.decorator_list))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
                yield node, slow or _is_marked_slow(node.decorator_list)

    yield from walk(tree.body, module_slow)


def _reads_the_clock(node: ast.AST) -> bool:
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in CLOCKS
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "time"
        for call in ast.walk(node)
    )


def _timing_helpers(tree: ast.Module) -> set[str]:
    """Functions of the module that return a time difference (a test may assert on what they return)."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(
            isinstance(ret, ast.Return) and ret.value is not None and _reads_the_clock(ret.value)
            for ret in ast.walk(node)
        )
    }


def _calls(node: ast.AST, names: set[str]) -> bool:
    return any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in names
        for call in ast.walk(node)
    )


def wall_clock_assertions(test: Test, helpers: set[str]) -> list[str]:
    """The assertions of `test` that compare a value measured from the clock."""
    measured: set[str] = set()
    for node in ast.walk(test):
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and node.value is not None
            and (_reads_the_clock(node.value) or _calls(node.value, helpers))
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            measured |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    found = []
    for node in ast.walk(test):
        if isinstance(node, ast.Assert) and any(isinstance(part, ast.Compare) for part in ast.walk(node.test)):
            names = {name.id for name in ast.walk(node.test) if isinstance(name, ast.Name)}
            if _reads_the_clock(node.test) or _calls(node.test, helpers) or names & measured:
                found.append(f"line {node.lineno}: assert {ast.unparse(node.test)}")
    return found


def _test_modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(TESTS.rglob("test_*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_no_fast_test_asserts_on_how_long_something_took() -> None:
    offenders = []
    for path, tree in _test_modules():
        helpers = _timing_helpers(tree)
        for test, slow in collected_tests(tree):
            if not slow:
                offenders += [
                    f"{path.relative_to(TESTS)}::{test.name} {found}" for found in wall_clock_assertions(test, helpers)
                ]
    assert offenders == [], "mark these slow, or assert on what happened rather than when:\n" + "\n".join(offenders)


def _sends_sigint(node: ast.AST) -> bool:
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("pthread_kill", "kill", "killpg", "send_signal", "raise_signal")
        and any("SIGINT" in ast.unparse(argument) for argument in call.args)
        for call in ast.walk(node)
    )


def _uses_the_fixture(test: Test) -> bool:
    arguments = {argument.arg for argument in test.args.args}
    marks = " ".join(ast.unparse(decorator) for decorator in test.decorator_list)
    return SIGINT_FIXTURE in arguments or SIGINT_FIXTURE in marks


def test_every_test_that_sends_sigint_installs_pythons_handler_first() -> None:
    offenders, senders = [], 0
    for path, tree in _test_modules():
        helpers = {
            node.name
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _sends_sigint(node)
        }
        for test, _ in collected_tests(tree):
            if _sends_sigint(test) or _calls(test, helpers):
                senders += 1
                if not _uses_the_fixture(test):
                    offenders.append(f"{path.relative_to(TESTS)}::{test.name}")
    assert senders >= 2  # the runtime's and the magics' Ctrl-C tests: the scan sees them
    assert offenders == [], f"use the {SIGINT_FIXTURE} fixture: {offenders}"


def test_the_scans_find_what_they_look_for() -> None:
    sample = ast.parse(
        "import time, signal, pytest\n"
        "def took():\n    return time.monotonic() - 1\n"
        "def test_a():\n    start = time.perf_counter()\n    assert time.perf_counter() - start < 1\n"
        "def test_b():\n    elapsed = took()\n    assert elapsed < 2\n"
        "@pytest.mark.slow\ndef test_c():\n    assert took() < 3\n"
        "def test_d():\n    signal.pthread_kill(1, signal.SIGINT)\n"
    )
    helpers = _timing_helpers(sample)
    found = {test.name: wall_clock_assertions(test, helpers) for test, slow in collected_tests(sample) if not slow}
    assert [name for name, lines in found.items() if lines] == ["test_a", "test_b"]
    (sender,) = [test for test, _ in collected_tests(sample) if _sends_sigint(test)]
    assert sender.name == "test_d" and not _uses_the_fixture(sender)
