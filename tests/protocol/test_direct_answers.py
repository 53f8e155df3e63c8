"""`DirectAnswers`: the plain stateless requests answered as the SDK's path shapes them, and everything else declined.

The SDK's path puts a handler's model on the wire through its shaping
(`sdk_seam.shape_result`: the dump, the per-revision sieve, `resultType`,
the `serverInfo` stamp). The direct answers skip that shaping for
`prompts/get` and `completion/complete`, so each content block, annotation
and metadata shape is held here to the SDK's shaping of the same model.
Over real HTTP, `tests/transports/test_http_direct.py` compares whole replies.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from notebook_files import write_notebook
from pydantic_core import to_json
from test_deferred_off_loop import _restored

from mcp_notebook.models import (
    Annotations,
    AudioContent,
    CompletionResult,
    Deferred,
    EmbeddedResource,
    ImageContent,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)
from mcp_notebook.protocol.convert import to_mcp_completion, to_mcp_get_prompt_result
from mcp_notebook.protocol.direct import DirectAnswers
from mcp_notebook.protocol.prepared import plain_result, prepared_json
from mcp_notebook.protocol.sdk_seam import shape_result, spans_recorded
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.rendering import complete_argument, render_prompt
from mcp_notebook.sources import index as index_module

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}

ANNOTATED = Annotations(audience=("user", "assistant"), priority=0.7, last_modified="2026-11-30T10:00:00Z")
BLOCKS: dict[str, Any] = {
    "text": TextContent("Hi {{who}}", annotations=ANNOTATED, meta={"org.example/x": 1}),
    "image": ImageContent("iVBORw0KGgo=", "image/png", annotations=ANNOTATED),
    "audio": AudioContent("UklGRg==", "audio/wav"),
    "resource, text": EmbeddedResource("file:///{{who}}.txt", mime_type="text/plain", text="about {{who}}"),
    "resource, blob": EmbeddedResource("file:///a.bin", mime_type="application/octet-stream", blob="AAE="),
    "link": ResourceLink("file:///a.ipynb", "a.ipynb", title="A", description="d", mime_type="x/y", size=3),
}


@pytest.fixture(autouse=True)
def files_are_never_too_recent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "RACY_SECONDS", -1.0)  # so a notebook just written is stored


def _server(*specs: PromptSpec, **options: Any) -> PromptServer:
    registry = PromptRegistry()
    registry.set_group("a.ipynb", list(specs))
    return create_server(registry, **options)


def _answers(server: PromptServer) -> Any:
    assert server.direct is not None
    return server.direct


def _wire(result: dict[str, Any]) -> Any:
    """A direct answer as a transport writes it (its prepared JSON, or the plain result), read back."""
    return json.loads(prepared_json(result) or to_json(plain_result(result)))


def _get(name: str, arguments: Mapping[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": name, "_meta": META}
    if arguments is not None:
        base["arguments"] = dict(arguments)
    return {**base, **params}


@pytest.mark.parametrize("block", list(BLOCKS), ids=list(BLOCKS))
def test_a_get_is_the_sdk_shaping_of_the_handlers_model(block: str) -> None:
    spec = PromptSpec(
        name="p",
        description="A prompt",
        meta={"org.example.nbprompts/notebook": "a.ipynb"},
        arguments=(PromptArgument("who"),),
        messages=(MessageTemplate("user", BLOCKS[block]), MessageTemplate("assistant", TextContent("ok"))),
    )
    server = _server(spec)
    answered = _wire(_answers(server).answer("prompts/get", _get("p", {"who": "Ada"}), MODERN))
    rendered = render_prompt(spec, {"who": "Ada"})
    shaped = shape_result(server, "prompts/get", MODERN, to_mcp_get_prompt_result(rendered, MODERN))
    assert answered == json.loads(to_json(shaped))
    assert answered["resultType"] == "complete"


@pytest.mark.parametrize(
    ("value", "context"), [("", None), ("v", None), ("v1", {"arguments": {"x": "1"}}), ("zz", None)]
)
def test_a_completion_is_the_sdk_shaping_of_the_handlers_model(value: str, context: Any) -> None:
    spec = PromptSpec(name="p", arguments=(PromptArgument("x", completions=tuple(f"v{i}" for i in range(150))),))
    server = _server(spec)
    params: dict[str, Any] = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "x", "value": value}}
    if context is not None:
        params["context"] = context
    answered = _answers(server).answer("completion/complete", {**params, "_meta": META}, MODERN)
    found: CompletionResult = complete_argument(spec, "x", value)
    model = types.CompleteResult(completion=to_mcp_completion(found))
    assert answered == shape_result(server, "completion/complete", MODERN, model)
    assert len(answered["completion"]["values"]) == min(100, found.total or 0)


def test_a_page_is_the_page_the_listing_serves() -> None:
    server = _server(*(PromptSpec(name=f"p{i}") for i in range(5)), page_size=2)
    answers = _answers(server)
    first = answers.answer("prompts/list", {"_meta": META}, MODERN)
    assert [entry["name"] for entry in first["prompts"]] == ["p0", "p1"]
    second = answers.answer("prompts/list", {"cursor": first["nextCursor"], "_meta": META}, MODERN)
    assert [entry["name"] for entry in second["prompts"]] == ["p2", "p3"]
    assert first["ttlMs"] == 60_000 and first["cacheScope"] == "public"


GREET = PromptSpec(
    name="greet",
    arguments=(PromptArgument("who"), PromptArgument("topic", ask="Which topic?")),
    messages=(MessageTemplate("user", TextContent("Hi {{who}} on {{topic}}")),),
)
EMBEDS = PromptSpec(
    name="embeds",
    messages=(MessageTemplate("user", EmbeddedResource("file:///a.txt"), path="a.txt"),),
)


@pytest.mark.parametrize(
    ("method", "params", "revision"),
    [
        ("prompts/get", _get("nope"), MODERN),
        ("prompts/get", _get("greet", {"who": "x"}), MODERN),  # a missing argument
        ("prompts/get", _get("greet", {"who": "x", "topic": "t", "more": "y"}), MODERN),
        ("prompts/get", _get("greet", {"who": 3, "topic": "t"}), MODERN),
        ("prompts/get", _get("greet", {"who": "x", "topic": "t"}, inputResponses={}), MODERN),
        ("prompts/get", _get("greet", {"who": "x", "topic": "t"}, requestState="s"), MODERN),
        ("prompts/get", {**_get("greet", {"who": "x", "topic": "t"}), "_meta": {**META, "progressToken": 1}}, MODERN),
        (
            "prompts/get",
            {
                **_get("greet", {"who": "x", "topic": "t"}),
                "_meta": {**META, "io.modelcontextprotocol/logLevel": "info"},
            },
            MODERN,
        ),
        (
            "prompts/get",
            {
                **_get("greet", {"who": "x", "topic": "t"}),
                "_meta": {**META, "traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"},
            },
            MODERN,
        ),
        ("prompts/get", _get("greet", {"who": "x", "topic": "t"}), "2025-11-25"),
        ("prompts/get", {"name": "greet", "arguments": {"who": "x", "topic": "t"}}, MODERN),  # no _meta
        ("prompts/get", _get("embeds"), MODERN),  # reads a file: off the loop, on the SDK's path
        ("prompts/list", {"cursor": "forged", "_meta": META}, MODERN),
        ("prompts/list", {"cursor": 5, "_meta": META}, MODERN),
        (
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": "x"}, "argument": {"name": "a", "value": ""}},
            MODERN,
        ),
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}, "_meta": META},
            MODERN,
        ),
        ("tools/list", {"_meta": META}, MODERN),
    ],
)
def test_everything_but_the_plain_case_is_declined(method: str, params: dict[str, Any], revision: str) -> None:
    assert _answers(_server(GREET, EMBEDS)).answer(method, params, revision) is None


def test_a_hosts_hooks_keep_gets_and_completions_on_the_sdks_path_but_not_pages() -> None:
    async def render(spec: PromptSpec, arguments: Mapping[str, str]) -> RenderedPrompt | None:
        return None

    answers = _answers(_server(GREET, render=render))
    assert answers.answer("prompts/get", _get("greet", {"who": "x", "topic": "t"}), MODERN) is None
    complete = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": ""}, "_meta": META}
    assert answers.answer("completion/complete", complete, MODERN) is None
    assert answers.answer("prompts/list", {"_meta": META}, MODERN) is not None


def test_nothing_is_answered_directly_while_the_sdks_spans_are_recorded() -> None:
    server = _server(GREET)
    assert not spans_recorded()  # no tracer provider in this process: the SDK's spans go nowhere
    assert server.direct is not None
    traced = DirectAnswers(
        server.registry,
        server._prompt_pages,
        server.prepared_results,
        server.server_info_stamp,
        read_file=None,
        max_argument_bytes=1000,
        hooked=False,
        traced=lambda: True,
    )
    plain = _get("greet", {"who": "x", "topic": "t"})
    assert server.direct.answer("prompts/get", plain, MODERN) is not None
    assert traced.answer("prompts/get", plain, MODERN) is None
    assert traced.answer("prompts/list", {"_meta": META}, MODERN) is None


@pytest.mark.slow  # a process of its own
def test_a_tracer_provider_set_while_serving_is_seen_at_the_next_request() -> None:
    """The check is asked per request: a host that sets up OpenTelemetry after the server started (in a process
    of its own here, since a tracer provider is set once per process) gets the SDK's spans from then on."""
    code = (
        "from opentelemetry import trace\n"
        "from mcp_notebook.protocol.sdk_seam import spans_recorded\n"
        "before = spans_recorded()\n"
        "trace.set_tracer_provider(trace.NoOpTracerProvider())\n"
        "print(before, spans_recorded())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "False True\n"), done.stderr


def test_a_value_over_the_size_limit_is_left_to_the_sdks_path() -> None:
    answers = _answers(_server(GREET, max_argument_bytes=8))
    assert answers.answer("prompts/get", _get("greet", {"who": "x" * 9, "topic": "t"}), MODERN) is None
    assert answers.answer("prompts/get", _get("greet", {"who": "x" * 8, "topic": "t"}), MODERN) is not None


def test_no_direct_answers_when_the_server_is_built_without_them() -> None:
    assert _server(GREET, direct=False).direct is None


def test_a_restored_prompt_is_answered_directly_once_its_body_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_notebook(folder / "a.ipynb", [{"source": "Hello {{who}}.", "mcp": {"prompt": "greet"}}])
    registry = _restored(folder, tmp_path / "cache")
    spec = registry.snapshot().get("greet")
    assert spec is not None and isinstance(spec.messages, Deferred) and not spec.messages.made
    answers = _answers(create_server(registry))
    params = _get("greet", {"who": "Ada"})
    assert answers.answer("prompts/get", params, MODERN) is None  # its body is read off the loop first
    assert spec.messages[0] is not None and spec.messages.made  # what the SDK's path does, in a thread
    answered = answers.answer("prompts/get", params, MODERN)
    assert answered is not None and _wire(answered)["messages"][0]["content"]["text"] == "Hello Ada."
