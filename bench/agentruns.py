"""``mutagent run`` on a fresh copy of the sample agent with the agent operators, memoised per process.

The naive comparison, the full-vs-fast comparison and the efficiency figures all need the same
runs; ``run.py`` imports every benchmark into one process, so each run happens once.
"""

from __future__ import annotations

from common import console, copy_sample_agent, scratch
from storeinfo import RunInfo, measured_run

_RUNS: dict[tuple[bool, int], list[RunInfo]] = {}


def sample_agent_run(fast: bool, workers: int) -> RunInfo:
    """One new run: a fresh copy, ``--operators agent`` (plus ``--fast`` when asked)."""
    mode = "--fast" if fast else "full matrix"
    console.print(f"[dim]mutagent run sample_agent --operators agent ({mode}, {workers} workers)[/]")
    with scratch("agent-run") as parent:
        args = ["--operators", "agent", *(["--fast"] if fast else [])]
        return measured_run(copy_sample_agent(parent), workers, *args)


def sample_agent_runs(fast: bool, repeat: int, workers: int) -> list[RunInfo]:
    """``repeat`` runs, reusing those this process already made with the same settings."""
    runs = _RUNS.setdefault((fast, workers), [])
    while len(runs) < repeat:
        runs.append(sample_agent_run(fast, workers))
    return runs[:repeat]


def interleaved(repeat: int, workers: int) -> tuple[list[RunInfo], list[RunInfo]]:
    """Full-matrix and ``--fast`` runs alternated, so machine noise hits both alike."""
    for _ in range(repeat):
        for fast in (False, True):
            runs = _RUNS.setdefault((fast, workers), [])
            if len(runs) < repeat:
                runs.append(sample_agent_run(fast, workers))
    return sample_agent_runs(False, repeat, workers), sample_agent_runs(True, repeat, workers)
