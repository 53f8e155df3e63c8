"""The public surface of the widget forms, pinned: it changes only on purpose."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "mcp_notebook.ipython.widgets": [
        "create_prompt_form",
        "create_prompt_picker",
        "form_command",
        "has_widget_frontend",
        "install_form_input_handler",
        "kernel_connect_line",
        "own_prompts_hint",
        "picker_command",
        "to_display_bundle",
        "to_get_code",
        "uninstall_form_input_handler",
    ],
    "mcp_notebook.ipython.forms": [
        "ArgumentField",
        "InputRequestForm",
        "PromptForm",
        "PromptPicker",
        "PromptService",
        "SuggestionFetcher",
        "TaskRunner",
        "create_form_input_handler",
        "current_form",
    ],
    "mcp_notebook.ipython.forms.combobox_script": ["COMBOBOX_SCRIPT"],
    "mcp_notebook.ipython.forms.error_text": ["ErrorText", "mentioned_arguments", "summarize_error"],
    "mcp_notebook.ipython.forms.fields": ["ArgumentField", "needs_multiline"],
    "mcp_notebook.ipython.forms.input_form": ["InputRequestForm", "SchemaField", "to_schema_fields"],
    "mcp_notebook.ipython.forms.picker": ["ListedPromptService", "PromptPicker", "matches_query"],
    "mcp_notebook.ipython.forms.picker_script": ["PICKER_SCRIPT"],
    "mcp_notebook.ipython.forms.prompt_form": [
        "PromptForm",
        "create_form_input_handler",
        "current_form",
        "javascript_output",
    ],
    "mcp_notebook.ipython.forms.services": ["MimeBundle", "PromptService", "RenderedPromptDisplay", "TaskRunner"],
    "mcp_notebook.ipython.forms.suggestions": ["DEFAULT_DEBOUNCE_SECONDS", "SuggestionFetcher"],
    "mcp_notebook.ipython.forms.terminal": [
        "SUGGESTIONS_SHOWN",
        "ask_arguments",
        "describe_prompts",
        "describe_suggestions",
    ],
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_each_widget_module_exports_exactly_its_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)

    assert sorted(module.__all__) == sorted(PUBLIC[module_name])
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []
