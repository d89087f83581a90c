"""``mutagent run`` on a fresh copy of the sample agent with the agent operators, memoised per process.

The naive comparison, the full-vs-fast comparison and the efficiency figures all need the same
runs; ``run.py`` imports every benchmark into one process, so each run happens once.
"""

from __future__ import annotations

from common import console, copy_sample_agent, scratch
from storeinfo import RunInfo, measured_run

# --quick uses a few agent operators only (about ten mutants, one of which loops forever)
QUICK_OPERATORS = "mismatch-tool-call-id,ignore-retry-after,skip-backoff,unbounded-retry"

_RUNS: dict[tuple[bool, int, str], list[RunInfo]] = {}
_operators = "agent"


def use_operators(spec: str) -> None:
    """Select the operators of every later run (``agent`` by default, :data:`QUICK_OPERATORS` for --quick)."""
    global _operators
    _operators = spec


def operators() -> str:
    return _operators


def sample_agent_run(fast: bool, workers: int) -> RunInfo:
    """One new run: a fresh copy, ``--operators SPEC`` (plus ``--fast`` when asked)."""
    mode = "--fast" if fast else "full matrix"
    console.print(f"[dim]mutagent run sample_agent --operators {_operators} ({mode}, {workers} workers)[/]")
    with scratch("agent-run") as parent:
        args = ["--operators", _operators, *(["--fast"] if fast else [])]
        return measured_run(copy_sample_agent(parent), workers, *args)


def sample_agent_runs(fast: bool, repeat: int, workers: int) -> list[RunInfo]:
    """``repeat`` runs, reusing those this process already made with the same settings."""
    runs = _RUNS.setdefault((fast, workers, _operators), [])
    while len(runs) < repeat:
        runs.append(sample_agent_run(fast, workers))
    return runs[:repeat]


def interleaved(repeat: int, workers: int) -> tuple[list[RunInfo], list[RunInfo]]:
    """Full-matrix and ``--fast`` runs alternated, so machine noise hits both alike."""
    for _ in range(repeat):
        for fast in (False, True):
            runs = _RUNS.setdefault((fast, workers, _operators), [])
            if len(runs) < repeat:
                runs.append(sample_agent_run(fast, workers))
    return sample_agent_runs(False, repeat, workers), sample_agent_runs(True, repeat, workers)
