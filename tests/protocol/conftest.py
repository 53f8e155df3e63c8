"""Fixtures of the protocol tests (the sample prompts live in `protocol_samples`)."""

from __future__ import annotations

import pytest
from protocol_samples import sample_registry

from mcp_notebook.registry import PromptRegistry


@pytest.fixture
def registry() -> PromptRegistry:
    """`rich` plus seven simple prompts (`p0`…`p6`), in two notebooks."""
    return sample_registry()
