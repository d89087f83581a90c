"""Helpers shared by the three pytest plugins mutagent loads into the target's test processes."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any


def short_message(report: Any) -> str:
    """One line saying why a test or a collection failed (the crash line pytest would show)."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None and str(crash.message).strip():
        return str(crash.message).strip().splitlines()[0]
    text = str(getattr(report, "longreprtext", "") or getattr(report, "longrepr", "") or "")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E ") or "Error" in line]
    line = errors[-1] if errors else lines[-1] if lines else "failed"
    return line[2:].strip() if line.startswith("E ") else line.strip()


def plain_failure_reports(config: Any) -> None:
    """In a forked child: have pytest describe a failure by its exception only, not a formatted
    traceback.

    A child keeps a failing test's crash line (``short_message``: the exception raised where the
    test failed, which pytest derives the same way whatever the traceback style) and nothing
    else of the report, while formatting the traceback (``--tb=native`` reads the source line of
    every frame, through the SDK's and the HTTP client's frames) cost about a millisecond per
    failing test, several times per mutant in the full kill matrix. Only this child's copy of
    the configuration changes; the worker and every later child start from the worker's.
    """
    config.option.tbstyle = "value"


def full_text(report: Any, limit: int = 4000) -> str:
    """The failure text, clipped, carried in each test's record. No report shows it yet (the crash
    line, ``short_message``, is what results keep), and in a forked child it is the exception
    alone (``plain_failure_reports``)."""
    text = str(getattr(report, "longreprtext", "") or "")
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2 :]


def add_report(tests: dict[str, dict[str, Any]], report: Any) -> dict[str, Any]:
    """Fold one phase report (setup/call/teardown) into the per-test record in ``tests``."""
    entry = tests.setdefault(
        report.nodeid,
        {"nodeid": report.nodeid, "outcome": "passed", "duration": 0.0, "message": "", "text": ""},
    )
    entry["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
    if report.failed:
        if entry["outcome"] != "failed":
            entry["message"] = f"{report.when}: {short_message(report)}"
            entry["text"] = full_text(report)
        entry["outcome"] = "failed"
    elif report.skipped and entry["outcome"] == "passed" and report.when != "teardown":
        entry["outcome"] = "skipped"
    return entry


def module_origin(name: str) -> str | None:
    """Where Python takes module ``name`` from in this process (imported or not)."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def shadow_check(modules: dict[str, str]) -> list[dict[str, str]]:
    """Modules whose file is not the isolated copy's: an installed copy of the target would be
    imported instead of the mutated one and make every mutant survive."""
    found = []
    for name, expected in modules.items():
        origin = module_origin(name)  # None: not importable by name (odd file name), nothing shadows it
        if origin is not None and os.path.realpath(origin) != os.path.realpath(expected):
            found.append({"module": name, "expected": expected, "actual": origin})
    return found


# mutagent's own plugins: importing one has effects (coverage starts, a worker config is read)
OWN_PLUGINS = (
    "mutagent.engine.harness.baseline_plugin",
    "mutagent.engine.harness.worker_plugin",
    "mutagent.engine.harness.fresh_import_plugin",
)


# imported by the baseline's measuring, not by the suite: nothing else needs them preloaded
BASELINE_ONLY = frozenset({"coverage"})


def module_under(module: Any, real_root: str) -> bool:
    """Whether ``module`` (its file or any package directory) lives under ``real_root``
    (a ``realpath`` ending with a separator)."""
    paths = [getattr(module, "__file__", None) or "", *(getattr(module, "__path__", None) or [])]
    return any(path and os.path.realpath(str(path)).startswith(real_root) for path in paths)


def _is_test_path(relative: str) -> bool:
    """A test file or conftest by the path rules of ``selection.discover.is_test_file`` (the
    harness stays import-light)."""
    parts = relative.split(os.sep)
    name = parts[-1]
    return (
        name == "conftest.py"
        or name.startswith("test_")
        or name.endswith("_test.py")
        or any(part in ("tests", "test") for part in parts[:-1])
    )


def copy_modules(modules: dict[str, Any], root: str) -> list[str]:
    """Names of the imported modules of the target copy under ``root`` that are not tests, in
    import order: what a test imported lazily (a package ``__getattr__``, an import inside a
    function) and the workers then load once, as a plain pytest session has them loaded after
    the first test that needed them."""
    real_root = os.path.realpath(root) + os.sep
    names = []
    for name, module in list(modules.items()):
        path = getattr(module, "__file__", None)
        if module is None or not path or name in ("__main__", "__mp_main__"):
            continue
        real = os.path.realpath(str(path))
        if real.startswith(real_root) and not _is_test_path(real[len(real_root) :]):
            names.append(name)
    return names


def external_modules(modules: dict[str, Any], root: str) -> list[str]:
    """Names of the imported modules that live outside ``root`` (the target copy), in import order.

    These are what a zygote or a worker may import before any mutant runs: the third-party
    dependencies, the standard library and pytest's plugins. Everything under ``root`` (the
    target, its tests and conftests) must instead be imported fresh by each mutant's run, and so
    must mutagent's own plugins (their import has effects).
    """
    real_root = os.path.realpath(root) + os.sep
    return [
        name
        for name, module in list(modules.items())
        if module is not None
        and name not in ("__main__", "__mp_main__")
        and name not in OWN_PLUGINS
        and name.split(".")[0] not in BASELINE_ONLY
        and not module_under(module, real_root)
    ]
