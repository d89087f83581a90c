"""Running probe and candidate tests on the original and on mutants: the engine's own workers.

A session is the engine of ``mutagent run`` reused for files the suite does not have: the same
isolated copy of the target, the same warm workers forking one child per job, the same code swap
(or fresh import) of a mutant, the stored baseline for what to preload. Each phase writes its
test files into the copy, starts workers that collect only those files, runs its jobs and stops
the workers; the user's tree is never written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from mutagent.config import EngineConfig
from mutagent.engine.messages import JobEnd, JobResult, JobSpec
from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.orchestration.invocation import option_arguments
from mutagent.engine.orchestration.plan import Planner
from mutagent.engine.orchestration.pool import Job
from mutagent.engine.orchestration.progress import RunProgress
from mutagent.engine.orchestration.runner import Engine
from mutagent.engine.selection.discover import discover
from mutagent.engine.selection.imports import ImportGraph
from mutagent.errors import UsageError
from mutagent.model import Mutant, Status
from mutagent.store import Store

FRESH_IMPORT_ALLOWANCE = 6.0  # seconds a fresh import may add (a new process imports the SDK)


@dataclass(frozen=True)
class Run:
    """One job of a phase: ``test`` (a node id of the phase's files) on the original or a mutant."""

    key: str
    test: str
    mutant: Mutant | None
    timeout: float


@dataclass
class Outcome:
    """What one run did: the test's outcome and crash line, and the probe's record if any."""

    outcome: str  # passed | failed | timeout | error
    message: str
    record: dict[str, Any] | None


class Session:
    """The stored run's baseline, workspace and workers, for ``mutagent suggest``."""

    def __init__(self, config: EngineConfig, console: Console) -> None:
        self.config = config
        self.console = console
        engine = Engine(config, console)
        engine.target = discover(engine.root, config.paths, tests_given=config.tests is not None)
        engine._read_files()
        store = Store.open(engine.root)
        try:
            stored = store.previous_baseline()
        finally:
            store.close()
        if stored is None:
            raise UsageError(f"no stored baseline in {config.root}: run `mutagent run {config.root}` first")
        baseline = Baseline.from_json(stored[0])
        engine.baseline = baseline
        self.engine = engine
        self.baseline = baseline
        self.sources = {f: engine.files[f] for f in engine.target.sources}
        module_of = {f: engine.target.module_name(f)[0] for f in engine.files}
        graph = ImportGraph(engine.files, module_of)
        factor, constant = config.timeout_factor, config.timeout_constant
        self.planner = Planner(self.sources, engine.files, baseline, set(), False, factor, constant, graph)
        self.user_options = _without_selection(option_arguments(config.tests or [], engine.root))

    @property
    def root(self) -> Path:
        return self.engine.root

    def time_limit(self, test: str, extra: float = 0.0) -> float:
        """A run's time limit: the verdict's rule on the model test's baseline time, plus ``extra``."""
        from mutagent.engine.verdict import time_limit

        return (
            time_limit(self.baseline.duration(test), self.config.timeout_factor, self.config.timeout_constant)
            + extra
        )

    def run(self, label: str, files: dict[str, str], runs: list[Run]) -> dict[str, Outcome]:
        """Write ``files`` into the copy, run ``runs`` on workers collecting only those files."""
        engine = self.engine
        workspace = engine._ensure_workspace()
        copy = engine.copy_root
        for relative, text in files.items():
            (copy / relative).parent.mkdir(parents=True, exist_ok=True)
            (copy / relative).write_text(text, encoding="utf-8")
        records = workspace.aux / "suggest"
        records.mkdir(parents=True, exist_ok=True)
        engine.config.tests = [*sorted(files), *self.user_options]
        outcomes: dict[str, Outcome] = {}
        try:
            pool = engine._ensure_pool(max(1, min(self.config.workers, len(runs))))
            jobs = [self._job(run, records) for run in runs]

            def on_result(job: Job, result: JobResult) -> None:
                run, path = job.data
                outcomes[run.key] = _outcome(run, result, path)
                progress.advance(Status.PENDING)

            with RunProgress(self.console, len(jobs), label, show_counts=False) as progress:
                pool.run(jobs, on_result)
        finally:
            if engine.pool is not None:
                engine.pool.close(force=False)
                engine.pool = None
            for relative in files:
                (copy / relative).unlink(missing_ok=True)
        return outcomes

    def _job(self, run: Run, records: Path) -> Job:
        path = records / f"{run.key}.json"
        for stale in (path, Path(f"{path}.probe.json")):
            stale.unlink(missing_ok=True)
        order = json.dumps({"fault": None, "record": str(path)})
        if run.mutant is None:
            spec = JobSpec.plain([run.test], run.timeout).but(explore=order)
            return Job(f"suggest:{run.key}", spec, watchdog=run.timeout + 5.0, data=(run, path))
        plan = self.planner.plan(run.mutant)
        plan.covering, plan.timeout = [run.test], run.timeout
        name, _ = self.engine.target.module_name(run.mutant.file)
        spec = self.planner.job_spec(plan, self.engine.copy_root, name, FRESH_IMPORT_ALLOWANCE)
        spec = spec.but(budgets=None, fast=False, explore=order)
        watchdog = run.timeout + 2 * FRESH_IMPORT_ALLOWANCE
        return Job(f"suggest:{run.key}", spec, watchdog=watchdog, data=(run, path))

    def close(self) -> None:
        self.engine._shutdown(force=False)


def _without_selection(options: list[str]) -> list[str]:
    """The suite's own pytest options, but those that select tests (``-k``, ``-m``, ``--deselect``):
    the phase's files are the selection."""
    kept: list[str] = []
    skip = False
    for argument in options:
        if skip:
            skip = False
            continue
        if argument in ("-k", "-m", "--deselect"):
            skip = True
            continue
        kept.append(argument)
    return kept


def _outcome(run: Run, result: JobResult, path: Path) -> Outcome:
    record = None
    try:
        record = json.loads(Path(f"{path}.probe.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    test = result.record_of(run.test)
    if result.status is JobEnd.TIMEOUT:
        return Outcome("timeout", result.detail, record)
    if test is None:
        return Outcome("error", result.last_detail_line() or result.status.value, record)
    return Outcome(test.outcome, test.message, record)
