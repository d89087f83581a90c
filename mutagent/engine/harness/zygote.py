"""The zygote: a warm process that forks one fresh-import pytest run per import-time mutant.

A mutant at module level, in a class body or in a def header only takes effect when its module
is imported again, so the warm workers (which imported the target at collection) cannot apply
it by swapping code objects. Starting ``python -m pytest`` for each such mutant costs a new
interpreter plus every heavy import of the suite (``import anthropic`` alone is ~1.5 s of CPU).

A worker starts one zygote (``python -m mutagent.engine.harness.zygote CONFIG``) on its first
fresh-import job. The zygote imports what the baseline session imported from *outside* the
target copy (third-party packages, the standard library, pytest and its plugins) and nothing of
the target or its tests, then serves fork requests: each child installs the job's environment,
redirects its output to the job's log and runs ``pytest.main(args)`` in-process, exactly the
arguments a fresh ``python -m pytest`` would get (the ``fresh_import_plugin`` among them loads the
mutated module from memory). The zygote itself never runs a test and never imports the target,
so every child starts from the same clean state.

pytest marks its plugins' modules for assertion rewriting when it starts, and warns about each one
already imported ("Module already imported so cannot be rewritten"): in a zygote child they all
are, imported by the preload, not by the user. Under ``filterwarnings = error`` that warning
would fail every child at start-up, so each child's pytest gets one ``-W ignore`` per such
module, naming it: the user's filters keep applying to everything else, their tests included.

Protocol (``protocol.send``/``recv`` over two pipes, ``MUTAGENT_ZYGOTE_FDS``; the messages are in
``harness/events.py``): the zygote sends ``ZygoteReady`` (or ``ZygoteFatal``), then for each
``ForkRequest`` ``Forked`` (the child's pid, which is also its process group) and, once the child
is gone, ``Exited`` with its wait status and CPU time. It serves one child at a time: the worker
runs one job at a time.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
import time
import traceback

from mutagent.engine.harness.events import (
    Exited,
    Forked,
    ForkRequest,
    ZygoteFatal,
    ZygoteReady,
    zygote_message_from_wire,
)
from mutagent.engine.harness.pytest_support import module_under
from mutagent.engine.harness.warm import build_models, import_all
from mutagent.engine.protocol import become_forked_child, die_with_parent, recv, send


def contamination(root: str) -> list[str]:
    """Modules of the target copy the preload pulled in (a third-party package importing the
    target, say): a zygote holding one would run mutants against a stale, unmutated import."""
    real_root = os.path.realpath(root) + os.sep
    return [name for name, module in list(sys.modules.items()) if module_under(module, real_root)]


REWRITE_WARNING = "Module already imported so cannot be rewritten; "


class _MarkedNames:
    """Stands for pytest's assertion-rewriting hook: records the names pytest marks."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def mark_rewrite(self, *names: str) -> None:
        self.names.update(names)


def preloaded_plugins() -> list[str]:
    """The modules pytest marks for assertion rewriting at start-up (its plugins' distributions,
    found by pytest's own ``Config._mark_plugins_for_rewrite``) that the preload imported already."""
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return []
    marked = _MarkedNames()
    try:
        from types import SimpleNamespace

        from _pytest.config import Config

        Config._mark_plugins_for_rewrite(SimpleNamespace(pluginmanager=SimpleNamespace()), marked, False)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - another pytest: its children warn as before, nothing worse
        return []
    return sorted(marked.names & set(sys.modules))


def rewrite_warning_filters(plugins: list[str], args: tuple[str, ...]) -> list[str]:
    """``-W`` options ignoring pytest's already-imported warning for exactly the modules the
    zygote imported before pytest could rewrite them: ``plugins`` and the ``-p`` plugins of
    ``args`` that are loaded."""
    names = list(plugins)
    for position, arg in enumerate(args):
        name = (
            args[position + 1]
            if arg == "-p" and position + 1 < len(args)
            else arg[2:]
            if arg[:2] == "-p"
            else ""
        )
        if name and not name.startswith("no:") and name in sys.modules and name not in names:
            names.append(name)
    filters: list[str] = []
    for name in names:
        filters += ["-W", f"ignore:{REWRITE_WARNING}{name}:pytest.PytestAssertRewriteWarning"]
    return filters


def _child(
    request: ForkRequest, close_fds: tuple[int, ...], parent: int, plugins: list[str] | None = None
) -> None:
    """Body of one forked run; never returns. Its exit status is pytest's exit code, 70 when the
    harness itself failed (the worker then reports a RuntimeError, never a kill)."""
    status = 70
    try:
        become_forked_child(close_fds, parent)
        log = os.open(request.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.environ.update(request.env)
        import pytest

        args = [*rewrite_warning_filters(plugins or [], request.args), *request.args]
        sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *args]
        status = int(pytest.main(args))
    except SystemExit as exc:  # raised past pytest (by a plugin, say): what ``python -m`` would exit with
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: B036 - the child must report and exit, whatever happened
        traceback.print_exc()
        status = 70
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: B036
                pass
        os._exit(status)


def serve(in_fd: int, out_fd: int, plugins: list[str] | None = None) -> None:
    """Fork one child per request, report its pid and then its wait status, until told to stop."""
    while True:
        message = zygote_message_from_wire(recv(in_fd))
        if not isinstance(message, ForkRequest):  # end-of-file: the worker is done with us
            return
        sys.stdout.flush()
        sys.stderr.flush()
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(message, (in_fd, out_fd), me, plugins)
        try:
            os.setpgid(pid, pid)  # also done by the child: whichever runs first
        except OSError:
            pass
        send(out_fd, Forked(pid).to_wire())
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: its pid stays ours
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever the tests started in the child's group
        except (ProcessLookupError, PermissionError):
            pass
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        send(out_fd, Exited(pid, status, cpu).to_wire())


def main(argv: list[str]) -> int:
    started = time.monotonic()
    in_fd, out_fd = (int(fd) for fd in os.environ.pop("MUTAGENT_ZYGOTE_FDS").split(","))
    die_with_parent()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with open(argv[0], encoding="utf-8") as handle:
        config = json.load(handle)
    imported = import_all(config["preload"])
    import pytest  # noqa: F401 - the children call pytest.main; importing it once is the point

    build_models(config.get("models", []))
    plugins = preloaded_plugins()

    problem = None
    leaked = contamination(config["root"])
    if leaked:
        problem = f"preloading imported modules of the target: {', '.join(leaked[:5])}"
    elif imported.started_thread or threading.active_count() > 1:
        names = ", ".join(t.name for t in threading.enumerate() if t is not threading.current_thread())
        problem = f"preloading started threads ({names}); forking would copy them half-run"
    if problem:
        send(out_fd, ZygoteFatal(problem).to_wire())
        return 1
    gc.collect()
    gc.freeze()  # children never walk (and copy-on-write) the preloaded heap in a collection
    ready = ZygoteReady(
        pid=os.getpid(),
        preloaded=len(config["preload"]) - len(imported.failed),
        failed=tuple(imported.failed),
        startup=time.monotonic() - started,
        cpu=time.process_time(),
    )
    send(out_fd, ready.to_wire())
    serve(in_fd, out_fd, plugins)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
