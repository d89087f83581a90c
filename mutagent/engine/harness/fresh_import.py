"""A worker's fresh-import runs (mutants only a new import applies): through its zygote when it can,
as a new ``python -m pytest`` process otherwise.

Both launchers run the same pytest arguments with the same ``fresh_import_plugin`` and leave the same
files, which ``fresh_import_files.interpret`` reads with ``verdict.fresh_import_end``'s rules, so the
honesty rules cannot drift apart.

The zygote is started lazily, on a worker's first fresh-import job (most runs have none). If it
cannot start (a preload starts threads, imports the target...) or keeps dying, the worker uses new
``python -m pytest`` processes (launcher ``FRESH_PROCESS``) for the rest of the run: slower, never
less honest.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mutagent.engine.harness.events import (
    Exited,
    Forked,
    ForkRequest,
    ZygoteFatal,
    ZygoteMessage,
    ZygoteReady,
)
from mutagent.engine.harness.fresh_import_files import (
    Exit,
    RunFiles,
    interpret,
    read_progress,
    timeout_result,
)
from mutagent.engine.harness.procs import kill_group
from mutagent.engine.harness.zygote_client import ParentWatch, ZygoteClient, ZygoteLost
from mutagent.engine.messages import JobResult, JobSpec, WorkerConfig
from mutagent.engine.protocol import parent_pid_env

ZYGOTE_MAX_DEATHS = 3  # a zygote that dies this often (mutants killing their parent) is given up
REAP_GRACE = 30.0  # seconds to wait for the zygote to fork, or to reap a killed child


class FreshImportRunner:
    """Runs one worker's fresh-import jobs, one at a time."""

    def __init__(
        self, config: WorkerConfig, env: dict[str, str], startup: float, parent: ParentWatch
    ) -> None:
        self.config = config
        self.aux = Path(config.aux)
        self.env = env  # of the fresh processes: the worker's, minus its own variables
        self.startup = startup
        self.parent = parent
        self.zygote: ZygoteClient | None = None
        self.zygote_problem: str | None = None
        self.zygote_config: str | None = None
        self.use_zygote(config.zygote)
        self.zygote_deaths = 0
        self.zygote_boots = 0
        self.current_group: int | None = None
        self.runs = 0
        self.child_cpu = 0.0  # CPU seconds of zygote children (not this process's children)

    def use_zygote(self, config_path: str | None) -> None:
        """Fork fresh imports from a zygote configured by ``config_path`` (``None``: never)."""
        self.zygote_config = config_path
        self.zygote_problem = None if config_path else "the zygote is disabled"

    def stop(self) -> None:
        """Kill the running fresh-import process (if any) and the zygote."""
        if self.current_group:
            kill_group(self.current_group)
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None

    # --- one job (``launchers.ZygoteLauncher`` / ``FreshProcessLauncher`` choose where) ----------
    def in_zygote(self, job: JobSpec) -> JobResult:
        """Run ``job`` in a child of the zygote (``ensure_zygote`` started it)."""
        with self._run_files(job) as (args, env, files, fresh_timeout):
            timeout = min(fresh_timeout, job.timeout + self.startup + 1.0)
            return self._in_zygote(args, env, files, timeout, list(job.tests))

    def in_new_process(self, job: JobSpec) -> JobResult:
        """Run ``job`` in a new ``python -m pytest``."""
        with self._run_files(job) as (args, env, files, fresh_timeout):
            return self._in_subprocess(args, env, files, fresh_timeout, list(job.tests))

    @contextmanager
    def _run_files(self, job: JobSpec) -> Iterator[tuple[list[str], dict[str, str], RunFiles, float]]:
        """The pytest arguments, environment, files and time limit of one fresh-import run (the
        same for both launchers); the files and the run's ``tmp_path`` root are removed afterwards
        (pytest's own cleanup of its numbered dirs never runs in a forked child)."""
        source = job.fresh_import
        assert source is not None, "a fresh-import job carries the source to import"
        self.runs += 1
        files = RunFiles.at(self.aux, f"fresh-import-{os.getpid()}-{self.runs}")
        temp_root = self.aux / "tmp" / f"{os.getpid()}-fresh-import-{self.runs}"
        temp_root.mkdir(parents=True, exist_ok=True)
        spec = {**source.to_wire(), "out": str(files.out), "progress": str(files.progress)}
        files.spec.write_text(json.dumps(spec), encoding="utf-8")
        args = [
            *job.tests,
            *self.config.fresh_import_args,
            "-p",
            "mutagent.engine.harness.fresh_import_plugin",
        ]
        if job.fast:
            args.append("-x")
        env = {"MUTAGENT_FRESH_IMPORT": str(files.spec), "PYTEST_DEBUG_TEMPROOT": str(temp_root)}
        if job.explore:  # the fault ``fake_model`` inserts (``mutagent.fakeserver.inject``)
            env["MUTAGENT_EXPLORE"] = job.explore
        fresh_timeout = float(job.fresh_import_timeout or job.timeout + 2 * self.startup + 1.0)
        try:
            yield args, env, files, fresh_timeout
        finally:
            files.remove()
            shutil.rmtree(temp_root, ignore_errors=True)

    # --- a new python -m pytest process ----------------------------------------------------
    def _in_subprocess(
        self, args: list[str], env: dict[str, str], files: RunFiles, timeout: float, selected: list[str]
    ) -> JobResult:
        with open(files.log, "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest", *args],
                cwd=self.config.root,
                env={**self.env, **env, **parent_pid_env()},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.current_group = process.pid
        try:
            deadline = time.monotonic() + timeout
            while process.poll() is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    kill_group(process.pid)
                    process.wait()
                    return timeout_result(files, timeout)
                readable, _, _ = select.select([self.parent.fd], [], [], min(remaining, 0.02))
                self.parent.check(readable)
        finally:
            kill_group(process.pid)  # also whatever the tests started in its session
            self.current_group = None
        return interpret(files, Exit.from_returncode(process.returncode), selected)

    # --- a child of the zygote -------------------------------------------------------------
    def ensure_zygote(self) -> float:
        """Start the zygote unless it runs or was given up; returns the seconds spent starting it."""
        if self.zygote is not None or self.zygote_problem:
            return 0.0
        started = time.monotonic()
        self.zygote_boots += 1
        log = self.aux / f"zygote-{os.getpid()}-{self.zygote_boots}.log"
        assert self.zygote_config is not None
        self.zygote = ZygoteClient(Path(self.zygote_config), self.config.root, self.env, log)
        message: ZygoteMessage | None
        try:
            message = self.zygote.receive(started + max(60.0, 3 * self.startup), self.parent)
        except ZygoteLost as exc:
            message = ZygoteFatal(f"{exc}: {_tail(log)}")
        if not isinstance(message, ZygoteReady):
            why = message.message if isinstance(message, ZygoteFatal) else ""
            self._drop_zygote(
                f"the zygote could not start: {why or 'the zygote did not start in time'}", permanently=True
            )
        else:
            self.zygote.info = message
            self.child_cpu += message.cpu
        return time.monotonic() - started

    def _drop_zygote(self, why: str, permanently: bool = False) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None
        self.zygote_deaths += 1
        if permanently or self.zygote_deaths >= ZYGOTE_MAX_DEATHS:
            self.zygote_problem = why

    def _in_zygote(
        self, args: list[str], env: dict[str, str], files: RunFiles, timeout: float, selected: list[str]
    ) -> JobResult:
        zygote = self.zygote
        assert zygote is not None
        pid = 0
        timed_out = False
        try:
            zygote.send(ForkRequest(tuple(args), env, str(files.log)))
            message = zygote.receive(time.monotonic() + REAP_GRACE, self.parent)
            if not isinstance(message, Forked):
                raise ZygoteLost("the zygote did not fork")
            pid = self.current_group = message.pid
            message = zygote.receive(time.monotonic() + timeout, self.parent)
            if message is None:
                timed_out = True
                kill_group(pid)
                message = zygote.receive(time.monotonic() + REAP_GRACE, self.parent)
                if message is None:
                    raise ZygoteLost("the zygote did not reap a killed run")
            if not isinstance(message, Exited) or message.pid != pid:
                raise ZygoteLost(f"the zygote answered out of turn: {message}")
            status = message.status
            self.child_cpu += message.cpu
        except (ZygoteLost, OSError) as exc:
            if pid:
                kill_group(pid)
            self._drop_zygote(str(exc))
            done, running = read_progress(files.progress)
            return JobResult.crashed(
                done, running, f"{exc} while it ran this mutant's fresh import\n" + files.log_tail()
            )
        finally:
            self.current_group = None
        if timed_out:
            return timeout_result(files, timeout)
        return interpret(files, Exit.from_wait_status(status), selected)


def _tail(path: Path, limit: int = 1500) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-limit:].strip()
    except OSError:
        return ""
