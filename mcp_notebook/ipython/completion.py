"""Tab completion on `%mcp` lines, through IPython's completer, so every front end gets it.

JupyterLab, Notebook 7, VS Code notebooks and terminal IPython all ask the
kernel's `IPCompleter`; `MCPCompleter.matcher` is a matcher of its API v2,
registered first and suppressing the Python matchers on `%mcp` lines (where
`compile` or `RuntimeError` mean nothing). It offers:

* subcommands (`%mcp ge` → `get`) and each subcommand's options;
* `server:prompt` references of every configured and connected server, and
  bare prompt names that only one server has;
* the chosen prompt's argument names (`language=`), required ones first;
* argument values from the server's `completion/complete`, with the other
  `k=v` of the line as `context.arguments`; after `@`, the user's variables;
  after `@file:`, paths;
* the options of a `%%prompt` cell's first line.

Completion runs on the kernel's main thread, so it must never wait on a
server: answers come from a cache, or from a request to the background
runtime that gets `DEADLINE` seconds; a request that is not done by then
keeps running and fills the cache for the next Tab. A slow or dead server
gives no items, never a hang.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models import PromptSpec
from .completion_line import MagicLine, quoted, read_magic_line
from .magics import SUBCOMMANDS
from .namespace import is_user_variable

if TYPE_CHECKING:
    from .magics import MCPMagics

__all__ = ["DEADLINE", "MATCHER_ID", "MCPCompleter", "Offer"]

logger = logging.getLogger(__name__)

DEADLINE = 0.2  # seconds a Tab may wait for servers before answering from what it has
MATCHER_ID = "mcp_notebook.mcp_matcher"
_LISTING_FRESH = 5.0  # seconds a prompt listing is used without asking again (the client caches it too)
_VALUES_FRESH = 10.0
_FAILURE_FRESH = 5.0  # a server that failed is not asked again (or restarted) on every key
_MAX_OFFERS = 100
_PROMPT_OPTIONS = ("--title", "--description", "--role", "--arg", "--ask", "--optional", "--append")
_PROMPT_ROLES = ("user", "assistant")
_PATH_OPTIONS = ("--config", "--cwd", "--notebook")


@dataclass(frozen=True, slots=True)
class Offer:
    """One completion: the text that replaces the word being typed, and what kind of thing it is."""

    text: str
    kind: str
    # The end of the word it replaces, when not the whole word (`Ru` of `language=Ru`).
    replaces: str | None = None


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())


@dataclass(slots=True)
class _Entry:
    value: Any
    at: float
    failed: bool = False


class _BackgroundCache:
    """Values fetched on the background runtime: served from here, refreshed there, waited for briefly."""

    def __init__(self, start: Callable[[Callable[[], Awaitable[Any]]], concurrent.futures.Future[Any]]) -> None:
        self._start = start
        self._entries: dict[Any, _Entry] = {}
        self._pending: dict[Any, concurrent.futures.Future[Any]] = {}
        # A result is stored by the runtime thread (done callback) or the main thread, whichever sees it first.
        self._lock = threading.Lock()

    def get_many(
        self, requests: Mapping[Any, Callable[[], Awaitable[Any]]], fresh: float, deadline: _Deadline
    ) -> dict[Any, Any]:
        """The value of each key that is known in time (stale ones too); the rest are left out."""
        now = time.monotonic()
        waiting: dict[Any, concurrent.futures.Future[Any]] = {}
        for key, fetch in requests.items():
            entry = self._entries.get(key)
            if entry is not None and now - entry.at < (_FAILURE_FRESH if entry.failed else fresh):
                continue
            with self._lock:
                future = self._pending.get(key)
            if future is None:
                try:
                    future = self._start(fetch)
                except Exception:
                    continue
                with self._lock:
                    self._pending[key] = future
                future.add_done_callback(functools.partial(self._store, key))
            waiting[key] = future
        if waiting:
            concurrent.futures.wait(waiting.values(), timeout=deadline.remaining())
        results = {}
        for key in requests:
            future = waiting.get(key)
            if future is not None and future.done():
                self._store(key, future)
            entry = self._entries.get(key)
            if entry is not None and not entry.failed:
                results[key] = entry.value
        return results

    def _store(self, key: Any, future: concurrent.futures.Future[Any]) -> None:
        error = None if future.cancelled() else future.exception()
        with self._lock:
            if self._pending.get(key) is not future:
                return  # already stored, or overtaken by a newer request
            del self._pending[key]
            if not future.cancelled():
                value = None if error is not None else future.result()
                self._entries[key] = _Entry(value=value, at=time.monotonic(), failed=error is not None)

    def clear(self) -> None:
        self._entries.clear()


class MCPCompleter:
    """Completions for the `%mcp` lines of one shell, from its `%mcp` servers."""

    def __init__(self, shell: Any, magics: MCPMagics, *, deadline: float = DEADLINE) -> None:
        self.shell = shell
        self.magics = magics
        self.pool = magics.pool
        self.deadline = deadline
        self._cache = _BackgroundCache(lambda fetch: self.pool.runtime.start(fetch))
        self.matcher = self._create_matcher()

    def _create_matcher(self) -> Callable[[Any], dict[str, Any]]:
        def mcp_matcher(context: Any) -> dict[str, Any]:
            return self.complete(context.full_text, context.cursor_line, context.text_until_cursor)

        # IPython's matcher API v2: the attributes `IPython.core.completer.context_matcher` would set.
        mcp_matcher.matcher_api_version = 2  # type: ignore[attr-defined]
        mcp_matcher.matcher_identifier = MATCHER_ID  # type: ignore[attr-defined]
        mcp_matcher.matcher_priority = 100  # type: ignore[attr-defined]  # before the Python matchers
        return mcp_matcher

    def complete(self, full_text: str, cursor_line: int, before_cursor: str) -> dict[str, Any]:
        """A matcher result for IPython: empty (letting the others answer) unless on a magic line of ours."""
        line = read_magic_line(full_text, cursor_line, before_cursor)
        if line is None:
            return {"completions": [], "suppress": False}
        from IPython.core.completer import SimpleCompletion

        try:
            offers = _unique(self.offers(line, _Deadline(self.deadline)))[:_MAX_OFFERS]
        except Exception:
            # Tab must not print a traceback into the user's notebook; the same line run shows the real error.
            logger.debug("completing %r failed", before_cursor, exc_info=True)
            offers = []
        fragment = line.fragment
        if offers and offers[0].replaces is not None:
            fragment = offers[0].replaces
        if not offers:
            # An empty answer would let Python names in; the word as typed keeps them out and changes nothing.
            offers = [Offer(fragment, "")]
        return {
            "completions": [SimpleCompletion(o.text, type=o.kind or None) for o in offers],
            "matched_fragment": fragment,
            "suppress": True,
            "ordered": True,
        }

    # -- what to offer ----------------------------------------------------------------------------

    def offers(self, line: MagicLine, deadline: _Deadline) -> list[Offer]:
        """What may replace `line.fragment`, best first."""
        if line.magic == "prompt":
            return self._prompt_line(line)
        subcommand = line.subcommand
        if subcommand is None:
            return _starting(line.word, self._subcommands(), "subcommand")
        previous = line.words[-1] if line.words else ""
        if subcommand == "serve" and previous == "--live" and len(line.words) > 1:
            return self._live_magics(line.word)
        choices = self._choices(subcommand, previous)
        if choices and len(line.words) > 1:
            return _starting(line.word, choices, "value")
        if previous in _PATH_OPTIONS and len(line.words) > 1:
            return [Offer(quoted(p, line.fragment), "path") for p in _paths(line.word)]
        if line.word.startswith("-"):
            return _starting(line.word, self._options(subcommand), "option")
        positional = [w for w in line.arguments if not w.startswith("-")]
        if subcommand in ("get", "form"):
            if not positional:
                return self._references(line.word, deadline)
            return self._pair(line, positional[0], positional[1:], deadline)
        if subcommand == "complete":
            return self._complete_command(line, positional, deadline)
        if subcommand == "prompts":
            return _starting(line.word, [n for n in self._servers() if n not in positional], "server")
        if subcommand == "connect" and not positional:
            return _starting(line.word, self._servers(), "server")
        if subcommand == "disconnect" and not positional:
            return _starting(line.word, sorted(self.pool.connections()), "server")
        if subcommand == "help" and not positional:
            return _starting(line.word, self._subcommands(), "subcommand")
        if subcommand == "unpublish":
            return _starting(line.word, [n for n in self._published_cells() if n not in positional], "prompt")
        return []

    def _published_cells(self) -> list[str]:
        from .kernel_server import published_cell_names  # loaded with the extension

        return published_cell_names(self.shell)

    def _live_magics(self, word: str) -> list[Offer]:
        """`--live MAGIC,...`: the magics that may run live, those that only read first; one more after a comma."""
        from ..sources.live_policy import live_policy
        from ..sources.magics import describe_magics

        head, comma, typed = word.rpartition(",")
        chosen = set(head.split(",")) if comma else set()
        ranked: list[tuple[int, str, str]] = []
        for info in describe_magics(self.shell.magics_manager.magics):
            policy = live_policy(info)
            if policy is None or info.title in chosen:
                continue  # never runs live (changes the kernel's state), or named already
            ranked.append(({"reads": 0, "runs-code": 1}.get(policy.effect, 2), info.name.casefold(), info.title))
        titles = [title for *_, title in sorted(ranked)]
        return [Offer(head + comma + offer.text, "magic") for offer in _starting(typed, titles, "magic")]

    def _subcommands(self) -> list[str]:
        return list(SUBCOMMANDS)

    def _options(self, subcommand: str) -> list[str]:
        parser = self.magics.parsers.get(subcommand)
        if parser is None:
            return []
        options = [s for action in parser._actions for s in action.option_strings if s.startswith("--")]
        return sorted(options, key=lambda s: s == "--help")  # the subcommand's own options first

    def _choices(self, subcommand: str, option: str) -> list[str]:
        """The values an option of the subcommand's parser accepts (`--mode auto|legacy|…`), if it names them."""
        parser = self.magics.parsers.get(subcommand)
        if parser is None or not option.startswith("-"):
            return []
        for action in parser._actions:
            if option in action.option_strings and action.choices is not None:
                return [str(choice) for choice in action.choices]
        return []

    def _servers(self) -> list[str]:
        try:
            configured = self.pool.configs()
        except Exception:
            return sorted(self.pool.connections())
        connected = self.pool.connections()
        return sorted(configured, key=lambda name: (name not in connected, name))

    def _prompt_line(self, line: MagicLine) -> list[Offer]:
        previous = line.words[-1] if line.words else ""
        if previous == "--role":
            return _starting(line.word, _PROMPT_ROLES, "value")
        if line.word.startswith("-"):
            return _starting(line.word, _PROMPT_OPTIONS, "option")
        return []

    # -- prompts and their arguments --------------------------------------------------------------

    def _listings(self, servers: Sequence[str], deadline: _Deadline) -> dict[str, tuple[PromptSpec, ...]]:
        requests: dict[Any, Callable[[], Awaitable[Any]]] = {}
        for server in servers:
            try:
                client = self.pool.connection(server).client
            except Exception:
                continue
            requests[("prompts", server)] = client.list_prompts
        found = self._cache.get_many(requests, _LISTING_FRESH, deadline)
        return {server: found[("prompts", server)] for server in servers if ("prompts", server) in found}

    def _references(self, word: str, deadline: _Deadline) -> list[Offer]:
        server, colon, _ = word.partition(":")
        servers = self._servers()
        if colon:
            listings = self._listings([server], deadline) if server in servers else {}
        else:
            listings = self._listings(servers, deadline)
        offers: list[Offer] = []
        if not colon:
            owners: dict[str, list[str]] = {}
            for name, specs in listings.items():
                for spec in specs:
                    owners.setdefault(spec.name, []).append(name)
            offers += _starting(word, [p for p, where in owners.items() if len(where) == 1], "prompt")
            offers += _starting(word, [f"{name}:" for name in servers if name not in listings], "server")
        qualified = [f"{name}:{spec.name}" for name, specs in listings.items() for spec in specs]
        return offers + _starting(word, qualified, "prompt")

    def _spec(self, reference: str, deadline: _Deadline) -> tuple[str, PromptSpec] | None:
        server, colon, prompt = reference.partition(":")
        if colon:
            listings = self._listings([server], deadline) if server in self._servers() else {}
        else:
            prompt = reference
            listings = self._listings(self._servers(), deadline)
        hits = [(name, spec) for name, specs in listings.items() for spec in specs if spec.name == prompt]
        return hits[0] if len(hits) == 1 else None

    def _complete_command(self, line: MagicLine, positional: Sequence[str], deadline: _Deadline) -> list[Offer]:
        # %mcp complete SERVER:PROMPT ARGUMENT [PREFIX] [NAME=VALUE ...]
        if not positional:
            return self._references(line.word, deadline)
        found = self._spec(positional[0], deadline)
        if found is None:
            return []
        server, spec = found
        if len(positional) == 1:
            return _starting(line.word, [a.name for a in _required_first(spec)], "argument")
        if len(positional) == 2:
            values = self._values(server, spec, positional[1], line.word, {}, deadline)
            return [Offer(quoted(v, line.fragment), "value") for v in values]
        return self._pair(line, positional[0], positional[3:], deadline, found=found)

    def _pair(
        self,
        line: MagicLine,
        reference: str,
        others: Sequence[str],
        deadline: _Deadline,
        *,
        found: tuple[str, PromptSpec] | None = None,
    ) -> list[Offer]:
        """A `NAME=VALUE` word: the names not given yet, or the values of NAME."""
        found = found or self._spec(reference, deadline)
        key, equals, value = line.word.partition("=")
        given = dict(w.partition("=")[::2] for w in others if "=" in w)
        if not equals:
            if found is None:
                return []
            names = [a.name for a in _required_first(found[1]) if a.name not in given]
            return _starting(line.word, [f"{name}=" for name in names], "argument")
        typed = line.fragment[len(key) + 1 :] if line.fragment.startswith(key + "=") else value
        if value.startswith("@file:"):
            paths = _paths(value.removeprefix("@file:"))
            return [Offer(quoted(f"@file:{p}", typed), "path", typed) for p in paths]
        if value.startswith("@") and not value.startswith("@@"):
            names = [f"@{n}" for n in self._variables()] + ["@file:"]
            return [Offer(quoted(n, typed), "variable", typed) for n in names if n.startswith(value)]
        if found is None:
            return []
        server, spec = found
        if spec.argument(key) is None:
            return []
        # Only literal values are context: a variable is not formatted (or even looked at) on a key press.
        context = {}
        for name, given_value in given.items():
            if name == key or (given_value.startswith("@") and not given_value.startswith("@@")):
                continue
            context[name] = given_value[1:] if given_value.startswith("@@") else given_value
        values = self._values(server, spec, key, value, context, deadline)
        return [Offer(quoted(v, typed), "value", typed) for v in values]

    def _values(
        self, server: str, spec: PromptSpec, argument: str, prefix: str, context: Mapping[str, str], deadline: _Deadline
    ) -> list[str]:
        try:
            client = self.pool.connection(server).client
        except Exception:
            return []
        key = ("values", server, spec.name, argument, prefix, tuple(sorted(context.items())))

        async def fetch() -> tuple[str, ...]:
            result = await client.complete(spec.name, argument, prefix, dict(context) or None)
            return result.values

        values: tuple[str, ...] = self._cache.get_many({key: fetch}, _VALUES_FRESH, deadline).get(key) or ()
        folded = prefix.casefold()
        return [v for v in values if v.casefold().startswith(folded)]

    def _variables(self) -> list[str]:
        namespace = getattr(self.shell, "user_ns", {})
        hidden = getattr(self.shell, "user_ns_hidden", {})
        return sorted((n for n in list(namespace) if is_user_variable(n, hidden)), key=str.casefold)


def _required_first(spec: PromptSpec) -> list[Any]:
    return sorted(spec.arguments, key=lambda a: not a.required)


def _starting(word: str, candidates: Iterable[str], kind: str) -> list[Offer]:
    folded = word.casefold()
    exact = [c for c in candidates if c.startswith(word)]
    loose = [c for c in candidates if c not in exact and c.casefold().startswith(folded)]
    return [Offer(c, kind) for c in exact + loose]


def _unique(offers: Iterable[Offer]) -> list[Offer]:
    seen: set[str] = set()
    kept = []
    for offer in offers:
        if offer.text not in seen:
            seen.add(offer.text)
            kept.append(offer)
    return kept


def _paths(typed: str) -> list[str]:
    """Entries of the folder `typed` names (relative to the working directory) starting with its last part."""
    folder, slash, name = typed.rpartition("/")
    directory = Path(os.path.expanduser(folder + slash)) if slash else Path(".")
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name.casefold())
    except OSError:
        return []
    shown = []
    for entry in entries:
        if not entry.name.startswith(name) or (entry.name.startswith(".") and not name.startswith(".")):
            continue
        try:
            suffix = "/" if entry.is_dir() else ""
        except OSError:
            suffix = ""
        shown.append(f"{folder}{slash}{entry.name}{suffix}")
        if len(shown) >= _MAX_OFFERS:
            break
    return shown
