"""Live magics are exactly what was allowed, in a real kernel: arguments are data, failures stay the client's.

Every live prompt of a real kernel gets a table of hostile values in every
argument: `{expr}` and `$var` expansion, `!cmd`, option injection into
positionals and options, newlines, NULs, over-long values. Nothing they ask
for may happen (no file is created, no variable changes, no expression's value
shows up) and the server keeps serving. Then: magics that raise `SystemExit`
or other `BaseException`s, a magic interrupted from the notebook, and one that
runs past its time limit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import RealKernel
from kernel_server_harness import connect
from mcp import MCPError

from mcp_notebook.sources.magics import MAGIC_META_KEY

pytestmark = pytest.mark.slow

READING_MAGICS = "who,whos,who_ls,pwd,lsmagic,dhist,env,pinfo,pdoc,history"
SECRET_SOURCE = '"S3CR3T" + "-VALUE"'  # the history shows this source; only evaluating it gives the value
SECRET_VALUE = "S3CR3T-VALUE"
EXPANDED = "EXPANDED-BY-THE-KERNEL"
DEADLINE = 60.0


def hostile_values(marker: Path) -> list[str]:
    """Values that would run code, write `marker`, or leak a value if the kernel interpreted them."""
    touch = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    return [
        "{ks_hits.append(1)}",
        "{" + touch + "}",
        "int {ks_hits.append(1)}",
        "{'EXPANDED-BY' + '-THE-KERNEL'}",
        "$ks_secret",
        "${ks_secret}",
        "$$",
        "$$ks_secret",
        "$ks_expanded",
        "{ks_expanded}",
        f"!touch {marker}",
        f"!!touch {marker}",
        f"-f {marker}",
        f"-f {marker} 1",
        f"1 -f {marker}",
        f"1-2 -y -f {marker}",
        f"--filename={marker}",
        f"-yf{marker}",
        f"-f{marker}",
        f"x -f {marker}",
        f"int\n%history -f {marker}",
        f"int\r\n!touch {marker}",
        f"int\n{{{touch}}}",
        "int\x00",
        "\x00{ks_hits.append(1)}",
        "int\x1b[2J",
        "x" * 100_000,
        "{" * 5000,
        "int;{ks_hits.append(1)}",
        "'{ks_hits.append(1)}'",
        f'"$(touch {marker})"',
        f"`touch {marker}`",
        "%who_ls {ks_hits.append(1)}",
        "-",
        "--",
    ]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("live-security")) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute(f"ks_hits = []\nks_secret = {SECRET_SOURCE}\nks_expanded = 'EXPANDED-BY' + '-THE-KERNEL'")
        yield kernel


@pytest.fixture(autouse=True)
def _stopped_after(kernel: RealKernel) -> Iterator[None]:
    yield
    kernel.execute("%mcp stop")  # a failed test must not leave its server to the next one


def _text(result: Any) -> str:
    return "\n".join(getattr(m.content, "text", "") for m in result.messages)


async def test_hostile_values_in_every_argument_of_every_reading_magic_have_no_effect(
    kernel: RealKernel, tmp_path: Path
) -> None:
    marker = tmp_path / "written-by-a-client"
    kernel.execute(f"%mcp serve --live {READING_MAGICS}")
    connection = kernel.connection()
    outcomes: dict[str, int] = {"refused": 0, "ran": 0, "failed": 0}
    async with connect(connection.url, connection.token) as client:
        live = [p for p in (await client.list_prompts()).prompts if (p.meta or {}).get(MAGIC_META_KEY, {}).get("live")]
        assert {p.name for p in live} == {f"magic.{m}" for m in READING_MAGICS.split(",")}
        assert not any(p.meta[MAGIC_META_KEY]["executes_code"] for p in live if p.meta)  # type: ignore[index]
        for prompt in live:
            names = [a.name for a in prompt.arguments or []]
            assert "filename" not in names and "overwrite" not in names  # %history -f is never offered
            for argument in names:
                for value in hostile_values(marker):
                    try:
                        result = await client.get_prompt(prompt.name, {argument: value})
                    except MCPError as error:
                        assert error.error.code in (-32602, -32603), (prompt.name, argument, value, error)
                        outcomes["refused" if error.error.code == -32602 else "failed"] += 1
                        assert EXPANDED not in error.error.message and SECRET_VALUE not in error.error.message
                        continue
                    outcomes["ran"] += 1
                    text = _text(result)
                    assert EXPANDED not in text and SECRET_VALUE not in text, (prompt.name, argument, value)
        assert (await client.list_prompts()).prompts  # still serving
    assert not marker.exists()
    assert kernel.execute("print(ks_hits, ks_secret)").text.strip() == f"[] {SECRET_VALUE}"
    assert outcomes["refused"] > outcomes["ran"]
    kernel.execute("%mcp stop")


async def test_reading_magics_still_answer_what_they_are_for(kernel: RealKernel) -> None:
    kernel.execute(f"%mcp serve --live {READING_MAGICS}")
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        who = _text(await client.get_prompt("magic.who", {"line": "list"}))
        history = _text(await client.get_prompt("magic.history", {"range": "1-3", "print_nums": "true"}))
        env = _text(await client.get_prompt("magic.env", {"line": "JUPYTER_RUNTIME_DIR"}))
    assert "ks_hits" in who and "ks_secret" not in who
    assert "%load_ext mcp_notebook" in history
    assert str(kernel.runtime_dir) in env
    kernel.execute("%mcp stop")


async def test_a_code_magic_gets_its_line_unexpanded_and_is_marked_as_executing_code(kernel: RealKernel) -> None:
    [served] = kernel.execute("%mcp serve --live timeit").displays
    assert "warning: --live %timeit runs code" in served["text/plain"]
    assert "warning: --live %timeit runs code" in served["text/html"]
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        [prompt] = [p for p in (await client.list_prompts()).prompts if p.name == "magic.timeit"]
        assert prompt.meta and prompt.meta[MAGIC_META_KEY] == {"magic": "%timeit", "live": True, "executes_code": True}
        assert "executes the code" in (prompt.description or "")
        result = await client.get_prompt("magic.timeit", {"line": '-n1 -r1 -q "{ks_hits.append(1)}$ks_secret"'})
    assert "Ran in the kernel" in _text(result)
    assert kernel.execute("print(ks_hits)").text.strip() == "[]"
    kernel.execute("%mcp stop")


def test_a_magic_that_changes_the_kernel_is_refused_for_live_use(kernel: RealKernel) -> None:
    for magic in ("cd", "%reset", "config", "alias", "xdel"):
        refused = kernel.execute(f"%mcp serve --live {magic}", check=False)
        assert refused.error is not None and refused.error["ename"] == "UsageError"
        assert "is refused" in refused.error["evalue"] and "changes the kernel's state" in refused.error["evalue"]
        assert kernel.connections() == []


RAISING_MAGICS = """
from IPython.core.magic import register_line_magic

class KsOddError(BaseException):
    pass

@register_line_magic
def ks_exit(line):
    raise SystemExit(3)

@register_line_magic
def ks_interrupt(line):
    raise KeyboardInterrupt

@register_line_magic
def ks_generator_exit(line):
    raise GeneratorExit("closing")

@register_line_magic
def ks_odd(line):
    raise KsOddError("odd")

@register_line_magic
def ks_fails(line):
    raise ValueError("plain failure")
"""


@pytest.mark.parametrize(
    ("magic", "message"),
    [
        ("ks_exit", "tried to end the kernel (SystemExit: 3)"),
        ("ks_interrupt", "interrupted"),
        ("ks_generator_exit", "closing"),
        ("ks_odd", "odd"),
        ("ks_fails", "plain failure"),
    ],
)
async def test_whatever_a_live_magic_raises_is_an_error_and_the_server_keeps_serving(
    kernel: RealKernel, magic: str, message: str
) -> None:
    kernel.execute(RAISING_MAGICS)
    kernel.execute(f"%mcp serve --live {magic}")
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        for _ in range(2):  # twice: the first failure did not break the second call
            with pytest.raises(MCPError) as failed:
                await client.get_prompt(f"magic.{magic}", {"line": ""})
            assert failed.value.error.code == -32603
            assert message in failed.value.error.message
        assert f"magic.{magic}" in {p.name for p in (await client.list_prompts()).prompts}
    assert kernel.connection() == connection
    assert kernel.execute("print(40 + 2)").text == "42\n"
    kernel.execute("%mcp stop")


async def _wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while not path.exists():  # noqa: ASYNC240 (a stat; the kernel writes the file, no event tells)
        assert time.monotonic() < deadline, f"{path} was never written"
        await asyncio.sleep(0.02)


async def test_interrupting_the_kernel_stops_a_running_live_magic(kernel: RealKernel, tmp_path: Path) -> None:
    started = tmp_path / "started"
    kernel.execute("import time")
    kernel.execute("%mcp serve --live timeit")
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        line = f"-n1 -r1 open({str(started)!r}, 'w').close(); time.sleep(120)"
        call = asyncio.create_task(client.get_prompt("magic.timeit", {"line": line}))
        await _wait_for_file(started)
        began = time.monotonic()
        kernel.interrupt()
        with pytest.raises(MCPError) as failed:
            await asyncio.wait_for(call, 30)
        assert time.monotonic() - began < 30
        assert failed.value.error.code == -32603 and "interrupted" in failed.value.error.message
        again = await client.get_prompt("magic.timeit", {"line": "-n1 -r1 -q 1 + 1"})
        assert "Ran in the kernel" in _text(again)
    assert kernel.execute("print('free')").text == "free\n"
    kernel.execute("%mcp stop")


async def test_a_live_magic_past_its_limit_is_stopped_and_the_client_is_told_so(kernel: RealKernel) -> None:
    kernel.execute("import time")
    kernel.execute("%mcp serve --live timeit --live-timeout 1")
    connection = kernel.connection()
    began = time.monotonic()
    async with connect(connection.url, connection.token) as client:
        with pytest.raises(MCPError) as failed:
            await client.get_prompt("magic.timeit", {"line": "-n1 -r1 time.sleep(120)"})
    assert failed.value.error.code == -32603
    assert failed.value.error.message == "%timeit failed: it ran past its 1 s limit and was stopped"
    assert kernel.execute("print('free')").text == "free\n"
    assert time.monotonic() - began < 30  # the kernel was not kept blocked for the magic's 120 s
    kernel.execute("%mcp stop")
