"""The unified diff of one mutant: what every report shows a human deciding what to test next."""

from __future__ import annotations

import difflib

from mutagent.model import Mutant, RunData


def mutant_diff(mutant: Mutant, source: str, context: int = 2) -> str:
    """Unified diff between the original file and the file with ``mutant`` applied.

    Computed from the real patch rather than from ``original``/``replacement`` so that what the
    user reads is exactly what the tests ran against.
    """
    mutated = mutant.mutated_source(source)
    lines = difflib.unified_diff(
        source.splitlines(keepends=True),
        mutated.splitlines(keepends=True),
        fromfile=f"a/{mutant.file}",
        tofile=f"b/{mutant.file}",
        n=context,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_for(run_data: RunData, mutant: Mutant, context: int = 2) -> str:
    """Diff of ``mutant`` against the stored source; a short note when the source is missing."""
    source = run_data.sources.get(mutant.file)
    if source is None:
        return f"--- a/{mutant.file}\n+++ b/{mutant.file}\n-{mutant.original}\n+{mutant.replacement}\n"
    return mutant_diff(mutant, source, context)
