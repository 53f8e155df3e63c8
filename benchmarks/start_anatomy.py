"""Where a server's start goes: what each server imports before its first `prompts/list` answer.

Runs both servers once under `python -X importtime`, answers the handshake and
one `prompts/list`, then compares the modules each imported by then. The
modules only mcp-notebook imports (and their own import time) are what our
start costs over the bare SDK server, next to the SDK floor both pay.
Figures under `-X importtime` are inflated by the tracing itself: read them
relative to each other. Example: `python -m benchmarks.start_anatomy`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from .corpus import create_corpus
from .import_log import ImportRecord, parse_importtime
from .servers import BASELINE_SCRIPT, ROOT
from .stdio_rpc import RawStdioClient

__all__ = ["main", "trace_imports"]


def trace_imports(argv: list[str]) -> tuple[float, dict[str, ImportRecord]]:
    """Start `argv` under `-X importtime`; seconds to the first list answer, and what was imported by then."""
    with RawStdioClient([sys.executable, "-X", "importtime", *argv], cwd=ROOT) as client:
        client.open_session()
        client.request("prompts/list", {})
        elapsed = time.perf_counter() - client.started_at
        log = client.stderr_tail(limit=1 << 30)
    return elapsed, {record.name: record for record in parse_importtime(log)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Compare what the two servers import before their first answer.")
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--top", type=int, default=25, help="how many of our extra modules to show")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-bench-") as scratch:
        corpus = create_corpus(Path(scratch) / "corpus", notebooks=args.notebooks, prompts=args.prompts)
        folder = str(corpus.folder)
        ours_s, ours = trace_imports(["-m", "mcp_notebook", "serve", folder])
        sdk_s, sdk = trace_imports([str(BASELINE_SCRIPT), folder])
    extra = sorted((r for name, r in ours.items() if name not in sdk), key=lambda r: r.self_ms, reverse=True)
    only_sdk = [r for name, r in sdk.items() if name not in ours]
    print(f"under -X importtime: ours {ours_s * 1000:.0f} ms, SDK {sdk_s * 1000:.0f} ms to the first list answer")
    print(f"modules imported: ours {len(ours)}, SDK {len(sdk)}")
    ours_ms, sdk_ms = (sum(r.self_ms for r in records.values()) for records in (ours, sdk))
    print(f"import self time: ours {ours_ms:.0f} ms, SDK {sdk_ms:.0f} ms")
    print(
        f"only ours imports {len(extra)} modules, {sum(r.self_ms for r in extra):.1f} ms self time; "
        f"only the SDK server imports {len(only_sdk)} ({sum(r.self_ms for r in only_sdk):.1f} ms)"
    )
    print("\nmodules only mcp-notebook imports, by self time (ms):")
    for record in extra[: args.top]:
        print(f"  {record.self_ms:8.1f}  {record.name}")


if __name__ == "__main__":
    main()
