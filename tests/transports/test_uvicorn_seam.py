"""Canaries for every private part of uvicorn this project reaches (`transports/uvicorn_seam.py`).

Each fails, naming the touchpoint, when a uvicorn release moves it; the pin in pyproject.toml names the
versions they pass with.
"""

from __future__ import annotations

import inspect
import tomllib
from pathlib import Path

import pytest
import uvicorn

from mcp_notebook.transports import uvicorn_seam
from mcp_notebook.transports.limits import GuardedHttpToolsProtocol, HttpLimits
from mcp_notebook.transports.ticks import SleepingServer

ROOT = Path(__file__).resolve().parents[2]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def test_the_installed_uvicorn_is_in_the_tested_range() -> None:
    lower, upper = (bound.lstrip("<>=") for bound in uvicorn_seam.TESTED_VERSIONS.split(","))
    assert _version(lower) <= _version(uvicorn.__version__) < _version(upper)


def test_the_pin_in_pyproject_is_the_tested_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pins = [entry for entry in project["project"]["dependencies"] if entry.startswith("uvicorn")]
    assert pins == [f"uvicorn{uvicorn_seam.TESTED_VERSIONS}"]


def test_every_touchpoint_is_where_it_was() -> None:
    assert uvicorn_seam.missing_touchpoints() == []


@pytest.mark.parametrize("name", ["on_url", "on_header", "on_headers_complete", "send_400_response"])
def test_the_guarded_protocol_extends_the_parser_callbacks_it_overrides_or_reads(name: str) -> None:
    assert callable(getattr(uvicorn_seam.HttpToolsProtocol, name))
    assert issubclass(GuardedHttpToolsProtocol, uvicorn_seam.HttpToolsProtocol)


def test_the_protocol_keeps_url_and_headers_where_the_absolute_form_rule_reads_them() -> None:
    source = inspect.getsource(uvicorn_seam.HttpToolsProtocol.on_message_begin)
    assert 'self.url = b""' in source
    assert '"headers": self.headers' in source


def test_the_main_loop_and_its_tick_are_what_sleeping_server_replaces() -> None:
    assert "main_loop" in vars(uvicorn.Server) and "on_tick" in vars(uvicorn.Server)
    assert "should_exit" in inspect.getsource(uvicorn.Server.main_loop)
    assert "main_loop" in vars(SleepingServer)


def test_the_process_manager_hooks_are_there() -> None:
    assert "init_processes" in vars(uvicorn_seam.Multiprocess)
    assert "processes" in inspect.getsource(uvicorn_seam.Multiprocess.__init__)


def test_the_factory_swaps_the_protocol_while_uvicorn_loads_it() -> None:
    limits = HttpLimits(header_timeout=3)
    bounded = GuardedHttpToolsProtocol.bounded_by(limits)
    swapped: list[bool] = []

    def factory() -> object:
        swapped.append(uvicorn_seam.protect_loading_config(bounded))

        async def app(scope: object, receive: object, send: object) -> None:
            return None

        return app

    config = uvicorn.Config(factory, factory=True, log_config=None)
    config.load()
    assert swapped == [True]
    assert config.http_protocol_class is bounded
    assert bounded.limits is limits and issubclass(bounded, GuardedHttpToolsProtocol)


def test_the_factory_leaves_an_h11_server_alone() -> None:
    swapped: list[bool] = []

    def factory() -> object:
        swapped.append(uvicorn_seam.protect_loading_config(GuardedHttpToolsProtocol))

        async def app(scope: object, receive: object, send: object) -> None:
            return None

        return app

    config = uvicorn.Config(factory, factory=True, http="h11", log_config=None)
    config.load()
    assert swapped == [False]
    assert config.http_protocol_class is not GuardedHttpToolsProtocol


def test_outside_uvicorn_nothing_is_swapped() -> None:
    assert uvicorn_seam.protect_loading_config(GuardedHttpToolsProtocol) is False
