"""Installing the package enables the extension; `jupyter server extension disable mcp_notebook` turns it off.

An editable install copies no data files, so this builds the wheel and
installs it into a fresh environment (its dependencies borrowed from the test
environment), then asks Jupyter itself, as a user would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from e2e_processes import ACCEPT, initialize_params, write_corpus
from jupyter_harness import DEADLINE, REPO, jupyter_env

pytestmark = pytest.mark.slow

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python environment with the built wheel installed (not editable); returns its interpreter."""
    work = tmp_path_factory.mktemp("installed")
    wheels = work / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    env = work / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=DEADLINE)
    python = env / "bin" / "python"
    wheel = next(wheels.glob("mcp_notebook-*.whl"))
    # pip installs into that environment (`--python`), which sees nothing installed yet: the test
    # environment's own (editable) installation is never touched.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # Then its dependencies come from the test environment, after the environment's own packages.
    (site / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    where = subprocess.run(
        [str(python), "-c", "import mcp_notebook; print(mcp_notebook.__file__)"],
        capture_output=True,
        text=True,
        cwd=work,  # not the checkout, whose mcp_notebook/ would come first
    )
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout + where.stderr
    return python


def jupyter(python: Path, home: Path, *args: str) -> str:
    env = jupyter_env(home)
    del env["JUPYTER_CONFIG_PATH"]  # only what the installation itself put in place
    done = subprocess.run(
        [str(python), "-m", "jupyter_server", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return ANSI.sub("", done.stdout + done.stderr)


def listing_of(output: str, config_dir: Path) -> list[str]:
    """The lines `jupyter server extension list` prints under `config_dir`."""
    section = output.split(f"Config dir: {config_dir}", 1)[1].split("Config dir:", 1)[0]
    return [line.strip() for line in section.splitlines() if line.strip()]


@pytest.fixture
def served_folder(tmp_path: Path) -> Iterator[Path]:
    write_corpus(tmp_path / "notebooks")
    yield tmp_path / "notebooks"


def mcp_status(python: Path, home: Path, root: Path) -> tuple[int, str]:
    """Start the installed environment's Jupyter server, POST an initialize to /mcp, stop it."""
    env = jupyter_env(home)
    del env["JUPYTER_CONFIG_PATH"]
    argv = [str(python), "-m", "jupyter_server", "--no-browser", "--ip=127.0.0.1", "--port=0", "--port-retries=0"]
    argv += [f"--ServerApp.root_dir={root}", "--IdentityProvider.token=t0ken", "--allow-root"]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=home)
    seen: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            match = re.search(r"(http://127\.0\.0\.1:\d+/)\?token=", line)
            if match:
                break
        else:
            raise AssertionError("the server did not start:\n" + "".join(seen))
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}
        headers = {"Authorization": "token t0ken", "Content-Type": "application/json", "Accept": ACCEPT}
        response = httpx2.post(f"{match.group(1)}mcp", json=body, headers=headers, timeout=DEADLINE)
        return response.status_code, "".join(seen)
    finally:
        process.terminate()
        process.communicate(timeout=DEADLINE)


def test_the_wheel_installs_the_file_that_enables_the_extension(installed: Path) -> None:
    prefix = installed.parent.parent
    enabling = prefix / "etc/jupyter/jupyter_server_config.d/mcp_notebook.json"
    assert json.loads(enabling.read_text(encoding="utf-8")) == {
        "ServerApp": {"jpserver_extensions": {"mcp_notebook": True}}
    }
    assert enabling.read_bytes() == (REPO / "jupyter-config/jupyter_server_config.d/mcp_notebook.json").read_bytes()


@pytest.mark.parametrize(("topic", "page"), [("format", "notebook-format.md"), ("deployment", "deployment.md")])
def test_the_wheel_carries_the_guides_hints_point_to(installed: Path, tmp_path: Path, topic: str, page: str) -> None:
    """`mcp-notebook help TOPIC` where there is no checkout: the installed package prints its docs page."""
    done = subprocess.run(
        [str(installed), "-m", "mcp_notebook", "help", topic],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the checkout
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (REPO / "docs" / page).read_text(encoding="utf-8")


def test_installed_it_is_listed_on_and_disable_turns_it_off(
    installed: Path, tmp_path: Path, served_folder: Path
) -> None:
    prefix_config = installed.parent.parent / "etc" / "jupyter"
    home = tmp_path / "home"

    listed = listing_of(jupyter(installed, home, "extension", "list"), prefix_config)
    assert "mcp_notebook enabled" in listed
    assert any(line.startswith("mcp_notebook ") and line.endswith(" OK") for line in listed), listed
    status, log = mcp_status(installed, home, served_folder)
    assert status == 200, log
    assert "mcp_notebook | extension was successfully loaded." in log

    jupyter(installed, home, "extension", "disable", "mcp_notebook")
    everything = jupyter(installed, home, "extension", "list")
    assert "mcp_notebook disabled" in everything
    status, log = mcp_status(installed, home, served_folder)
    assert status == 404, log
    assert "MCP prompts served at" not in log
