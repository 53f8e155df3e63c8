"""Importing a submodule of the MCP SDK without running its packages' `__init__` first.

`import mcp.server.lowlevel` runs `mcp/__init__.py` and `mcp/server/__init__.py`
before it, and those import the whole SDK: the client, `MCPServer`, the
CLI's dependencies, OAuth. `mcp-notebook serve` needs none of that to
answer its first request, and importing it is about a third of the
server's start-up. `defer_package_init(*SDK_PACKAGE_INITS)` registers
those packages as they are, without running their `__init__`, so that
importing a submodule imports only what that submodule needs.

Which packages are deferred is an SDK touchpoint, listed (and tested) in
`protocol/sdk_seam.py` with the others as `DEFERRED_PACKAGES`; it is defined
here, as `SDK_PACKAGE_INITS`, because importing the seam would run the very
`__init__`s this module defers.

Nothing is lost: the first time anything asks a deferred package for a
name its `__init__` defines (`from mcp import Client`, `mcp.server.MCPServer`,
`from mcp import *`), the `__init__` runs then, in full, into the same
module object, and the name is found as usual.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Final

__all__ = ["CLIENT_PACKAGE_INITS", "SDK_PACKAGE_INITS", "defer_package_init", "is_deferred"]

SDK_PACKAGE_INITS: Final = ("mcp", "mcp.server")
"""The SDK packages whose `__init__` imports the whole SDK (an SDK touchpoint: `protocol/sdk_seam.py`)."""

CLIENT_PACKAGE_INITS: Final = ("mcp.client",)
"""Deferred too where stdio servers are started before the SDK client is imported (`client.import_sdk`):
`mcp.client`'s `__init__` imports the client, and with it most of the SDK, before any transport."""

_lock = threading.RLock()


def is_deferred(module: ModuleType) -> bool:
    """Whether `module` is a package whose `__init__` has not run yet."""
    return isinstance(module.__dict__.get("__getattr__"), _Initializer)


class _Initializer:
    """A deferred package's module-level `__getattr__`: runs the real `__init__`, once, on the first missing name."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module

    def __call__(self, name: str) -> object:
        module = self._module
        if not name.startswith("__"):
            # `from mcp.server import stdio`, `mcp.types`: a submodule is imported on its own, as always.
            submodule = f"{module.__name__}.{name}"
            if submodule in sys.modules or importlib.util.find_spec(submodule) is not None:
                return importlib.import_module(submodule)
        with _lock:
            if module.__dict__.get("__getattr__") is self:
                del module.__dict__["__getattr__"]
                spec = module.__spec__
                assert spec is not None and spec.loader is not None
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    module.__dict__["__getattr__"] = self  # the next use tries again and raises the same way
                    raise
        try:
            return module.__dict__[name]
        except KeyError:
            # The real `__init__` may define its own `__getattr__` (lazy names, deprecations).
            fallback = module.__dict__.get("__getattr__")
            if callable(fallback) and fallback is not self:
                return fallback(name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None


def defer_package_init(*names: str) -> list[str]:
    """Register each package in `names` (parents first) without running its `__init__`; returns those deferred.

    A package that is already imported is left alone, and so is everything
    under it: deferring only ever applies to a fresh interpreter.
    """
    deferred: list[str] = []
    with _lock:
        for name in names:
            if name in sys.modules:
                continue
            parent_name, _, child = name.rpartition(".")
            parent = sys.modules.get(parent_name) if parent_name else None
            if parent_name and (parent is None or not is_deferred(parent)):
                continue
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None or spec.submodule_search_locations is None:
                continue
            module = importlib.util.module_from_spec(spec)
            module.__dict__["__getattr__"] = _Initializer(module)
            sys.modules[name] = module
            if parent is not None:
                setattr(parent, child, module)
            deferred.append(name)
    return deferred
