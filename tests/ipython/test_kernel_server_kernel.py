"""The proof in a real kernel: `%%prompt` cells served by `%mcp serve`, used by an SDK client in this process.

The kernel runs under jupyter_client exactly as a notebook's kernel would; the
test reads the connection file the kernel writes and talks to its server over
HTTP with the bearer token from that file.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from kernel_harness import RealKernel
from kernel_server_harness import Notifications, connect
from mcp import MCPError

from mcp_notebook.sources.magics import MAGIC_META_KEY

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("kernel-server")) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        yield kernel


async def test_a_client_uses_the_prompts_variables_and_magics_of_a_real_kernel(kernel: RealKernel) -> None:
    kernel.execute("kp_sales = [1, 2]\nkp_costs = [3]\nkp_label = 'q3'")
    published = kernel.execute('%%prompt kp_explain --arg data:var[list]="a list"\nExplain {{data}}.\nkp_ran = 1').text
    assert "Published prompt 'kp_explain' (data)" in published
    [served] = kernel.execute("%mcp serve --magics --live %who").displays
    connection = kernel.connection()
    assert connection.token and connection.pid == kernel.pid
    assert connection.token not in served["text/plain"] and connection.token not in served["text/html"]

    notifications = Notifications()
    async with connect(connection.url, connection.token, message_handler=notifications) as client:
        listed = {p.name for p in (await client.list_prompts()).prompts}
        assert "kp_explain" in listed
        rendered = await client.get_prompt("kp_explain", {"data": "kp_sales"})
        assert rendered.messages[0].content.text == "Explain [1, 2].\nkp_ran = 1"  # the variable's value

        kernel.execute("%%prompt kp_second\nA second prompt.")
        await notifications.wait_for("notifications/prompts/list_changed")
        assert "kp_second" in {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}

        completed = await client.complete({"type": "ref/prompt", "name": "kp_explain"}, {"name": "data", "value": "kp"})
        assert completed.completion.values == ["kp_costs", "kp_sales"]

        documented = await client.get_prompt("magic.timeit", {"line": "sum(kp_sales)"})
        assert documented.messages[0].content.text.endswith("```python\n%timeit sum(kp_sales)\n```")

        live = await client.get_prompt("magic.who", {"line": "list"})
        assert "kp_costs" in live.messages[1].content.text and "kp_sales" in live.messages[1].content.text

        refused = await client.get_prompt("magic", {"name": "who_ls"})
        assert refused.messages[0].content.text.startswith("The IPython magic `%who_ls`.")
    assert kernel.execute("print('kp_ran' in globals())").text.strip() == "False"

    async with httpx2.AsyncClient() as http:
        anonymous = await http.post(
            connection.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert anonymous.status_code == 401

    assert kernel.execute("%mcp stop").text == f"Stopped the kernel's MCP server at {connection.url}.\n"
    assert kernel.connections() == []
    assert not os.path.exists(connection.path)  # noqa: ASYNC240 (a stat, after the kernel has answered)
    port = int(connection.url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


WAIT_FOR_QUEUED_MAGIC = """
import asyncio
from mcp_notebook.ipython.kernel_server import kernel_prompt_state
kp_phase = "running"
kp_scheduler = kernel_prompt_state(get_ipython()).server._scheduler
print("started", flush=True)
async with asyncio.timeout(30):  # the live request must arrive, and wait, while this cell runs
    while not kp_scheduler._waiting:
        await asyncio.sleep(0.01)
kp_phase = "done"
"""


async def test_a_live_magic_asked_for_during_a_running_cell_runs_after_it(kernel: RealKernel) -> None:
    kernel.execute("%mcp serve --live %whos")
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        msg_id = await asyncio.to_thread(kernel.run_until_printed, WAIT_FOR_QUEUED_MAGIC, until="started")
        rendered = asyncio.create_task(client.get_prompt("magic.whos", {"line": "str"}))
        await asyncio.to_thread(kernel.finish, msg_id)
        output = (await rendered).messages[1].content.text
    assert "kp_phase" in output and "done" in output and "running" not in output
    kernel.execute("%mcp stop")


async def test_the_magics_listing_puts_the_users_prompts_first_and_at_most_ten_magics(
    kernel: RealKernel, notebook_factory: Callable[..., Path]
) -> None:
    notebook = notebook_factory("mine.ipynb", [{"source": "From my notebook.", "mcp": {"prompt": "kp_from_file"}}])
    kernel.execute("%%prompt kp_mine\nMy own prompt.")
    kernel.execute(f"%mcp serve --notebook {notebook} --magics --live who")
    connection = kernel.connection()
    try:
        async with connect(connection.url, connection.token) as client:
            page = await client.list_prompts()
            assert page.next_cursor is None  # the whole listing fits on one page
            prompts = page.prompts
            magics = [p for p in prompts if (p.meta or {}).get(MAGIC_META_KEY)]
            assert 1 < len(magics) <= 10
            first = len(prompts) - len(magics)
            assert {p.name for p in prompts[:first]} >= {"kp_mine", "kp_from_file"}
            assert all((p.meta or {}).get(MAGIC_META_KEY) is None for p in prompts[:first])
            assert {"magic", "magic.who"} <= {p.name for p in magics}
            # Every magic is still reachable: the `magic` prompt's name completes all of them.
            ref = {"type": "ref/prompt", "name": "magic"}
            completed = await client.complete(ref, {"name": "name", "value": "al"})
            assert {"alias", "alias_magic"} <= set(completed.completion.values)
            documented = await client.get_prompt("magic", {"name": "alias", "line": "ll ls -l"})
            text = documented.messages[0].content.text
            assert text.startswith("The IPython magic `%alias`.") and text.endswith("```python\n%alias ll ls -l\n```")
            cell = await client.get_prompt("magic", {"name": "%%bash", "body": "echo hi"})
            assert cell.messages[0].content.text.endswith("```python\n%%bash\necho hi\n```")
            with pytest.raises(MCPError) as unknown:
                await client.get_prompt("magic", {"name": "timit"})
            assert unknown.value.error.code == -32602 and "did you mean timeit" in unknown.value.error.message
    finally:
        kernel.execute("%mcp stop")
    kernel.execute("%mcp serve --all-magics")
    connection = kernel.connection()
    try:
        async with connect(connection.url, connection.token) as client:
            page = await client.list_prompts()
            everything = list(page.prompts)
            while page.next_cursor:
                page = await client.list_prompts(cursor=page.next_cursor)
                everything += page.prompts
        assert len([p for p in everything if (p.meta or {}).get(MAGIC_META_KEY)]) > 100
    finally:
        kernel.execute("%mcp stop")


def test_unloading_the_extension_stops_the_server_and_removes_its_connection_file(kernel: RealKernel) -> None:
    kernel.execute("%mcp serve")
    connection = kernel.connection()
    kernel.execute("%unload_ext mcp_notebook")
    assert kernel.connections() == []
    port = int(connection.url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    kernel.execute("%load_ext mcp_notebook")


def test_shutting_the_kernel_down_removes_its_connection_file(kernel: RealKernel) -> None:
    kernel.execute("%mcp serve")
    path = Path(kernel.connection().path)
    kernel.shutdown()
    assert not path.exists()
