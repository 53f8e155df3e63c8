"""A real JupyterHub on loopback: the dummy authenticator, the simple spawner, configurable-http-proxy from npm.

The proxy is installed by `.ci/hub-setup.sh` into `.tools/hub/` (or `$MCP_NOTEBOOK_TOOLS/hub`). When that script
could not reach the npm registry it leaves `.tools/hub-skip`, and only then does the JupyterHub test skip.
A test service with a known token creates users' tokens and starts their servers through the hub's REST API.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import socket
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import httpx2
import psutil
import pytest
from client_harness import stop_process
from jupyter_harness import BIN, CONFIG_PATH, DEADLINE, REPO, wait_for_log_line

__all__ = ["JupyterHub", "locate_proxy"]

TOOLS = Path(os.environ.get("MCP_NOTEBOOK_TOOLS", REPO / ".tools"))
PROXY = TOOLS / "hub/node_modules/.bin/configurable-http-proxy"
SKIP_MARKER = TOOLS / "hub-skip"


def locate_proxy() -> Path:
    """configurable-http-proxy; skips only when the setup script could not reach the npm registry."""
    if SKIP_MARKER.exists():
        pytest.skip(SKIP_MARKER.read_text(encoding="utf-8").strip() or "SKIP: npm registry unreachable")
    if not PROXY.exists():
        pytest.fail(f"configurable-http-proxy is not installed at {PROXY}: run .ci/hub-setup.sh")
    return PROXY


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


class JupyterHub:
    """`jupyterhub` with users `users`, each home under `homes`; `url` is the proxy's public URL, ending in '/'."""

    def __init__(self, work: Path, homes: Path, users: tuple[str, ...]) -> None:
        proxy = locate_proxy()
        self.homes = homes
        self.admin_token = secrets.token_hex(16)
        port, hub_port, api_port = _free_port(), _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{port}/"
        for user in users:
            # Each user's Jupyter config (under their HOME): only the extensions this test needs.
            config = homes / user / ".jupyter"
            config.mkdir(parents=True, exist_ok=True)
            others = ("jupyterlab", "jupyter_lsp", "notebook", "notebook_shim", "nbclassic", "jupyterlab_chat")
            off = {name: False for name in others}
            (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"jpserver_extensions": off}}))
        settings: dict[str, Any] = {
            "port": port,
            "hub_port": hub_port,
            "api_url": f"http://127.0.0.1:{api_port}",
            "proxy": str(proxy),
            "work": str(work),
            "homes": str(homes),
            "users": list(users),
            "token": self.admin_token,
            "singleuser": str(BIN / "jupyterhub-singleuser"),
            "config_path": str(CONFIG_PATH),
            "as_root": os.geteuid() == 0,
        }
        config_file = work / "jupyterhub_config.py"
        config_file.write_text(_HUB_CONFIG.format(settings=json.dumps(settings)), encoding="utf-8")
        env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "JPY_"))}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        self.process = subprocess.Popen(
            [str(BIN / "jupyterhub"), "-f", str(config_file)],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        assert self.process.stdout is not None
        threading.Thread(target=_pump, args=(self.process.stdout, self.lines), daemon=True).start()
        try:
            self.wait_for_line("JupyterHub is now running at")
        except BaseException:
            self.close()
            raise

    def wait_for_line(self, text: str, timeout: float = DEADLINE) -> str:
        return wait_for_log_line(
            self, lambda line: text in line, f"no hub log line with {text!r}", "jupyterhub", timeout
        )

    def api(self) -> httpx2.Client:
        """The hub's REST API as the test service (admin of users, servers and tokens)."""
        return httpx2.Client(
            base_url=f"{self.url}hub/api/", headers={"Authorization": f"token {self.admin_token}"}, timeout=DEADLINE
        )

    def token_for(self, user: str, scopes: list[str]) -> str:
        """A new API token of `user`'s, with `scopes` (what a user makes on the hub's token page)."""
        with self.api() as api:
            made = api.post(f"users/{user}/tokens", json={"scopes": scopes, "note": "mcp-notebook test"})
        assert made.status_code == 201, made.text
        token: str = made.json()["token"]
        return token

    def start_server(self, user: str) -> None:
        """Spawn `user`'s server and wait, on the hub's progress event stream, until it is ready."""
        with self.api() as api:
            started = api.post(f"users/{user}/server")
            assert started.status_code in (201, 202), started.text
            with api.stream("GET", f"users/{user}/server/progress") as events:
                for line in events.iter_lines():
                    if line.startswith("data:"):
                        event = json.loads(line[5:])
                        if event.get("ready"):
                            return
                        if event.get("failed"):
                            raise AssertionError(f"{user}'s server failed to start: {event}")
        raise AssertionError(f"{user}'s server did not become ready; hub log:\n" + "\n".join(self.seen))

    def close(self) -> None:
        try:
            children = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            children = []
        stop_process(self.process, timeout=DEADLINE)
        # The hub stops the proxy and the users' servers itself; anything it left behind is ended here.
        for child in children:
            if child.is_running():
                child.terminate()
        psutil.wait_procs([c for c in children if c.is_running()], timeout=DEADLINE)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> JupyterHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_HUB_CONFIG = """\
# Written by tests/jupyter_server/hub_harness.py: a loopback-only hub for one test run.
import json

settings = json.loads({settings!r})
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = settings["port"]
c.JupyterHub.public_url = "http://127.0.0.1:%d/" % settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.ConfigurableHTTPProxy.api_url = settings["api_url"]
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.pid_file = settings["work"] + "/proxy.pid"
c.JupyterHub.db_url = "sqlite:///" + settings["work"] + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = settings["work"] + "/jupyterhub_cookie_secret"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set(settings["users"])
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = settings["homes"] + "/{{username}}"
c.Spawner.cmd = [settings["singleuser"]]
c.Spawner.args = ["--allow-root"] if settings["as_root"] else []
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# What installing mcp-notebook does: enable the extension through its jupyter_server_config.d file.
c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": settings["config_path"], "PYTHONUNBUFFERED": "1"}}
c.JupyterHub.services = [{{"name": "mcp-test", "api_token": settings["token"]}}]
c.JupyterHub.load_roles = [
    {{"name": "mcp-test", "scopes": ["admin:users", "admin:servers", "tokens", "read:users"], "services": ["mcp-test"]}}
]
"""
