"""The README's quickstart commands, read from the README itself (``.ci/run`` and the tests use this).

The quickstart is the first ```` ```bash ```` block under ``## Quickstart``: one command per line,
a trailing ``# comment`` is not part of the command. ``python scripts/readme_commands.py N`` prints
the Nth command (from 1) exactly as written, so CI runs what a new user copies.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def quickstart_commands(text: str) -> list[str]:
    """The commands of the quickstart block, in order, without their trailing comments."""
    section = re.search(r"^## Quickstart.*?$(.*?)^## ", text, re.M | re.S)
    if section is None:
        raise ValueError("README has no '## Quickstart' section")
    block = re.search(r"```bash\n(.*?)```", section.group(1), re.S)
    if block is None:
        raise ValueError("the README's quickstart has no ```bash block")
    commands = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\s+#\s.*$", "", line).strip()
        if command:
            commands.append(command)
    return commands


def main(argv: list[str]) -> int:
    commands = quickstart_commands(README.read_text(encoding="utf-8"))
    index = int(argv[1]) if len(argv) > 1 else 0
    if not 1 <= index <= len(commands):
        print(f"usage: readme_commands.py N (1..{len(commands)})", file=sys.stderr)
        return 2
    print(commands[index - 1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
