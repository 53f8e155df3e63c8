"""Print the text of a PDF (a skill's script: shown, never run, by the client)."""

import sys

print(f"would extract {sys.argv[1:]}")
