"""What `mcp-notebook serve` says as it starts, in a real process: each problem once, the URL where scripts read it.

A broken notebook is named once, in the summary, before the URL line, over
stdio, over HTTP and with several workers; a folder with no prompt says how to
write one; with --http the `MCP_NOTEBOOK_URL=` line is on stdout.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
from notebook_files import write_notebook, write_skill

pytestmark = pytest.mark.slow

DEADLINE = 60.0
BROKEN = "mcp-notebook: warning: bad.ipynb: is not valid JSON at line 1, column 2 (a notebook still being written?)"


class Served:
    """`mcp-notebook serve ARGS` in a child process, its stdout and stderr read line by line as they come."""

    def __init__(self, *args: str, stderr_to_stdout: bool = False) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_notebook", "serve", *args, "--no-cache"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if stderr_to_stdout else subprocess.PIPE,
            text=True,
        )
        self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._new: queue.Queue[None] = queue.Queue()
        self._lock = threading.Lock()
        for name, stream in (("stdout", self.process.stdout), ("stderr", self.process.stderr)):
            if stream is not None:
                threading.Thread(target=self._read, args=(name, stream), daemon=True).start()

    def _read(self, name: str, stream: IO[str]) -> None:
        for line in stream:
            with self._lock:
                self.lines[name].append(line.rstrip("\n"))
            self._new.put(None)

    def wait_for(self, name: str, wanted: Callable[[str], bool]) -> str:
        """The first line of stream `name` that is `wanted`, waiting for it within the deadline."""
        end = time.monotonic() + DEADLINE
        while True:
            with self._lock:
                found = next((line for line in self.lines[name] if wanted(line)), None)
                seen = list(self.lines[name])
            if found is not None:
                return found
            if time.monotonic() > end or (self.process.poll() is not None and self._new.empty()):
                raise AssertionError(f"no such line on {name}; saw {seen}")
            with contextlib.suppress(queue.Empty):
                self._new.get(timeout=0.5)

    def seen(self, name: str) -> list[str]:
        """The lines of stream `name` read so far."""
        with self._lock:
            return list(self.lines[name])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(*args: str, **options: bool) -> Served:
        started.append(Served(*args, **options))
        return started[-1]

    yield start
    for served in started:
        served.stop()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_notebook(tmp_path / "prompts" / "good.ipynb", [{"source": "Hello {{who}}", "mcp": {"prompt": "greet"}}])
    (tmp_path / "prompts" / "bad.ipynb").write_text("{not json", encoding="utf-8")
    return tmp_path / "prompts"


def _break_another(folder: Path) -> None:
    """A second broken notebook, saved once serving: its line shows the watch is in place and has looked."""
    draft = folder / "later.draft"
    draft.write_text("[1, 2", encoding="utf-8")
    os.replace(draft, folder / "later.ipynb")


def _after_the_watch_looked(served: Served, folder: Path) -> list[str]:
    _break_another(folder)
    served.wait_for("stderr", lambda line: "later.ipynb" in line)
    return served.seen("stderr")


def test_over_stdio_a_broken_notebook_is_said_once_in_the_summary(serve: Callable[..., Served], folder: Path) -> None:
    served = serve(str(folder))
    served.wait_for("stderr", lambda line: line.startswith("mcp-notebook: 1 prompt from 2 notebooks in "))
    lines = _after_the_watch_looked(served, folder)
    assert [line for line in lines if "bad.ipynb" in line] == [BROKEN]
    assert lines[:2] == [f"mcp-notebook: 1 prompt from 2 notebooks in {folder}", BROKEN]


def test_over_http_a_broken_notebook_is_said_once_before_the_url_line(
    serve: Callable[..., Served], folder: Path
) -> None:
    served = serve(str(folder), "--http")
    url_line = served.wait_for("stdout", lambda line: line.startswith("MCP_NOTEBOOK_URL="))
    lines = _after_the_watch_looked(served, folder)
    assert [line for line in lines if "bad.ipynb" in line] == [BROKEN]
    url = url_line.removeprefix("MCP_NOTEBOOK_URL=")
    assert lines[:4] == [
        f"mcp-notebook: 1 prompt from 2 notebooks in {folder}",
        BROKEN,
        f"mcp-notebook: serving over Streamable HTTP at {url}",
        url_line,  # on stderr too, beside the logs, for whoever reads those
    ]


def test_with_two_workers_one_summary_names_a_broken_notebook_once(serve: Callable[..., Served], folder: Path) -> None:
    served = serve(str(folder), "--http", "--workers", "2")
    served.wait_for("stdout", lambda line: line.startswith("MCP_NOTEBOOK_URL="))
    lines = _after_the_watch_looked(served, folder)
    assert [line for line in lines if "bad.ipynb" in line] == [BROKEN]
    assert [line for line in lines if "prompt from" in line] == [f"mcp-notebook: 1 prompt from 2 notebooks in {folder}"]


def test_the_url_line_is_the_first_line_on_stdout_and_said_once_where_both_streams_meet(
    serve: Callable[..., Served], folder: Path
) -> None:
    served = serve(str(folder), "--http", stderr_to_stdout=True)
    served.wait_for("stdout", lambda line: line.startswith("mcp-notebook: serving over Streamable HTTP at "))
    url_line = served.wait_for("stdout", lambda line: line.startswith("MCP_NOTEBOOK_URL="))
    _break_another(folder)
    served.wait_for("stdout", lambda line: "later.ipynb" in line)
    assert served.seen("stdout").count(url_line) == 1


def _said(folder: Path, *options: str) -> list[str]:
    """What `serve FOLDER` over stdio says on stderr to a client that sends nothing (not a terminal)."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "serve", str(folder), "--no-cache", *options],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=True,
    )
    assert done.stdout == ""
    return done.stderr.splitlines()


def _summary_of(folder: Path, *options: str) -> str:
    (line,) = _said(folder, *options)
    return line


def test_a_folder_without_notebooks_says_how_to_write_a_prompt(tmp_path: Path) -> None:
    assert _summary_of(tmp_path) == (
        f"mcp-notebook: 0 prompts: no notebook (.ipynb) was found in {tmp_path}. Write one with a cell tagged "
        "prompt:NAME (the format: mcp-notebook help format) and save; this server reloads on save."
    )


def test_notebooks_without_a_prompt_say_how_many_were_read_and_how_to_tag_a_cell(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        write_notebook(tmp_path / f"{name}.ipynb", [{"source": "Just notes."}])
    assert _summary_of(tmp_path) == (
        f"mcp-notebook: 0 prompts: none of the 3 notebooks read in {tmp_path} has a cell tagged prompt:NAME. "
        "Tag a cell prompt:NAME (the format: mcp-notebook help format) and save; this server reloads on save."
    )
    (tmp_path / "b.ipynb").unlink()
    (tmp_path / "c.ipynb").unlink()
    assert _summary_of(tmp_path, "--no-watch") == (
        f"mcp-notebook: 0 prompts: the one notebook read in {tmp_path} has no cell tagged prompt:NAME. "
        "Tag a cell prompt:NAME (the format: mcp-notebook help format), then start this server again."
    )


def test_a_folder_of_skills_alone_starts_quietly_and_is_not_told_to_write_a_prompt(tmp_path: Path) -> None:
    write_skill(tmp_path, "tidy-table")
    # A client logs whatever a server writes on stderr: a good start says nothing.
    assert _said(tmp_path, "--no-watch") == []
    assert _said(tmp_path, "--no-watch", "--verbose")[:2] == [
        f"mcp-notebook: 0 prompts in {tmp_path} (no notebook)",
        "mcp-notebook: 1 skill: skill://tidy-table/SKILL.md",
    ]


def test_prompts_and_skills_start_quietly_and_a_warning_brings_the_whole_summary(tmp_path: Path) -> None:
    write_notebook(tmp_path / "a.ipynb", [{"source": "Say hello.", "mcp": {"prompt": "hello"}}])
    write_skill(tmp_path, "tidy-table")
    assert _said(tmp_path, "--no-watch") == []
    write_skill(tmp_path, "broken", "# No frontmatter\n")
    said = _said(tmp_path, "--no-watch")
    assert said[:2] == [
        f"mcp-notebook: 1 prompt from 1 notebook in {tmp_path}",
        "mcp-notebook: 1 skill: skill://tidy-table/SKILL.md",
    ]
    assert said[2].startswith("mcp-notebook: warning: skill broken/SKILL.md is not served: SKILL.md does not begin")
    assert len(said) == 3


def test_notebooks_declaring_only_skills_are_not_told_to_tag_a_prompt(tmp_path: Path) -> None:
    write_notebook(tmp_path / "notes.ipynb", [{"source": "Keep notes short.", "tags": ["skill:short-notes"]}])
    assert _said(tmp_path, "--no-watch", "--verbose")[:2] == [
        f"mcp-notebook: 0 prompts in {tmp_path} (1 notebook read)",
        "mcp-notebook: 1 skill: skill://short-notes/SKILL.md",
    ]


def test_over_http_a_folder_without_prompts_says_so_before_the_url_line(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    served = serve(str(tmp_path), "--http", "--no-watch")
    url_line = served.wait_for("stdout", lambda line: line.startswith("MCP_NOTEBOOK_URL="))
    # The two streams are read apart: the order is the one stderr shows, where the URL line comes too.
    served.wait_for("stderr", lambda line: line == url_line)
    lines = served.seen("stderr")
    assert lines[0] == (
        f"mcp-notebook: 0 prompts: no notebook (.ipynb) was found in {tmp_path}. Write one with a cell tagged "
        "prompt:NAME (the format: mcp-notebook help format), then start this server again."
    )
    assert lines.index(url_line) > 0


@pytest.mark.slow
def test_serve_in_a_terminal_says_what_it_waits_for_and_a_client_is_not_told(tmp_path: Path) -> None:
    import pty

    from mcp_notebook.commands.serve import STDIO_WAITING

    examples = Path(__file__).resolve().parents[1] / "examples" / "code_review.ipynb"
    command = [sys.executable, "-m", "mcp_notebook", "serve", str(examples), "--no-watch"]
    controller, terminal = pty.openpty()
    try:
        person = subprocess.Popen(command, stdin=terminal, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(terminal)
    assert person.stderr is not None
    try:
        said = [person.stderr.readline(), person.stderr.readline()]  # the start summary, then the hint
        assert said[1] == f"mcp-notebook: {STDIO_WAITING}\n", said
    finally:
        os.close(controller)  # the terminal goes away: its input ends, and so does the server
        person.kill()
        person.wait(timeout=30)
        person.stderr.close()
    # An MCP client (stdin a pipe) gets only the summary: its log holds nothing about terminals.
    client = subprocess.run(command, input="", capture_output=True, text=True, timeout=60, check=False)
    assert STDIO_WAITING not in client.stderr


def test_over_stdio_an_mcp_clients_server_that_started_well_writes_nothing_on_stderr(tmp_path: Path) -> None:
    """Claude Code logs each stderr line of a stdio server as `{"error":"Server stderr: …"}`: a good start is
    silent there; -v still says the summary, and a problem is always said (the tests above)."""
    write_notebook(tmp_path / "good.ipynb", [{"source": "Hello {{who}}", "mcp": {"prompt": "greet"}}])
    argv = [sys.executable, "-m", "mcp_notebook", "serve", str(tmp_path), "--no-cache"]
    quiet = subprocess.run(argv, input="", capture_output=True, text=True, timeout=DEADLINE, check=True)
    assert (quiet.stdout, quiet.stderr) == ("", "")
    told = subprocess.run([*argv, "-v"], input="", capture_output=True, text=True, timeout=DEADLINE, check=True)
    assert f"mcp-notebook: 1 prompt from 1 notebook in {tmp_path}" in told.stderr.splitlines()
