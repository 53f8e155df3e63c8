"""An async MCP client that speaks our prompt model, for servers of every revision.

`PromptClient` wraps the SDK's `Client` for one configured server: it connects
lazily (stdio subprocess or Streamable HTTP), negotiates the protocol era
(2024-11-05 handshake up to stateless 2026-07-28), follows `prompts/list`
pagination to the end, caches the listing until the server says
`notifications/prompts/list_changed`, and answers 2026-07-28 input-required
results through a callback. Every request has a deadline; errors come out as
`ServerError` / `ServerConnectionError`. When the connection ends on its own
(a stdio server exits, its output closes), `connected` turns False at once and
the connection-lost listeners are told, without waiting for a request to fail.

By role:

* `prompt_client`: `PromptClient`, the thin client (paging, the cache,
  results into our model, listeners);
* `failures`: SDK and transport errors into our error tree, once;
* `connection`: `ConnectionOwner`, the task that opens, holds and closes one
  connection, and notices its end;
* `transport_choice`: which SDK transport a configuration entry asks for
  (stdio or Streamable HTTP, headers, the server's stderr);
* `elicitation`: `InputRequest`, a server asking the user for input;
* `skills`, `skill_wire`, `skill_requests`: the Skills extension (SEP-2640):
  `Skill` entries and their files, read and checked against the digests the
  server listed (the model; the wire and the checks; the requests).

The SDK and anyio are imported when a connection opens, so importing this
package stays cheap (the IPython extension and the LSP bridge start without
paying for them). The client runs on the asyncio backend: its connection
lives in a task of its own so that any task on the loop may use and close it.
"""

from __future__ import annotations

from .connection import import_sdk
from .elicitation import InputHandler, InputRequest
from .prompt_client import PromptClient
from .skills import Skill, SkillContent, SkillFile

__all__ = ["InputHandler", "InputRequest", "PromptClient", "Skill", "SkillContent", "SkillFile", "import_sdk"]
