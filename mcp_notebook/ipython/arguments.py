"""Prompt arguments as typed on a `%mcp` line: `k=v`, `k="a value"`, `k=@variable`, `k=@file:path`.

`@name` takes a variable of the user's namespace as data: it is looked up by
name (never evaluated) and formatted with `argument_text` (a DataFrame becomes
a Markdown table). `@file:path` reads a text file. `@@text` is the literal
`@text`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

__all__ = ["parse_arguments", "split_line"]

_MAX_FILE_BYTES = 10 * 1024 * 1024
_KEY = re.compile(r"[A-Za-z0-9_.-]+")


def split_line(line: str) -> list[str]:
    """Split a magic line like a shell would (quotes group words), with a clear error for a stray quote."""
    try:
        return shlex.split(line)
    except ValueError as error:
        raise UsageError(f"cannot read the line: {error} (close your quotes)") from None


def parse_arguments(tokens: Sequence[str], namespace: Mapping[str, Any], *, cwd: Path | None = None) -> dict[str, str]:
    """Turn `key=value` tokens into prompt arguments, resolving `@variable` and `@file:path`."""
    arguments: dict[str, str] = {}
    for token in tokens:
        key, equals, value = token.partition("=")
        if not equals or not _KEY.fullmatch(key):
            raise UsageError(
                f'expected NAME=VALUE, got {token!r}. Quote values with spaces: name="two words"; '
                "use name=@variable for a variable, name=@file:path for a file"
            )
        if key in arguments:
            raise UsageError(f"argument {key!r} is given twice")
        arguments[key] = _resolve(key, value, namespace, cwd)
    return arguments


def _resolve(key: str, value: str, namespace: Mapping[str, Any], cwd: Path | None) -> str:
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@file:"):
        return _read_file(key, value.removeprefix("@file:"), cwd)
    if value.startswith("@"):
        name = value[1:]
        if not name.isidentifier():
            raise UsageError(f"{key}=@{name}: @ takes a variable name (use @file:path for a file, @@ for a literal @)")
        if name not in namespace:
            raise UsageError(f"{key}=@{name}: no variable named {name!r} in this session")
        from ..api import argument_text

        return argument_text(namespace[name])
    return value


def _read_file(key: str, path_text: str, cwd: Path | None) -> str:
    path = Path(path_text).expanduser()
    if not path.is_absolute() and cwd is not None:
        path = cwd / path
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            raise UsageError(f"{key}=@file:{path_text}: the file is over {_MAX_FILE_BYTES // (1024 * 1024)} MiB")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{key}=@file:{path_text}: no such file ({path})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{key}=@file:{path_text}: not a UTF-8 text file") from None
    except OSError as error:
        raise UsageError(f"{key}=@file:{path_text}: cannot read it ({error.strerror})") from None
