"""Many MCP servers at once, their prompt lists kept in memory: what the editor bridge and JupyterLab list.

* `pool`: `ClientPool`, one `PromptClient` per server, connected, listed and
  reconnected in the background, one immutable snapshot per change;
  `QuickCompletions`, value completions under a deadline;
* `prompt_cache`: each configured server's last list, in the user's cache
  folder, for the next start;
* `kernels`: `KernelWatcher`, the running kernels that serve prompts, as
  servers named by `naming.kernel_server_name`.

Built on asyncio (the bridge's pygls loop and the Jupyter server's tornado
loop are both asyncio loops), above the client, which stays anyio only.
"""

from __future__ import annotations

__all__: list[str] = []
