"""Files embedded by path and cells served as resources, and every way out of the served folder refused."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from notebook_dicts import PNG_1X1, code, display, markdown, notebook, write

from mcp_notebook.exceptions import PathOutsideRootError, ResourceError
from mcp_notebook.models import EmbeddedResource, PromptSpec, ResourceInfo
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.rendering import render_prompt
from mcp_notebook.sources.folder import NotebookFolderSource


@pytest.fixture
def root(tmp_path: Path) -> Path:
    served = tmp_path / "served"
    (served / "data").mkdir(parents=True)
    (served / "data" / "table.csv").write_text("a,b\n1,2\n")
    (served / "data" / "logo.png").write_bytes(base64.b64decode(PNG_1X1))
    (served / "style.md").write_text("Be brief.\n")
    (tmp_path / "secret.txt").write_text("outside")
    cells = [
        markdown("Use the data.", {"prompt": "fixed", "resource": {"path": "../data/table.csv"}}),
        markdown("Any file.", {"prompt": "any", "resource": {"path": "{{file}}"}}),
        markdown("A data file.", {"prompt": "datafile", "resource": {"path": "../data/{{name}}"}}),
        code("plot()", {"prompt": "plot"}, outputs=[display({"image/png": PNG_1X1, "text/plain": "<Figure>"})]),
        markdown("not published"),
    ]
    write(served / "nbs" / "nb.ipynb", notebook(*cells))
    write(served / "top.ipynb", notebook(markdown("Style.", {"prompt": "style", "resource": {"path": "style.md"}})))
    return served


@pytest.fixture
def registry() -> PromptRegistry:
    return PromptRegistry()


@pytest.fixture
def source(root: Path, registry: PromptRegistry) -> NotebookFolderSource:
    source = NotebookFolderSource([root], registry)
    source.scan()
    return source


@pytest.fixture
def spec(source: NotebookFolderSource, registry: PromptRegistry) -> Callable[[str], PromptSpec]:
    def find(name: str) -> PromptSpec:
        found = registry.snapshot().get(name)
        assert found is not None
        return found

    return find


# -- read_file ----------------------------------------------------------------------------------


def test_a_file_is_read_relative_to_the_notebook(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec]
) -> None:
    assert source.read_file(spec("fixed"), "../data/table.csv") == b"a,b\n1,2\n"


def test_rendering_embeds_the_file_through_the_source(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec]
) -> None:
    rendered = render_prompt(spec("datafile"), {"name": "table.csv"}, read_file=source.read_file)
    assert rendered.messages[1].content == EmbeddedResource(
        uri="notebook:///data/table.csv", mime_type="text/csv", text="a,b\n1,2\n"
    )


def test_a_binary_file_is_embedded_as_base64_through_the_source(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec]
) -> None:
    rendered = render_prompt(spec("datafile"), {"name": "logo.png"}, read_file=source.read_file)
    content = rendered.messages[1].content
    assert isinstance(content, EmbeddedResource)
    assert (content.mime_type, content.blob) == ("image/png", PNG_1X1)


@pytest.mark.parametrize("path", ["../../secret.txt", "../../served/../secret.txt", "a/../../../secret.txt"])
def test_a_dot_dot_escape_from_the_served_folder_is_refused(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], path: str
) -> None:
    with pytest.raises(PathOutsideRootError) as caught:
        source.read_file(spec("any"), path)
    assert caught.value.path == path
    assert "outside the served folder" in str(caught.value)


@pytest.mark.parametrize("path", ["/etc/passwd", "C:/Windows/win.ini"])
def test_an_absolute_path_is_refused(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], path: str
) -> None:
    with pytest.raises(PathOutsideRootError):
        source.read_file(spec("any"), path)


def test_an_absolute_path_inside_the_root_is_refused_too(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path
) -> None:
    with pytest.raises(PathOutsideRootError):
        source.read_file(spec("any"), str(root / "style.md"))


def test_a_symlink_leading_outside_the_root_is_refused(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path
) -> None:
    (root / "nbs" / "escape.txt").symlink_to(root.parent / "secret.txt")
    (root / "nbs" / "outside").symlink_to(root.parent, target_is_directory=True)
    for path in ("escape.txt", "outside/secret.txt"):
        with pytest.raises(PathOutsideRootError):
            source.read_file(spec("any"), path)


def test_a_symlink_that_stays_inside_the_root_is_followed(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path
) -> None:
    (root / "nbs" / "style-link.md").symlink_to(root / "style.md")
    assert source.read_file(spec("any"), "style-link.md") == b"Be brief.\n"


def test_a_missing_file_is_a_resource_error(source: NotebookFolderSource, spec: Callable[[str], PromptSpec]) -> None:
    with pytest.raises(ResourceError, match=r"No file 'nbs/missing\.txt'") as caught:
        source.read_file(spec("any"), "missing.txt")
    assert not isinstance(caught.value, PathOutsideRootError)


def test_a_folder_is_not_a_file(source: NotebookFolderSource, spec: Callable[[str], PromptSpec], root: Path) -> None:
    (root / "data" / "sub").mkdir()
    with pytest.raises(ResourceError, match="No file"):
        source.read_file(spec("datafile"), "../data/sub")
    with pytest.raises(PathOutsideRootError):  # `{{file}}` in nbs/ selects below nbs/ only
        source.read_file(spec("any"), "../data")


def test_a_prompt_from_elsewhere_may_not_read_files(source: NotebookFolderSource) -> None:
    stranger = PromptSpec(name="x", origin="kernel")
    with pytest.raises(ResourceError, match="does not come from a notebook served here"):
        source.read_file(stranger, "style.md")


# -- list_resources / read_resource -------------------------------------------------------------


def test_every_published_cell_and_each_fixed_embedded_file_is_listed(source: NotebookFolderSource) -> None:
    infos = source.list_resources()
    cells = [i for i in infos if "#cell=" in i.uri]
    assert len(cells) == 5
    first = cells[0]
    assert first.uri.startswith("notebook:///nbs/nb.ipynb#cell=")
    assert (first.title, first.mime_type, first.description) == (
        "Cell 1 of nbs/nb.ipynb",
        "text/markdown",
        "Part of the prompt fixed",
    )
    files = [i for i in infos if "#cell=" not in i.uri]
    assert files == [
        ResourceInfo(uri="notebook:///data/table.csv", name="data/table.csv", mime_type="text/csv", size=8),
        ResourceInfo(uri="notebook:///style.md", name="style.md", mime_type="text/markdown", size=10),
    ]


def test_a_listed_cell_reads_back_as_its_source(source: NotebookFolderSource) -> None:
    info = source.list_resources()[0]
    assert source.read_resource(info.uri) == [
        EmbeddedResource(uri=info.uri, mime_type="text/markdown", text="Use the data.")
    ]


def test_a_code_cell_reads_back_as_source_and_outputs(source: NotebookFolderSource) -> None:
    info = next(i for i in source.list_resources() if i.mime_type == "text/x-python")
    assert source.read_resource(info.uri) == [
        EmbeddedResource(uri=info.uri, mime_type="text/x-python", text="plot()"),
        EmbeddedResource(uri=info.uri, mime_type="image/png", blob=PNG_1X1),
    ]


def test_an_embedded_file_is_readable_as_a_resource(source: NotebookFolderSource) -> None:
    assert source.read_resource("notebook:///style.md") == [
        EmbeddedResource(uri="notebook:///style.md", mime_type="text/markdown", text="Be brief.\n")
    ]


def test_a_file_matching_a_placeholder_path_is_readable(source: NotebookFolderSource) -> None:
    contents = source.read_resource("notebook:///data/logo.png")
    assert contents == [EmbeddedResource(uri="notebook:///data/logo.png", mime_type="image/png", blob=PNG_1X1)]


def test_the_uri_of_a_rendered_embedded_file_can_be_read_back(
    source: NotebookFolderSource, spec: Callable[[str], PromptSpec]
) -> None:
    rendered = render_prompt(spec("fixed"), {}, read_file=source.read_file)
    embedded = rendered.messages[1].content
    assert isinstance(embedded, EmbeddedResource)
    assert source.read_resource(embedded.uri)[0].text == embedded.text


def test_a_file_no_prompt_embeds_is_refused(tmp_path: Path) -> None:
    (tmp_path / "private.txt").write_text("x")
    write(tmp_path / "nb.ipynb", notebook(markdown("x", {"prompt": "p", "resource": {"path": "data.csv"}})))
    source = NotebookFolderSource([tmp_path], PromptRegistry())
    source.scan()
    with pytest.raises(ResourceError, match=r"no served prompt embeds 'private\.txt'"):
        source.read_resource("notebook:///private.txt")


def test_a_cell_that_is_not_published_is_refused(source: NotebookFolderSource, root: Path) -> None:
    with pytest.raises(ResourceError, match="no published cell"):
        source.read_resource("notebook:///nbs/nb.ipynb#cell=5")


def test_a_whole_notebook_is_not_a_resource(source: NotebookFolderSource) -> None:
    with pytest.raises(ResourceError, match="name a cell"):
        source.read_resource("notebook:///nbs/nb.ipynb")


def test_a_cell_of_a_notebook_not_served_is_refused(source: NotebookFolderSource) -> None:
    with pytest.raises(ResourceError, match="not a served notebook"):
        source.read_resource("notebook:///other.ipynb#cell=1")


@pytest.mark.parametrize(
    "uri", ["notebook:///../secret.txt", "notebook:///data/../../secret.txt", "notebook:///%2E%2E/secret.txt"]
)
def test_a_uri_escaping_the_root_is_refused(source: NotebookFolderSource, uri: str) -> None:
    with pytest.raises(PathOutsideRootError):
        source.read_resource(uri)


def test_a_symlinked_file_leading_outside_is_refused_as_a_resource(source: NotebookFolderSource, root: Path) -> None:
    (root / "data" / "sneaky.csv").symlink_to(root.parent / "secret.txt")
    with pytest.raises(PathOutsideRootError):
        source.read_resource("notebook:///data/sneaky.csv")


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("file:///etc/passwd", "served resources start with notebook:///"),
        ("notebook://host/style.md", "expected notebook:///<path>"),
        ("notebook:///style.md#line=3", "a cell is named as #cell=<id>"),
        ("notebook:///", "empty path"),
    ],
)
def test_other_uris_are_refused_with_a_clear_message(source: NotebookFolderSource, uri: str, message: str) -> None:
    with pytest.raises(ResourceError, match=message):
        source.read_resource(uri)
