"""The three ways a worker runs a mutant's tests, behind one interface, and the one function that
chooses between them.

* **code swap**: fork a child of the warm worker that points the live functions at the mutated
  code objects (or gives them the mutated default values) and runs the collected items
  (``worker.Worker._run_forked`` and ``child.py``);
* **zygote fork**: a fresh import of the mutated module in a child forked from the worker's
  zygote, which imported the third-party modules once (``zygote.py``);
* **fresh process**: a new ``python -m pytest`` (the zygote is disabled, cannot start, or cannot
  be trusted for those tests).

Every launcher takes a ``JobSpec`` and returns a ``JobResult`` (each gives its tests a fresh
``tmp_path`` root and removes it, the code-swap one off the critical path); the worker adds what
surrounds a launch (job id, mode, wall and CPU time). Names are the ``messages.Launcher``
values. A code-swap result keeps ``JobResult.launcher`` empty, as the run's numbers and the store
have always read it (the launcher of a fresh import only).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mutagent.engine.harness import child
from mutagent.engine.harness.fresh_import import FreshImportRunner
from mutagent.engine.messages import JobResult, JobSpec, Launcher, Mode

Swaps = list[tuple[Any, Any]]  # (code key, mutated code object), outermost level first


class JobLauncher(Protocol):
    """Runs one job's tests with its mutant applied."""

    name: Launcher

    def run(self, job: JobSpec) -> JobResult: ...


@dataclass
class CodeSwapLauncher:
    """Forks a child of the warm worker that swaps ``swaps`` in (none: the tests as they are)."""

    fork: Callable[[JobSpec, Swaps], JobResult]  # the worker's ``_run_forked``
    swaps: Swaps
    name: Launcher = Launcher.CODE_SWAP

    def run(self, job: JobSpec) -> JobResult:
        return self.fork(job, self.swaps)


@dataclass
class ZygoteLauncher:
    """A fresh-import run in a child of the worker's zygote (started before, ``booted`` seconds)."""

    runner: FreshImportRunner
    booted: float = 0.0
    name: Launcher = Launcher.ZYGOTE

    def run(self, job: JobSpec) -> JobResult:
        if self.runner.zygote is None:  # a trust check without a zygote: nothing it could check
            return JobResult.harness_error(self.runner.zygote_problem or "")
        return self.runner.in_zygote(job).but(launcher=self.name, zygote_boot=self.booted)


@dataclass
class FreshProcessLauncher:
    """A fresh-import run in a new ``python -m pytest``; ``zygote_problem`` says why not in the
    zygote when the job wanted one."""

    runner: FreshImportRunner
    zygote_problem: str | None = None
    name: Launcher = Launcher.FRESH_PROCESS

    def run(self, job: JobSpec) -> JobResult:
        return self.runner.in_new_process(job).but(launcher=self.name, zygote_problem=self.zygote_problem)


def choose_launcher(
    job: JobSpec,
    index: Mapping[Any, list[Any]],
    fork: Callable[[JobSpec, Swaps], JobResult],
    fresh_imports: FreshImportRunner,
) -> tuple[JobLauncher, Mode, str]:
    """The launcher of ``job``, the mode it applies the mutant in, and (fresh imports) why only a
    fresh import can.

    A code swap when every level of the mutant's scope chain is a live function of the worker with
    the same closure variables; otherwise a fresh import, in the zygote when the job allows it
    and the zygote runs (starting it on first use), else in a new process. The zygote trust check
    (a control job) is about the zygote: it never falls back to a new process.
    """
    swaps, why = _swaps_of(job, index)
    if swaps is not None:
        changed = swaps or job.defaults or job.values
        return CodeSwapLauncher(fork, swaps), (Mode.SWAP if changed else Mode.PLAIN), ""
    wants_zygote = job.launcher in (None, Launcher.ZYGOTE)
    booted = fresh_imports.ensure_zygote() if wants_zygote else 0.0
    control = job.fresh_import is not None and job.fresh_import.control
    if (wants_zygote and fresh_imports.zygote is not None) or control:
        return ZygoteLauncher(fresh_imports, booted), Mode.FRESH_IMPORT, why
    problem = fresh_imports.zygote_problem if wants_zygote else None
    return FreshProcessLauncher(fresh_imports, problem), Mode.FRESH_IMPORT, why


def _swaps_of(job: JobSpec, index: Mapping[Any, list[Any]]) -> tuple[Swaps | None, str]:
    """The code objects to swap in, or ``None`` and why only a fresh import applies the mutant."""
    if job.swap is None:
        return None, job.fresh_import_reason or "runs at import time"
    swaps: Swaps = []
    for position, level in enumerate(job.swap):
        key = level.key
        code = marshal.loads(level.code)
        live = index.get(key, [])
        if position == 0 and not live:
            return None, f"{key[1]} is not loaded after collection"
        if any(function.__code__.co_freevars != code.co_freevars for function in live):
            return None, f"the closure variables of {key[1]} change"
        swaps.append((key, code))
    for change in job.defaults:
        live = index.get(change.key, [])
        if not live:
            return None, f"{change.key[1]} is not loaded after collection"
        if not all(child.defaults_fit(function, *change.decoded()) for function in live):
            return None, f"the live {change.key[1]} has other defaults than its source"
    for value in job.values:
        target = child.live_owner(value.module, value.path, value.owner)
        if isinstance(target, str):
            return None, target
        if value.name not in vars(target):
            return None, f"{value.name} is not bound in the live {value.owner or value.module}"
        try:
            child.swapped_value(value.module, value.expression)  # pure: evaluating it here is harmless
        except Exception as exc:  # noqa: BLE001 - whatever it raises, a fresh import applies it
            return None, f"the mutated value of {value.name} does not evaluate: {type(exc).__name__}"
    return swaps, ""
