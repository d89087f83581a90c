"""Where a mutant sits, in the terms mutmut uses: which function ("unit") and whether mutmut would
mutate there at all.

mutmut 3 only mutates the bodies of top-level functions and of methods of top-level classes
(through trampolines); it skips module-level code, class bodies, decorated functions (a single
``@staticmethod``/``@classmethod`` excepted), decorators, annotations, enum classes and a few
dunder names. mutagent mutates all of those too. Classifying mutagent's mutants this way gives an
apples-to-apples count ("plain function bodies") and a per-function comparison.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from mutagent.model import Mutant

ALLOWED_DECORATORS = {"staticmethod", "classmethod"}
ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
SKIPPED_NAMES = {"__getattribute__", "__setattr__", "__new__"}

PLAIN = "plain function body"


@dataclass(frozen=True)
class Unit:
    """A function mutmut would build a trampoline for (or refuse to, with ``skip`` saying why)."""

    qualname: str
    start: tuple[int, int]  # where its body starts (line, col)
    end: tuple[int, int]  # where the def ends
    header: tuple[int, int]  # where the decorators/def start
    skip: str | None
    defaults: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = ()  # simple defaults mutmut mutates


def _decorator_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _unit(node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, skip: str | None) -> Unit:
    decorators = node.decorator_list
    if skip is None and decorators:
        if not (len(decorators) == 1 and _decorator_name(decorators[0]) in ALLOWED_DECORATORS):
            skip = "decorated function"
    if skip is None and node.name in SKIPPED_NAMES:
        skip = f"{node.name} (never mutated by mutmut)"
    first = node.body[0]
    header = decorators[0] if decorators else node
    simple = tuple(
        ((d.lineno, d.col_offset), (d.end_lineno or d.lineno, d.end_col_offset or 0))
        for d in [*node.args.defaults, *node.args.kw_defaults]
        if isinstance(d, ast.Name)
        or (isinstance(d, ast.Constant) and isinstance(d.value, (int, float, complex, str)))
    )
    return Unit(
        f"{prefix}{node.name}",
        (first.lineno, first.col_offset),
        (node.end_lineno or node.lineno, node.end_col_offset or 0),
        (header.lineno, header.col_offset),
        skip,
        simple,
    )


def units_of(source: str) -> list[Unit]:
    """Top-level functions and methods of top-level classes of one module."""
    units: list[Unit] = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            units.append(_unit(node, "", None))
        elif isinstance(node, ast.ClassDef):
            enum = any(
                (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")) in ENUM_BASES
                for b in node.bases
            )
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    units.append(_unit(item, f"{node.name}.", "enum class" if enum else None))
    return units


def classify(mutant: Mutant, units: list[Unit]) -> tuple[str, str]:
    """``(unit qualname or "", category)``; category is :data:`PLAIN` when mutmut mutates there."""
    start = (mutant.location.start_line, mutant.location.start_col)
    for unit in units:
        if unit.header <= start <= unit.end:
            if unit.skip:
                return unit.qualname, unit.skip
            if start < unit.start and not any(low <= start <= high for low, high in unit.defaults):
                return unit.qualname, "def line (decorator, annotation, non-literal default)"
            return unit.qualname, PLAIN
    return "", "module level or class body"


@dataclass
class Categories:
    """Where a run's mutants sit, in mutmut's terms."""

    counts: Counter[str]  # category -> mutants
    per_unit: Counter[str]  # "module:qualname" -> plain-body mutants
    of: dict[str, str]  # mutant id -> category


def categorise(mutants: list[Mutant], sources: dict[str, str], modules: dict[str, str]) -> Categories:
    """Classify every mutant (``modules`` maps each source file to its dotted module name)."""
    units = {file: units_of(text) for file, text in sources.items()}
    found = Categories(Counter(), Counter(), {})
    for mutant in mutants:
        qualname, category = classify(mutant, units.get(mutant.file, []))
        found.counts[category] += 1
        found.of[mutant.id] = category
        if category == PLAIN:
            found.per_unit[f"{modules.get(mutant.file, mutant.file)}:{qualname}"] += 1
    return found
