"""Choosing which mutants a run covers, and writing one mutant into the user's tree.

None of this runs a test or renders a report: ``--since REV`` keeps the mutants on changed lines
(:func:`changed_lines` + :func:`filter_changed`), ``--shard I/N`` keeps one CI job's share
(:func:`parse_shard` + :func:`select_shard`), and ``apply`` is the engine of ``mutagent apply``.
"""

from __future__ import annotations

from mutagent.mutants.shard import parse_shard, select_shard
from mutagent.mutants.since import changed_lines, filter_changed

__all__ = ["changed_lines", "filter_changed", "parse_shard", "select_shard"]
