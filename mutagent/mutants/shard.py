"""Splitting one run across CI matrix jobs: ``--shard I/N``.

A mutant's shard depends only on its stable id (a content hash), never on list order, hash
randomisation or which files another job happened to scan, so N jobs given the same tree select
disjoint sets that together are exactly the unsharded run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import TypeVar

from mutagent.errors import UsageError
from mutagent.model import Mutant

M = TypeVar("M", bound=Mutant)

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; shards are numbered from 1 like GitHub's matrix examples."""
    match = _SHARD.match(text or "")
    if not match:
        raise UsageError(f"--shard must look like I/N (for example 1/4), not {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: need 1 <= I <= N and N >= 1")
    return index, count


def shard_of(mutant_id: str, count: int) -> int:
    """The 1-based shard ``mutant_id`` belongs to among ``count`` shards."""
    digest = hashlib.sha256(mutant_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select_shard(mutants: Iterable[M], index: int, count: int) -> list[M]:
    """The mutants of shard ``index`` of ``count`` (order preserved)."""
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"shard {index}/{count}: need 1 <= I <= N and N >= 1")
    return [m for m in mutants if shard_of(m.id, count) == index]
