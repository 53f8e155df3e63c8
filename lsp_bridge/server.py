"""The language server: MCP prompts as `/` slash commands in any LSP editor.

`create_server(catalog)` registers every feature explicitly: completion (and
its resolve), hover, code actions, the `mcpNotebook.renderPrompt` command, and
diagnostics published on open and (debounced) on change. Requests are answered
from the catalog's in-memory snapshot; only argument-value completion and
rendering talk to a server, each with a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.workspace import TextDocument

from mcp_notebook.catalog.pool import CatalogSnapshot, PromptCatalog, ServerState, ServerStatus
from mcp_notebook.version import __version__

from .completion import (
    CompletionStyle,
    to_argument_name_list,
    to_argument_value_list,
    to_command_documentation,
    to_command_list,
)
from .diagnostics import MAX_DIAGNOSTICS, SOURCE, line_diagnostics, resolve_command
from .documentation import to_argument_markdown, to_command_markdown
from .expansion import RENDER_COMMAND, RenderOutcome, prepare_line_edit, render_line
from .positions import to_code_points, to_units
from .processes import child_pids, stop_children
from .settings import BridgeSettings, to_settings
from .slashline import (
    MAX_LINE_LENGTH,
    ArgumentNameContext,
    ArgumentValueContext,
    CommandNameContext,
    CursorContext,
    context_at,
    find_commands,
)

__all__ = ["RENDER_COMMAND", "BridgeServer", "create_server"]

log = logging.getLogger(__name__)

Hook = Callable[[], Awaitable[None]]
# Characters of slash lines read for diagnostics before editor requests get a turn.
_CHECK_SLICE = 20_000
_EMPTY = types.CompletionList(is_incomplete=False, items=[])
# How long the first `/` waits for prompts while servers start (their stored lists come within milliseconds).
FIRST_PROMPTS_WAIT = 0.1


@dataclass(frozen=True)
class _Cursor:
    """Where the editor's cursor is: its document, the line (number and text) and the column in Python units."""

    document: TextDocument
    number: int
    line: str
    column: int

    def range(self, start: int, end: int) -> types.Range:
        """The editor range of `line[start:end]`."""
        return BridgeServer.range_of(self.document, self.line, self.number, start, end)


# Seconds the servers get to close politely on shutdown before their processes are stopped.
STOP_BUDGET = 0.8
# Seconds between SIGTERM and SIGKILL for a server process that outlived its polite close.
KILL_GRACE = 0.3


class BridgeProtocol(LanguageServerProtocol):
    """pygls' protocol, except that `exit` asks the bridge to end instead of raising SystemExit.

    SystemExit raised inside the event loop leaves through asyncio's teardown,
    which waits for every task, including connections that may never close.
    """

    _server: BridgeServer

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        on_exit = self._server.on_exit
        if on_exit is None:  # not run by the lifecycle: pygls' own way
            yield from super().lsp_exit(*args)
            return
        on_exit(0 if self._server.shut_down else 1)


class BridgeServer(LanguageServer):
    """A pygls server holding the catalog, the settings and the per-document diagnostic state."""

    def __init__(
        self,
        catalog: PromptCatalog,
        settings: BridgeSettings,
        *,
        on_start: Hook | None,
        on_stop: Hook | None,
    ) -> None:
        super().__init__(name="mcp-notebook-lsp", version=__version__, protocol_cls=BridgeProtocol)
        self.catalog = catalog
        self.settings = settings
        self.style = CompletionStyle()
        self._on_start = on_start
        self._on_stop = on_stop
        self._pending: dict[str, asyncio.TimerHandle] = {}
        # Failed renders stay on their line until the document changes.
        self._render_problems: dict[str, list[types.Diagnostic]] = {}
        self._remove_listener: Callable[[], None] | None = None
        self._startup_problems: tuple[str, ...] = ()
        # From `initialize` until the start hook has set the servers: completion says it is connecting meanwhile.
        self._starting = False
        self._catalog_changed = asyncio.Event()  # set (and replaced) at every new snapshot
        # Set by the lifecycle that runs this server (lifecycle.py): how `exit` ends the process, and
        # whether the process's children are this server's to stop.
        self.on_exit: Callable[[int], None] | None = None
        self.owns_children = False
        self.shut_down = False
        self._stopping: asyncio.Future[None] | None = None
        self._lines: dict[str, tuple[int | None, Sequence[str]]] = {}
        self._checking: dict[str, asyncio.Task[None]] = {}

    # -- text helpers ------------------------------------------------------------------------------

    def document(self, uri: str) -> TextDocument:
        return self.workspace.get_text_document(uri)

    def open_document(self, uri: object) -> TextDocument | None:
        """The document `uri` if the editor has it open (never one read from disk)."""
        if not isinstance(uri, str) or uri not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri)

    def active(self, document: TextDocument) -> bool:
        return self.settings.applies_to(document.language_id)

    def lines_of(self, document: TextDocument) -> Sequence[str]:
        """The document's lines, split once per version (pygls splits the whole text on every use)."""
        cached = self._lines.get(document.uri)
        if cached is not None and cached[0] == document.version and document.version is not None:
            return cached[1]
        lines = document.lines
        self._lines[document.uri] = (document.version, lines)
        return lines

    @staticmethod
    def line_at(lines: Sequence[str], number: int) -> str:
        return lines[number].rstrip("\r\n") if 0 <= number < len(lines) else ""

    @staticmethod
    def column_of(document: TextDocument, line: str, position: types.Position) -> int:
        """The Python column of an editor position (editors count UTF-16 or UTF-8 units)."""
        return to_code_points(line, position.character, document.position_codec.encoding)

    def cursor(self, uri: str, position: types.Position) -> _Cursor | None:
        """The cursor at `position` in `uri`; None where the bridge does not apply (language, or too long a line)."""
        document = self.open_document(uri)
        if document is None or not self.active(document):
            return None
        line = self.line_at(self.lines_of(document), position.line)
        if len(line) > MAX_LINE_LENGTH:
            return None
        return _Cursor(document, position.line, line, self.column_of(document, line, position))

    @staticmethod
    def range_of(document: TextDocument, line: str, number: int, start: int, end: int) -> types.Range:
        encoding = document.position_codec.encoding
        return types.Range(
            start=types.Position(line=number, character=to_units(line[:start], encoding)),
            end=types.Position(line=number, character=to_units(line[:end], encoding)),
        )

    # -- lifecycle ---------------------------------------------------------------------------------

    def on_initialize(self, params: types.InitializeParams) -> None:
        self.settings, problems = to_settings(params.initialization_options, self.settings)
        self._startup_problems = problems  # shown once the editor is ready for messages
        self.style = CompletionStyle.of(params.capabilities)
        self._starting = self._on_start is not None
        # Trigger characters are announced once, in the answer to initialize (built after this handler).
        self.protocol.fm.feature_options[types.TEXT_DOCUMENT_COMPLETION] = _completion_options(self.settings)

    async def on_initialized(self, params: types.InitializedParams) -> None:
        self._remove_listener = self.catalog.add_listener(self._on_catalog_changed)
        for problem in self._startup_problems:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, problem))
        if self._on_start is not None:
            try:
                await self._on_start()
            finally:
                self._starting = False

    async def on_shutdown(self, params: None) -> None:
        self.shut_down = True
        await self.stop()

    async def stop(self) -> None:
        """Stop the servers, once, in bounded time: a polite close, then their processes are ended."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        if self._remove_listener is not None:
            self._remove_listener()
        for handle in self._pending.values():
            handle.cancel()
        self._pending.clear()
        for task in self._checking.values():
            task.cancel()
        # Seen before the polite close: a server that exits then may leave its group's other processes behind.
        known = child_pids() if self.owns_children else []
        if self._on_stop is not None:
            try:
                async with asyncio.timeout(STOP_BUDGET):
                    await self._on_stop()
            except TimeoutError:
                log.warning("the MCP servers did not close within %g s; stopping their processes", STOP_BUDGET)
        if self.owns_children:
            stopped = await stop_children(KILL_GRACE, known)
            if stopped:
                log.info("stopped server processes %s", stopped)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdin/stdout until the editor goes away; then the process ends (lifecycle.py)."""
        from .lifecycle import run_stdio

        run_stdio(self, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve the first editor that connects to `host:port`; then the process ends (lifecycle.py)."""
        from .lifecycle import run_tcp

        run_tcp(self, host, port)

    def on_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        self.settings, problems = to_settings(params.settings, self.settings)
        for problem in problems:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, problem))
        for uri in list(self.workspace.text_documents):
            self.schedule_diagnostics(uri, 0)

    def _on_catalog_changed(self, snapshot: CatalogSnapshot) -> None:
        self._catalog_changed.set()
        self._catalog_changed = asyncio.Event()
        summary = ", ".join(_describe(status) for _, status in sorted(snapshot.servers.items()))
        self.window_log_message(types.LogMessageParams(types.MessageType.Info, f"MCP servers: {summary or 'none'}"))
        for uri in list(self.workspace.text_documents):
            self.schedule_diagnostics(uri, self.settings.diagnostics_delay)

    # -- diagnostics -------------------------------------------------------------------------------

    def on_did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self.schedule_diagnostics(params.text_document.uri, 0)

    def on_did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._render_problems.pop(params.text_document.uri, None)
        self.schedule_diagnostics(params.text_document.uri, self.settings.diagnostics_delay)

    def on_did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._render_problems.pop(uri, None)
        self._lines.pop(uri, None)
        if (handle := self._pending.pop(uri, None)) is not None:
            handle.cancel()
        if (task := self._checking.pop(uri, None)) is not None:
            task.cancel()
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def schedule_diagnostics(self, uri: str, delay: float) -> None:
        """Check the document after `delay` seconds; a newer change restarts the wait."""
        if (handle := self._pending.pop(uri, None)) is not None:
            handle.cancel()
        if self._stopping is None:
            self._pending[uri] = asyncio.get_running_loop().call_later(delay, self.publish_diagnostics, uri)

    def publish_diagnostics(self, uri: str) -> None:
        """Check the document in the background; a check still running for an older version is dropped."""
        self._pending.pop(uri, None)
        if (task := self._checking.pop(uri, None)) is not None:
            task.cancel()
        if uri in self.workspace.text_documents:
            self._checking[uri] = asyncio.get_running_loop().create_task(self._check(uri), name=f"diagnostics {uri}")

    async def _check(self, uri: str) -> None:
        """Publish the document's diagnostics, yielding to editor requests between slices of a large document."""
        document = self.document(uri)
        found: list[types.Diagnostic] = []
        if self.settings.diagnostics and self.active(document):
            lines = self.lines_of(document)
            snapshot, trigger = self.catalog.snapshot(), self.settings.trigger
            read = 0
            for number, raw in enumerate(lines):
                if trigger not in raw:
                    continue
                line = raw.rstrip("\r\n")

                def make_range(number: int, start: int, end: int, line: str = line) -> types.Range:
                    return self.range_of(document, line, number, start, end)

                found.extend(line_diagnostics(number, line, snapshot, trigger, make_range))
                if len(found) >= MAX_DIAGNOSTICS:
                    del found[MAX_DIAGNOSTICS:]
                    break
                read += len(line)
                if read > _CHECK_SLICE:
                    read = 0
                    await asyncio.sleep(0)  # let completion and hover through
        found.extend(self._render_problems.get(uri, ()))
        if self._checking.get(uri) is asyncio.current_task():
            del self._checking[uri]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=document.version)
        )

    # -- completion --------------------------------------------------------------------------------

    async def on_completion(self, params: types.CompletionParams) -> types.CompletionList:
        cursor = self.cursor(params.text_document.uri, params.position)
        trigger = self.settings.trigger
        if cursor is None or trigger not in cursor.line:
            return _EMPTY  # every space typed in a document asks: most lines have no command
        context = context_at(cursor.line, cursor.column, trigger)
        if context is None:
            return _EMPTY
        typed_character = params.context.trigger_character if params.context is not None else None
        if typed_character == " " and not _wants_argument_names(context, cursor.column):
            return _EMPTY
        snapshot = self.catalog.snapshot()
        if isinstance(context, CommandNameContext):
            snapshot = await self._first_prompts(snapshot)
            limit = self.settings.max_items
            return to_command_list(
                snapshot,
                context,
                trigger=trigger,
                limit=limit,
                style=self.style,
                make_range=cursor.range,
                starting=self._starting,
                magics=self.settings.magics,
            )
        entry = resolve_command(snapshot, context.command)
        if entry is None:
            return _EMPTY
        if isinstance(context, ArgumentNameContext):
            return to_argument_name_list(entry.spec, context, style=self.style, make_range=cursor.range)
        assert isinstance(context, ArgumentValueContext)
        try:
            result = await self.catalog.complete(
                entry.server, entry.spec.name, context.argument, context.prefix, context.others
            )
        except Exception as error:  # completion is best effort: an empty list, and a note in the log
            log.info("completion/complete on %s failed: %s", entry.server, error)
            return types.CompletionList(is_incomplete=True, items=[])
        typed = cursor.line[context.start : cursor.column]
        return to_argument_value_list(result, context, typed=typed, make_range=cursor.range)

    async def _first_prompts(self, snapshot: CatalogSnapshot) -> CatalogSnapshot:
        """The snapshot to list commands from: with no prompts yet while servers start, the first that has some
        within `FIRST_PROMPTS_WAIT` s (a server's stored list arrives in milliseconds), else this one."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FIRST_PROMPTS_WAIT
        while len(snapshot.index) == 0 and (
            self._starting or any(s.state is ServerState.CONNECTING for s in snapshot.servers.values())
        ):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            changed = self._catalog_changed
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await changed.wait()
            snapshot = self.catalog.snapshot()
        return snapshot

    def on_completion_resolve(self, item: types.CompletionItem) -> types.CompletionItem:
        key = item.data.get("key") if isinstance(item.data, dict) else None
        snapshot = self.catalog.snapshot()
        entry = snapshot.index.get(key) if isinstance(key, str) else None
        if entry is not None and item.documentation is None:
            item.documentation = to_command_documentation(entry, self.settings.trigger, snapshot, self.style)
        return item

    # -- hover -------------------------------------------------------------------------------------

    def on_hover(self, params: types.HoverParams) -> types.Hover | None:
        cursor = self.cursor(params.text_document.uri, params.position)
        if cursor is None:
            return None
        column = cursor.column
        trigger = self.settings.trigger
        snapshot = self.catalog.snapshot()
        for command in find_commands(cursor.line, trigger):
            if not command.start <= column <= command.end:
                continue
            entry = resolve_command(snapshot, command)
            if command.start <= column <= command.name_end:
                if entry is not None:
                    text = to_command_markdown(entry, trigger, snapshot.servers.get(entry.server))
                elif command.server in snapshot.servers:
                    status = snapshot.servers[command.server or ""]
                    text = f"MCP server `{status.name}` is {status.state.value}" + (
                        f": {status.error}" if status.error else ""
                    )
                else:
                    return None
                where = cursor.range(command.start, command.name_end)
                return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), where)
            argument = command.argument_at(column)
            spec_argument = entry.spec.argument(argument.name) if entry and argument else None
            if argument is not None and spec_argument is not None and column <= argument.value_start:
                where = cursor.range(argument.start, argument.value_start)
                content = types.MarkupContent(types.MarkupKind.Markdown, to_argument_markdown(spec_argument))
                return types.Hover(content, where)
        return None

    # -- rendering ---------------------------------------------------------------------------------

    def on_code_action(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """A quick fix per "did you mean" of a misspelled prompt; a "Render prompt" action per line with known
        slash commands in the range.

        Editors that can resolve an action's edit get it from codeAction/resolve
        (rendered then, in one edit); the others get the render command.
        """
        document = self.open_document(params.text_document.uri)
        if document is None or not self.active(document):
            return None
        lines = self.lines_of(document)
        snapshot = self.catalog.snapshot()
        trigger = self.settings.trigger
        lazy = self._resolves_code_action_edits()
        uri = params.text_document.uri
        actions: list[types.CodeAction] = _quick_fixes(uri, params.context.diagnostics)
        for number in range(params.range.start.line, min(params.range.end.line, len(lines) - 1) + 1):
            names = [
                f"{trigger}{entry.key}"
                for command in find_commands(self.line_at(lines, number), trigger)
                if (entry := resolve_command(snapshot, command)) is not None
            ]
            if not names:
                continue
            title = f"Render prompt {', '.join(names)}"
            action = types.CodeAction(title=title, kind=types.CodeActionKind.RefactorInline)
            if lazy:
                action.data = {"uri": uri, "line": number}
            else:
                action.command = types.Command(title=title, command=RENDER_COMMAND, arguments=[uri, number])
            actions.append(action)
        return actions

    def _resolves_code_action_edits(self) -> bool:
        text_document = self.client_capabilities.text_document
        code_action = text_document.code_action if text_document is not None else None
        resolve = code_action.resolve_support if code_action is not None else None
        return resolve is not None and "edit" in resolve.properties

    async def on_code_action_resolve(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri, number = data.get("uri"), data.get("line")
        if not isinstance(uri, str) or self.open_document(uri) is None or not isinstance(number, int):
            return action
        outcome = await prepare_line_edit(self, uri, number)
        if outcome.error is None:
            action.edit = outcome.edit
        self._note_render_outcome(uri, number, outcome)
        return action

    async def render_prompt(self, *args: Any) -> dict[str, Any]:
        """`mcpNotebook.renderPrompt(uri, line)`: replace the line's slash commands with their prompts.

        Arguments that name no open document or no line of it are refused with
        an invalid-params error; a line that cannot be rendered is answered
        with why (and shown).
        """
        if len(args) < 2 or not isinstance(args[0], str) or isinstance(args[1], bool) or not isinstance(args[1], int):
            raise JsonRpcInvalidParams(f"{RENDER_COMMAND} takes (uri, line): an open document, a line counted from 0")
        uri, number = args[0], args[1]
        document = self.open_document(uri)
        if document is None:
            raise JsonRpcInvalidParams(f"{RENDER_COMMAND}: {_shorten(uri)} is not a document open in the editor")
        count = len(self.lines_of(document))
        if not 0 <= number < count:
            raise JsonRpcInvalidParams(
                f"{RENDER_COMMAND}: line {number} is not in {_shorten(uri)} (lines 0 to {count - 1})"
            )
        outcome = await render_line(self, uri, number)
        self._note_render_outcome(uri, number, outcome)
        return {"applied": outcome.applied, "text": outcome.text, "error": outcome.error}

    def _note_render_outcome(self, uri: str, number: int, outcome: RenderOutcome) -> None:
        """A failed render is shown, and stays on its line until the document changes; a good one clears that."""
        if outcome.error is None:
            if self._render_problems.pop(uri, None) is not None:
                self.schedule_diagnostics(uri, 0)
            return
        message = outcome.error or "rendering failed"
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
        if uri not in self.workspace.text_documents:
            return
        document = self.document(uri)
        line = self.line_at(self.lines_of(document), number)
        diagnostic = types.Diagnostic(
            range=self.range_of(document, line, number, 0, len(line)),
            message=message,
            severity=types.DiagnosticSeverity.Error,
            code="render-failed",
            source=SOURCE,
        )
        self._render_problems[uri] = [diagnostic]
        self.schedule_diagnostics(uri, 0)


def _shorten(text: str, limit: int = 200) -> str:
    """`text` quoted for a message, cut to `limit` characters (a client may send megabytes)."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _describe(status: ServerStatus) -> str:
    """`nb ready (3 prompts)`, `k connecting`, `x down (why)`: one server in the status log line."""
    if status.state is ServerState.READY and status.cached:
        return f"{status.name} starting ({len(status.prompts)} prompts stored at its last start)"
    if status.state is ServerState.READY:
        skills = f", {len(status.skills)} skills" if status.skills else ""
        return f"{status.name} ready ({len(status.prompts)} prompts{skills})"
    if status.state in (ServerState.DOWN, ServerState.NOT_TRUSTED) and status.error:
        reason = status.error if len(status.error) <= 200 else status.error[:199] + "…"
        return f"{status.name} {status.state.value} ({reason})"
    return f"{status.name} {status.state.value}"


def _quick_fixes(uri: str, diagnostics: Sequence[types.Diagnostic]) -> list[types.CodeAction]:
    """ "Change to /nb:greet" for each name a diagnostic of ours suggests (an unknown prompt's "did you mean")."""
    fixes: list[types.CodeAction] = []
    for diagnostic in diagnostics:
        data = diagnostic.data if diagnostic.source == SOURCE and isinstance(diagnostic.data, dict) else {}
        found = data.get("replacements")
        replacements = [text for text in found if isinstance(text, str)] if isinstance(found, list) else []
        for text in replacements:
            edit = types.WorkspaceEdit(changes={uri: [types.TextEdit(range=diagnostic.range, new_text=text)]})
            fixes.append(
                types.CodeAction(
                    title=f"Change to {text}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=len(replacements) == 1,
                    edit=edit,
                )
            )
    return fixes


def _handler(method: Callable[..., Any]) -> Callable[..., Any]:
    """pygls tags each handler with attributes, which bound methods refuse; a partial takes them."""
    return functools.partial(method)


def _completion_options(settings: BridgeSettings) -> types.CompletionOptions:
    """The menu opens by itself after the trigger, after a space (argument names) and after `=` (values)."""
    triggers = list(dict.fromkeys([settings.trigger[-1], " ", "="]))
    return types.CompletionOptions(trigger_characters=triggers, resolve_provider=True)


def _wants_argument_names(context: CursorContext, column: int) -> bool:
    """A space opens the menu only where an argument comes next, not in the text after a command."""
    if not isinstance(context, ArgumentNameContext):
        return False
    command = context.command
    return not any(token.start < column for token in command.trailing)


def create_server(
    catalog: PromptCatalog,
    settings: BridgeSettings | None = None,
    *,
    on_start: Hook | None = None,
    on_stop: Hook | None = None,
) -> BridgeServer:
    """A language server over `catalog`, with every feature registered here and nowhere else.

    `on_start` runs once the editor is initialized (start connecting servers
    there, so `initialize` is answered at once); `on_stop` runs on shutdown.
    """
    settings = settings or BridgeSettings()
    server = BridgeServer(catalog, settings, on_start=on_start, on_stop=on_stop)
    server.feature(types.INITIALIZE)(_handler(server.on_initialize))
    server.feature(types.INITIALIZED)(_handler(server.on_initialized))
    server.feature(types.SHUTDOWN)(_handler(server.on_shutdown))
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(_handler(server.on_change_configuration))
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(_handler(server.on_did_open))
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(_handler(server.on_did_change))
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(_handler(server.on_did_close))
    server.feature(types.TEXT_DOCUMENT_COMPLETION, _completion_options(settings))(_handler(server.on_completion))
    server.feature(types.COMPLETION_ITEM_RESOLVE)(_handler(server.on_completion_resolve))
    server.feature(types.TEXT_DOCUMENT_HOVER)(_handler(server.on_hover))
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorInline],
            resolve_provider=True,
        ),
    )(_handler(server.on_code_action))
    server.feature(types.CODE_ACTION_RESOLVE)(_handler(server.on_code_action_resolve))
    server.command(RENDER_COMMAND)(_handler(server.render_prompt))
    return server
