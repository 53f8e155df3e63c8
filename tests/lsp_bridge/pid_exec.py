"""Write this process's id to a file, then become the given command (same pid): tests can kill a server.

Usage: python pid_exec.py PIDFILE PROGRAM [ARGS...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    pid_file, program, *args = sys.argv[1:]
    Path(pid_file).write_text(str(os.getpid()))
    os.execv(program, [program, *args])
