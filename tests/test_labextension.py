"""The prebuilt JupyterLab extension: committed in jupyterlab/labextension/, shipped in the wheel as data files,
and exactly what its TypeScript source builds to."""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "jupyterlab"
BUILD = SOURCE / "labextension"
SHARE = "share/jupyter/labextensions/mcp-notebook"
# The committed build stays small: production mode, no source maps.
SIZE_LIMIT = 150_000


def built_files() -> set[str]:
    return {str(path.relative_to(BUILD)) for path in BUILD.rglob("*") if path.is_file()}


def test_every_built_file_is_a_data_file_of_the_wheel_under_share_jupyter_labextensions() -> None:
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped: dict[str, str] = {}
    for target, patterns in data_files.items():
        for pattern in patterns:
            for found in glob.glob(pattern, root_dir=ROOT):
                shipped[found] = f"{target}/{Path(found).name}"
    for name in built_files():
        assert shipped.get(f"jupyterlab/labextension/{name}") == f"{SHARE}/{name}", name
    assert shipped["jupyterlab/install.json"] == f"{SHARE}/install.json"


def test_the_build_is_production_small_without_source_maps_and_loads_its_entry() -> None:
    files = built_files()
    assert not [name for name in files if name.endswith(".map")]
    assert sum((BUILD / name).stat().st_size for name in files) < SIZE_LIMIT
    package = json.loads((BUILD / "package.json").read_text())
    assert package["name"] == "mcp-notebook"
    assert (BUILD / package["jupyterlab"]["_build"]["load"]).is_file()
    assert "schemas/mcp-notebook/plugin.json" in files


def test_install_json_says_pip_installs_and_removes_it() -> None:
    install = json.loads((SOURCE / "install.json").read_text())
    assert install == {
        "packageManager": "python",
        "packageName": "mcp-notebook",
        "uninstallInstructions": install["uninstallInstructions"],
    }


def test_the_extension_version_is_the_package_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert json.loads((SOURCE / "package.json").read_text())["version"] == version
    assert json.loads((BUILD / "package.json").read_text())["version"] == version


def test_the_installed_extension_is_the_committed_build() -> None:
    """An editable install copies the build at install time: a stale copy would test an old extension."""
    installed = Path(sys.prefix) / SHARE
    if not installed.is_dir():
        pytest.skip(f"mcp-notebook is not installed into {sys.prefix} (pip install -e .)")
    assert {str(p.relative_to(installed)) for p in installed.rglob("*") if p.is_file()} == {
        *built_files(),
        "install.json",
    }, "reinstall: .venv/bin/pip install -e ."
    for name in built_files():
        assert (installed / name).read_bytes() == (BUILD / name).read_bytes(), name


@pytest.mark.slow
def test_the_committed_build_is_what_the_source_builds_to(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("no Node/npm: .ci/labextension-check.sh needs them to build the extension")
    out = tmp_path / "build"
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "labextension-check.sh"), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    said = done.stdout + done.stderr
    if "skipped:" in said:
        pytest.skip(said.strip())
    assert done.returncode == 0, said
    assert "is what the source builds to" in said
    rebuilt = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert rebuilt == built_files()
