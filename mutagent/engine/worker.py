"""A warm worker: one pytest process that collected the suite once and serves jobs from the engine.

Per job it either forks a child that swaps code objects and runs the selected collected items
(fast: no interpreter start, no imports, no collection), or, for mutants only a fresh import can
apply (module level, class bodies, functions not loaded at collection, closure mismatch), runs a
fresh ``python -m pytest`` with an import hook that loads the mutated module from memory.

The worker enforces each job's timeout itself (SIGKILL to the child's process group) and watches
its own pipe from the engine: if the engine dies, the worker kills its child and exits.
"""

from __future__ import annotations

import gc
import json
import marshal
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from mutagent.engine import child as child_mod
from mutagent.engine.protocol import recv, send


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        return f"killed by signal {name}"
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)}"
    return f"ended with status {status}"


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Worker:
    """The job loop of one worker process (runs inside ``pytest_runtestloop``)."""

    def __init__(
        self, session: Any, config: dict[str, Any], reports: dict[str, dict[str, Any]], started: float
    ) -> None:
        self.session = session
        self.config = config
        self.reports = reports
        self.in_fd, self.out_fd = (int(fd) for fd in os.environ["MUTAGENT_WORKER_FDS"].split(","))
        self.items = {item.nodeid: item for item in session.items}
        self.index: dict[child_mod.CodeKey, list[Any]] = {}
        self.startup = time.monotonic() - started
        self.current_group: int | None = None
        self.jobs_done = 0

    # --- lifecycle -----------------------------------------------------------------------
    def serve(self) -> None:
        signal.signal(signal.SIGTERM, self._on_term)
        if self.session.testsfailed:
            send(
                self.out_fd,
                {
                    "type": "fatal",
                    "kind": "collect",
                    "message": f"{self.session.testsfailed} errors while collecting the tests",
                },
            )
            return
        from mutagent.engine.pytest_support import shadow_check

        shadowed = shadow_check(self.config["modules"])
        if shadowed:
            send(self.out_fd, {"type": "fatal", "kind": "shadowed", "shadowed": shadowed})
            return
        self.index = child_mod.build_index(self.config["targets"])
        gc.collect()
        gc.freeze()  # children then never walk (and copy-on-write) the worker's whole heap in a collection
        send(
            self.out_fd,
            {
                "type": "ready",
                "pid": os.getpid(),
                "collected": list(self.items),
                "startup": self.startup,
                "live_functions": len(self.index),
            },
        )
        while True:
            message = recv(self.in_fd)
            if message is None or message.get("type") == "stop":
                return
            result = self.handle(message)
            send(self.out_fd, result)
            self.jobs_done += 1

    def _on_term(self, signum: int, frame: Any) -> None:
        if self.current_group:
            _kill_group(self.current_group)
        os._exit(128 + signum)

    def _parent_gone(self) -> bool:
        """The engine's end of our input pipe closed (it never writes to a busy worker)."""
        return recv(self.in_fd) is None

    # --- jobs ----------------------------------------------------------------------------
    def handle(self, job: dict[str, Any]) -> dict[str, Any]:
        started = time.monotonic()
        missing = [nodeid for nodeid in job["tests"] if nodeid not in self.items]
        if missing:
            result = {
                "status": "error",
                "detail": f"tests not collected by the worker: {', '.join(missing)}",
                "tests": [],
                "running": None,
            }
            mode = "none"
        else:
            mode = "none"
            try:
                mode, swaps, why = self._choose_mode(job)
                if mode == "fallback":
                    result = self._run_fallback(job)
                    result["fallback_reason"] = why
                else:
                    result = self._run_forked(job, swaps)
            except Exception:  # a failure of the worker itself (fork, pipes, disk): the job's error
                result = {"status": "error", "detail": traceback.format_exc(), "tests": [], "running": None}
        result.update(type="result", id=job["id"], mode=mode, elapsed=time.monotonic() - started)
        return result

    def _choose_mode(self, job: dict[str, Any]) -> tuple[str, list[tuple[Any, Any]], str]:
        levels = job.get("swap")
        if levels is None:
            return "fallback", [], job.get("fallback_reason") or "runs at import time"
        swaps: list[tuple[Any, Any]] = []
        for position, level in enumerate(levels):
            key = tuple(level["key"])
            code = marshal.loads(level["code"])
            live = self.index.get(key, [])  # type: ignore[call-overload]
            if position == 0 and not live:
                return "fallback", [], f"{key[1]} is not loaded after collection"
            if any(function.__code__.co_freevars != code.co_freevars for function in live):
                return "fallback", [], f"the closure variables of {key[1]} change"
            swaps.append((key, code))
        return ("swap" if swaps else "plain"), swaps, ""

    def _temp_root(self) -> Path:
        """A fresh ``tmp_path`` root per child or fresh-import run, deleted right after it: a child
        leaves through ``os._exit``, so pytest's own cleanup of its numbered dirs never runs."""
        path = Path(self.config["aux"]) / "tmp" / f"{os.getpid()}-{self.jobs_done}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _run_forked(self, job: dict[str, Any], swaps: list[tuple[Any, Any]]) -> dict[str, Any]:
        items = [self.items[nodeid] for nodeid in job["tests"]]
        temp_root = self._temp_root()

        def prepare() -> None:
            os.environ["PYTEST_DEBUG_TEMPROOT"] = str(temp_root)
            child_mod.apply_swaps(self.index, swaps)

        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the mutant child
            os.close(read_fd)
            child_mod.run_child(
                write_fd,
                (self.in_fd, self.out_fd),
                prepare,
                items,
                self.reports,
                bool(job.get("fast")),
            )
        os.close(write_fd)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        self.current_group = pid
        try:
            return self._watch_child(pid, read_fd, float(job["timeout"]))
        finally:
            self.current_group = None
            os.close(read_fd)
            shutil.rmtree(temp_root, ignore_errors=True)

    def _watch_child(self, pid: int, read_fd: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        tests: list[dict[str, Any]] = []
        running: str | None = None
        status, detail = "crash", ""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                status, detail = "timeout", f"no result within {timeout:.1f}s"
                break
            readable, _, _ = select.select([read_fd, self.in_fd], [], [], remaining)
            if self.in_fd in readable and self._parent_gone():
                _kill_group(pid)
                os._exit(1)
            if read_fd not in readable:
                continue
            message = recv(read_fd)
            if message is None:
                break
            if message[0] == "start":
                running = message[1]
            elif message[0] == "test":
                tests.append(message[1])
                running = None
            elif message[0] == "done":
                status = "done"
                break
            elif message[0] == "error":
                status, detail = "error", message[1]
                break
        _kill_group(pid)  # also reaps anything the tests started in the child's group
        _, wait_status = os.waitpid(pid, 0)
        if status == "crash":
            detail = f"the mutant's test process {_describe_exit(wait_status)} without reporting"
        return {"status": status, "tests": tests, "running": running, "detail": detail}

    # --- fresh-import fallback ------------------------------------------------------------
    def _run_fallback(self, job: dict[str, Any]) -> dict[str, Any]:
        fallback = job["fallback"]
        aux = Path(self.config["aux"])
        stem = f"fallback-{os.getpid()}-{self.jobs_done}"
        spec_path, out_path, log_path = (aux / f"{stem}.json", aux / f"{stem}.out.json", aux / f"{stem}.log")
        spec_path.write_text(json.dumps({**fallback, "out": str(out_path)}), encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "pytest",
            *job["tests"],
            *self.config["fallback_args"],
            "-p",
            "mutagent.engine.fallback_plugin",
        ]
        if job.get("fast"):
            command.append("-x")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MUTAGENT_WORKER")}
        env["MUTAGENT_FALLBACK"] = str(spec_path)
        temp_root = self._temp_root()
        env["PYTEST_DEBUG_TEMPROOT"] = str(temp_root)
        timeout = float(job.get("fallback_timeout") or float(job["timeout"]) + 2 * self.startup + 1.0)
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command,
                cwd=self.config["root"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.current_group = process.pid
        try:
            status = self._watch_process(process, timeout)
        finally:
            self.current_group = None
        try:
            if status == "timeout":
                return {
                    "status": "timeout",
                    "tests": [],
                    "running": None,
                    "detail": f"fresh-import run gave no result within {timeout:.1f}s",
                }
            return self._fallback_result(out_path, log_path, process.returncode, job["tests"])
        finally:
            for path in (spec_path, out_path, log_path):
                path.unlink(missing_ok=True)
            shutil.rmtree(temp_root, ignore_errors=True)

    def _watch_process(self, process: subprocess.Popen[bytes], timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill_group(process.pid)
                process.wait()
                return "timeout"
            readable, _, _ = select.select([self.in_fd], [], [], min(remaining, 0.02))
            if readable and self._parent_gone():
                _kill_group(process.pid)
                os._exit(1)
        _kill_group(process.pid)
        return "done"

    @staticmethod
    def _fallback_result(
        out_path: Path, log_path: Path, returncode: int, selected: list[str]
    ) -> dict[str, Any]:
        try:
            data = json.loads(out_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:] if log_path.exists() else ""
            return {
                "status": "crash",
                "tests": [],
                "running": None,
                "detail": f"fresh-import test process exited with code {returncode} without reporting\n"
                + tail,
            }
        if data.get("partial") and data.get("import_error"):
            # importing the mutated module raised and pytest stopped before running anything
            # (a conftest imports the target): every selected test fails to even load
            last = data["import_error"].strip().splitlines()[-1]
            failed = [
                {
                    "nodeid": nodeid,
                    "outcome": "failed",
                    "duration": 0.0,
                    "text": data["import_error"],
                    "message": f"import: {last}",
                }
                for nodeid in selected
            ]
            return {"status": "done", "tests": failed, "running": None, "detail": ""}
        if data.get("harness_error"):
            return {"status": "error", "tests": [], "running": None, "detail": data["harness_error"]}
        if not data.get("loaded"):
            return {
                "status": "error",
                "tests": data.get("tests", []),
                "running": None,
                "detail": "the selected tests never imported the mutated module",
            }
        return {"status": "done", "tests": data.get("tests", []), "running": None, "detail": ""}
