"""``mutagent run`` from start to finish: lock, store, baseline, control run, mutants, results.

The user's tree is only ever read, except ``PATH/.mutagent/`` (store and lock): everything that
executes the target's code runs in the isolated workspace copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from rich.console import Console

from mutagent import exitcodes
from mutagent.config import EngineConfig
from mutagent.console import warning
from mutagent.engine.messages import JobEnd, JobResult, JobSpec, WorkerConfig
from mutagent.engine.orchestration import sandbox, zygote_trust_check
from mutagent.engine.orchestration.ahead import Ahead, NarrowAhead
from mutagent.engine.orchestration.baseline import (
    Baseline,
    ForkedBaseline,
    RunningBaseline,
    outcome_of,
    start_baseline,
)
from mutagent.engine.orchestration.batches import measured_batches
from mutagent.engine.orchestration.control import (
    ControlGate,
    control_order,
    provisional_controls,
    release_ranks,
)
from mutagent.engine.orchestration.copyguard import CopyGuard
from mutagent.engine.orchestration.faults import FAULT_LOG_FILE, collect_fault_log
from mutagent.engine.orchestration.incremental import Increment, plan_increment
from mutagent.engine.orchestration.invocation import common_pytest_args, option_arguments
from mutagent.engine.orchestration.plan import Plan, Planner
from mutagent.engine.orchestration.pool import Job, Pool
from mutagent.engine.orchestration.progress import RunProgress
from mutagent.engine.orchestration.run_stats import RunStats
from mutagent.engine.orchestration.split import Part, classify_parts, part_specs, partition, splittable
from mutagent.engine.selection.discover import Target, discover
from mutagent.engine.selection.fingerprint import baseline_basis, baseline_key
from mutagent.engine.selection.imports import ImportGraph
from mutagent.engine.selection.mutant_source import MutantSource, OperatorMutants
from mutagent.engine.selection.order import KillerFirst
from mutagent.engine.verdict import classify, time_limit
from mutagent.errors import BaselineError, MutagentError, UsageError
from mutagent.model import Mutant, MutantResult, Status, TestInfo
from mutagent.store import STORE_DIR, Store

# Narrows the generated mutant list (``--since``, ``--shard``): gets every mutant, returns those to run.
MutantFilter = Callable[[list[Mutant]], list[Mutant]]

WARM_FILE = "warm.json"
EXPLORATION_VERSION = "6"  # a stored exploration made by another version of its rules is made again
# a baseline test has no known duration yet: like a plain pytest run, it gets all the time it takes
BASELINE_TIMEOUT = 24 * 3600.0


class Engine:
    """One ``mutagent run`` over one target."""

    def __init__(
        self,
        config: EngineConfig,
        console: Console,
        mutant_source: MutantSource | None = None,
        mutant_filter: MutantFilter | None = None,
    ) -> None:
        self.config = config
        self.console = console
        self.mutant_source = mutant_source
        self.mutant_filter = mutant_filter
        self.root = config.root.resolve()
        self.stats = RunStats()
        self.workspace: sandbox.Workspace | None = None
        self.copy_guard: CopyGuard | None = None
        self._copy_repairs = 0
        self.pool: Pool | None = None
        self.target: Target
        self.files: dict[str, str] = {}
        self.env: dict[str, str] = {}
        self.baseline: Baseline | None = None
        self._deferred_controls: list[Job] | None = None  # the control run, overlapped with mutants
        self.baseline_key = ""
        self._zygote_warnings: set[str] = set()

    # --- entry ---------------------------------------------------------------------------
    def run(self) -> RunStats:
        started = time.monotonic()
        self.target = discover(self.root, self.config.paths, tests_given=self.config.tests is not None)
        source = self.mutant_source or OperatorMutants(self.config.operators)
        lock_path = self.root / STORE_DIR / "lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(lock_path))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise UsageError(
                f"another mutagent run is already using {self.config.root} "
                f"(lock {lock_path}); wait for it or stop it"
            ) from None
        # A SIGKILLed run's copy is removed now, not only when this run needs a copy of its own
        # (a run that reuses every result never creates one).
        sandbox.remove_stale_workspaces()
        try:
            store = Store.open(self.root, warn=warning)
            try:
                self._run_locked(store, source)
            finally:
                store.close()
        except BaseException:
            self._shutdown(force=True)  # Ctrl-C, SIGTERM or an error: kill workers and children now
            raise
        else:
            self._shutdown(force=False)
        finally:
            lock.release()
        self.stats.wall = time.monotonic() - started
        return self.stats

    def _shutdown(self, force: bool) -> None:
        if self.pool is not None:
            self.pool.close(force=force)
            self.pool = None
        if self.workspace is not None:
            self.workspace.cleanup()
            self.workspace = None

    # --- steps ---------------------------------------------------------------------------
    def _run_locked(self, store: Store, source: MutantSource) -> None:
        self._read_files()
        key = baseline_key(
            self.root, self.files, self._config_texts(), self.config.tests, self.config.pass_env
        )
        self.baseline_key = key
        cached = store.load_baseline(key)
        if cached is not None and cached.get("unchecked") and self.config.exclude_flaky:
            cached = None  # --exclude-flaky plans only once every control is in: measure again
        basis = {
            **baseline_basis(
                self.root, self._config_texts(), self.config.tests, self.config.pass_env, self.files
            ),
            "sources": {f: self.files[f] for f in self.target.sources},
        }
        increment = self._increment(store, basis) if cached is None else None
        if cached is None and (increment is None or increment.remeasure):
            # the workers start (import, collect) while the mutants are generated; after an edit
            # to function bodies only, the import-time lines are the stored ones (that is what
            # lets the baseline be partial), so the first worker need not measure its start-up,
            # and what to preload before forking is known already (``_write_warm_up``)
            if increment is not None:
                self._write_warm_up(increment.previous)
            self._ensure_pool(self.config.workers, measure=increment is None)
        mutants = [] if self.config.explore_only else self._generate(store, source)
        self.stats.generated = len(mutants)
        self.stats.files_scanned = len(self.target.sources)
        if self.mutant_filter is not None:
            mutants = self.mutant_filter(mutants)
        self.stats.mutants = len(mutants)
        # the narrow analysis of module-level mutants needs no baseline: it runs in a thread while
        # the workers start and the baseline runs (see ``ahead``)
        module_of = {f: self.target.module_name(f)[0] for f in self.files}
        sources = {f: self.files[f] for f in self.target.sources}
        narrow = NarrowAhead(sources, self.files, module_of)
        narrowing = Ahead(lambda: narrow.analyse(mutants)) if mutants else None
        if not mutants and cached is None and not self.config.explore_only:
            # Nothing to judge (say, ``--since`` on a change that touches no source line): the
            # suite's verdicts would be about no mutant, so the baseline is not worth its cost.
            if self.pool is not None:
                self.pool.close(force=True)
                self.pool = None
            store.set_run([], {}, [], {f: self.files[f] for f in self.target.sources}, self._scope())
            store.set_meta("faults", "[]")
            return
        if cached is not None:
            baseline = Baseline.from_json(cached)
            self.baseline = baseline
            self.stats.baseline_cached = True
            if baseline.unchecked:  # the run that measured it stopped during its control run
                self._deferred_controls = [_baseline_job("control", [n]) for n in baseline.unchecked]
        else:
            measuring = time.monotonic()
            baseline = self._fresh_baseline(increment)
            self.stats.baseline_wall = time.monotonic() - measuring
            store.save_baseline(key, baseline.to_json(), basis)  # again once deferred controls are in
        self._explore(store, baseline, key)
        if self.config.explore_only:
            return
        mutants = [*mutants, *self._fault_handling_mutants(store, mutants, source)]
        excluded = self._flaky_policy(baseline)
        graph = ImportGraph(self.files, module_of)
        planner = Planner(
            sources,
            self.files,
            baseline,
            excluded,
            self.config.fast,
            self.config.timeout_factor,
            self.config.timeout_constant,
            graph,
            narrow.narrower_for(baseline.import_lines, narrowing),
        )
        plans = [planner.plan(m) for m in mutants]
        fingerprints = {p.mutant.id: p.fingerprint for p in plans}

        def record_run() -> None:
            tests = [
                TestInfo(n, baseline.duration(n), baseline.tests.get(n, {}).get("outcome", "passed"))
                for n in baseline.order
            ]
            store.set_run(mutants, fingerprints, tests, sources, self._scope())

        def controlled() -> None:
            """Every control is in and passed: the baseline is final (durations included)."""
            store.save_baseline(key, baseline.to_json(), basis)
            record_run()

        record_run()
        store.set_meta("faults", json.dumps(baseline.faults))
        finished = store.finished(fingerprints)
        self.stats.reused = len(finished)
        fresh = [planner.decide(p) for p in plans if p.mutant.id not in finished]
        decided = [p for p in fresh if p.status is not None]
        store.save_results((self._decided_result(p), p.fingerprint) for p in decided)
        self.stats.decided = len(decided)
        pending = [p for p in fresh if p.status is None]
        if pending or self._deferred_controls is not None:
            self._run_mutants(store, planner, pending, controlled)

    def _scope(self) -> dict[str, Any]:
        """What the reports must say about this run's mutant set: ``--fast``, and the filter's
        own record (``--shard``/``--since``, see ``commands.run.Narrowing.scope``)."""
        describe = getattr(self.mutant_filter, "scope", None)
        return {"fast": self.config.fast, **(describe() if callable(describe) else {})}

    def _explore(self, store: Store, baseline: Baseline, key: str) -> None:
        """Fault exploration (``exploration``), cached with the baseline it explored: stored in the
        ``exploration`` meta row, under the baseline's key and the budget."""
        budget = self.config.explore_budget
        if budget <= 0 or not baseline.faults:
            store.set_meta("exploration", "")  # nothing explored for this baseline
            return
        explored_key = f"{key}:{budget:g}:{EXPLORATION_VERSION}"
        if store.get_meta("exploration_key") == explored_key and store.get_meta("exploration"):
            runs = len(json.loads(store.get_meta("exploration") or "{}").get("runs", []))
            self.stats.exploration = (runs, 0.0, True)
            return
        from mutagent.engine.orchestration.exploration import explore

        pool = self._ensure_pool(self.config.workers)
        own = sorted({self.target.module_name(f)[0].split(".")[0] for f in self.target.sources} - {""})
        result = explore(
            pool,
            baseline,
            self._ensure_workspace().aux,
            self.console,
            budget_factor=budget,
            baseline_wall=self._baseline_wall(store, key),
            timeout_factor=self.config.timeout_factor,
            timeout_constant=self.config.timeout_constant,
            own_modules=own,
            sources={str(self.copy_root / rel): rel for rel in self.target.sources},
        )
        self._repair_copy()
        store.set_meta("exploration", json.dumps(result.to_json()))
        store.set_meta("exploration_key", explored_key)
        self.stats.exploration = (len(result.runs), result.wall, False)

    def _fault_handling_mutants(
        self, store: Store, mutants: list[Mutant], source: MutantSource
    ) -> list[Mutant]:
        """Mutants of the fault-handling code exploration found and no agent mutant reaches
        (``explore.mutants``): for the agent family of the operator library, in a run that is not
        narrowed by ``--since`` or ``--shard`` (each shard explores on its own, so its regions
        could differ from another's)."""
        if self.mutant_filter is not None or not isinstance(source, OperatorMutants):
            return []
        if self.config.operators.strip() not in ("agent", "all"):
            return []
        try:
            data = json.loads(store.get_meta("exploration") or "null")
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        from mutagent.explore.mutants import fault_mutants
        from mutagent.explore.results import Exploration

        sources = {f: self.files[f] for f in self.target.sources}
        extra = fault_mutants(Exploration.from_json(data), sources, mutants)
        self.stats.generated += len(extra)
        self.stats.mutants += len(extra)
        return extra

    def _baseline_wall(self, store: Store, key: str) -> float | None:
        """The wall time of the last full measurement of the baseline (the exploration's budget is a
        multiple of it): this run's, else the one stored with it; None when never recorded."""
        if self.stats.baseline_wall and self.stats.baseline_remeasured is None:
            store.set_meta("baseline_wall", json.dumps({"key": key, "wall": self.stats.baseline_wall}))
            return self.stats.baseline_wall
        try:
            stored = json.loads(store.get_meta("baseline_wall") or "null")
        except ValueError:
            return None
        return float(stored["wall"]) if isinstance(stored, dict) and stored.get("wall") else None

    def _read_files(self) -> None:
        for relative in [*self.target.sources, *self.target.tests]:
            path = self.root / relative
            try:
                self.files[relative] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"cannot read {path}: {exc}") from exc

    def _config_texts(self) -> dict[str, str]:
        texts = {}
        for name in self.target.config_files:
            try:
                texts[name] = (self.root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        return texts

    def _generate(self, store: Store, source: MutantSource) -> list[Mutant]:
        """Every mutant of every source file, from the store's cache when file and operators match."""
        mutants: list[Mutant] = []
        seen: set[str] = set()
        for relative in self.target.sources:
            text = self.files[relative]
            file_key = hashlib.sha256(f"{source.key}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()
            cached = store.load_generated(relative, file_key)
            if cached is None:
                try:
                    cached = source.generate(self.root, relative, text)
                except MutagentError:
                    raise
                except Exception as exc:  # an operator bug must not become a traceback
                    raise MutagentError(
                        f"generating the mutants of {relative} failed: {type(exc).__name__}: {exc}",
                        exitcodes.INTERNAL_ERROR,
                    ) from exc
                if relative not in getattr(source, "incomplete", ()):
                    store.save_generated(relative, file_key, cached)
            for mutant in cached:
                if mutant.id not in seen:
                    seen.add(mutant.id)
                    mutants.append(mutant)
        return mutants

    # --- workspace, baseline, control run --------------------------------------------------
    def _ensure_workspace(self) -> sandbox.Workspace:
        if self.workspace is None:
            sandbox.remove_stale_workspaces()
            self.workspace = sandbox.create_workspace(self.root)
            self.copy_guard = CopyGuard(self.root, self.workspace.copy_of(self.root))
            base_env = sandbox.scrub_environment(dict(os.environ), self.config.pass_env)
            self.env = sandbox.test_environment(self.workspace, self.target.import_roots(), base_env)
            self.env["PYTEST_DEBUG_TEMPROOT"] = str(self.workspace.aux / "tmp")  # tmp_path dirs die with us
            (self.workspace.aux / "tmp").mkdir()
        return self.workspace

    @property
    def copy_root(self) -> Path:
        assert self.workspace is not None
        return self.workspace.copy_of(self.root)

    def _common_args(self) -> list[str]:
        return common_pytest_args(self.copy_root, self._ensure_workspace().aux)

    def _module_map(self) -> dict[str, str]:
        modules = {}
        for relative in self.target.sources:
            name, _ = self.target.module_name(relative)
            if name and all(part.isidentifier() for part in name.split(".")):
                modules[name] = str(self.copy_root / relative)
        return modules

    def _start_baseline(self) -> RunningBaseline:
        self._ensure_workspace()
        return start_baseline(
            copy_root=self.copy_root,
            aux=self.workspace.aux,  # type: ignore[union-attr]
            env=self.env,
            pytest_args=[*(self.config.tests or []), *self._common_args()],
            sources={str(self.copy_root / rel): rel for rel in self.target.sources},
            modules=self._module_map(),
        )

    def _increment(self, store: Store, basis: dict[str, object]) -> Increment | None:
        """The tests to measure again when only function bodies changed since the stored baseline
        (see ``incremental``), else ``None``: a full baseline."""
        previous = store.previous_baseline()
        if previous is None:
            return None
        data, old_basis = previous
        return plan_increment(data, old_basis, basis, {f: self.files[f] for f in self.target.sources})

    def _fresh_baseline(self, increment: Increment | None = None) -> Baseline:
        """The suite measured in the workers' forked children (batches with per-test coverage,
        then each test alone), or only the tests an edit can have changed (``increment``); when
        that is not clean (a test fails there, a worker cannot start), the plain pytest run and
        the control run say why."""
        log = self._ensure_workspace().aux / FAULT_LOG_FILE
        log.unlink(missing_ok=True)
        if increment is not None:
            partial = self._incremental_baseline(increment, log)
            if partial is not None:
                return partial
            log.unlink(missing_ok=True)
        self.console.print(
            f"[dim]baseline: running the test suite of {self.config.root} once with per-test coverage...[/]",
            soft_wrap=True,
        )
        baseline = self._forked_baseline()
        if baseline is None:
            log.unlink(missing_ok=True)  # the plain run logs the whole suite again
            baseline = self._plain_baseline(self._start_baseline())
            baseline.faults = collect_fault_log(log, baseline.order)
            return baseline
        baseline.faults = collect_fault_log(log, baseline.order)
        self.baseline = baseline
        self._require_coverage(baseline)
        self._write_warm_up(baseline)
        self._after_warm_up(self._ensure_pool(0))
        return baseline

    def _incremental_baseline(self, increment: Increment, log: Path) -> Baseline | None:
        """The previous baseline with the tests an edit can have changed measured again, or
        ``None`` (then a full baseline) when the workers collect other tests or one of them does
        not pass in its measured child."""
        total = len(increment.previous.order)
        self.console.print(
            f"[dim]baseline: only function bodies changed; {len(increment.remeasure)} of {total} tests "
            "ran them and are measured again...[/]",
            soft_wrap=True,
        )
        measured = None
        if increment.remeasure:
            previous = increment.previous
            known = {
                "import_lines": increment.import_lines,
                "preload": previous.preload,
                "models": previous.models,
            }
            ready = self._ready_workers(known)
            if ready is None or ready[0] != previous.order:
                return None
            # the re-measured tests' controls overlap the mutants, as in a first run (``control``)
            measured = self._measure(
                ready[0],
                ready[1],
                only=increment.remeasure,
                expected=previous.duration,
                defer_control=not self.config.exclude_flaky,
            )
            if measured is None:
                return None
            measured.faults = collect_fault_log(log, measured.order)
        baseline = increment.merge(measured)
        self.baseline = baseline
        self.stats.baseline_remeasured = (len(increment.remeasure), total)
        self._require_coverage(baseline)
        self._write_warm_up(baseline)
        if self.pool is not None:
            self._after_warm_up(self.pool)
        return baseline

    def _ready_workers(
        self, known_imports: dict[str, object] | None = None
    ) -> tuple[list[str], dict[str, object]] | None:
        """The started workers' collection and start-up measurement (``known_imports`` when the
        workers were started without measuring it), or ``None`` if they cannot start."""
        pool = self._ensure_pool(self.config.workers, measure=known_imports is None)
        try:
            pool.wait_ready()
        except UsageError:
            raise
        except MutagentError:
            return None
        infos = pool.ready_info()
        imports = next((info.imports for info in infos if info.imports is not None), known_imports)
        collected: list[str] = list(infos[0].collected) if infos else []
        if imports is None or not collected:
            return None
        return collected, imports

    def _forked_baseline(self) -> Baseline | None:
        """The baseline measured in the forking harness (``probe``), or ``None`` if a test does not
        pass there or the workers cannot start: the plain run then tells a red suite, a flaky
        test or a broken collection apart with its usual one-line errors."""
        ready = self._ready_workers()
        if ready is None:
            return None
        # --exclude-flaky leaves a test that fails alone out of every plan: plans made before
        # every control is in could change, so that run keeps the control run before mutants
        return self._measure(*ready, defer_control=not self.config.exclude_flaky)

    def _measure(
        self,
        collected: list[str],
        imports: dict[str, object],
        only: list[str] | None = None,
        expected: Callable[[str], float] | None = None,
        defer_control: bool = False,
    ) -> Baseline | None:
        """``only`` (default: every collected test) in measured batches, then each alone (the
        longest first when ``expected`` durations are known: a slow test left for last would
        keep one worker busy while the others wait). With ``defer_control`` only the batches run
        here: the control jobs wait in ``_deferred_controls`` for the mutant phase, which
        overlaps them with the first mutants (``control``), and the baseline returned is
        provisional until they are in."""
        pool = self._ensure_pool(self.config.workers, measure=True)
        collected = collected if only is None else only
        measured = ForkedBaseline(collected, imports)
        job = _baseline_job

        # Measured batches first (contiguous slices of the collection order, see ``batches``),
        # then every test alone (the control run), when the workers have warmed up.
        jobs = [job("baseline", batch) for batch in measured_batches(collected, pool.size, expected)]
        alone = collected if expected is None else sorted(collected, key=lambda t: -expected(t))
        controls = [job("control", [nodeid]) for nodeid in alone]
        if not defer_control:
            jobs += controls

        def on_result(job: Job, result: JobResult) -> None:
            kind, tests = job.data
            self.stats.record_cpu(kind, result)
            if kind == "baseline":
                measured.add(tests, result)
            else:
                measured.add_control(tests[0], result)
            progress.advance(Status.PENDING, len(tests))

        runs, label = (
            (1, "baseline (measured batches)") if defer_control else (2, "baseline (2 runs per test)")
        )
        with RunProgress(self.console, runs * len(collected), label, show_counts=False) as progress:
            pool.run(jobs, on_result)
        self._measure_warm_again(pool, measured)
        baseline = measured.baseline()
        if baseline is not None and defer_control:
            plain = baseline.tests
            baseline.control = provisional_controls(
                baseline.passing, lambda n: float(plain[n].get("duration", 0.0))
            )
            baseline.unchecked = list(collected)
            self._deferred_controls = controls
        return baseline

    def _measure_warm_again(self, pool: Pool, measured: ForkedBaseline) -> None:
        """Measure once more, each alone in a warm worker, the tests that failed in their batch
        when the batches found modules of the copy the tests import lazily.

        A batch's child starts from its worker's state after collection: a test that a plain
        session runs after another test imported part of the target lazily (an SDK's sub-clients,
        seconds of pydantic models) imported it again itself, inside its own deadline
        (``anyio.fail_after(1)``). Every later child (control run, mutants) starts warm, with
        those modules loaded (``Worker._warm_up``): the test is measured in that state, and
        only its outcome there says whether the suite is green in the harness."""
        failed = measured.failed()
        warm = measured.warm_up()
        if not failed or not warm.targets:
            return
        self._write_warm_up(warm)

        def on_result(job: Job, result: JobResult) -> None:
            self.stats.record_cpu("baseline", result)
            measured.add(job.data[1], result)

        again = [
            Job(f"warm:{nodeid}", JobSpec.plain([nodeid], BASELINE_TIMEOUT, measure_baseline=True),
                watchdog=BASELINE_TIMEOUT, data=("baseline", [nodeid]))
            for nodeid in failed
        ]  # fmt: skip
        pool.run(again, on_result)

    def _plain_baseline(self, running: RunningBaseline) -> Baseline:
        baseline = running.wait()
        self.baseline = baseline
        self._require_coverage(baseline)
        self._write_warm_up(baseline)
        self._control_run(baseline)
        return baseline

    def _require_coverage(self, baseline: Baseline) -> None:
        if not any(baseline.coverage.values()):
            # Every mutant would be NoCoverage or "survive": the suite exercises some other copy
            # of the code (typically an installed package of the same name), or none at all.
            raise UsageError(
                f"no test executes any line of the {len(self.target.sources)} files to mutate: do the "
                "tests import another copy of the code (an installed package of the same name)? "
                "Run mutagent on the directory the tests import from"
            )

    def _ensure_pool(self, jobs: int, measure: bool = False) -> Pool:
        """The worker pool, started on first use (``measure``: its workers measure their start-up
        for a fresh baseline, see ``probe``)."""
        if self.pool is None:
            workspace = self._ensure_workspace()
            config = WorkerConfig(
                targets={str(self.copy_root / rel): rel for rel in self.target.sources},
                modules=self._module_map(),
                aux=str(workspace.aux),
                root=str(self.copy_root),
                fresh_import_args=(
                    *option_arguments(self.config.tests or [], self.copy_root),
                    *self._common_args(),
                ),
                warm=str(workspace.aux / WARM_FILE),
                measure=measure,
            )
            if self.baseline is not None:
                self._write_warm_up(self.baseline)
            config_path = workspace.aux / "worker.json"
            config_path.write_text(config.to_json(), encoding="utf-8")
            command = [
                sys.executable,
                "-m",
                "pytest",
                *(self.config.tests or []),
                *self._common_args(),
                "-p",
                "mutagent.engine.harness.worker_plugin",
            ]
            size = max(1, min(self.config.workers, jobs))
            env = {**self.env, "MUTAGENT_WORKER": str(config_path)}
            self.pool = Pool(size, command, self.copy_root, env, workspace.aux, self._repair_copy)
            self.pool.start()
            self.stats.workers = size
        return self.pool

    def _write_warm_up(self, baseline: Baseline) -> None:
        """Tell the workers what to import before their first fork (read at their first job:
        they may have started while the baseline, which finds it out, was still running).

        An incremental run writes it before its workers start, from the previous baseline
        (``_run_locked``), so that the re-measured tests' children find the SDK loaded as every
        later child will; the final baseline then only rewrites the zygote's file, which is read
        when the zygote starts, at the first fresh import, after the baseline."""
        workspace = self._ensure_workspace()
        path = workspace.aux / WARM_FILE
        if path.exists():
            if json.loads(path.read_text(encoding="utf-8")).get("zygote"):
                self._zygote_config(workspace, baseline)
            return
        warm = {
            "preload": baseline.preload,
            "targets": baseline.targets,
            "models": baseline.models,
            "zygote": self._zygote_config(workspace, baseline),
        }
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(warm), encoding="utf-8")
        partial.replace(path)  # a worker never reads half of it

    def _zygote_config(self, workspace: sandbox.Workspace, baseline: Baseline) -> str | None:
        """The zygote's configuration file (``None``: every fresh import starts a new process)."""
        if not self.config.zygote or not baseline.preload:
            return None
        path = workspace.aux / "zygote.json"
        path.write_text(
            json.dumps(
                {
                    "preload": baseline.preload,
                    "models": baseline.models,
                    "root": str(self.copy_root),
                }
            ),
            encoding="utf-8",
        )
        return str(path)

    def _control_run(self, baseline: Baseline) -> None:
        """Every passing test once, alone, in the forking harness, unmutated."""
        passing = baseline.passing
        pool = self._ensure_pool(len(passing))
        jobs = []
        for nodeid in passing:
            timeout = time_limit(
                baseline.duration(nodeid), self.config.timeout_factor, self.config.timeout_constant
            )
            spec = JobSpec.plain([nodeid], timeout)
            jobs.append(Job(f"control:{nodeid}", spec, watchdog=timeout, data=nodeid))

        def on_result(job: Job, result: JobResult) -> None:
            self.stats.record_cpu("control", result)
            # a test's record counts only from a job that ended normally
            done = result if result.status is JobEnd.DONE else result.but(tests=())
            baseline.control[job.data] = outcome_of(job.data, done)
            progress.advance(Status.PENDING)

        with RunProgress(self.console, len(jobs), "control run", show_counts=False) as progress:
            pool.run(jobs, on_result)
        self._after_warm_up(pool)

    def _after_warm_up(self, pool: Pool) -> None:
        self.stats.worker_startup = pool.worker_startup()
        started = {warm.get("started_thread") for warm in pool.warm_info()} - {None}
        if started:
            warning(
                f"importing {', '.join(sorted(started))} before forking started a thread; the workers "
                "stopped preparing lazy imports there (the baseline checked the rest)"
            )

    def _flaky_policy(self, baseline: Baseline) -> set[str]:
        flaky = baseline.flaky
        if not flaky:
            return set()

        def describe(nodeid: str) -> str:
            info = baseline.control.get(nodeid, {})
            message = info.get("message") or ""
            return f"{nodeid} ({info.get('outcome', 'not run')}{': ' + message if message else ''})"

        shown = "; ".join(describe(n) for n in flaky[:5]) + (
            f"; and {len(flaky) - 5} more" if len(flaky) > 5 else ""
        )
        if not self.config.exclude_flaky:
            raise BaselineError(
                f"{len(flaky)} tests pass in a plain pytest run but not when run alone in mutagent's forked "
                f"harness (flaky or order-dependent): {shown}; fix them or pass --exclude-flaky"
            )
        warning(f"excluding {len(flaky)} flaky tests from mutant runs: {shown}")
        return set(flaky)

    # --- mutants -------------------------------------------------------------------------
    def _decided_result(self, plan: Plan) -> MutantResult:
        assert plan.status is not None
        return MutantResult(
            plan.mutant.id,
            plan.status,
            covered_by=list(plan.covering),
            error=plan.error,
            status_reason=plan.reason,
        )

    def _run_mutants(
        self,
        store: Store,
        planner: Planner,
        pending: list[Plan],
        controlled: Callable[[], None] | None = None,
    ) -> None:
        """Run ``pending``; when the baseline's control jobs were deferred (``control``), they run
        here first and each mutant is released once all its tests passed alone (``controlled``
        then records the final baseline)."""
        pool = self._ensure_pool(max(1, len(pending)))
        startup = pool.worker_startup() or self.stats.worker_startup or 2.0
        fresh_import_allowance = 2 * startup + 1.0
        controls, self._deferred_controls = self._deferred_controls or [], None
        gate = (
            ControlGate.holding(
                ((p.mutant.id, p, p.covering) for p in pending), [j.data[1][0] for j in controls]
            )
            if controls
            else None
        )
        passing = set(self.baseline.passing) if self.baseline is not None else set()
        control_rank, mutant_rank = (
            release_ranks(
                [j.data[1][0] for j in controls],
                ((p.mutant.id, p.timeout, p.covering) for p in pending),
                self.baseline.duration,
            )
            if controls and self.baseline is not None
            else ({}, {})
        )
        for job in controls:
            job.rank = control_rank.get(job.data[1][0], ())

        def make_job(plan: Plan) -> Job:
            if gate is not None:
                planner.settle_timing(plan)  # its tests' control durations are in now
            name, _ = self.target.module_name(plan.mutant.file)
            spec = planner.job_spec(plan, self.copy_root, name, fresh_import_allowance)
            watchdog = plan.timeout + (fresh_import_allowance if spec.needs_fresh_import else 0.0)
            return Job(
                plan.mutant.id,
                spec,
                watchdog=watchdog + fresh_import_allowance,
                data=plan,
                rank=mutant_rank.get(plan.mutant.id, ()),
            )

        def longest_first(jobs: list[Job]) -> list[Job]:
            # the slowest mutants start early and do not leave one worker finishing alone
            return sorted(jobs, key=lambda job: -job.watchdog)

        jobs = longest_first([make_job(p) for p in (gate.open() if gate is not None else pending)])
        fresh_imports = [job for job in jobs if job.spec.needs_fresh_import]
        held_fresh: list[Job] = []  # with deferred controls: fresh imports wait for all of them
        if gate is not None:
            held_fresh, fresh_imports = fresh_imports, []
            by_test = {job.data[1][0]: job for job in controls}
            assert self.baseline is not None
            # the pool orders them by rank (``release_ranks``); among equal ranks, this order
            first = control_order(list(by_test), (p.covering for p in pending), self.baseline.duration)
            jobs = [*(by_test[t] for t in first), *(job for job in jobs if not job.spec.needs_fresh_import)]
        else:
            control = self._zygote_trust_check(fresh_imports, fresh_import_allowance)
            if control is not None:  # the fresh imports wait for it; the other mutants need not
                jobs = [control, *(job for job in jobs if not job.spec.needs_fresh_import)]

        def on_control(job: Job, result: JobResult) -> list[Job] | None:
            """One test's control run came back: record it, release the mutants it completes."""
            assert gate is not None and self.baseline is not None
            nodeid = job.data[1][0]
            self.stats.record_cpu("control", result)
            record = outcome_of(nodeid, result)
            if nodeid in passing:  # as ``ForkedBaseline.baseline``: only passing tests keep one
                self.baseline.control[nodeid] = record
            if nodeid in self.baseline.unchecked:
                self.baseline.unchecked.remove(nodeid)
            if nodeid in passing and record["outcome"] != "passed":
                gate.did_not_pass(nodeid)  # flaky: nothing more is released (see after the run)
                return None
            follow = [make_job(p) for p in gate.passed(nodeid)]
            held_fresh.extend(j for j in follow if j.spec.needs_fresh_import)
            follow = [j for j in follow if not j.spec.needs_fresh_import]
            if gate.done and not gate.failed:
                if controlled is not None:
                    controlled()
                fresh_imports.extend(longest_first(held_fresh))
                zygote = self._zygote_trust_check(fresh_imports, fresh_import_allowance)
                if zygote is not None:  # it holds the fresh imports: ranked with the longest
                    zygote.rank = max((j.rank for j in fresh_imports), default=(0, 0.0, 0))[:2] + (1,)
                follow += [zygote] if zygote is not None else fresh_imports
            return longest_first(follow) or None

        order = KillerFirst() if self.config.fast else None
        parts_done: dict[str, list[tuple[Part, JobResult]]] = {}

        def split(job: Job, ways: int) -> list[Job] | None:
            """An idle worker's share of a full-matrix mutant (see ``split``)."""
            if not isinstance(job.data, Plan) or not splittable(job.spec):
                return None
            plan: Plan = job.data
            assert self.baseline is not None
            # two parts per worker: a mutant changes how long its tests take, so equal baseline
            # shares are not equal shares; the worker done first takes the parts left
            cuts = partition(job.spec.tests, self.baseline.duration, 2 * ways)
            if len(cuts) < 2:
                return None
            factor, constant = self.config.timeout_factor, self.config.timeout_constant
            parts = part_specs(job.spec, cuts, self.baseline.duration, factor, constant)
            parts_done[plan.mutant.id] = []
            self.stats.split += 1
            return [
                Job(
                    f"{plan.mutant.id}#{part.index}",
                    spec,
                    watchdog=part.timeout + fresh_import_allowance,
                    data=(plan, part),
                )
                for part, spec in parts
            ]

        def on_result(job: Job, result: JobResult) -> list[Job] | None:
            if gate is not None and isinstance(job.data, tuple) and job.data[0] == "control":
                return on_control(job, result)
            if job.id == zygote_trust_check.CONTROL_ID:
                self.stats.record_cpu("zygote-control", result)
                assert self.baseline is not None
                checked = list(job.spec.tests)
                note = zygote_trust_check.settle(self.baseline, fresh_imports, checked, result)
                store.save_baseline(self.baseline_key, self.baseline.to_json())
                if note:
                    warning(note)
                return fresh_imports
            if isinstance(job.data, tuple):  # one part of a split mutant (see ``split``)
                plan, part = job.data
                self._repair_copy(plan.mutant.id)
                done = parts_done[plan.mutant.id]
                done.append((part, result))
                if len(done) < part.of:
                    return None
                mutant_result, result = classify_parts(plan, parts_done.pop(plan.mutant.id))
            else:
                plan = job.data
                self._repair_copy(plan.mutant.id)
                mutant_result = classify(plan, result)
            if order is not None:
                order.learn(plan, mutant_result)
            store.save_result(mutant_result, plan.fingerprint)
            self._account(result)
            progress.advance(mutant_result.status)
            return None

        with RunProgress(self.console, len(pending)) as progress:
            pool.run(
                jobs,
                on_result,
                progress.tick,
                order.reorder if order is not None else None,
                split=None if self.config.fast else split,
                by_rank=gate is not None,
            )
        self.stats.worker_restarts = pool.restarts
        self.stats.cpu["worker-startup"] = list(pool.startup_cpu)
        if gate is not None and gate.failed and self.baseline is not None:
            if controlled is not None:
                controlled()  # stored as it is: the next run stops at once with the same error
            self._flaky_policy(self.baseline)  # the flaky-test error, as without the overlap

    def _zygote_trust_check(self, jobs: list[Job], allowance: float) -> Job | None:
        """The zygote's control job for the fresh-import ``jobs`` (see ``zygote_trust_check``), or
        ``None`` when their launchers are settled without one."""
        baseline = self.baseline
        enabled = self.config.zygote and baseline is not None and bool(baseline.preload)

        def timeout_of(tests: list[str]) -> float:
            assert baseline is not None
            durations = sum(baseline.duration(t) for t in tests)
            return time_limit(durations, self.config.timeout_factor, self.config.timeout_constant)

        note = None
        control = zygote_trust_check.control_for(baseline, jobs, enabled, timeout_of, allowance)
        if control is None and enabled and baseline is not None and jobs:
            note = zygote_trust_check.settle(baseline, jobs, [], None)  # recorded in an earlier run
        if note:
            warning(note)
        return control

    def _repair_copy(self, mutant_id: str | None = None) -> None:
        """Put back whatever the last mutant changed in the isolated copy (see ``copyguard``)."""
        if self.copy_guard is None:
            return
        repair = self.copy_guard.repair()
        if not repair:
            return
        self._copy_repairs += 1
        if self._copy_repairs == 1:
            changed = ", ".join(sorted(repair.restored + repair.removed)[:3])
            who = f"mutant {mutant_id}" if mutant_id else "a crashed worker's mutant"
            warning(
                f"{who} changed files of the isolated copy ({changed}); restored before the next "
                "mutant (your tree is untouched)"
            )
        if repair.changed_in_tree:
            warning(
                f"restored {', '.join(repair.changed_in_tree[:3])} in the copy from your tree, which was "
                "edited during the run: later verdicts may mix old and new code"
            )

    def _account(self, result: JobResult) -> None:
        note = self.stats.record_job(result)
        if note and note not in self._zygote_warnings:
            self._zygote_warnings.add(note)
            warning(note)


def _baseline_job(kind: str, tests: list[str]) -> Job:
    """A measured batch (``kind`` "baseline") or one test's control run ("control")."""
    spec = JobSpec.plain(tests, BASELINE_TIMEOUT, measure_baseline=kind == "baseline")
    return Job(f"{kind}:{tests[0]}", spec, watchdog=BASELINE_TIMEOUT, data=(kind, tests))


def run_engine(
    config: EngineConfig,
    console: Console,
    mutant_source: MutantSource | None = None,
    mutant_filter: MutantFilter | None = None,
) -> RunStats:
    """Run one target; ``mutant_filter`` narrows the generated mutants before anything is planned."""
    return Engine(config, console, mutant_source, mutant_filter).run()
