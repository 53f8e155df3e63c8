"""Every host runs the one service: the same index, first scan, garbage-collector policy and start-up summary.

The hosts are driven as users run them: `serve` over stdio and over HTTP and
the ASGI factory under uvicorn as real processes, the Jupyter server's host on
an event loop in this process (the in-kernel host: tests/ipython). Each must
say the summary the service itself says for the same folder, once; leave the
served notebooks in the index (`sources/index.py`) for the next start; and
end its first scan with the collector frozen (`gc.get_freeze_count() > 0`).
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from notebook_files import write_notebook

from mcp_notebook.service import NotebookService, ServiceSettings
from mcp_notebook.sources.index import NotebookIndex

pytestmark = pytest.mark.slow  # real server processes

DEADLINE = 60.0
FREEZE_LINE = "gc-freeze-count="


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    served = tmp_path / "prompts"
    served.mkdir()
    write_notebook(served / "a.ipynb", [{"source": "Hello {{who}}.", "mcp": {"prompt": "greet"}}])
    write_notebook(served / "b.ipynb", [{"source": "Bye.", "mcp": {"prompt": "bye"}}])
    (served / "broken.ipynb").write_text("{ not json", encoding="utf-8")
    return served


@pytest.fixture(autouse=True)
def _unfrozen() -> object:
    """A first scan in this process freezes what it built: let the collector have it back afterwards."""
    yield
    gc.unfreeze()


def expected_summary(folder: Path, *, watching: bool = True) -> list[str]:
    """What the service says of `folder`, built here without any host."""
    service = NotebookService(ServiceSettings(paths=(str(folder),), cache=False, watch=watching))
    try:
        return service.start()
    finally:
        service.close()


def assert_indexed(cache: Path, folder: Path) -> None:
    index = NotebookIndex(cache, folder)
    try:
        assert {"a.ipynb", "b.ipynb"} <= set(index.entries())
    finally:
        index.close()


def said_once(lines: list[str], summary: list[str]) -> None:
    """The summary comes out whole, in order, and none of its lines is said again."""
    spoken = [line.removeprefix("mcp-notebook: ") for line in lines]
    start = spoken.index(summary[0])
    assert spoken[start : start + len(summary)] == summary, spoken
    for line in summary:
        assert spoken.count(line) == 1, (line, spoken)


def python_running(code: str) -> list[str]:
    """A Python process that runs `code`, then prints how many objects the first scan left frozen.

    The notebooks were written a moment ago, and the index leaves out what changed in the last two seconds
    (a save may still be under way): here it stores them at once.
    """
    fresh = "import mcp_notebook.sources.index as index\nindex.RACY_SECONDS = 0\n"
    tail = f"\nprint('{FREEZE_LINE}' + str(gc.get_freeze_count()))"
    return [sys.executable, "-c", fresh + textwrap.dedent(code) + tail]


def freeze_count(stderr: str) -> int:
    (line,) = [line for line in stderr.splitlines() if line.startswith(FREEZE_LINE)]
    return int(line.removeprefix(FREEZE_LINE))


def test_serve_over_stdio(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    code = f"""
        import gc, sys
        from mcp_notebook.cli import main
        code = main(["serve", {str(folder)!r}, "--cache-dir", {str(cache)!r}])
        sys.stdout = sys.stderr
    """
    done = subprocess.run(
        python_running(code), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DEADLINE
    )
    assert done.returncode == 0, done.stderr
    said_once(done.stderr.splitlines(), expected_summary(folder))
    assert freeze_count(done.stderr + done.stdout) > 0
    assert_indexed(cache, folder)


def _serve_until(argv: list[str], until: str, env: dict[str, str]) -> tuple[str, str]:
    """Start a server process, wait for the stderr line containing `until`, stop it with SIGTERM, return its output."""
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stderr is not None
    seen: list[str] = []
    try:
        for line in process.stderr:
            seen.append(line)
            if until in line:
                break
        else:
            raise AssertionError(f"the server exited before saying {until!r}: {''.join(seen)}")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return out, "".join(seen) + err


def test_serve_over_http(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    code = f"""
        import gc, sys
        from mcp_notebook.cli import main
        main(["serve", {str(folder)!r}, "--http", "--cache-dir", {str(cache)!r}])
        sys.stdout = sys.stderr
    """
    out, err = _serve_until(python_running(code), "serving over Streamable HTTP", dict(os.environ))
    said_once(err.splitlines(), expected_summary(folder))
    assert freeze_count(err + out) > 0
    assert_indexed(cache, folder)


def test_the_asgi_factory_under_uvicorn(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "MCP_NOTEBOOK_PATHS": str(folder), "MCP_NOTEBOOK_CACHE_DIR": str(cache)}
    code = """
        import gc, signal, sys, uvicorn
        signal.signal(signal.SIGTERM, lambda *_: None)  # uvicorn raises it again once drained, as `serve` expects
        uvicorn.run("mcp_notebook.asgi:create_app", factory=True, host="127.0.0.1", port=0, log_level="info")
        sys.stdout = sys.stderr
    """
    out, err = _serve_until(python_running(code), "Application startup complete", env)
    said_once(err.splitlines(), expected_summary(folder))
    assert freeze_count(err + out) > 0
    assert_indexed(cache, folder)


async def test_the_jupyter_server_host(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_notebook.sources.index as index
    from mcp_notebook.jupyter.host import NotebookHost

    monkeypatch.setattr(index, "RACY_SECONDS", 0)  # as above: store the notebooks written a moment ago
    cache = tmp_path / "cache"
    gc.unfreeze()
    host = NotebookHost(ServiceSettings(paths=(str(folder),), cache_dir=str(cache)))
    ready: list[NotebookHost] = []
    host.start(ready.append)
    assert await host.wait_ready() is None
    try:
        assert ready == [host]
        assert gc.get_freeze_count() > 0
        assert host.service.summary is not None and host.service.summary.lines == expected_summary(folder)
    finally:
        await host.stop()
    assert_indexed(cache, folder)
