"""The protocol seam: our prompt model ⇄ MCP, and the server built on the SDK's low-level `Server`.

* `server.create_server(registry, ...)`: the MCP server for a prompt registry;
* `convert`: model ⇄ `mcp_types`, era-correct for each protocol revision;
* `paging`: opaque, sealed list cursors; `errors`: our exceptions as JSON-RPC errors;
* `changes`: list_changed to every connected client; `revisions`: what each revision carries;
* `asking`: asking the user for a prompt's missing arguments (elicitation), in both eras;
* `listing` + `prepared`: `prompts/list` entries serialized once per snapshot, and pages written from those
  bytes by every transport through the one interface `prepared` declares;
* `screening`: malformed input answered with its JSON-RPC error before the SDK sees it;
* `sdk_seam`: the only module naming the SDK's private and provisional parts.

Nothing is imported here, so importing a pure submodule (`paging`, `revisions`)
does not pay for the SDK.
"""

from __future__ import annotations

__all__: list[str] = []
