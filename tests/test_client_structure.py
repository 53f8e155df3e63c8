"""The client's structure: small modules by role, anyio only, and a connection owner that works on its own."""

from __future__ import annotations

import ast
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from client_harness import DEADLINE, live_children

from mcp_notebook.config import ServerConfig

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "mcp_notebook" / "client"
EXAMPLE = ROOT / "examples" / "few_shot.ipynb"
MAX_LINES = 400  # docs STYLE: split a module by responsibility when it passes ~400 lines
# anyio cannot start a task that outlives the task group of its caller; the connection's own task is
# started on the loop in this one place (connection.py says why), and nowhere else.
ALLOWED_ASYNCIO = [("connection.py", "_start_task", "asyncio.get_running_loop")]
# Scheduling calls that bypass anyio's structured concurrency, whatever object they are called on.
LOOSE_SCHEDULING = frozenset({"create_task", "ensure_future", "call_soon", "call_later", "shield", "wait_for"})


def client_modules() -> list[Path]:
    """The client's modules: the files of the package (of the single module it once was)."""
    if CLIENT.is_dir():
        return sorted(CLIENT.glob("*.py"))
    return [CLIENT.with_suffix(".py")]


def _enclosing_functions(tree: ast.AST) -> dict[ast.AST, str]:
    """The name of the innermost function around each node (ast.walk meets outer functions first)."""
    owner: dict[ast.AST, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for child in ast.walk(node):
                if child is not node:
                    owner[child] = node.name
    return owner


def asyncio_uses(path: Path) -> list[tuple[str, str, str]]:
    """Every use of asyncio in `path` (an import, `asyncio.x`, a loose scheduling call), with its function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = _enclosing_functions(tree)
    found: list[tuple[str, str, str]] = []
    for node in ast.walk(tree):
        function = where.get(node, "<module>")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "asyncio":
            found.append((path.name, function, f"from {node.module} import …"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "asyncio":
            found.append((path.name, function, f"asyncio.{node.attr}"))
        elif isinstance(node, ast.Attribute) and node.attr in LOOSE_SCHEDULING and function != "_start_task":
            found.append((path.name, function, f"….{node.attr}"))
    return found


def test_the_client_is_split_into_modules_by_role() -> None:
    names = {path.stem for path in client_modules()}

    assert {"connection", "transport_choice", "prompt_client"} <= names


@pytest.mark.parametrize("path", client_modules(), ids=lambda path: path.name)
def test_each_client_module_stays_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())

    assert lines <= MAX_LINES, f"{path.name} has {lines} lines: split it by responsibility"


def test_the_client_uses_anyio_not_asyncio_primitives() -> None:
    uses = [use for path in client_modules() for use in asyncio_uses(path)]

    assert uses == ALLOWED_ASYNCIO


@pytest.mark.parametrize(
    ("source", "complaint"),
    [
        ("import asyncio\nasync def f():\n    await asyncio.Event().wait()\n", ("f", "asyncio.Event")),
        ("import asyncio\nasync def f(t):\n    await asyncio.shield(t)\n", ("f", "asyncio.shield")),
        ("def f(loop, c):\n    loop.call_soon(c)\n", ("f", "….call_soon")),
        ("from asyncio import Lock\n", ("<module>", "from asyncio import …")),
    ],
)
def test_the_asyncio_check_finds_each_kind_of_use(tmp_path: Path, source: str, complaint: tuple[str, str]) -> None:
    module = tmp_path / "sample.py"
    module.write_text(source, encoding="utf-8")

    assert ("sample.py", *complaint) in asyncio_uses(module)


def serve_example(folder: Path) -> ServerConfig:
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    command = str(Path(sys.executable).with_name("mcp-notebook"))
    return ServerConfig(name="examples", command=command, args=("serve", "--no-cache", str(folder)))


def connection_tasks() -> list[asyncio.Task[object]]:
    return [task for task in asyncio.all_tasks() if task.get_name().startswith("mcp-connection-")]


@pytest.mark.skipif(os.name != "posix", reason="only POSIX removes the name of a file still open")
def test_a_server_log_leaves_no_file_behind_yet_reads_back_what_the_server_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_notebook.client.transport_choice import ServerLog

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = ServerLog()
    try:
        script = "import sys; sys.stderr.write('x' * 3000 + 'the end\\n')"
        subprocess.run([sys.executable, "-c", script], stderr=log.file, check=True)
        # Nothing has a name on disk while the client holds it: a kernel killed now leaves no file.
        assert list(tmp_path.iterdir()) == []
        assert log.tail(100) == "x" * 92 + "the end"
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('and more')"], stderr=log.file, check=True)
        assert log.tail(100).endswith("the end\nand more")
    finally:
        log.close()
    assert log.tail() == ""


@pytest.mark.slow
async def test_the_connection_owner_alone_opens_a_stdio_server_and_closes_it_leaving_nothing(tmp_path: Path) -> None:
    from mcp_notebook.client.connection import ConnectionOwner
    from mcp_notebook.client.transport_choice import ServerLog

    others = {process.pid for process in live_children()}
    log = ServerLog()
    lost: list[str] = []
    owner = ConnectionOwner(serve_example(tmp_path), server_log=log, on_lost=lambda: lost.append("lost"))
    try:
        with anyio.fail_after(DEADLINE):
            await owner.open()
        assert (owner.connected, owner.error) == (True, None)
        assert owner.client is not None
        listing = await owner.client.list_prompts()
        [server] = [process for process in live_children() if process.pid not in others]
        assert "serve" in server.cmdline()
    finally:
        await owner.close()
        log.close()

    assert [prompt.name for prompt in listing.prompts] != []
    assert (owner.connected, owner.client, lost) == (False, None, [])
    assert [process for process in live_children() if process.pid not in others] == []
    assert connection_tasks() == []


@pytest.mark.slow
async def test_the_connection_owner_reports_a_server_that_exits_once(tmp_path: Path) -> None:
    from mcp_notebook.client.connection import ConnectionOwner

    others = {process.pid for process in live_children()}
    told = anyio.Event()
    lost: list[bool] = []

    def on_lost() -> None:
        lost.append(owner.connected)
        told.set()

    owner = ConnectionOwner(serve_example(tmp_path), on_lost=on_lost)
    try:
        with anyio.fail_after(DEADLINE):
            await owner.open()
            [server] = [process for process in live_children() if process.pid not in others]
            server.kill()
            await told.wait()
        assert owner.client is None
    finally:
        await owner.close()

    assert lost == [False]
    assert connection_tasks() == []


async def test_the_connection_owner_tells_why_a_server_did_not_start() -> None:
    from mcp_notebook.client.connection import ConnectionOwner
    from mcp_notebook.client.failures import root_cause

    lost: list[str] = []
    owner = ConnectionOwner(
        ServerConfig(name="ghost", command="no-such-mcp-server-5f1c0d"), on_lost=lambda: lost.append("lost")
    )
    with anyio.fail_after(DEADLINE):
        await owner.open()
    await owner.close()

    assert owner.error is not None
    assert isinstance(root_cause(owner.error), FileNotFoundError)
    assert (owner.connected, lost) == (False, [])
    assert connection_tasks() == []


# -- the SDK's private parts only through the seam -------------------------------------------------

SEAM_USERS = [*client_modules(), ROOT / "mcp_notebook" / "kernel_proxy.py"]


def private_sdk_uses(path: Path) -> list[str]:
    """What `path` takes from the SDK's insides itself: a private module, `_connection`, a message text."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[0] in {"mcp", "mcp_types"} and any(part.startswith("_") for part in parts):
                found.append(f"{path.name}:{node.lineno} imports {module}")
        if isinstance(node, ast.Attribute) and node.attr == "_connection":
            found.append(f"{path.name}:{node.lineno} reads ._connection")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "timed out" in node.value:
            found.append(f"{path.name}:{node.lineno} matches the SDK's text {node.value!r}")
    return found


@pytest.mark.parametrize("path", SEAM_USERS, ids=lambda path: path.name)
def test_the_client_and_the_kernel_proxy_reach_sdk_internals_only_through_the_seam(path: Path) -> None:
    assert private_sdk_uses(path) == []


@pytest.mark.parametrize(
    "source",
    [
        "from mcp.shared._httpx_utils import create_mcp_http_client\n",
        "import mcp.shared._stream_protocols\n",
        "def f(session):\n    return session._connection\n",
        'def f(error):\n    return "timed out" in error.message\n',
    ],
)
def test_the_seam_check_finds_each_kind_of_reach(tmp_path: Path, source: str) -> None:
    module = tmp_path / "sample.py"
    module.write_text(source, encoding="utf-8")

    assert private_sdk_uses(module) != []
