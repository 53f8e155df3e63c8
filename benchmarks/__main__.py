"""`python -m benchmarks`: run every benchmark (see `run_all`)."""

from __future__ import annotations

from .run_all import main

main()
