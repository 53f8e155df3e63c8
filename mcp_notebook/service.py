"""The one service every host runs: a served folder, its index, the registry, the protocol server and the watch.

Five hosts serve notebooks: `serve` over stdio, `serve --http` (one process or
`--workers N`), the ASGI factory `mcp_notebook.asgi:create_app`, the Jupyter
Server extension and the in-kernel `%mcp serve` (for its notebook). Each
builds a `NotebookService` from `ServiceSettings` and adds only its transport
and its lifecycle:

    service = NotebookService(settings)         # source, index, registry, protocol server
    lines = service.start()                     # the first scan; the start-up summary
    await service.watch(ready=...)              # reloads on save, until cancelled or stopped
    service.close()                             # the index is written and closed

What is the same in every host, because only this module does it:

* **the index** (`sources/index.py`) in `cache_dir`, unless `cache` is off;
* **the first scan**: forked children share it where that is safe (Linux,
  and no other thread in the process: `sources/parallel.py`), and the
  garbage collector is off during it and frozen after it
  (`NotebookFolderSource.first_scan`); a host on an event loop calls it in a
  worker thread (`start_in_thread`);
* **the start-up summary** (`sources/start_report.py`): how many prompts from
  how many notebooks, then each notebook's problem, said once.
* **the skills** (`sources/skills.py`, unless `skills` is off): the skill
  folders looked for during the first scan, the notebooks' skills found as
  each notebook is built, all looked at again after a save, read by the
  protocol server's `skills/list`, `skills/get` and `skill://` reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import settings

if TYPE_CHECKING:
    import anyio

    from .protocol.server import CachePolicy, PromptServer
    from .registry import PromptRegistry
    from .sources.folder import NotebookFolderSource
    from .sources.skills import SkillCatalog
    from .sources.start_report import StartReport, StartSummary

__all__ = ["NotebookService", "ServiceSettings"]


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """What is served and how it is kept current: the options every host has (`settings.py` declares each)."""

    paths: tuple[str, ...]
    page_size: int = 500
    name: str = "mcp-notebook"
    watch: bool = True
    poll: float | None = None  # seconds between looks for changes; None: only where the kernel cannot tell
    cache: bool = True
    cache_dir: str | None = None  # None: $MCP_NOTEBOOK_CACHE_DIR, else $XDG_CACHE_HOME/mcp-notebook
    skills: bool = True  # the Skills extension: SKILL.md folders and notebooks tagged as skills

    def __post_init__(self) -> None:
        settings.check_values({name: getattr(self, name) for name in self.names()})
        if self.poll is not None and not self.watch:
            raise ValueError("poll says how to watch, and watch is off: give one of them")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceSettings:
        """The settings `MCP_NOTEBOOK_PATHS` (required) and the other variables give."""
        paths = settings.option("paths")
        if not paths.kind.convert((os.environ if environ is None else environ).get(paths.env, "")):
            raise ValueError(f"set {paths.env} to the notebooks or folders to serve")
        return cls(**settings.from_env(cls.names(), environ))

    @classmethod
    def for_paths(cls, paths: tuple[str, ...], environ: Mapping[str, str] | None = None) -> ServiceSettings:
        """The settings for serving `paths`, with the other options as the `MCP_NOTEBOOK_*` variables set them."""
        return cls(paths=paths, **settings.from_env([name for name in cls.names() if name != "paths"], environ))

    def to_env(self) -> dict[str, str]:
        """The variables `from_env` reads back into these settings."""
        return settings.to_env({name: getattr(self, name) for name in self.names()})

    @property
    def index_folder(self) -> Path | None:
        """Where the index is kept, or None when there is none."""
        if not self.cache:
            return None
        if self.cache_dir is not None:
            return Path(self.cache_dir).expanduser()
        from .sources.index import default_cache_dir

        return default_cache_dir()


class NotebookService:
    """The prompts of the served notebooks, from the first scan to the last save, for any transport.

    `registry` is the host's own when it publishes other prompts beside the
    notebooks' (a kernel's `%%prompt` cells); `server_options` are passed to
    `create_server` (a kernel's render and completion hooks); `cache` sets
    the 2026-07-28 cache hints.
    """

    def __init__(
        self,
        settings: ServiceSettings,
        *,
        registry: PromptRegistry | None = None,
        cache: CachePolicy | None = None,
        **server_options: Any,
    ) -> None:
        from .registry import PromptRegistry
        from .sources.folder import NotebookFolderSource

        self.settings = settings
        self.registry = registry if registry is not None else PromptRegistry()
        self.source: NotebookFolderSource = NotebookFolderSource(
            list(settings.paths), self.registry, index_folder=settings.index_folder
        )
        self.skills: SkillCatalog | None = None
        if settings.skills:
            from .sources.skills import SkillCatalog

            self.skills = SkillCatalog.of_source(self.registry, self.source)
        self._cache = cache
        self._server_options = server_options
        self._server: PromptServer | None = None
        self._report: StartReport | None = None
        self.summary: StartSummary | None = None  # what the first scan served, once `start` is done

    @property
    def server(self) -> PromptServer:
        """The protocol server of these prompts, built when a host first asks for it."""
        if self._server is None:
            from .protocol.server import create_server

            options = dict(self._server_options)
            self._server = create_server(
                self.registry,
                resources=options.pop("resources", self.source),
                read_file=options.pop("read_file", self.source.read_file),
                page_size=self.settings.page_size,
                name=options.pop("name", self.settings.name),
                cache=self._cache,
                skills=options.pop("skills", self.skills.read_bytes if self.skills is not None else None),
                **options,
            )
        return self._server

    @property
    def root(self) -> Path:
        return self.source.root

    def start(self, meanwhile: Callable[[], object] | None = None, *, report: bool = True) -> list[str]:
        """The first scan (`meanwhile` is the host's other start-up work, done while children build), then the
        summary lines. Not `report`: another process of the same server says the summary (`--workers`)."""
        from .sources.start_report import StartReport, start_summary, then_for

        self._report = StartReport()  # each problem of the first scan said once, in the summary
        skills = self.skills
        # One listing of the served tree: the notebooks are found in it, and the skills.
        listed = skills.listing() if skills is not None else None

        def meanwhile_too() -> None:
            # The skill folders are looked at while forked children build the notebooks (the host's own work
            # after); published with the notebooks' skills once those are built.
            if skills is not None:
                skills.scan(listed, publish=False)
            if meanwhile is not None:
                meanwhile()

        try:
            self.source.first_scan(meanwhile_too, listed=listed)
            if skills is not None:
                skills.publish()
        except BaseException:
            self._end_report()
            raise
        self.summary = start_summary(self.registry, self.source, then=then_for(watching=self.settings.watch))
        if self._report is not None:
            self._report.summarized()
        if not self.settings.watch:
            self._end_report()
        return self.summary.lines if report else []

    async def start_in_thread(self, *, report: bool = True) -> list[str]:
        """`start` for a host on an event loop: the scan runs in a worker thread, the loop goes on."""
        from .worker_threads import run_off_loop

        return await run_off_loop(lambda: self.start(report=report))

    async def close_in_thread(self) -> None:
        """`close` for a host on an event loop, when it stops serving: the index is written in a worker thread,
        and the host waits for it even when cancelled."""
        from .worker_threads import run_off_loop

        await run_off_loop(self.close)

    async def watch(self, *, ready: Callable[[], None] | None = None, stop_event: anyio.Event | None = None) -> None:
        """Reload notebooks as they are saved, until `stop_event` is set or the task is cancelled.

        `ready` is called once the watch is in place; with `watch` off, at once, and nothing is watched.
        """

        def in_place() -> None:
            self._end_report()
            if ready is not None:
                ready()

        if not self.settings.watch:
            in_place()
            return
        await self.source.watch(stop_event=stop_event, ready=in_place, poll=self.settings.poll)

    def _end_report(self) -> None:
        if self._report is not None:
            self._report.end()
            self._report = None

    def close(self, timeout: float | None = 10.0) -> None:
        """When serving ends: what was loaded is written to the index (waiting at most `timeout`), then closed."""
        self._end_report()
        if self.skills is not None:  # a host that serves another folder next (a kernel's renamed notebook)
            self.registry.set_skills(())
            self.skills.close(timeout)
        self.source.close(timeout)

    def describe(self) -> str:
        """The first line of the summary: how many prompts from how many notebooks, and where."""
        from .sources.start_report import summary_lines, then_for

        return summary_lines(self.registry, self.source, then=then_for(watching=self.settings.watch))[0]
