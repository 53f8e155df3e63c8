"""Widget forms for MCP prompts: `PromptForm`, `PromptPicker`, and forms for a server's input requests."""

from __future__ import annotations

from .fields import ArgumentField
from .input_form import InputRequestForm
from .picker import PromptPicker
from .prompt_form import PromptForm, create_form_input_handler, current_form
from .services import PromptService, TaskRunner
from .suggestions import SuggestionFetcher

__all__ = [
    "ArgumentField",
    "InputRequestForm",
    "PromptForm",
    "PromptPicker",
    "PromptService",
    "SuggestionFetcher",
    "TaskRunner",
    "create_form_input_handler",
    "current_form",
]
