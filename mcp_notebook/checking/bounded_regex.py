"""Regular expressions of prompt tests, searched in a helper process that is killed when one runs too long.

Python's `re` cannot be interrupted, and a pattern such as `(a+)+$` against a
long line of `a`s backtracks for ever. The search runs in a child interpreter
(started when the first regex is searched, reused for the next); past the
deadline the child is killed, the test fails saying so, and the next search
starts a new child. Patterns are compiled here first, so a malformed one is
reported as such, at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import subprocess
import sys
import time

__all__ = ["DEFAULT_TIMEOUT", "RegexSearcher", "RegexTimeout"]

DEFAULT_TIMEOUT = 2.0  # seconds one search may take
START_TIMEOUT = 60.0  # seconds the helper may take to start (a busy machine), not counted in a search's time

# One request a line, {"pattern", "text"}; one answer a line, true or false.
_CHILD = """\
import json, re, sys
sys.stdout.write("ready\\n")
sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    found = re.search(request["pattern"], request["text"], re.MULTILINE) is not None
    sys.stdout.write("true\\n" if found else "false\\n")
    sys.stdout.flush()
"""


class RegexTimeout(Exception):
    """A search ran past its deadline (and its process was killed)."""


class RegexSearcher:
    """Searches text for patterns, each search bounded by `timeout` seconds. Close it when done."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._child: subprocess.Popen[bytes] | None = None

    def search(self, pattern: str, text: str) -> bool:
        """Whether `pattern` (multiline) matches somewhere in `text`.

        Raises `re.error` for a malformed pattern and `RegexTimeout` past the deadline.
        """
        re.compile(pattern, re.MULTILINE)
        child = self._child or self._start()
        assert child.stdin is not None and child.stdout is not None
        request = json.dumps({"pattern": pattern, "text": text}).encode() + b"\n"
        deadline = time.monotonic() + self.timeout
        try:
            child.stdin.write(request)
            child.stdin.flush()
            answer = self._read_line(child, deadline)
        except (OSError, RegexTimeout):
            self.close()
            raise RegexTimeout(f"the search ran longer than {self.timeout:g} s and was stopped") from None
        return answer == b"true"

    def _start(self) -> subprocess.Popen[bytes]:
        """The helper, once it says it is ready (its start is not counted in any search's time)."""
        child = self._child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            ready = self._read_line(child, time.monotonic() + START_TIMEOUT)
        except (OSError, RegexTimeout):
            ready = b""
        if ready != b"ready":
            self.close()
            raise OSError("the regex search process did not start")
        return child

    @staticmethod
    def _read_line(child: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert child.stdout is not None
        fd = child.stdout.fileno()
        data = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while not data.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise RegexTimeout
                chunk = os.read(fd, 64)
                if not chunk:
                    raise OSError("the search process ended")
                data += chunk
        return data.strip()

    def close(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # the pipe to a killed child: nothing left to flush
                    stream.close()

    def __enter__(self) -> RegexSearcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
