"""PromptClient against real MCP servers: every revision, stdio and HTTP, paging, changes, input, failures."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from client_harness import (
    DEADLINE,
    AnswerRecorder,
    eventually,
    legacy_config,
    live_children,
    running_http_server,
    running_url_process,
    sdk_config,
)

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerConnectionError, ServerError
from mcp_notebook.models import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

pytestmark = pytest.mark.slow

HANDSHAKE_REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with running_http_server() as url:
        yield url


def http_config(url: str, **options: Any) -> ServerConfig:
    return ServerConfig(name="remote", url=url, **options)


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_handshake_server_of_each_revision_lists_gets_and_completes(revision: str) -> None:
    async with PromptClient(legacy_config("--version", revision)) as client:
        assert client.protocol_version == revision
        assert client.server_title == "Legacy test server"
        names = [p.name for p in await client.list_prompts()]
        rendered = await client.get_prompt("greet", {"name": "Ada", "lang": "rust"})
        completion = await client.complete("greet", "lang", "r")

    assert names[:2] == ["greet", "media"]
    assert [(m.role, m.content) for m in rendered.messages] == [
        ("user", TextContent(text="Say hello to Ada in rust.")),
        ("assistant", TextContent(text="Hello, **Ada**!")),
    ]
    assert (rendered.name, rendered.description) == ("greet", "A greeting")
    assert (completion.values, completion.total, completion.has_more) == (("rust", "ruby"), 2, False)


async def test_modern_server_is_reached_at_2026_07_28_and_serves_prompts(http_url: str) -> None:
    async with PromptClient(http_config(http_url)) as client:
        assert client.protocol_version == "2026-07-28"
        specs = await client.list_prompts()
        rendered = await client.get_prompt("greet", {"name": "Ada"})
        completion = await client.complete("greet", "lang", "py", context={"name": "Ada"})

    assert [s.name for s in specs][:4] == ["greet", "slow", "grow", "ask"]
    assert rendered.messages[0].content == TextContent(text="Say hello to Ada in plain words.")
    assert completion.values == ("python",)


async def test_legacy_mode_pins_the_handshake_era_on_a_dual_era_server(http_url: str) -> None:
    async with PromptClient(http_config(http_url), mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        assert (await client.get_prompt("greet", {"name": "Bo"})).messages[0].content.type == "text"


async def test_sdk_server_over_stdio_connects_modern_and_legacy() -> None:
    async with PromptClient(sdk_config()) as modern, PromptClient(sdk_config(), mode="legacy") as legacy:
        assert (modern.protocol_version, legacy.protocol_version) == ("2026-07-28", "2025-11-25")
        assert [p.name for p in await modern.list_prompts()] == [p.name for p in await legacy.list_prompts()]


async def test_listing_follows_every_page_to_the_end() -> None:
    async with PromptClient(legacy_config("--page-size", "2", "--extra", "7")) as client:
        names = [p.name for p in await client.list_prompts()]

    assert names == ["greet", "media", "slow", "grow", "ask", "crash", *(f"extra_{i:03d}" for i in range(7))]


async def test_a_listing_that_never_ends_is_an_error_not_a_hang() -> None:
    async with PromptClient(legacy_config("--page-size", "2", "--loop-cursor")) as client:
        with pytest.raises(ServerError, match="cursor '0' twice"):
            await client.list_prompts()


async def test_prompt_arguments_keep_their_required_flag_and_origin() -> None:
    async with PromptClient(legacy_config()) as client:
        greet = next(p for p in await client.list_prompts() if p.name == "greet")

    assert [(a.name, a.required) for a in greet.arguments] == [("name", True), ("lang", False)]
    assert greet.origin == "legacy"


async def test_listing_is_cached_until_a_handshake_server_announces_a_change() -> None:
    changed = anyio.Event()
    async with PromptClient(legacy_config()) as client:
        client.add_list_changed_listener(changed.set)
        first = await client.list_prompts()
        assert await client.list_prompts() is first

        await client.get_prompt("grow")
        with anyio.fail_after(10):
            await changed.wait()
        second = await client.list_prompts()

    assert [p.name for p in second] == [*(p.name for p in first), "grown_1"]


async def test_a_modern_server_announces_changes_on_its_subscription_stream(http_url: str) -> None:
    changed = anyio.Event()
    async with PromptClient(http_config(http_url)) as client:
        remove = client.add_list_changed_listener(changed.set)
        before = {p.name for p in await client.list_prompts()}
        await client.get_prompt("grow")
        with anyio.fail_after(10):
            await changed.wait()
        after = {p.name for p in await client.list_prompts()}
        remove()

    assert len(after - before) == 1 and next(iter(after - before)).startswith("grown_")


async def test_every_content_block_becomes_our_model() -> None:
    async with PromptClient(legacy_config("--version", "2025-06-18")) as client:
        rendered = await client.get_prompt("media")

    blocks = [m.content for m in rendered.messages]
    assert [type(b) for b in blocks] == [
        TextContent,
        ImageContent,
        EmbeddedResource,
        EmbeddedResource,
        AudioContent,
        ResourceLink,
    ]
    image, text_resource, blob_resource, audio, link = blocks[1:]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png" and image.data
    assert isinstance(text_resource, EmbeddedResource)
    assert (text_resource.uri, text_resource.mime_type, text_resource.text) == (
        "file:///notes.md",
        "text/markdown",
        "notes",
    )
    assert isinstance(blob_resource, EmbeddedResource) and blob_resource.blob and blob_resource.text is None
    assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
    assert isinstance(link, ResourceLink) and (link.uri, link.title) == ("https://example.com/doc", "A doc")


async def test_server_errors_keep_their_code_and_data() -> None:
    async with PromptClient(legacy_config()) as client:
        with pytest.raises(ServerError) as caught:
            await client.get_prompt("nope")

    assert (caught.value.code, caught.value.data) == (-32602, {"name": "nope"})
    assert "Unknown prompt: nope" in str(caught.value)


async def test_an_input_required_result_asks_the_user_and_retries(http_url: str) -> None:
    handler = AnswerRecorder({"colour": "blue"})
    async with PromptClient(http_config(http_url), on_input_required=handler) as client:
        rendered = await client.get_prompt("ask")

    assert rendered.messages[0].content == TextContent(text="Paint it blue.")
    [request] = handler.requests
    assert request.message == "Which colour?"
    assert request.requested_schema["properties"] == {"colour": {"type": "string"}}
    assert request.key == "colour"


async def test_declining_an_input_request_tells_the_server(http_url: str) -> None:
    async with PromptClient(http_config(http_url), on_input_required=AnswerRecorder(None)) as client:
        rendered = await client.get_prompt("ask")

    assert rendered.messages[0].content == TextContent(text="Paint it (declined).")


async def test_a_handshake_servers_elicitation_request_asks_the_user() -> None:
    handler = AnswerRecorder({"colour": "green"})
    async with PromptClient(legacy_config("--version", "2025-06-18"), on_input_required=handler) as client:
        rendered = await client.get_prompt("ask")

    assert rendered.messages[0].content == TextContent(text="Paint it green.")
    assert [r.message for r in handler.requests] == ["Which colour?"]


async def test_without_a_handler_the_client_does_not_offer_elicitation() -> None:
    async with PromptClient(legacy_config("--version", "2025-06-18")) as client:
        with pytest.raises(ServerError, match="needs a client that supports elicitation"):
            await client.get_prompt("ask")


async def test_a_request_past_its_deadline_is_cancelled_on_the_server(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with PromptClient(legacy_config("--log", str(log)), request_timeout=0.5) as client:
        with pytest.raises(ServerConnectionError, match=r"no answer to prompts/get within 0\.5 s"):
            await client.get_prompt("slow")
        await eventually(lambda: "cancelled" in log.read_text(), "the server saw the cancellation")
        assert (await client.get_prompt("greet", {"name": "x"})).messages


async def test_cancelling_a_request_sends_the_server_a_cancellation(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with PromptClient(legacy_config("--log", str(log))) as client:
        with anyio.move_on_after(0.3) as scope:
            await client.get_prompt("slow")
        assert scope.cancelled_caught
        await eventually(lambda: "cancelled" in log.read_text(), "the server saw the cancellation")


async def test_a_missing_command_says_so_and_what_to_do() -> None:
    client = PromptClient(ServerConfig(name="ghost", command="no-such-mcp-server-1b6582", source="mcp.json"))
    with pytest.raises(ServerConnectionError) as caught:
        await client.connect()

    message = str(caught.value)
    assert message.startswith("ghost: cannot start 'no-such-mcp-server-1b6582': command not found")
    assert "mcp.json" in message
    assert caught.value.server == "ghost"


async def test_a_silent_server_times_out_with_its_stderr_and_is_stopped() -> None:
    script = "import sys; print('booting slowly', file=sys.stderr, flush=True); sys.stdin.read()"
    config = ServerConfig(name="silent", command=sys.executable, args=("-c", script))
    client = PromptClient(config, connect_timeout=1.0)
    others = {p.pid for p in live_children()}
    with pytest.raises(ServerConnectionError) as caught:
        await client.connect()

    assert "no answer within 1 s" in str(caught.value)
    assert "booting slowly" in str(caught.value)
    assert not client.connected
    assert [p for p in live_children() if p.pid not in others] == []


async def test_a_server_that_dies_reports_a_closed_connection_and_the_next_call_reconnects() -> None:
    async with PromptClient(legacy_config()) as client:
        with pytest.raises(ServerConnectionError, match="connection closed during prompts/get"):
            await client.get_prompt("crash")
        assert not client.connected
        assert (await client.list_prompts())[0].name == "greet"
        assert client.connected


class LossRecorder:
    """A connection-lost listener that records whether the client still said it was connected."""

    def __init__(self, client: PromptClient) -> None:
        self.client = client
        self.connected_when_told: list[bool] = []
        self.told = anyio.Event()

    def __call__(self) -> None:
        self.connected_when_told.append(self.client.connected)
        self.told.set()

    async def wait(self) -> None:
        with anyio.fail_after(DEADLINE):
            await self.told.wait()


async def test_a_killed_stdio_server_is_noticed_without_a_request_and_the_next_call_reconnects() -> None:
    others = {p.pid for p in live_children()}
    async with PromptClient(legacy_config()) as client:
        lost = LossRecorder(client)
        client.add_connection_lost_listener(lost)
        [server] = [p for p in live_children() if p.pid not in others]

        server.kill()
        await lost.wait()

        assert lost.connected_when_told == [False]
        assert not client.connected
        assert (await client.list_prompts())[0].name == "greet"
        assert client.connected
    assert lost.connected_when_told == [False]


async def test_closing_on_purpose_is_not_a_lost_connection_and_removed_listeners_are_not_told() -> None:
    client = PromptClient(legacy_config())
    lost = LossRecorder(client)
    removed = LossRecorder(client)
    client.add_connection_lost_listener(lost)
    remove = client.add_connection_lost_listener(removed)
    others = {p.pid for p in live_children()}
    await client.connect()
    await client.close()
    await client.connect()
    remove()
    try:
        [server] = [p for p in live_children() if p.pid not in others]
        server.kill()
        await lost.wait()
    finally:
        await client.close()

    # One call, for the kill: the earlier close told nobody (listeners are told in order).
    assert lost.connected_when_told == [False]
    assert removed.connected_when_told == []


async def test_a_server_that_dies_during_a_request_is_reported_lost_once() -> None:
    async with PromptClient(legacy_config()) as client:
        lost = LossRecorder(client)
        client.add_connection_lost_listener(lost)
        with pytest.raises(ServerConnectionError, match="connection closed during prompts/get"):
            await client.get_prompt("crash")
        await lost.wait()
        # Reconnecting takes many turns of the loop: a second report would have arrived by then.
        assert (await client.list_prompts())[0].name == "greet"

    assert lost.connected_when_told == [False]


async def test_closing_stops_the_server_process() -> None:
    client = PromptClient(legacy_config())
    others = {p.pid for p in live_children()}
    await client.connect()
    [server] = [p for p in live_children() if p.pid not in others]
    assert "legacy_server.py" in " ".join(server.cmdline())

    await client.close()

    assert not client.connected
    assert not server.is_running() or server.status() == "zombie"
    assert [p for p in live_children() if p.pid not in others] == []


async def test_headers_reach_an_http_server() -> None:
    with running_http_server("--token", "s3cret") as url:
        async with PromptClient(http_config(url, headers={"Authorization": "Bearer s3cret"})) as client:
            assert (await client.list_prompts())[0].name == "greet"
        with pytest.raises(ServerConnectionError):
            await PromptClient(http_config(url), connect_timeout=10).connect()


WHICH_TOKEN = (
    "Send the server's token: a Jupyter server's as 'Authorization: token <token>' (the token after ?token= "
    "in the URL 'jupyter server list' prints; 'mcp-notebook config --jupyter URL' prints the client "
    "configuration), an 'mcp-notebook serve --http' server's as 'Authorization: Bearer <token>'."
)


@pytest.mark.parametrize("headers", [None, {"Authorization": "Bearer guess"}], ids=["no-header", "wrong-header"])
async def test_a_401_that_names_no_token_becomes_a_sentence_saying_which_token_to_send(
    headers: dict[str, str] | None,
) -> None:
    # The SDK test server answers a plain-text "unauthorized", as many a proxy does.
    with running_http_server("--token", "s3cret") as url, pytest.raises(ServerConnectionError) as refused:
        await PromptClient(http_config(url, headers=headers), connect_timeout=10).connect()
    sent = "" if headers else " No Authorization header was sent."
    assert str(refused.value) == (
        f"remote: {url} refused the connection (HTTP 401 Unauthorized): unauthorized.{sent} " + WHICH_TOKEN
    )


async def test_the_401_of_mcp_notebook_serve_is_told_in_its_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(), str(tmp_path / "empty.ipynb"))
    monkeypatch.setenv("MCP_NOTEBOOK_TOKEN", "s3cret")
    serve = [str(Path(sys.executable).with_name("mcp-notebook")), "serve", str(tmp_path), "--http", "--port", "0"]
    with running_url_process(serve) as url:
        config = http_config(url, headers={"Authorization": "token s3cret"}, source="mcp.json")
        with pytest.raises(ServerConnectionError) as refused:
            await PromptClient(config, connect_timeout=10).connect()
    assert str(refused.value) == (
        f"remote: {url} refused the connection (HTTP 401 Unauthorized): The bearer token sent does not match "
        "this server's: send the header 'Authorization: Bearer <token>' with the token in $MCP_NOTEBOOK_TOKEN, "
        "which this server was started with. The Authorization header was given in mcp.json."
    )


async def test_an_unreachable_url_says_so() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = PromptClient(http_config(f"http://127.0.0.1:{port}/mcp"), connect_timeout=10)

    with pytest.raises(ServerConnectionError, match=f"cannot reach http://127.0.0.1:{port}/mcp"):
        await client.connect()


async def test_before_connecting_the_client_reports_nothing_about_the_server() -> None:
    client = PromptClient(legacy_config(name="docs"))

    assert (client.name, client.connected, client.protocol_version, client.server_title) == ("docs", False, None, None)


@pytest.mark.parametrize(
    ("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")]
)
async def test_mcp_notebook_serve_is_reached_in_both_eras(tmp_path: Path, mode: str, revision: str) -> None:
    import nbformat

    cell = nbformat.v4.new_markdown_cell("Summarise {{topic}}.")
    cell.metadata["mcp"] = {"prompt": "summarise", "description": "Summarise a topic."}
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(cell)
    nbformat.write(notebook, str(tmp_path / "prompts.ipynb"))
    serve = ServerConfig(
        name="notebooks", command=str(Path(sys.executable).with_name("mcp-notebook")), args=("serve", str(tmp_path))
    )

    async with PromptClient(serve, mode=mode) as client:
        assert client.protocol_version == revision
        [spec] = await client.list_prompts()
        rendered = await client.get_prompt("summarise", {"topic": "MCP"})

    assert (spec.name, spec.required_arguments) == ("summarise", ("topic",))
    assert rendered.messages[0].content == TextContent(text="Summarise MCP.")


async def test_a_command_installed_beside_the_interpreter_is_found_without_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat

    cell = nbformat.v4.new_markdown_cell("Say hello.")
    cell.metadata["mcp"] = {"prompt": "hello"}
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(cell)
    nbformat.write(notebook, str(tmp_path / "prompts.ipynb"))
    # A kernel started from a virtual environment that is not on PATH.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    serve = ServerConfig(name="notebooks", command="mcp-notebook", args=("serve", str(tmp_path)))

    async with PromptClient(serve) as client:
        assert [spec.name for spec in await client.list_prompts()] == ["hello"]
