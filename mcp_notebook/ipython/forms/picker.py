"""`PromptPicker`: every prompt of every connected server, searchable, one click from its form.

The list is grouped by server, filtered as the user types (name, title,
description), and reloads by itself when a server announces
`notifications/prompts/list_changed`. Choosing a prompt opens its
`PromptForm` under the list: a click, or from the keyboard (`picker_script`:
↑/↓ and Enter, Escape); Enter in the search box opens the only match.
"""

from __future__ import annotations

import asyncio
import html
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

import ipywidgets as widgets

from ...models import PromptSpec
from .picker_script import PICKER_SCRIPT
from .prompt_form import PromptForm, javascript_output
from .services import PromptService, TaskRunner

__all__ = ["ListedPromptService", "PromptPicker", "matches_query"]

log = logging.getLogger(__name__)

_LIST_ROWS = 8

FormFactory = Callable[[str, PromptSpec], PromptForm]
"""Builds the form for (server name, prompt)."""


class ListedPromptService(PromptService, Protocol):
    """A server whose prompt list can change; listeners are called on the event loop."""

    def add_list_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]: ...


def matches_query(spec: PromptSpec, query: str, server: str = "") -> bool:
    """Whether every word of `query` appears in the prompt's name, title, description or server."""
    haystack = " ".join(filter(None, (spec.name, spec.title, spec.description, server))).lower()
    return all(word in haystack for word in query.lower().split())


def _option_label(spec: PromptSpec) -> str:
    label = spec.name
    if spec.title and spec.title != spec.name:
        label += f" — {spec.title}"
    elif spec.description:
        label += f" — {spec.description[:80]}"
    return label


def _prompts(count: int) -> str:
    return f"{count} prompt{'' if count == 1 else 's'}"


class _ServerSection:
    """The header and list of one server's prompts."""

    def __init__(self, server: str, on_pick: Callable[[str, str], object]) -> None:
        self.server = server
        self.prompts: tuple[PromptSpec, ...] = ()
        self.failure: str | None = None
        # The thread (if any) that is replacing the options now: only its own changes of the
        # selection are ignored; a pick made meanwhile on the kernel's main thread still counts.
        self._updating_in: int | None = None
        self._listed: tuple[tuple[str, str], ...] = ()
        self.header = widgets.HTML("")
        self.options = widgets.Select(options=(), value=None, rows=_LIST_ROWS, layout=widgets.Layout(width="auto"))
        self.options.add_class("mcp-picker-list")
        self.widget = widgets.VBox([self.header, self.options])
        self.widget.add_class("mcp-picker-server")
        self.options.observe(self._on_select, names="value")
        self._on_pick = on_pick

    def show(self, query: str) -> int:
        """Show the prompts that match `query`; returns how many."""
        shown = [spec for spec in self.prompts if matches_query(spec, query, self.server)]
        listed = tuple((_option_label(spec), spec.name) for spec in shown)
        if listed != self._listed:  # a reload that changes nothing leaves the user's selection alone
            self._listed = listed
            self._updating_in = threading.get_ident()
            try:
                # One message to the front end once the list has settled: a pick made in between
                # would otherwise be checked against options this thread is still replacing.
                with self.options.hold_sync():
                    self.options.index = None
                    self.options.options = listed
                    self.options.index = None
            finally:
                self._updating_in = None
        self.options.rows = max(2, min(_LIST_ROWS, len(shown)))
        self.options.layout.display = "" if shown else "none"
        # A server the search leaves nothing of is not shown at all (one that failed still says why).
        self.widget.layout.display = "none" if query.strip() and not shown and self.failure is None else ""
        name = html.escape(self.server)
        if self.failure is not None:
            note = f'<span style="color: var(--jp-error-color1, #d32f2f)">{html.escape(self.failure)}</span>'
        elif query.strip():
            note = f"{len(shown)} of {_prompts(len(self.prompts))} match"
        else:
            note = _prompts(len(self.prompts))
        self.header.value = f"<b>{name}</b> <small>— {note}</small>"
        return len(shown)

    def _on_select(self, change: dict[str, Any]) -> None:
        if self._updating_in == threading.get_ident() or change["new"] is None:
            return
        self._on_pick(self.server, str(change["new"]))

    def close(self) -> None:
        for part in (self.header, self.options, self.widget):
            part.close()


class PromptPicker:
    """All prompts of the given servers; `form` is the form of the prompt chosen last."""

    def __init__(
        self,
        services: Mapping[str, ListedPromptService],
        runner: TaskRunner,
        create_form: FormFactory,
    ) -> None:
        self._services = dict(services)
        self._runner = runner
        self._create_form = create_form
        self._lock = threading.RLock()  # the search box (main thread) and reloads (event loop) both redraw
        self._reloads: set[asyncio.Task[None]] = set()
        self.form: PromptForm | None = None
        self.loads = 0  # completed reloads, so callers can tell a fresh listing from an old one

        self.search = widgets.Text(
            value="",
            placeholder="Search prompts by name, title or description",
            continuous_update=True,
            layout=widgets.Layout(width="100%", max_width="40em"),
        )
        self.search.add_class("mcp-picker-search")
        self.status = widgets.HTML("<i>Loading prompts…</i>")
        self.sections = {server: _ServerSection(server, self.open) for server in self._services}
        self.form_area = widgets.VBox([])
        # The keyboard behaviour of the lists, in front ends that run scripts (see picker_script).
        self.scripts = widgets.Output(
            layout=widgets.Layout(height="0px", overflow="hidden"), _dom_classes=("mcp-picker-scripts",)
        )
        self.scripts.outputs = (javascript_output(PICKER_SCRIPT),)
        empty = [widgets.HTML("<i>No MCP servers are connected. Connect one with <code>%mcp connect</code>.</i>")]
        self.widget = widgets.VBox(
            [
                widgets.HTML("<b>MCP prompts</b>"),
                self.search,
                self.status,
                *([s.widget for s in self.sections.values()] or empty),
                self.form_area,
                self.scripts,
            ]
        )
        self.widget.add_class("mcp-prompt-picker")
        self.search.observe(lambda _: self._show(), names="value")
        self.search.on_msg(lambda _widget, content, _buffers: self._on_search_key(content))
        self._unsubscribe = [
            service.add_list_changed_listener(self._on_list_changed) for service in self._services.values()
        ]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    @property
    def prompts(self) -> dict[str, tuple[PromptSpec, ...]]:
        """The prompts listed last, by server."""
        return {server: section.prompts for server, section in self.sections.items()}

    def refresh(self) -> Future[None]:
        """Reload every server's prompt list in the background."""
        return self._runner.start(self._reload)

    def open(self, server: str, name: str) -> PromptForm:
        """Open the form of prompt `name` of `server` under the list (closing the previous one)."""
        spec = next((s for s in self.sections[server].prompts if s.name == name), None)
        if spec is None:
            raise KeyError(f"{server} has no prompt {name!r}")
        form = self._create_form(server, spec)
        previous, self.form = self.form, form
        self.form_area.children = (form.widget,)
        if previous is not None:
            previous.close()
        return form

    def open_only_match(self) -> PromptForm | None:
        """Open the form of the one prompt the search leaves; None (nothing opened) when it leaves several or none."""
        with self._lock:
            query = self.search.value
            found = [
                (server, spec.name)
                for server, section in self.sections.items()
                for spec in section.prompts
                if matches_query(spec, query, server)
            ]
        return self.open(*found[0]) if len(found) == 1 else None

    def _on_search_key(self, content: Any) -> None:
        # Enter in the search box (the widget's "submit"); the picker's script handles it first where scripts run.
        if isinstance(content, Mapping) and content.get("event") == "submit":
            self.open_only_match()

    def close(self) -> None:
        """Stop following list changes and remove the picker (and its open form)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if self.form is not None:
            self.form.close()
        for section in self.sections.values():
            section.close()
        for part in (self.search, self.status, self.form_area, self.scripts, self.widget):
            part.close()

    def _on_list_changed(self) -> None:
        # Called on the event loop, where the runtime's blocking portal may not be used.
        task = asyncio.get_running_loop().create_task(self._reload())
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    async def _reload(self) -> None:
        servers = list(self._services)
        results: Sequence[Sequence[PromptSpec] | BaseException] = await asyncio.gather(
            *(self._services[server].list_prompts() for server in servers), return_exceptions=True
        )
        with self._lock:
            for server, result in zip(servers, results, strict=True):
                section = self.sections[server]
                if isinstance(result, BaseException):
                    log.info("listing the prompts of %s failed: %s", server, result)
                    section.failure = f"cannot list prompts: {result}"
                else:
                    section.failure = None
                    section.prompts = tuple(sorted(result, key=lambda spec: spec.name))
            self.loads += 1
            self._show()

    def _show(self) -> None:
        with self._lock:
            self._show_locked()

    def _show_locked(self) -> None:
        query = self.search.value
        shown = sum(section.show(query) for section in self.sections.values())
        total = sum(len(section.prompts) for section in self.sections.values())
        if total == 0 and not any(s.failure for s in self.sections.values()):
            self.status.value = "<i>No prompts.</i>" if self.sections else ""
        elif query.strip():
            self.status.value = f"<small>{shown} of {_prompts(total)} match “{html.escape(query)}”.</small>"
        else:
            servers = len(self.sections)
            self.status.value = f"<small>{_prompts(total)} from {servers} server{'s' if servers != 1 else ''}.</small>"
