"""The Python API: `mcp_notebook.connect(...)` from plain synchronous code, in scripts and inside event loops."""

from __future__ import annotations

import asyncio
import builtins
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from client_harness import DEADLINE, LEGACY_SERVER, live_children, running_http_server, wait_until
from trusted_files import trusted

import mcp_notebook
from mcp_notebook.api import Connection, argument_text, ask_with_input, resolve_server
from mcp_notebook.client import InputRequest
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ConfigError, MissingArgumentsError, UnknownArgumentsError, UnknownPromptError
from mcp_notebook.models import TextContent


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home and a project folder (the working directory) whose `mcp.json` names `docs`."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("MCP_NOTEBOOK_CONFIG", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    entry = {"command": sys.executable, "args": [str(LEGACY_SERVER), "--version", "2025-06-18"]}
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}), encoding="utf-8")
    trusted(project / "mcp.json")  # the user's own project
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def docs(project: Path) -> Iterator[Connection]:
    with mcp_notebook.connect("docs") as connection:
        yield connection


@pytest.mark.slow
def test_connect_by_configured_name_lists_gets_and_completes(docs: Connection) -> None:
    names = [p.name for p in docs.prompts()]
    rendered = docs.get("greet", name="Ada", lang="rust")
    completion = docs.complete("greet", "lang", "ru", name="Ada")

    assert names[:2] == ["greet", "media"]
    assert rendered.messages[0].content == TextContent(text="Say hello to Ada in rust.")
    assert completion.values == ("rust", "ruby")
    assert docs.client.protocol_version == "2025-06-18"


@pytest.mark.slow
def test_mistakes_are_caught_before_asking_the_server(docs: Connection) -> None:
    with pytest.raises(UnknownPromptError) as unknown:
        docs.get("gret", name="x")
    with pytest.raises(MissingArgumentsError) as missing:
        docs.get("greet", lang="rust")
    with pytest.raises(UnknownArgumentsError, match="it takes: name, lang"):
        docs.get("greet", name="x", colour="red")

    assert unknown.value.suggestions == ("greet",)
    assert missing.value.missing == ("name",)


@pytest.mark.slow
def test_non_string_values_are_formatted_as_text(docs: Connection) -> None:
    rendered = docs.get("greet", name=42, lang=b"bytes")

    assert rendered.messages[0].content == TextContent(text="Say hello to 42 in bytes.")


@pytest.mark.slow
def test_the_api_works_inside_a_running_event_loop(docs: Connection) -> None:
    async def notebook_cell() -> str:
        # What a Jupyter cell is: code running inside the kernel's event loop.
        return docs.get("greet", name="loop").messages[0].content.type

    assert asyncio.run(notebook_cell()) == "text"


@pytest.mark.slow
def test_connect_takes_a_command_line_or_command_and_args(project: Path) -> None:
    with mcp_notebook.connect(f"{sys.executable} {LEGACY_SERVER}", name="cli") as by_line:
        assert by_line.name == "cli" and by_line.prompts()[0].name == "greet"
    with mcp_notebook.connect(command=sys.executable, args=[str(LEGACY_SERVER), "--version", "2025-03-26"]) as c:
        c.connect()
        assert c.client.protocol_version == "2025-03-26"


@pytest.mark.slow
def test_connect_takes_a_url_with_headers(project: Path) -> None:
    with (
        running_http_server("--token", "t0k") as url,
        mcp_notebook.connect(url, headers={"Authorization": "Bearer t0k"}) as remote,
    ):
        assert remote.name == "127.0.0.1"
        assert remote.get("greet", name="web").messages[0].content == TextContent(
            text="Say hello to web in plain words."
        )


@pytest.mark.slow
def test_closing_stops_the_server_and_a_later_call_reconnects(project: Path) -> None:
    others = {p.pid for p in live_children()}
    connection = mcp_notebook.connect("docs").connect()
    assert len([p for p in live_children() if p.pid not in others]) == 1

    connection.close()
    assert [p for p in live_children() if p.pid not in others] == []

    assert connection.prompts()[0].name == "greet"
    connection.close()


@pytest.mark.slow
def test_a_script_that_forgets_to_close_leaves_no_server_behind(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    script = (
        "import sys, mcp_notebook\n"
        f"docs = mcp_notebook.connect(command=sys.executable, args=[{str(LEGACY_SERVER)!r}, '--log', {str(log)!r}])\n"
        "print(docs.get('greet', name='script').messages[0].content.text)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=DEADLINE)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Say hello to script in plain words."
    server_pid = int(log.read_text().split()[1])
    wait_until(lambda: not psutil.pid_exists(server_pid), "the server process is gone")


def test_resolve_server_accepts_configs_urls_and_command_lines() -> None:
    configured = {"docs": ServerConfig(name="docs", command="docs-server")}

    assert resolve_server("docs", configured=configured) is configured["docs"]
    assert resolve_server("docs", name="d2", configured=configured).name == "d2"
    assert resolve_server("https://host.example/mcp", headers={"A": "b"}) == ServerConfig(
        name="host.example", url="https://host.example/mcp", headers={"A": "b"}
    )
    assert resolve_server("uvx some-server --flag", configured=configured) == ServerConfig(
        name="uvx", command="uvx", args=("some-server", "--flag")
    )


def test_an_unknown_server_name_is_a_config_error_with_suggestions() -> None:
    configured = {"docs": ServerConfig(name="docs", command="docs-server")}

    with pytest.raises(ConfigError, match=r"no MCP server named 'dosc' \(configured: docs.*Did you mean docs\?"):
        resolve_server("dosc", configured=configured)


def test_argument_text_writes_dataframes_as_markdown_tables_without_tabulate() -> None:
    pandas = pytest.importorskip("pandas")  # in the `test` extra; tabulate is not
    sales = pandas.DataFrame({"region": ["north", "south"], "revenue": [120.5, float("nan")]})

    assert argument_text(sales) == (
        "\n\n| region | revenue |\n|---|---:|\n| north | 120.5 |\n| south | NaN |\n\n"
    )  # blank lines around: a table inside a sentence still reads as a table
    assert argument_text(sales.set_index("region")["revenue"]) == (
        "\n\n| region | revenue |\n|---|---:|\n| north | 120.5 |\n| south | NaN |\n\n"
    )
    assert argument_text(3.5) == "3.5"
    assert argument_text("as is") == "as is"


def test_argument_text_prints_numpy_arrays_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    class FakeNumpy(types.ModuleType):
        @staticmethod
        def printoptions(**options: Any) -> Any:
            import contextlib

            calls.append(options)
            return contextlib.nullcontext()

        @staticmethod
        def array2string(value: Any, separator: str) -> str:
            return "[1, 2, 3]"

    class ndarray:  # the name numpy gives it
        pass

    ndarray.__module__ = "numpy"
    monkeypatch.setitem(sys.modules, "numpy", FakeNumpy("numpy"))

    assert argument_text(ndarray()) == "[1, 2, 3]"
    assert calls == [{"threshold": 1000}]


def test_ask_with_input_asks_each_field_and_converts_types(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter(["", "blue", "seven", "7", "maybe", "yes", ""])
    questions: list[str] = []

    def typed(question: str = "") -> str:
        questions.append(question)
        return next(answers)

    monkeypatch.setattr(builtins, "input", typed)
    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "blue"]},
            "count": {"type": "integer"},
            "sure": {"type": "boolean"},
            "note": {"type": "string"},
        },
        "required": ["colour", "count", "sure"],
    }

    answer = ask_with_input(InputRequest(message="Tell me", requested_schema=schema, key="k"))

    assert answer == {"colour": "blue", "count": 7, "sure": True}
    assert questions[0] == "colour (one of red, blue): "
    assert questions[-1] == "note [optional]: "


def test_ask_with_input_declines_on_end_of_input(monkeypatch: pytest.MonkeyPatch) -> None:
    def closed(question: str = "") -> str:
        raise EOFError

    monkeypatch.setattr(builtins, "input", closed)
    schema = {"properties": {"x": {"type": "string"}}, "required": ["x"]}

    assert ask_with_input(InputRequest(message="?", requested_schema=schema, key="k")) is None


def test_ask_with_input_confirms_a_url_visit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(builtins, "input", lambda question="": "")

    answer = ask_with_input(InputRequest(message="Sign in", requested_schema={}, key="k", url="https://auth.example"))

    assert answer == {}
    assert "Open https://auth.example" in capsys.readouterr().out


def test_connect_is_importable_from_the_package_without_loading_the_client() -> None:
    code = (
        "import sys, mcp_notebook; light = 'mcp_notebook.client' not in sys.modules; "
        "from mcp_notebook import connect; print(light, callable(connect), 'anyio' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=DEADLINE)

    assert out.stdout.split() == ["True", "True", "False"]


@pytest.mark.slow
def test_get_returns_what_the_magic_returns_a_conversation_that_converts_itself(docs: Connection) -> None:
    from mcp_notebook.ipython.display import PromptConversation
    from mcp_notebook.llm import Conversation, to_anthropic_messages, to_openai_messages

    rendered = docs.get("greet", name="Ada", lang="rust")

    assert isinstance(rendered, Conversation)
    assert rendered.to_openai() == to_openai_messages(rendered)
    assert rendered.to_anthropic() == to_anthropic_messages(rendered)
    assert rendered.to_openai()[0]["content"][0] == {"type": "text", "text": "Say hello to Ada in rust."}
    assert rendered.to_dicts()[0] == {"role": "user", "content": {"text": "Say hello to Ada in rust.", "type": "text"}}
    shown = PromptConversation.of(rendered)  # what %mcp get hands the user
    assert isinstance(shown, Conversation)
    assert (shown.messages, shown.to_openai(), shown.to_anthropic()) == (
        rendered.messages,
        rendered.to_openai(),
        rendered.to_anthropic(),
    )


DEAD_SERVERS = {
    "exits at once": {"command": "false"},
    "not installed": {"command": "/nonexistent/mcp-server"},
    "exits after reading": {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.readline(); sys.exit(3)"]},
    "writes garbage": {"command": sys.executable, "args": ["-c", "print('not json', flush=True); input()"]},
    "nothing listening": {"url": "http://127.0.0.1:9/mcp"},
}


@pytest.mark.slow
@pytest.mark.parametrize("server", DEAD_SERVERS.values(), ids=DEAD_SERVERS.keys())
@pytest.mark.parametrize("call", ["connect", "prompts", "get", "complete"])
def test_a_failure_is_one_exception_with_a_clear_message(server: dict[str, Any], call: str) -> None:
    import traceback

    from mcp_notebook.exceptions import ServerConnectionError, ServerError

    connection = mcp_notebook.connect(timeout=5, **server)
    calls = {
        "connect": connection.connect,
        "prompts": connection.prompts,
        "get": lambda: connection.get("greet", name="Ada"),
        "complete": lambda: connection.complete("greet", "lang", "ru"),
    }
    try:
        with pytest.raises(ServerError) as caught:
            calls[call]()
    finally:
        connection.close()
    error = caught.value
    assert isinstance(error, ServerConnectionError)
    assert error.__cause__ is None and error.__suppress_context__
    text = "".join(traceback.format_exception(error))
    assert "ExceptionGroup" not in text and "anyio" not in text
    assert len(text.splitlines()) <= 12, text  # the caller's lines and the message, not the machinery
    assert str(error).startswith(connection.name + ": ")
