"""Fixtures of the protocol tests (the sample prompts live in `protocol_samples`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from protocol_samples import sample_registry

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources import index as index_module


@pytest.fixture
def registry() -> PromptRegistry:
    """`rich` plus seven simple prompts (`p0`…`p6`), in two notebooks."""
    return sample_registry()


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """A first scan in this process freezes what it built: the collector has it back after the test."""
    yield
    gc.unfreeze()


@pytest.fixture
def settled_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a test has just written are "racy" (changed within the last two seconds): neither kept by their stamp
    nor stored. With this fixture they count as settled (a test of the rule itself sets it back)."""
    monkeypatch.setattr(index_module, "RACY_SECONDS", -1.0)
