"""Finding operators: the built-in library in ``operators/`` plus third-party entry points.

Built-ins are the modules of the ``operators`` package, one ``Operator`` subclass each.
Plugins register in the entry-point group ``mutagent.operators``
(``my-op = "my_package.my_module:MyOperator"``), the same way pytest finds ``pytest11`` plugins.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
from functools import lru_cache
from importlib.metadata import entry_points

from mutagent.errors import UsageError
from mutagent.mutation.operator import Operator

ENTRY_POINT_GROUP = "mutagent.operators"
FAMILIES = ("agent", "generic", "all")


def _operator_classes_in(module: object) -> list[type[Operator]]:
    return [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Operator)
        and obj is not Operator
        and not inspect.isabstract(obj)
        and obj.__module__ == module.__name__  # type: ignore[attr-defined]
    ]


def _builtin_operators() -> list[Operator]:
    package = importlib.import_module("operators")
    found: list[Operator] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"operators.{info.name}")
        found.extend(cls() for cls in _operator_classes_in(module))
        extra = getattr(module, "OPERATORS", None)  # modules that build a family of operators
        if extra:
            found.extend(extra)
    return found


def _plugin_operators() -> list[Operator]:
    found: list[Operator] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        where = f"operator plugin {entry.name!r} ({entry.value}, entry point group {ENTRY_POINT_GROUP})"
        try:
            loaded = entry.load()
        except Exception as exc:  # a broken plugin must name itself, not crash with a traceback
            raise UsageError(f"cannot load {where}: {type(exc).__name__}: {exc}") from exc
        if inspect.isclass(loaded) and issubclass(loaded, Operator) and not inspect.isabstract(loaded):
            operator = loaded()
        elif isinstance(loaded, Operator):
            operator = loaded
        else:
            raise UsageError(f"{where} is not a mutagent Operator subclass or instance")
        if not isinstance(getattr(operator, "name", None), str) or not operator.name:
            raise UsageError(f"{where} has no operator name")
        found.append(operator)
    return found


@lru_cache(maxsize=1)
def all_operators() -> dict[str, Operator]:
    """Every known operator by name, built-ins first; a plugin may not shadow a built-in name."""
    catalogue: dict[str, Operator] = {}
    for operator in _builtin_operators():
        catalogue[operator.name] = operator
    for operator in _plugin_operators():
        if operator.name in catalogue:
            raise UsageError(f"operator name {operator.name!r} from a plugin clashes with a built-in")
        catalogue[operator.name] = operator
    return catalogue


def get_operator(name: str) -> Operator | None:
    return all_operators().get(name)


def _unknown(name: str, catalogue: dict[str, Operator]) -> str:
    """One line: the unknown name, the closest known names, and where to see them all."""
    close = difflib.get_close_matches(name, [*catalogue, *FAMILIES], n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    return (
        f"unknown operator {name!r} ({hint}families: {', '.join(FAMILIES)}; "
        f"`mutagent operators` lists all {len(catalogue)} operators)"
    )


def select_operators(spec: str | None = "agent") -> list[Operator]:
    """Resolve ``agent`` (default), ``generic``, ``all`` or a comma list of names/families."""
    catalogue = all_operators()
    chosen: dict[str, Operator] = {}
    for part in (spec or "agent").split(","):
        name = part.strip()
        if not name:
            continue
        if name == "all":
            chosen.update(catalogue)
        elif name in ("agent", "generic"):
            chosen.update({k: v for k, v in catalogue.items() if v.family == name})
        elif name in catalogue:
            chosen[name] = catalogue[name]
        else:
            raise UsageError(_unknown(name, catalogue))
    if not chosen:
        raise UsageError(f"no operators selected by {spec!r}")
    return list(chosen.values())
