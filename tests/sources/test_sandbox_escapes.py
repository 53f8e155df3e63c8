"""Every way a templated embedded path or a resource URI could read what it must not, refused, races included.

The served folder holds secrets a value must never reach (`.env`, `.git/config`,
a note beside the template's folder, another notebook) and symlinks in and out
of it; a file outside it holds `OUTSIDE`. The template `data/{{f}}` may only
select regular, visible, non-notebook files below `data/`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.exceptions import (
    EmbeddedFileArgumentError,
    MCPNotebookError,
    PathOutsideRootError,
    ResourceError,
)
from mcp_notebook.models import PromptSpec
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources.folder import NotebookFolderSource

OUTSIDE = "OUTSIDE-SECRET"
INSIDE_SECRETS = ("ENV-SECRET", "GIT-SECRET", "NOTES-SECRET", "HIDDEN-SECRET", "NOTEBOOK-SECRET")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE)
    served = tmp_path / "served"
    (served / ".git").mkdir(parents=True)
    (served / ".env").write_text("ENV-SECRET")
    (served / ".git" / "config").write_text("GIT-SECRET")
    (served / "notes.txt").write_text("NOTES-SECRET")
    data = served / "data"
    (data / "sub" / ".secret").mkdir(parents=True)
    (data / ".git").mkdir()
    (data / "ok.txt").write_text("ok")
    (data / "sub" / "deep.txt").write_text("deep")
    (data / ".hidden").write_text("HIDDEN-SECRET")
    (data / ".git" / "config").write_text("HIDDEN-SECRET")
    (data / "sub" / ".secret" / "x.txt").write_text("HIDDEN-SECRET")
    (data / "link_out").symlink_to(outside / "secret.txt")
    (data / "dirlink_out").symlink_to(outside, target_is_directory=True)
    (data / "link_to_env").symlink_to(served / ".env")
    (data / "link_to_notebook").symlink_to(served / "nb.ipynb")
    (data / "link_in").symlink_to(data / "ok.txt")
    (data / "loop").symlink_to(data / "loop")
    (data / "dangling").symlink_to(data / "nowhere")
    os.mkfifo(data / "fifo.txt")
    write(data / "nb2.ipynb", notebook(markdown("NOTEBOOK-SECRET")))
    cells = [
        markdown("A data file.", {"prompt": "datafile", "resource": {"path": "data/{{f}}"}}),
        markdown("A text file.", {"prompt": "textfile", "resource": {"path": "data/{{name}}.txt"}}),
    ]
    write(served / "nb.ipynb", notebook(*cells))
    return served


@pytest.fixture
def registry() -> PromptRegistry:
    return PromptRegistry()


@pytest.fixture
def source(root: Path, registry: PromptRegistry, monkeypatch: pytest.MonkeyPatch) -> Iterator[NotebookFolderSource]:
    monkeypatch.chdir(root / "data")  # a socket's path must be short: bind it relative
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind("sock.txt")
        source = NotebookFolderSource([root], registry)
        source.scan()
        yield source


@pytest.fixture
def spec(registry: PromptRegistry, source: NotebookFolderSource) -> Callable[[str], PromptSpec]:
    def find(name: str) -> PromptSpec:
        found = registry.snapshot().get(name)
        assert found is not None
        return found

    return find


TRAVERSALS = ["../.env", "../.git/config", "../notes.txt", "../../outside/secret.txt", "..", ".", ""]
TRAVERSALS += ["sub/../../.env", "./../.env", "sub/../../notes.txt", "ok.txt/../../.env", "../data/../.env"]
TRAVERSALS += ["../" * depth + "outside/secret.txt" for depth in range(2, 6)]
ENCODED = ["%2e%2e/.env", "..%2f.env", "%2e%2e%2fnotes.txt", "%2E%2E/%2E%2E/outside/secret.txt", "..%5c.env"]
ABSOLUTE = ["/etc/passwd", "//etc/passwd", "/../.env", "C:/x", "\\\\server\\share\\x"]
BACKSLASHES = ["..\\.env", "..\\..\\outside\\secret.txt", "sub\\..\\..\\.env", "ok.txt\\..\\..\\.env"]
NULS = ["ok.txt\x00", "\x00../.env", "../.env\x00.txt", "ok\x00.txt"]
HIDDEN = [".hidden", ".git/config", "sub/.secret/x.txt", "sub/../.hidden", "./.hidden"]
NOTEBOOKS = ["nb2.ipynb", "NB2.IPYNB", "../nb.ipynb", "link_to_notebook"]
SYMLINKS_OUT = ["link_out", "dirlink_out/secret.txt", "link_to_env"]
UNREADABLE = ["loop", "dangling", "fifo.txt", "sock.txt", "missing.txt", "sub", "a" * 5000, "a/" * 3000 + "x"]
REFUSED = [*TRAVERSALS, *ENCODED, *ABSOLUTE, *BACKSLASHES, *NULS, *HIDDEN, *NOTEBOOKS, *SYMLINKS_OUT, *UNREADABLE]
ALLOWED = {"ok.txt": b"ok", "sub/deep.txt": b"deep", "link_in": b"ok"}


def _assert_refused_cleanly(call: Callable[[], object], root: Path) -> ResourceError:
    """`call` raises one of our resource errors, whose message names no server path and leaks no secret."""
    try:
        result = call()
    except ResourceError as error:
        message = str(error)
        assert str(root) not in message and str(root.parent) not in message, message
        assert OUTSIDE not in message and not any(secret in message for secret in INSIDE_SECRETS), message
        return error
    raise AssertionError(f"read {result!r}")


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_a_value_never_selects_a_file_outside_the_templates_folder(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path, value: str
) -> None:
    prompt = spec("datafile")
    _assert_refused_cleanly(lambda: render_prompt(prompt, {"f": value}, read_file=source.read_file), root)


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_a_value_with_a_suffix_is_held_to_the_same_folder(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path, value: str
) -> None:
    prompt = spec("textfile")
    _assert_refused_cleanly(lambda: render_prompt(prompt, {"name": value}, read_file=source.read_file), root)


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_a_uri_never_reads_what_a_value_may_not_select(source: NotebookFolderSource, root: Path, value: str) -> None:
    for uri in (f"notebook:///data/{quote(value, safe='/')}", f"notebook:///data/{quote(value, safe='')}"):
        _assert_refused_cleanly(lambda: source.read_resource(uri), root)  # noqa: B023 - called at once


@pytest.mark.parametrize("value", UNREADABLE + NULS, ids=repr)
def test_a_value_naming_no_readable_file_is_a_bad_argument(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path, value: str
) -> None:
    error = _assert_refused_cleanly(lambda: source.read_file(spec("datafile"), f"data/{value}"), root)
    # Both are -32602 on prompts/get (bad input), never an internal error.
    assert isinstance(error, EmbeddedFileArgumentError | PathOutsideRootError), type(error)


@pytest.mark.parametrize(("value", "content"), sorted(ALLOWED.items()))
def test_a_value_selects_a_visible_file_below_the_templates_folder(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], value: str, content: bytes
) -> None:
    assert source.read_file(spec("datafile"), f"data/{value}") == content
    assert source.read_resource(f"notebook:///data/{value}")[0].text == content.decode()


def test_hidden_files_and_notebooks_stay_readable_by_a_fixed_path(tmp_path: Path) -> None:
    # The notebook's author names these by hand: only a value is held to the template's folder.
    (tmp_path / ".style").write_text("fixed")
    write(tmp_path / "nb.ipynb", notebook(markdown("x", {"prompt": "p", "resource": {"path": ".style"}})))
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    prompt = registry.snapshot().get("p")
    assert prompt is not None
    assert source.read_file(prompt, ".style") == b"fixed"


# -- notebooks that are not what they seem --------------------------------------------------------------------------


def test_a_notebook_symlinked_from_outside_is_refused_with_a_warning(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "foreign.ipynb", notebook(markdown(OUTSIDE, {"prompt": "foreign"})))
    served = tmp_path / "served"
    write(served / "good.ipynb", notebook(markdown("good", {"prompt": "good"})))
    (served / "foreign.ipynb").symlink_to(outside)
    (served / "sub").mkdir()
    (served / "sub" / "linked").symlink_to(outside.parent, target_is_directory=True)
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    assert [p.name for p in registry.snapshot().prompts] == ["good"]
    assert "outside the served folder" in source.errors["foreign.ipynb"]
    assert any("foreign.ipynb" in warning for warning in registry.snapshot().warnings)
    for uri in ("notebook:///foreign.ipynb#cell=1", "notebook:///sub/linked/foreign.ipynb#cell=1"):
        _assert_refused_cleanly(lambda: source.read_resource(uri), served)  # noqa: B023 - called at once


def test_a_notebook_symlinked_from_inside_is_served(tmp_path: Path) -> None:
    write(tmp_path / "real" / "nb.ipynb", notebook(markdown("x", {"prompt": "linked"})))
    (tmp_path / "alias.ipynb").symlink_to(tmp_path / "real" / "nb.ipynb")
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    assert len(registry.snapshot().prompts) == 2
    assert not source.errors


# -- the swap race --------------------------------------------------------------------------------------------------


class Flipper:
    """A thread that keeps swapping a path between a real thing inside and a symlink leading outside."""

    def __init__(self, flip: Callable[[bool], None]) -> None:
        self.flips = 0
        self._flip = flip
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._flip(self.flips % 2 == 0)
            self.flips += 1

    def __enter__(self) -> Flipper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _flip_folder(data: Path, outside: Path) -> Callable[[bool], None]:
    """`data/sub` is a real folder, then (renamed away) a symlink to the folder outside, and back."""

    def flip(to_outside: bool) -> None:
        if to_outside:
            os.rename(data / "sub", data / "sub.real")
            os.symlink(outside, data / "sub")
        else:
            os.unlink(data / "sub")
            os.rename(data / "sub.real", data / "sub")

    return flip


def _flip_file(data: Path, outside: Path) -> Callable[[bool], None]:
    """`data/sub/deep.txt` is atomically replaced by a symlink to the outside file, then by the real file again."""
    keep, spare = data / "deep.keep", data / "spare"
    os.link(data / "sub" / "deep.txt", keep)

    def flip(to_outside: bool) -> None:
        if to_outside:
            spare.symlink_to(outside / "deep.txt")
        else:
            os.link(keep, spare)
        os.replace(spare, data / "sub" / "deep.txt")

    return flip


@pytest.mark.parametrize("flipper", [_flip_folder, _flip_file], ids=["folder", "file"])
def test_no_read_escapes_while_a_symlink_is_swapped_for_seconds(
    source: NotebookFolderSource,
    spec: Callable[[str], PromptSpec],
    root: Path,
    flipper: Callable[[Path, Path], Callable[[bool], None]],
) -> None:
    prompt = spec("datafile")
    outside = root.parent / "outside"
    (outside / "deep.txt").write_text(OUTSIDE)
    reads = {"inside": 0, "refused": 0, "escaped": 0}
    deadline = time.monotonic() + 3.0
    with Flipper(flipper(root / "data", outside)) as flips:
        while time.monotonic() < deadline:
            for read in (
                lambda: source.read_file(prompt, "data/sub/deep.txt"),
                lambda: (source.read_resource("notebook:///data/sub/deep.txt")[0].text or "").encode(),
            ):
                try:
                    data = read()
                except MCPNotebookError:
                    reads["refused"] += 1
                    continue
                reads["escaped" if OUTSIDE.encode() in data else "inside"] += 1
    assert flips.flips > 100, flips.flips
    assert reads["inside"] > 0, reads
    assert reads["escaped"] == 0, reads


def test_no_notebook_from_outside_is_loaded_while_one_is_swapped_for_seconds(tmp_path: Path) -> None:
    foreign = write(tmp_path / "outside" / "foreign.ipynb", notebook(markdown(OUTSIDE, {"prompt": "foreign"})))
    served = tmp_path / "served"
    target = write(served / "nb.ipynb", notebook(markdown("home", {"prompt": "home"})))
    keep, spare = served / "nb.keep", served / "spare"
    os.link(target, keep)
    registry = PromptRegistry()
    published: list[set[str]] = []
    registry.add_listener(lambda snapshot: published.append({p.name for p in snapshot.prompts}))
    source = NotebookFolderSource([served], registry)

    def flip(to_outside: bool) -> None:
        if to_outside:
            spare.symlink_to(foreign)
        else:
            os.link(keep, spare)
        os.replace(spare, target)

    loads = 0
    deadline = time.monotonic() + 3.0
    with Flipper(flip) as flips:
        while time.monotonic() < deadline:
            source.reload([target])
            loads += 1
    assert flips.flips > 100 and loads > 100, (flips.flips, loads)
    assert any("home" in names for names in published)
    assert not any("foreign" in names for names in published), "a notebook outside the folder was served"
