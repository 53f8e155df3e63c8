"""Report lines over 100 characters and trailing spaces in the files named on the command line."""

import sys

for name in sys.argv[1:]:
    with open(name, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            text = line.rstrip("\n")
            if len(text) > 100:
                print(f"{name}:{number}: line is {len(text)} characters long")
            if text != text.rstrip():
                print(f"{name}:{number}: trailing spaces")
