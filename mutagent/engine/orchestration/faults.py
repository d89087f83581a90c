"""Collecting the fault log of the baseline (see ``mutagent.fakeserver.faultlog``).

The baseline's measured children set ``MUTAGENT_FAULT_LOG`` to one file in the run's aux
directory; every ``fake_model`` step of every test appends a line to it. Collected once the
baseline is over, it is kept with the baseline (a cached baseline keeps its fault log) and in the
store, so every report can say which faults the suite scripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mutagent.fakeserver.faultlog import ENV as FAULT_LOG_ENV
from mutagent.fakeserver.inject import ENV as EXPLORE_ENV

FAULT_LOG_FILE = "faults.jsonl"
KEYS = ("test", "dialect", "behaviour", "fault", "position")

__all__ = ["EXPLORE_ENV", "FAULT_LOG_ENV", "FAULT_LOG_FILE", "collect_fault_log"]


def collect_fault_log(path: Path, tests: list[str]) -> list[dict[str, Any]]:
    """The log's lines for ``tests`` (suite order, then step order), each step once.

    A batch a restarted worker ran again logs its steps twice: a step is identified by test and
    step index. A torn or foreign line is skipped, never fatal.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    order = {nodeid: i for i, nodeid in enumerate(tests)}
    seen: dict[tuple[str, int], dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or any(not isinstance(entry.get(k), str) for k in KEYS):
            continue
        if entry["test"] not in order:
            continue
        seen.setdefault((entry["test"], int(entry.get("step", 0))), entry)
    return [seen[key] for key in sorted(seen, key=lambda k: (order[k[0]], k[1]))]
