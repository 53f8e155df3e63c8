"""A server's error message made short for a form: one readable line, the full text kept as details.

Servers written with pydantic answer with its whole report ("1 validation
error for int / Invalid JSON: … [type=json_invalid, input_value=…] / For
further information visit …"). The form shows one line saying what is wrong
and keeps the rest behind a "Details" fold. Pure text work: no widgets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ErrorText", "mentioned_arguments", "summarize_error"]

_SUMMARY_LIMIT = 240
_PYDANTIC_HEAD = re.compile(r"\s*(?:Error:\s*)?\d+ validation errors? for \S+\s*$")
_PYDANTIC_TAIL = re.compile(r"\s*\[type=[^\]]*\]\s*$")
_FURTHER = re.compile(r"^\s*For further information visit ")
_TYPE_WORDS = " to expected type "
_LONG_TYPE = 40


@dataclass(frozen=True, slots=True)
class ErrorText:
    """`summary` is one line; `details` the full message when it says more than the summary (else None)."""

    summary: str
    details: str | None = None


def _clip(text: str) -> str:
    return text if len(text) <= _SUMMARY_LIMIT else text[: _SUMMARY_LIMIT - 1].rstrip() + "…"


def _first_pydantic_problem(lines: list[str]) -> str | None:
    """The first error line of a pydantic report, without its `[type=…]` tail."""
    for line in lines:
        if not line.strip() or _FURTHER.match(line) or not line.startswith("  "):
            continue
        return _PYDANTIC_TAIL.sub("", line).strip() or None
    return None


def _without_long_type(head: str) -> str:
    """ "… to expected type typing.Annotated[str, FieldInfo(…)]": such a repr says more to Python than to people."""
    start = head.find(_TYPE_WORDS)
    if start < 0:
        return head
    end = head.find("Error:", start)
    end = len(head) if end < 0 else end
    named = head[start + len(_TYPE_WORDS) : end].rstrip(" .")
    if len(named) <= _LONG_TYPE:
        return head
    return f"{head[:start]} to the expected type{head[start + len(_TYPE_WORDS) + len(named) :]}"


def summarize_error(message: str) -> ErrorText:
    """One line for `message`, and the full text as details when it had more to say."""
    text = message.strip()
    lines = text.splitlines()
    if not lines:
        return ErrorText("The server gave no reason.")
    head = _without_long_type(lines[0].strip())
    report = _PYDANTIC_HEAD.search(head)
    if report is not None:
        problem = _first_pydantic_problem(lines[1:])
        head = head[: report.start()].rstrip().rstrip(".:") or "Invalid value"
        if problem:
            head = f"{head}: {problem}"
    summary = _clip(head)
    return ErrorText(summary, text if text != summary else None)


def mentioned_arguments(message: str, names: Iterable[str]) -> list[str]:
    """Which of `names` the message names as an argument (`argument 'days'`, `'days'`, `days:`), in order."""
    found = []
    for name in names:
        quoted = re.escape(name)
        if re.search(rf"argument[s]?\s*[:=]?\s*['\"`]?{quoted}\b|['\"`]{quoted}['\"`]", message):
            found.append(name)
    return found
