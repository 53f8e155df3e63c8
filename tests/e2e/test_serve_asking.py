"""`mcp-notebook serve` asks the user for a missing `ask` argument: real processes, stdio and HTTP, both eras.

Our own `PromptClient` (and the SDK client) answer through their input handlers: at 2026-07-28 the server
answers `input_required` and the client retries; on a handshake session the server sends `elicitation/create`
itself (over stdio, or on the POST's event stream over HTTP).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from client_harness import AnswerRecorder
from e2e_processes import HttpServer, write_notebook
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext

from mcp_notebook.client import PromptClient
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerError
from mcp_notebook.models import TextContent

pytestmark = pytest.mark.slow

QUESTION = "Paste the code to review"
REVIEW_ARGUMENTS = [
    {"name": "code", "title": "Code", "description": "The code to review", "ask": QUESTION},
    {"name": "language", "default": "Python"},
]
# The SDK's "auto" mode reaches 2026-07-28; "legacy" runs the handshake at its newest revision.
ERAS = {"auto": "2026-07-28", "legacy": "2025-11-25"}


def write_review_notebook(folder: Path) -> None:
    write_notebook(
        folder / "review.ipynb",
        [("Review this {{language}} code:\n{{code}}", {"prompt": "review", "arguments": REVIEW_ARGUMENTS})],
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prompts = tmp_path_factory.mktemp("asking") / "prompts"
    write_review_notebook(prompts)
    return prompts


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[HttpServer]:
    server = HttpServer([str(folder)])
    with server:
        yield server


@pytest.fixture(params=sorted(ERAS))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def stdio_config(folder: Path) -> ServerConfig:
    return ServerConfig(name="notebooks", command=sys.executable, args=("-m", "mcp_notebook", "serve", str(folder)))


async def test_prompt_client_over_stdio_renders_after_the_user_answers(folder: Path, mode: str) -> None:
    handler = AnswerRecorder({"code": "x = 1"})
    async with PromptClient(stdio_config(folder), mode=mode, on_input_required=handler) as client:
        rendered = await client.get_prompt("review")
        assert client.protocol_version == ERAS[mode]
    assert rendered.messages[0].content == TextContent(text="Review this Python code:\nx = 1")
    [request] = handler.requests
    assert request.message == QUESTION
    assert request.requested_schema == {
        "type": "object",
        "properties": {"code": {"type": "string", "title": "Code", "description": QUESTION}},
        "required": ["code"],
    }


async def test_prompt_client_over_http_renders_after_the_user_answers(served: HttpServer, mode: str) -> None:
    handler = AnswerRecorder({"code": "fn main() {}"})
    config = ServerConfig(name="notebooks", url=served.url)
    async with PromptClient(config, mode=mode, on_input_required=handler) as client:
        rendered = await client.get_prompt("review", {"language": "Rust"})
        assert client.protocol_version == ERAS[mode]
    assert rendered.messages[0].content == TextContent(text="Review this Rust code:\nfn main() {}")
    assert [request.message for request in handler.requests] == [QUESTION]


async def test_declining_over_http_is_a_server_error_naming_the_argument(served: HttpServer, mode: str) -> None:
    config = ServerConfig(name="notebooks", url=served.url)
    async with PromptClient(config, mode=mode, on_input_required=AnswerRecorder(None)) as client:
        with pytest.raises(ServerError) as caught:
            await client.get_prompt("review")
    assert caught.value.code == -32602
    assert caught.value.data == {"prompt": "review", "missing": ["code"], "action": "decline"}


async def test_a_client_without_an_input_handler_gets_the_missing_arguments_error(folder: Path, mode: str) -> None:
    async with PromptClient(stdio_config(folder), mode=mode) as client:
        with pytest.raises(ServerError) as caught:
            await client.get_prompt("review")
    assert (caught.value.code, caught.value.data) == (-32602, {"prompt": "review", "missing": ["code"]})


async def test_the_sdk_client_over_stdio_is_asked_in_its_era(folder: Path, mode: str) -> None:
    forms: list[types.ElicitRequestParams] = []

    async def fill_in(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        forms.append(params)
        return types.ElicitResult(action="accept", content={"code": "SELECT 1"})

    command = StdioServerParameters(command=sys.executable, args=["-m", "mcp_notebook", "serve", str(folder)])
    async with Client(command, mode=mode, elicitation_callback=fill_in) as client:
        assert client.session.protocol_version == ERAS[mode]
        result = await client.get_prompt("review", {"language": "SQL"})
    assert result.messages[0].content == types.TextContent(text="Review this SQL code:\nSELECT 1")
    assert [form.message for form in forms] == [QUESTION]
