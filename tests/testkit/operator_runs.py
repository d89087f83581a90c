"""Mutants of one operator on a snippet, for the operator test modules."""

from __future__ import annotations

import textwrap

from mutagent.model import Mutant
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import all_operators


def mutants(name: str, source: str) -> list[Mutant]:
    """The mutants operator ``name`` makes of ``source`` (dedented), as a file ``t.py``."""
    return generate_for_source(textwrap.dedent(source), "t.py", [all_operators()[name]])


def mutated(name: str, source: str) -> list[str]:
    """The mutated sources of those mutants."""
    source = textwrap.dedent(source)
    return [mu.mutated_source(source) for mu in mutants(name, source)]
