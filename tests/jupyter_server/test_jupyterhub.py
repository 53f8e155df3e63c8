"""A team prompt library on a real JupyterHub: each user's prompts at /user/<name>/mcp, behind the hub's OAuth."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from e2e_processes import ACCEPT, MODERN, RawHttpSession, initialize_params, write_corpus, write_notebook
from hub_harness import JupyterHub
from test_extension_server import SAVE_TO_PROMPT_SECONDS, notebook_json, sdk_client

pytestmark = pytest.mark.slow

USERS = ("alice", "bob")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterHub]:
    work = tmp_path_factory.mktemp("hub")
    homes = work / "home"
    write_corpus(homes / "alice")
    write_notebook(homes / "bob" / "bobs.ipynb", [("Bob's own prompt.", {"prompt": "bobs_prompt"})])
    with JupyterHub(work, homes, USERS) as running:
        for user in USERS:
            running.start_server(user)
        yield running


@pytest.fixture(scope="module")
def tokens(hub: JupyterHub) -> dict[str, str]:
    # What a user makes on the hub's token page for an MCP client: access to their own server.
    return {user: hub.token_for(user, [f"access:servers!user={user}"]) for user in USERS}


def mcp_url(hub: JupyterHub, user: str) -> str:
    return f"{hub.url}user/{user}/mcp"


async def names_listed(url: str, token: str) -> list[str]:
    async with httpx2.AsyncClient() as http:
        listed = await RawHttpSession(http, url, MODERN, headers={"Authorization": f"token {token}"}).request(
            "prompts/list"
        )
    return [prompt["name"] for prompt in listed["result"]["prompts"]]


async def test_alices_token_lists_alices_notebooks_through_the_hub(hub: JupyterHub, tokens: dict[str, str]) -> None:
    assert await names_listed(mcp_url(hub, "alice"), tokens["alice"]) == ["greet", "note0", "note1", "note2", "explain"]
    assert await names_listed(mcp_url(hub, "bob"), tokens["bob"]) == ["bobs_prompt"]


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_an_mcp_client_gets_and_completes_alices_prompts(
    hub: JupyterHub, tokens: dict[str, str], mode: str
) -> None:
    async with sdk_client(mcp_url(hub, "alice"), {"Authorization": f"token {tokens['alice']}"}, mode=mode) as client:
        got = await client.get_prompt("greet", {"who": "Ada"})
        assert "Greet Ada warmly." in str(got.messages[0].content)


def initialize_body() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}


@pytest.mark.parametrize(
    "who",
    [
        pytest.param("bob", id="bobs-token"),
        pytest.param(None, id="no-token"),
        pytest.param("forged", id="forged-token"),
    ],
)
async def test_only_alices_token_opens_alices_endpoint(
    hub: JupyterHub, tokens: dict[str, str], who: str | None
) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if who is not None:
        headers["Authorization"] = f"token {tokens.get(who, 'not-a-hub-token')}"
    async with httpx2.AsyncClient() as http:
        post = await http.post(mcp_url(hub, "alice"), json=initialize_body(), headers=headers)
        get = await http.get(mcp_url(hub, "alice"), headers=headers, follow_redirects=False)
    # The hub knows bob's token, but it opens only bob's own server: to alice's, it is a token not accepted.
    problem = "no token was sent" if who is None else "the token sent is not accepted here"
    assert post.status_code == 401, post.text
    assert post.json()["message"] == (
        f"This Jupyter server needs a token, and {problem}. Send the header 'Authorization: token <token>' with "
        "an API token of yours from the hub's token page (/hub/token); another user's is refused. "
        f"'mcp-notebook config --jupyter {mcp_url(hub, 'alice')}' prints the configuration for Claude Code, "
        "VS Code and Cursor."
    )
    # Without credentials a GET may be sent to the hub's login, as a browser would be; a token is refused.
    assert get.status_code in ({401} if who is not None else {401, 302}), get.text
    if get.status_code == 302:
        assert "/hub/" in get.headers["location"]
    assert "jsonrpc" not in post.text + get.text


async def test_a_notebook_alice_saves_through_the_hub_becomes_a_prompt(hub: JupyterHub, tokens: dict[str, str]) -> None:
    auth = {"Authorization": f"token {tokens['alice']}"}
    async with (
        sdk_client(mcp_url(hub, "alice"), auth, mode="auto") as client,
        httpx2.AsyncClient(headers=auth) as contents,
    ):
        async with client.listen(prompts_list_changed=True) as subscription:
            saved = await contents.put(
                f"{hub.url}user/alice/api/contents/team.ipynb",
                json={"type": "notebook", "format": "json", "content": notebook_json("team_review", "Review {{x}}.")},
            )
            assert saved.status_code in (200, 201), saved.text
            with anyio.fail_after(SAVE_TO_PROMPT_SECONDS * 3):  # a save, a reload and two proxies on the way
                await subscription.__anext__()
        names = [p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts]
    assert "team_review" in names
    assert "team_review" not in await names_listed(mcp_url(hub, "bob"), tokens["bob"])
    assert (Path(hub.homes) / "alice" / "team.ipynb").is_file()


def test_each_single_user_server_logs_the_mcp_url_its_user_reaches(hub: JupyterHub) -> None:
    for user in USERS:
        assert hub.wait_for_line(f"MCP prompts served at {mcp_url(hub, user)}").endswith(f"/user/{user}/mcp")


async def test_a_token_with_the_users_default_permissions_works_too(hub: JupyterHub) -> None:
    with hub.api() as api:
        made = api.post("users/alice/tokens", json={"note": "default permissions"})
    assert made.status_code == 201, made.text
    assert "bobs_prompt" not in await names_listed(mcp_url(hub, "alice"), made.json()["token"])
    assert "greet" in await names_listed(mcp_url(hub, "alice"), made.json()["token"])
