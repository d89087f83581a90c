"""Inside a warm worker: the live-function index, and what a forked mutant child does.

After collection the worker has imported the target once; every function object of a target
file is found with one ``gc.get_objects()`` scan (which also finds decorated functions, methods,
closures already created and references held by test modules). A mutant child then only has to
replace ``__code__`` on those objects (each level of the scope chain, so functions created later
by an enclosing function come from mutated code too) and run its tests in-process.
"""

from __future__ import annotations

import abc
import gc
import os
import sys
import time
import traceback
import types
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from mutagent.engine.harness.events import BaselineMeasured, ChildDone, ChildError, TestFinished, TestStarted
from mutagent.engine.harness.pytest_support import plain_failure_reports
from mutagent.engine.messages import TestRecord
from mutagent.engine.orchestration.faults import FAULT_LOG_ENV
from mutagent.engine.protocol import become_forked_child, send, send_all

CodeKey = tuple[str, str, int]  # (relative file, co_name, co_firstlineno)


def build_index(targets: dict[str, str]) -> dict[CodeKey, list[types.FunctionType]]:
    """Every live function whose code comes from a target file, keyed by where its code starts."""
    real_targets = {os.path.realpath(path): rel for path, rel in targets.items()}
    relative_of: dict[str, str | None] = {}
    index: dict[CodeKey, list[types.FunctionType]] = defaultdict(list)
    for obj in gc.get_objects():
        if type(obj) is not types.FunctionType:
            continue
        code = obj.__code__
        filename = code.co_filename
        if filename not in relative_of:
            relative_of[filename] = real_targets.get(os.path.realpath(filename))
        relative = relative_of[filename]
        if relative is not None:
            index[(relative, code.co_name, code.co_firstlineno)].append(obj)
    return dict(index)


def apply_swaps(index: dict[CodeKey, list[types.FunctionType]], swaps: Sequence[tuple[CodeKey, Any]]) -> int:
    """Point every live function of each level at its mutated code; returns how many changed."""
    changed = 0
    for key, code in swaps:
        for function in index.get(key, ()):
            function.__code__ = code
            changed += 1
    return changed


def apply_defaults(
    index: dict[CodeKey, list[types.FunctionType]],
    key: CodeKey,
    positional: dict[int, Any],
    keyword: dict[str, Any],
) -> int:
    """Give every live function at ``key`` the mutated default values (``selection/defaults.py``);
    the other defaults keep their objects. Returns how many functions changed."""
    changed = 0
    for function in index.get(key, ()):
        if positional:
            values = list(function.__defaults__ or ())
            for position, value in positional.items():
                values[position] = value
            function.__defaults__ = tuple(values)
        if keyword:
            function.__kwdefaults__ = {**(function.__kwdefaults__ or {}), **keyword}
        changed += 1
    return changed


def defaults_fit(function: types.FunctionType, positional: dict[int, Any], keyword: dict[str, Any]) -> bool:
    """Whether the live ``function`` has the defaults a swap replaces (same signature shape)."""
    count = len(function.__defaults__ or ())
    return all(0 <= i < count for i in positional) and set(keyword) <= set(function.__kwdefaults__ or {})


def live_owner(module: str, path: str, owner: str) -> Any:
    """The live module (or its top-level class ``owner``) a constant swap rebinds a name of, or
    a string saying why it cannot: not imported from ``path``, or a class whose creation may have
    consumed its attributes (a metaclass other than ``type``/``ABCMeta``, a base's
    ``__init_subclass__``: enums, pydantic models, ORM columns)."""
    live = sys.modules.get(module)
    live_file = getattr(live, "__file__", None)
    if live is None or not live_file or os.path.realpath(live_file) != os.path.realpath(path):
        return f"{module} is not loaded from the copy after collection"
    if not owner:
        return live
    cls = live.__dict__.get(owner)
    if not isinstance(cls, type) or type(cls) not in (type, abc.ABCMeta):
        return f"{owner} is not a plain class"
    if any("__init_subclass__" in vars(base) for base in cls.__mro__[1:] if base is not object):
        return f"a base of {owner} defines __init_subclass__"
    return cls


def swapped_value(module: str, expression: str) -> Any:
    """A constant's mutated value, evaluated in its module's namespace (pure by the planner's
    rule: literals and side-effect-free constructors, so evaluating it again changes nothing)."""
    namespace = vars(sys.modules[module])
    return eval(compile(expression, f"<mutated value in {module}>", "eval"), namespace)  # noqa: S307


def apply_values(values: Sequence[tuple[str, str, str, str, str]]) -> int:
    """Rebind each (module, path, owner, name, expression); returns how many were set."""
    for module, path, owner, name, expression in values:
        target = live_owner(module, path, owner)
        if isinstance(target, str):  # the worker checked it before forking: the state moved
            raise RuntimeError(f"cannot rebind {name}: {target}")
        setattr(target, name, swapped_value(module, expression))
    return len(values)


def run_child(
    out_fd: int,
    close_fds: Sequence[int],
    prepare: Callable[[], None],
    items: Sequence[Any],
    reports: dict[str, dict[str, Any]],
    fast: bool,
    parent: int | None = None,
    measure: dict[str, Any] | None = None,
    forked: bool = False,
) -> None:
    """Body of a forked child; never returns.

    Every event (``harness/events.py``) goes to ``out_fd``: ``TestStarted`` before each test,
    ``TestFinished`` after it, for a baseline job (``measure`` names the sources and the copy's
    root) then ``BaselineMeasured`` from ``probe.ChildProbe``, and last ``ChildDone``. A test's
    ``TestFinished`` is written together with the next event (nothing runs between the two), so
    the worker wakes once per test. Any exception of the harness itself (or one a mutant raises
    past pytest, such as ``KeyboardInterrupt``) is sent as ``ChildError`` with the traceback so
    that the engine records a RuntimeError, never a kill.
    """
    status = 0
    finished: list[tuple[Any, ...]] = []  # the last test's ``TestFinished``, not written yet
    try:
        if not forked:  # a standby child did these steps when it was forked
            become_forked_child(close_fds, parent)
        prepare()
        reports.clear()
        if items:
            plain_failure_reports(items[0].config)
        probe = None
        if measure is not None:
            from mutagent.engine.harness.probe import ChildProbe

            probe = ChildProbe(measure["sources"], measure["root"], measure.get("coverage"))
            if measure.get("fault_log"):  # the fake_model fixture logs what each test scripts
                os.environ[FAULT_LOG_ENV] = measure["fault_log"]
        for position, item in enumerate(items):
            send_all(out_fd, [*finished, TestStarted(item.nodeid).to_wire()])
            finished.clear()
            nextitem = items[position + 1] if position + 1 < len(items) else None
            if probe is not None:
                probe.switch(item.nodeid)
            started = time.perf_counter()
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            protocol = time.perf_counter() - started
            if probe is not None:
                probe.switch("")
            report = reports.get(item.nodeid)
            record = (
                TestRecord.from_wire({**report, "protocol": protocol})
                if report
                else TestRecord(
                    item.nodeid,
                    "failed",
                    message="pytest produced no report for this test",
                    protocol=protocol,
                )
            )
            finished.append(TestFinished(record).to_wire())
            if fast and record.outcome == "failed":
                break
        if probe is not None:
            send_all(out_fd, finished)  # before the probe's own work, which may fail
            finished.clear()
            send(out_fd, BaselineMeasured(probe.finish()).to_wire())
        send_all(out_fd, [*finished, ChildDone().to_wire()])
    except BaseException:  # noqa: B036 - a child must report everything and exit
        status = 70
        try:
            send_all(out_fd, [*finished, ChildError(traceback.format_exc()).to_wire()])
        except BaseException:  # noqa: B036
            pass
    finally:
        os._exit(status)
