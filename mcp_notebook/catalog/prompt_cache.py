"""Each configured server's last prompt list, kept in the user's cache folder, so the first `/` answers at once.

A server's list is written after a pool (the editor bridge's, the Jupyter
server's) started that server and listed its prompts, and read back when a
pool starts it again: the first `/` then lists those prompts while the server starts, and the fresh
list replaces them as soon as the server answers (a server that fails to
start shows as down, its old list gone). A server is known by its name and
how it is reached (command, arguments, folder, or URL); its environment and
headers, which may hold secrets, are neither stored nor hashed.

The files live in `$MCP_NOTEBOOK_CACHE_DIR`, else `$XDG_CACHE_HOME/mcp-notebook`,
else `~/.cache/mcp-notebook`, under `lsp-prompts/`, readable by the user only.
A file that cannot be read or does not parse counts as no file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..config import ServerConfig
from ..discovery import default_cache_dir
from ..models import PromptArgument, PromptSpec

__all__ = ["PromptListCache"]

log = logging.getLogger(__name__)

_FORMAT = 1  # bumped when the stored shape changes: older files are then ignored
_ARGUMENT_FIELDS = tuple(f.name for f in dataclasses.fields(PromptArgument))


class PromptListCache:
    """Reads and writes servers' prompt lists under `folder`; every method runs off the event loop."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def default(cls) -> PromptListCache:
        return cls(default_cache_dir() / "lsp-prompts")

    def path(self, name: str, config: ServerConfig) -> Path:
        identity = json.dumps([name, config.command, list(config.args), config.cwd, config.url, config.sse])
        digest = hashlib.sha256(identity.encode()).hexdigest()[:20]
        return self.folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:40]}-{digest}.json"

    def load(self, name: str, config: ServerConfig) -> tuple[PromptSpec, ...] | None:
        """The list stored for this server, or None."""
        try:
            data = json.loads(self.path(name, config).read_text(encoding="utf-8"))
            if data.get("format") != _FORMAT:
                return None
            return tuple(_spec(item) for item in data["prompts"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            log.info("ignoring the stored prompt list of %s: %s", name, error)
            return None

    def save(self, name: str, config: ServerConfig, prompts: tuple[PromptSpec, ...]) -> None:
        """Store this server's list (atomically: a reader never sees half a file); failures are only logged."""
        data = {"format": _FORMAT, "server": name, "prompts": [_stored(spec) for spec in prompts]}
        target = self.path(name, config)
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    json.dump(data, out)
                os.replace(temporary, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except (OSError, TypeError, ValueError) as error:
            log.info("could not store the prompt list of %s: %s", name, error)


def _stored(spec: PromptSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "arguments": [{f: getattr(a, f) for f in _ARGUMENT_FIELDS} for a in spec.arguments],
        "meta": dict(spec.meta) if spec.meta else None,
        "origin": spec.origin,
    }


def _spec(item: dict[str, Any]) -> PromptSpec:
    arguments = []
    for stored in item.get("arguments") or ():
        values = {f: stored[f] for f in _ARGUMENT_FIELDS if f in stored}
        values["completions"] = tuple(values.get("completions") or ())
        arguments.append(PromptArgument(**values))
    return PromptSpec(
        name=str(item["name"]),
        title=item.get("title"),
        description=item.get("description"),
        arguments=tuple(arguments),
        meta=item.get("meta"),
        origin=item.get("origin"),
    )
