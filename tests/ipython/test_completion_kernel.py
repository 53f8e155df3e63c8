"""Tab on `%mcp` lines in a real kernel: `complete_request`s as JupyterLab, Notebook 7 and VS Code send them.

One kernel, started in a project whose `mcp.json` names `docs` (`mcp-notebook
serve examples/`), `stub` (a server whose `slow` argument takes a minute to
complete), `slowlist` (its listing takes a minute) and `dead` (exits at once).
Every answer must come within `ANSWER_WITHIN`, whatever the servers do.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kernel_harness import KERNEL_DEADLINE, RealKernel
from trusted_files import trusted

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "tests" / "servers" / "stub_completion_server.py"
# The matcher waits 0.2 s at most; the rest is the kernel's own round trip on a loaded machine.
ANSWER_WITHIN = 2.0
PYTHON_NAMES = {"compile", "RuntimeError", "print", "range"}

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Answer:
    matches: list[str]
    start: int
    end: int
    seconds: float


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    base = tmp_path_factory.mktemp("completion")
    project = base / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    (project / "app_notes.md").write_text("notes\n", encoding="utf-8")
    serve = str(Path(sys.executable).parent / "mcp-notebook")
    servers = {
        "docs": {"command": serve, "args": ["serve", str(ROOT / "examples")]},
        "stub": {"command": sys.executable, "args": [str(STUB), "--complete-delay", "60"]},
        "slowlist": {"command": sys.executable, "args": [str(STUB), "--list-delay", "60"]},
        "dead": {"command": "false"},
    }
    (project / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    record = base / "trust.json"
    trusted(project / "mcp.json", record)  # the user's own project
    env = {"HOME": str(base), "MCP_NOTEBOOK_CONFIG": None, "MCP_NOTEBOOK_TRUST_FILE": str(record)}
    with RealKernel(base, cwd=project, env=env) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("%mcp prompts docs stub")  # connected, listings known: what a user has after a first look
        kernel.execute("my_frame = 1\nmy_text = 'x'\n_hidden = 2")
        yield kernel


def complete(kernel: RealKernel, code: str, cursor: int | None = None) -> Answer:
    started = time.monotonic()
    msg_id = kernel.client.complete(code, len(code) if cursor is None else cursor)
    while True:
        reply = kernel.client.get_shell_msg(timeout=KERNEL_DEADLINE)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    seconds = time.monotonic() - started
    content = reply["content"]
    assert content["status"] == "ok"
    return Answer(content["matches"], content["cursor_start"], content["cursor_end"], seconds)


def assert_quick_and_ours(answer: Answer) -> None:
    assert answer.seconds < ANSWER_WITHIN, f"the kernel took {answer.seconds:.2f} s"
    assert not PYTHON_NAMES & set(answer.matches), answer.matches


def test_subcommands_complete(kernel: RealKernel) -> None:
    answer = complete(kernel, "%mcp ge")
    assert answer.matches == ["get"]
    assert (answer.start, answer.end) == (5, 7)
    assert complete(kernel, "%mcp ").matches[:3] == ["servers", "connect", "disconnect"]
    assert "picker" in complete(kernel, "%mcp p").matches


def test_options_of_the_subcommand_complete(kernel: RealKernel) -> None:
    assert complete(kernel, "%mcp prompts --r").matches == ["--refresh"]
    assert complete(kernel, "%mcp connect x --").matches[:2] == ["--header", "--env"]
    assert complete(kernel, "%mcp connect x --mode l").matches == ["legacy"]


def test_prompt_references_complete_qualified_and_bare(kernel: RealKernel) -> None:
    qualified = complete(kernel, "%mcp get docs:co")
    assert qualified.matches == ["docs:code_review"]
    assert (qualified.start, qualified.end) == (9, 16)
    assert complete(kernel, "%mcp get code_re").matches == ["code_review"]
    assert complete(kernel, "msgs = %mcp get docs:class").matches == ["docs:classify_sentiment"]
    everything = complete(kernel, "%mcp get ").matches
    assert {"docs:code_review", "stub:p", "code_review", "p"} <= set(everything)
    assert {"slowlist:", "dead:"} <= set(everything)  # known servers whose prompts are not known (yet)


def test_argument_names_complete_required_first(kernel: RealKernel) -> None:
    assert complete(kernel, "%mcp get docs:code_review ").matches == ["code=", "language=", "focus="]
    assert complete(kernel, "%mcp get stub:p ").matches == ["fast=", "other=", "slow="]
    assert complete(kernel, "%mcp get docs:code_review code=x ").matches == ["language=", "focus="]
    assert complete(kernel, "%mcp complete docs:code_review ").matches == ["code", "language", "focus"]


def test_argument_values_come_from_the_server(kernel: RealKernel) -> None:
    code = "%mcp get docs:code_review language=Ru"
    answer = complete(kernel, code)
    assert answer.matches == ["Rust"]
    assert (answer.start, answer.end) == (len(code) - 2, len(code))
    assert complete(kernel, "%mcp get docs:code_review focus=s").matches == ["style", "security"]
    assert complete(kernel, "%mcp complete docs:code_review language Ty").matches == ["TypeScript"]


def test_the_other_arguments_of_the_line_are_the_completion_context(kernel: RealKernel) -> None:
    answer = complete(kernel, "%mcp get stub:p other=@@at slow=@my_frame fast=pre")
    assert answer.matches == ["prectx:other=@at"]  # the variable's value is not sent, the literal @@ is
    assert complete(kernel, '%mcp get stub:p other="two words" fast=').matches == ["'ctx:other=two words'"]
    assert complete(kernel, '%mcp get stub:p fast="a b').matches == ['"a bctx:"']


def test_at_offers_variables_and_at_file_offers_paths(kernel: RealKernel) -> None:
    assert complete(kernel, "%mcp get docs:code_review code=@my_").matches == ["@my_frame", "@my_text"]
    assert "@file:" in complete(kernel, "%mcp get docs:code_review code=@").matches
    assert "@_hidden" not in complete(kernel, "%mcp get docs:code_review code=@").matches
    assert complete(kernel, "%mcp get docs:code_review code=@file:ap").matches == ["@file:app_notes.md"]
    assert complete(kernel, "%mcp get docs:code_review code=@file:s").matches == ["@file:src/"]
    assert complete(kernel, "%mcp get docs:code_review code=@file:src/").matches == ["@file:src/app.py"]


def test_the_prompt_cell_magic_first_line_completes_its_options(kernel: RealKernel) -> None:
    assert complete(kernel, "%%prompt explain --ro\nExplain {{x}}", 21).matches == ["--role"]
    assert complete(kernel, "%%prompt explain --role a\nbody", 25).matches == ["assistant"]


def test_a_slow_server_answers_nothing_within_the_deadline_and_keeps_the_kernel_free(kernel: RealKernel) -> None:
    for _ in range(3):  # the request in flight is reused, not piled up
        answer = complete(kernel, "%mcp get stub:p slow=a")
        assert_quick_and_ours(answer)
        assert answer.matches == ["slow=a"]  # the word as typed: nothing to insert
    assert kernel.execute("print(6 * 7)").text.strip() == "42"
    assert complete(kernel, "%mcp get stub:p fast=q").matches == ["qctx:"]  # the same server still completes


def test_a_server_whose_listing_is_slow_gives_no_items_in_time(kernel: RealKernel) -> None:
    for code in ("%mcp get slowlist:", "%mcp get slowlist:p ", "%mcp get slowlist:p fast="):
        answer = complete(kernel, code)
        assert_quick_and_ours(answer)
        assert answer.matches in ([], [code.rpartition(" ")[2]])


def test_a_dead_server_gives_no_items_in_time(kernel: RealKernel) -> None:
    for code in ("%mcp get dead:", "%mcp get dead:x ", "%mcp get dead:x a=b", "%mcp get dead:x a=b"):
        answer = complete(kernel, code)
        assert_quick_and_ours(answer)
    assert complete(kernel, "%mcp get docs:code_review language=G").matches == ["Go"]


def test_python_lines_still_complete_python(kernel: RealKernel) -> None:
    assert "compile" in complete(kernel, "compi").matches


def test_unpublish_offers_this_kernels_prompt_cells(kernel: RealKernel) -> None:
    kernel.execute("%%prompt tab_demo\nHello {{who}}")
    try:
        answer = complete(kernel, "%mcp unpublish tab_")
        assert_quick_and_ours(answer)
        assert answer.matches == ["tab_demo"]
        assert (answer.start, answer.end) == (15, 19)
    finally:
        kernel.execute("%mcp unpublish tab_demo")
    assert complete(kernel, "%mcp unpublish tab_").matches == ["tab_"]  # withdrawn: nothing to offer


def test_serve_live_offers_magics_that_may_run_live(kernel: RealKernel) -> None:
    answer = complete(kernel, "%mcp serve --live %who")
    assert_quick_and_ours(answer)
    assert answer.matches == ["%who", "%who_ls", "%whos"]
    after_comma = complete(kernel, "%mcp serve --live %who,%pw")
    assert after_comma.matches == ["%who,%pwd"]
    assert "%cd" not in complete(kernel, "%mcp serve --live %c").matches  # changes the kernel: never live
