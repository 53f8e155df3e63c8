"""The public surface of the server side, pinned: it changes only on purpose."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "mcp_notebook.protocol.server": ["CachePolicy", "HandshakeTrimmer", "PromptServer", "create_server"],
    "mcp_notebook.protocol.convert": [
        "ARGUMENT_DEFAULTS_META_KEY",
        "EntryFields",
        "from_mcp_annotations",
        "from_mcp_completion",
        "from_mcp_content",
        "from_mcp_get_prompt_result",
        "from_mcp_icon",
        "from_mcp_prompt",
        "from_mcp_prompt_argument",
        "from_mcp_prompt_message",
        "from_mcp_resource",
        "from_mcp_resource_contents",
        "to_mcp_annotations",
        "to_mcp_completion",
        "to_mcp_content",
        "to_mcp_get_prompt_result",
        "to_mcp_icon",
        "to_mcp_prompt",
        "to_mcp_prompt_entry",
        "to_mcp_prompt_argument",
        "to_mcp_prompt_message",
        "to_mcp_resource",
        "to_mcp_resource_contents",
    ],
    "mcp_notebook.protocol.paging": ["DEFAULT_PAGE_SIZE", "CursorCodec", "Page", "Paginator", "fingerprint_of"],
    "mcp_notebook.protocol.errors": [
        "RESOURCE_NOT_FOUND",
        "ErrorShaper",
        "capped",
        "guarded",
        "invalid_params",
        "to_mcp_error",
    ],
    "mcp_notebook.protocol.answers": [
        "STATELESS_METHODS",
        "Answers",
        "Ask",
        "CompleteHook",
        "RenderHook",
        "WireShape",
    ],
    "mcp_notebook.protocol.screening": [
        "EXCERPT_CHARS",
        "Refusal",
        "ScreenedBatch",
        "UnreadableMessage",
        "error_reply",
        "excerpt",
        "is_response",
        "parse_json",
        "readable_id",
        "screen",
        "unknown_id_omitted",
    ],
    "mcp_notebook.protocol.changes": ["ChangeFeed", "ConnectionTracker"],
    "mcp_notebook.protocol.asking": [
        "ANSWERS_KEY",
        "arguments_to_ask",
        "can_ask",
        "to_answers",
        "to_elicitation",
        "to_elicitation_request",
        "to_input_required_result",
        "to_requested_schema",
    ],
    "mcp_notebook.protocol.revisions": [
        "HANDSHAKE_REVISIONS",
        "KNOWN_REVISIONS",
        "LATEST_REVISION",
        "MODERN_REVISIONS",
        "Feature",
        "is_modern",
        "supports",
    ],
    "mcp_notebook.transports.stdio": [
        "BackgroundTask",
        "RepliesToBadLines",
        "StdioStreams",
        "error_reply_for",
        "serve_stdio",
        "stdio_transport",
    ],
    "mcp_notebook.transports.gate": ["MAX_BODY_BYTES", "MCP_PATH", "READY_PATH", "AccessGate"],
    "mcp_notebook.transports.http": [
        "allowed_hosts_for",
        "bind_socket",
        "create_http_app",
        "is_loopback",
        "port_sharing",
        "serve_http",
        "url_for",
        "uvicorn_config",
    ],
    "mcp_notebook.transports.hosts": [
        "LOOPBACK_NAMES",
        "WILDCARD_HOSTS",
        "HostAllowList",
        "bracketed",
        "machine_names",
    ],
    "mcp_notebook.transports.limits": [
        "MAX_HEAD_BYTES",
        "NOSNIFF",
        "GuardedHttpToolsProtocol",
        "HttpLimits",
        "connection_cap",
    ],
    "mcp_notebook.transports.uvicorn_seam": [
        "TESTED_VERSIONS",
        "HttpToolsProtocol",
        "Multiprocess",
        "missing_touchpoints",
        "protect_loading_config",
    ],
    "mcp_notebook.transports.sessions": ["BoundedSessionManager", "create_session_app"],
    "mcp_notebook.transports.workers": ["APP_FACTORY", "run_workers"],
    "mcp_notebook.asgi": ["ServeSettings", "create_app"],
    "mcp_notebook.protocol.sdk_seam": [
        "DEFERRED_PACKAGES",
        "TESTED_MINORS",
        "ContextReceiveStream",
        "ContextSendStream",
        "ReadStream",
        "WriteStream",
        "add_middleware",
        "admit_session",
        "check_session_manager",
        "connection_of",
        "create_context_streams",
        "create_http_client",
        "initialize_accepted",
        "is_json_invalid",
        "is_request_timeout",
        "open_sessions",
        "sdk_version",
        "session_owners",
        "shape_result",
    ],
    "mcp_notebook.transports.framing": ["LineCodec"],
    "mcp_notebook.transports.http_bodies": [
        "HEADER_MISMATCH",
        "AcceptedBody",
        "RefusedBody",
        "check_message",
        "screen_post",
        "serve_batch",
    ],
    "mcp_notebook.transports.answering": ["KEPT_HEADER_BYTES", "KEPT_HEADER_SETS", "StatelessRequests"],
    "mcp_notebook.transports.sse_events": ["MAX_BYTES", "MAX_EVENTS", "RecentEvents"],
    "mcp_notebook.transports.pipes": [
        "InFlight",
        "PipeStreams",
        "pipe_streams",
        "pipes_supported",
        "read_messages",
        "write_messages",
    ],
    "mcp_notebook.cli": ["main"],
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_each_module_exports_exactly_its_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(PUBLIC[module_name])
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name} is listed in __all__ but missing"


def test_the_known_revisions_match_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from mcp_notebook.protocol.revisions import HANDSHAKE_REVISIONS, MODERN_REVISIONS

    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == HANDSHAKE_REVISIONS
    assert tuple(MODERN_PROTOCOL_VERSIONS) == MODERN_REVISIONS
