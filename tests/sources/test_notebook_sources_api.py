"""The public surface of the notebook sources, pinned so it only changes on purpose."""

from __future__ import annotations

import importlib

import pytest

SURFACE = {
    "mcp_notebook.sources.cells": [
        "DESCRIPTION_LIMIT",
        "NOTEBOOK_META_KEY",
        "NotebookPrompts",
        "PublishedCell",
        "notebook_language",
        "prompts_from_notebook",
    ],
    "mcp_notebook.sources.embeds": ["EmbedRule", "is_hidden_part"],
    "mcp_notebook.sources.folder": ["MAX_FILE_BYTES", "MAX_NOTEBOOK_BYTES", "NotebookFolderSource"],
    "mcp_notebook.sources.finding": [
        "Listed",
        "Seen",
        "ServedPaths",
        "SwapBounds",
        "exists",
        "is_hidden",
        "is_notebook_name",
        "present",
    ],
    "mcp_notebook.sources.folder_resources": ["FolderResources", "MAX_FILE_BYTES", "Published"],
    "mcp_notebook.sources.reloading": ["Refreshable", "Reloadable", "Reloader"],
    "mcp_notebook.sources.skills": ["SkillCatalog"],
    "mcp_notebook.sources.notebook_skills": ["skills_of_notebook"],
    "mcp_notebook.sources.skill_format": [
        "MAX_SKILL_BYTES",
        "MAX_SKILL_FILES",
        "SEGMENT",
        "SkillFormatError",
        "digest_of_bytes",
        "mime_type_of",
        "parse_skill_md",
        "split_frontmatter",
        "valid_skill_name",
    ],
    "mcp_notebook.sources.reader": ["MAX_NESTING", "exceeds_nesting", "parse_notebook"],
    "mcp_notebook.sources.sandbox": ["FileRefusal", "SandboxedFile", "look_inside", "read_inside", "resolve_inside"],
    "mcp_notebook.sources.index": [
        "CACHE_DIR_ENV",
        "Entry",
        "FILE_NAME",
        "IdleTurns",
        "NotebookIndex",
        "SkillEntry",
        "Stamp",
        "body_bytes",
        "default_cache_dir",
        "format_tag",
        "settled",
        "stored_value",
    ],
    "mcp_notebook.sources.loading": [
        "MAX_NOTEBOOK_BYTES",
        "NotebookState",
        "build",
        "build_stored",
        "digest",
        "failure_reason",
        "read_notebook_inside",
    ],
    "mcp_notebook.sources.offload": ["BuildProcess", "MIN_BYTES", "Outcome"],
    "mcp_notebook.sources.parallel": [
        "Built",
        "MIN_NOTEBOOKS",
        "SharedBuild",
        "can_fork",
        "worker_count",
    ],
    "mcp_notebook.sources.stored": ["Interned", "StoredBody", "body_of", "listing_of", "restore"],
    "mcp_notebook.sources.summaries": ["DESCRIPTION_LIMIT", "readable", "to_description", "to_title"],
    "mcp_notebook.sources.uris": [
        "NOTEBOOK_URI_SCHEME",
        "NotebookLocation",
        "is_absolute_path",
        "normalize_relative_path",
        "parse_notebook_uri",
        "to_cell_uri",
        "to_file_uri",
        "to_file_uri_template",
    ],
    "mcp_notebook.sources.watch": [
        "DEBOUNCE_MS",
        "FolderWatch",
        "ReadySignal",
        "STEP_MS",
        "symlinks_on_the_way",
        "watch_paths",
    ],
    "mcp_notebook.sources.polling": [
        "DEFAULT_POLL_SECONDS",
        "Look",
        "SETTLE_LOOKS",
        "blind_file_system",
        "changes_between",
        "file_system_type",
        "look",
        "mount_table",
        "poll_paths",
    ],
}


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_the_public_surface_of_each_notebook_source_module_is_pinned(module: str) -> None:
    exported = importlib.import_module(module).__all__
    assert sorted(exported) == SURFACE[module]
    assert all(hasattr(importlib.import_module(module), name) for name in exported)
