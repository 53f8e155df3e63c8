"""The protocol seam: our prompt model ⇄ MCP, and the server built on the SDK's low-level `Server`.

* `server.create_server(registry, ...)`: the MCP server for a prompt registry;
* `convert`: model ⇄ `mcp_types`, era-correct for each protocol revision;
* `paging`: opaque, sealed list cursors; `errors`: our exceptions as JSON-RPC errors;
* `changes`: list_changed to every connected client; `revisions`: what each revision carries;
* `asking`: asking the user for a prompt's missing arguments (elicitation), in both eras.

Nothing is imported here, so importing a pure submodule (`paging`, `revisions`)
does not pay for the SDK.
"""

from __future__ import annotations

__all__: list[str] = []
