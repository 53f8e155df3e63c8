"""A rendered prompt as plain editor text (markdown), to replace a slash line with.

* Messages of one speaker (however many): their blocks alone, separated by
  blank lines; a heading would only repeat what the reader knows. When the
  speaker changes, a `## User` / `## Assistant` heading starts each run of
  messages with the same role.
* Images (and audio): a markdown link with a `data:` URI, or a placeholder
  such as `[image: image/png]` (the default: data URIs make documents huge).
* Embedded text resources: a fenced block, tagged with a language guessed from
  the MIME type and preceded by the resource's URI; binary ones: as an image
  or a placeholder. Resource links: a markdown link.

The writing itself is `mcp_notebook.transcript`'s, shared with the CLI and IPython.
"""

from __future__ import annotations

from mcp_notebook.models import RenderedPrompt
from mcp_notebook.transcript import Layout, MediaStyle, fence, to_transcript

__all__ = ["ImageStyle", "fence", "to_editor_text"]

ImageStyle = MediaStyle


def to_editor_text(rendered: RenderedPrompt, *, images: ImageStyle = "placeholder") -> str:
    """The text that replaces a slash line once its prompt is rendered (no trailing newline)."""
    layout = Layout(
        blocks="markdown", sections="turn", headings="when-speakers-differ", heading="markdown", media=images, trim=True
    )
    return to_transcript(rendered, layout)
