"""Work every forked test process would redo for itself, done once before forking.

A worker has imported the suite at collection, yet each forked child still paid, inside its
first test, for the modules the tests import lazily and for the validators of the pydantic
models its tests touch: the anthropic and openai SDKs defer building their ~1500 model schemas
to first use, and each child rebuilt the ~70 it needed (about half of a one-test child's CPU on
the sample agent). The baseline session records both lists (modules imported from outside the
target copy, pydantic models complete at its end); a worker and a zygote replay them before they
fork.

Neither replay runs test or target code: importing a third-party module the tests import anyway,
and building a schema pydantic would build on first use (``model_rebuild`` is the documented way
to do it early). The control run, which runs every test alone in the forking harness, checks the
outcome as it checks everything else about the harness.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Imported:
    """What ``import_all`` did."""

    failed: list[str] = field(default_factory=list)  # left to the test processes, as before
    started_thread: str | None = None  # the module whose import started a thread (import stopped)


def import_all(names: list[str]) -> Imported:
    """Import ``names`` in the order the baseline imported them.

    A failed import (an alias pytest registers by hand, a module that only imports in its
    parent's context...) only means the test processes import it themselves, as they always did.
    Importing stops at the first module that starts a thread: a process about to fork must not
    gain threads (a forked child gets none of them, and may inherit a lock one of them held).
    """
    result = Imported()
    threads = threading.active_count()
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except (Exception, SystemExit):  # any failure just leaves it to the tests
            result.failed.append(name)
        if threading.active_count() > threads:
            result.started_thread = name
            break
    return result


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    seen: set[type] = set()
    stack = [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                found.append(sub)
                stack.append(sub)
    return found


def complete_models(root: str) -> list[str]:
    """``module:qualname`` of every pydantic model defined outside ``root`` whose schema is built."""
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None)
    if base is None:
        return []
    real_root = os.path.realpath(root) + os.sep
    names = []
    for model in _subclasses(base):
        module = sys.modules.get(model.__module__)
        path = getattr(module, "__file__", None) or ""
        if (
            not getattr(model, "__pydantic_complete__", False)
            or "<" in model.__qualname__
            or "[" in model.__qualname__
        ):
            continue
        if path and not os.path.realpath(path).startswith(real_root):
            names.append(f"{model.__module__}:{model.__qualname__}")
    return sorted(names)


def _resolve(name: str) -> Any:
    module_name, _, qualname = name.partition(":")
    target: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target


def build_models(names: list[str]) -> int:
    """Build the schemas of the named pydantic models not built yet; returns how many it built."""
    built = 0
    for name in names:
        model = _resolve(name)
        if model is None or getattr(model, "__pydantic_complete__", True):
            continue
        try:
            model.model_rebuild(raise_errors=False)
        except Exception:  # a model that cannot build yet builds on first use, as before
            continue
        built += 1
    return built
