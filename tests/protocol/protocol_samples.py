"""Hand-made prompts for the protocol tests: every content block, optional arguments, completions."""

from __future__ import annotations

import base64
from collections.abc import Sequence

from mcp_notebook.exceptions import PathOutsideRootError, ResourceError
from mcp_notebook.models import (
    Annotations,
    AudioContent,
    EmbeddedResource,
    Icon,
    ImageContent,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    ResourceInfo,
    ResourceLink,
    TextContent,
)
from mcp_notebook.registry import PromptRegistry

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-not-really-an-image").decode()
WAV = base64.b64encode(b"RIFF....WAVEfmt ").decode()

RICH = PromptSpec(
    name="rich",
    title="Every block",
    description="One message per content block type",
    arguments=(
        PromptArgument("topic", title="Topic", description="what to talk about"),
        PromptArgument("style", required=False, default="short", completions=("short", "long", "Shakespearean")),
    ),
    icons=(Icon("data:image/svg+xml;base64,PHN2Zy8+", mime_type="image/svg+xml", sizes=("any",), theme="light"),),
    meta={"org.example.nbprompts/notebook": "rich.ipynb"},
    messages=(
        MessageTemplate(
            "user",
            TextContent(
                "Talk about {{topic}}, {{style}}.",
                annotations=Annotations(audience=("assistant",), priority=0.5, last_modified="2026-11-30T10:00:00Z"),
                meta={"org.example.nbprompts/cell": 1},
            ),
        ),
        MessageTemplate("assistant", ImageContent(PNG, "image/png")),
        MessageTemplate("user", AudioContent(WAV, "audio/wav")),
        MessageTemplate(
            "user",
            ResourceLink(
                "file:///proj/{{topic}}.ipynb", "{{topic}}.ipynb", title="The notebook", description="Read me"
            ),
        ),
        MessageTemplate("user", EmbeddedResource("notebook://rich.ipynb#cell=2", "text/x-python", text="print(1)")),
    ),
    origin="rich.ipynb",
)


def simple_prompt(name: str, *, origin: str = "many.ipynb") -> PromptSpec:
    return PromptSpec(
        name=name,
        title=f"Prompt {name}",
        description=f"The prompt called {name}",
        arguments=(PromptArgument("who"),),
        messages=(MessageTemplate("user", TextContent(f"{name} says hello to {{{{who}}}}")),),
        origin=origin,
    )


class FolderResources:
    """A tiny `ResourceProvider`: two cells, one outside the root, one that crashes."""

    def list_resources(self) -> Sequence[ResourceInfo]:
        return (
            ResourceInfo("notebook://rich.ipynb#cell=1", "cell 1", title="First cell", mime_type="text/markdown"),
            ResourceInfo("notebook://rich.ipynb#cell=2", "cell 2", mime_type="text/x-python"),
        )

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        if uri == "notebook://rich.ipynb#cell=1":
            return (EmbeddedResource(uri, "text/markdown", text="# Hello", meta={"org.example.nbprompts/cell": 1}),)
        if uri == "notebook://rich.ipynb#cell=2":
            return (EmbeddedResource(uri, "image/png", blob=PNG),)
        if uri.startswith("file:///etc"):
            raise PathOutsideRootError("/etc/passwd", "/proj")
        if uri == "notebook://crash":
            raise RuntimeError("the provider broke")
        raise ResourceError(uri, f"Resource not found: {uri}")


def sample_registry() -> PromptRegistry:
    """`rich` plus seven simple prompts (`p0`…`p6`), in two notebooks."""
    reg = PromptRegistry()
    reg.set_group("rich.ipynb", [RICH])
    reg.set_group("many.ipynb", [simple_prompt(f"p{i}") for i in range(7)])
    return reg
