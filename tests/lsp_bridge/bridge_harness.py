"""Drive `mcp-notebook-lsp` (or any bridge server script) through pytest-lsp's LanguageClient."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

DEADLINE = 30.0
BRIDGE = [sys.executable, "-m", "lsp_bridge"]


@dataclass
class Bridge:
    """A started, initialized bridge and what it sent back."""

    client: LanguageClient
    initialize_result: types.InitializeResult | None = None
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    accept_edits: bool = True
    versions: dict[str, int] = field(default_factory=dict)
    # The bridge's questions (window/showMessageRequest), each with the future its answer is set on.
    questions: asyncio.Queue[tuple[types.ShowMessageRequestParams, asyncio.Future[types.MessageActionItem | None]]] = (
        field(default_factory=asyncio.Queue)
    )

    async def question(
        self, deadline: float = DEADLINE
    ) -> tuple[types.ShowMessageRequestParams, asyncio.Future[types.MessageActionItem | None]]:
        """The next question the bridge asks: set the future's result to answer it."""
        return await asyncio.wait_for(self.questions.get(), deadline)

    def open(self, uri: str, text: str, language_id: str = "markdown") -> None:
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
            )
        )

    def replace(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def complete(self, uri: str, line: int, character: int, trigger: str | None = None) -> types.CompletionList:
        """Completion at a position; `trigger` is the character whose typing asks (else the user asked)."""
        context = (
            types.CompletionContext(types.CompletionTriggerKind.TriggerCharacter, trigger_character=trigger)
            if trigger is not None
            else types.CompletionContext(types.CompletionTriggerKind.Invoked)
        )
        result = await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
                context=context,
            )
        )
        assert isinstance(result, types.CompletionList)
        return result

    async def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )

    async def code_actions(self, uri: str, line: int) -> Sequence[types.CodeAction]:
        where = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0))
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=where,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        return [a for a in result or () if isinstance(a, types.CodeAction)]

    async def execute(self, command: str, arguments: Sequence[Any]) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        )

    async def wait_for(self, method: str, ready: Callable[[], bool], deadline: float = DEADLINE) -> None:
        """Wait until `ready()` holds, re-checking after each `method` notification."""

        async def loop() -> None:
            while not ready():
                await self.client.wait_for_notification(method)

        await asyncio.wait_for(loop(), deadline)

    async def diagnostics(
        self, uri: str, ready: Callable[[Sequence[types.Diagnostic]], bool], deadline: float = DEADLINE
    ) -> Sequence[types.Diagnostic]:
        """The document's diagnostics, once they satisfy `ready`."""
        await self.wait_for(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: uri in self.client.diagnostics and ready(self.client.diagnostics[uri]),
            deadline,
        )
        return self.client.diagnostics[uri]

    async def log_line(self, ready: Callable[[str], bool], deadline: float = DEADLINE) -> str:
        """The first `window/logMessage` text that satisfies `ready` (earlier ones count too)."""
        await self.wait_for(
            types.WINDOW_LOG_MESSAGE, lambda: any(ready(m.message) for m in self.client.log_messages), deadline
        )
        return next(m.message for m in self.client.log_messages if ready(m.message))


def document_edit(edit: types.WorkspaceEdit | None) -> types.TextDocumentEdit:
    """The one document's changes in a workspace edit (the bridge edits one line of one document)."""
    assert edit is not None and edit.document_changes is not None
    (change,) = edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    return change


def single_text_edit(edit: types.WorkspaceEdit | None) -> types.TextEdit:
    """The one text edit in a workspace edit that renders one command."""
    (text_edit,) = document_edit(edit).edits
    assert isinstance(text_edit, types.TextEdit)
    return text_edit


@contextlib.asynccontextmanager
async def start_bridge(
    command: Sequence[str],
    *,
    profile: str = "visual-studio-code",
    options: Any = None,
    env: dict[str, str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    root_uri: str | None = None,
) -> AsyncIterator[Bridge]:
    """Start the server process, initialize it with an editor's capabilities, shut it down after.

    `capabilities`, when given, replace those of the `profile`; `root_uri` is the folder the editor opened.
    """
    client = make_test_lsp_client()
    bridge = Bridge(client)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        bridge.edits.append(params)
        if bridge.accept_edits:
            return types.ApplyWorkspaceEditResult(applied=True)
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="read-only document")

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_question(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        answer: asyncio.Future[types.MessageActionItem | None] = asyncio.get_running_loop().create_future()
        bridge.questions.put_nowait((params, answer))
        return await answer

    await client.start_io(*command, env={**os.environ, **(env or {})})
    try:
        bridge.initialize_result = await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities or client_capabilities(profile),
                    initialization_options=options,
                    root_uri=root_uri,
                )
            ),
            DEADLINE,
        )
        yield bridge
        if not client.stopped:  # a test may have ended the server itself
            await asyncio.wait_for(client.shutdown_session(), DEADLINE)
    finally:
        # pygls' stop() only waits for the process; after a failed test nobody asked it to exit.
        process = client._server
        if process is not None and process.returncode is None:
            process.kill()
        await client.stop()
