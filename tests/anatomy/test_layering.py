"""The layering the code must keep: the operator library (``operators/``) builds on ``mutagent``,
never the other way round. The recognisers live in ``mutagent.anatomy``; an operator imports them.

Imports are read with libcst, at any depth (inside functions and ``if TYPE_CHECKING:`` blocks
too), so a lazy import cannot hide a dependency. The one place ``mutagent`` may name the
``operators`` package is the registry, which loads the built-in operators as plugins by name
(``importlib.import_module``).
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mutagent"
LOADER = PACKAGE / "mutation" / "registry.py"


def imported_modules(source: str) -> list[str]:
    """Every module an ``import``/``from ... import`` statement of ``source`` names, at any depth
    (relative imports as written, with their leading dots)."""
    module = cst.parse_module(source)
    found: list[str] = []
    for node in m.findall(module, m.Import() | m.ImportFrom()):
        if isinstance(node, cst.Import):
            found += [module.code_for_node(alias.name) for alias in node.names]
        else:
            dots = "." * len(node.relative)
            name = module.code_for_node(node.module) if node.module is not None else ""
            found.append(dots + name)
    return found


def dynamic_imports(source: str) -> list[str]:
    """String arguments of ``import_module(...)``/``__import__(...)`` calls (f-strings by their
    literal text)."""
    module = cst.parse_module(source)
    calls = m.findall(
        module,
        m.Call(
            func=m.Name("import_module") | m.Attribute(attr=m.Name("import_module")) | m.Name("__import__")
        ),
    )
    found = []
    for call in calls:
        if call.args:
            value = call.args[0].value
            if isinstance(value, cst.SimpleString):
                found.append(str(value.evaluated_value))
            elif isinstance(value, cst.FormattedString):
                found.append("".join(p.value for p in value.parts if isinstance(p, cst.FormattedStringText)))
    return found


def _names_operators(module: str) -> bool:
    return module == "operators" or module.startswith("operators.")


def test_the_import_reader_sees_nested_and_relative_imports() -> None:
    source = (
        "import os, operators._x as x\n"
        "from operators import _retry\n"
        "def f():\n"
        "    from operators._streams import keyword\n"
        "    from ..anatomy import syntax\n"
        "if TYPE_CHECKING:\n"
        "    import operators\n"
        "importlib.import_module(f'operators.{name}')\n"
    )
    assert imported_modules(source) == [
        "os",
        "operators._x",
        "operators",
        "operators._streams",
        "..anatomy",
        "operators",
    ]
    assert dynamic_imports(source) == ["operators."]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_mutagent_imports_nothing_from_operators(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    offending = [name for name in imported_modules(source) if _names_operators(name)]
    assert not offending, (
        f"{path.relative_to(ROOT)} imports {offending}: recognisers belong in mutagent.anatomy"
    )
    if path != LOADER:
        loaded = [name for name in dynamic_imports(source) if _names_operators(name)]
        assert not loaded, f"{path.relative_to(ROOT)} loads {loaded}; only the registry loads operators"


def test_operators_keep_no_recognition_modules() -> None:
    """The operator library holds operators (and the generic family's builder), no shared
    recognisers: those are the anatomy's."""
    helpers = sorted(p.name for p in (ROOT / "operators").glob("_*.py") if p.name != "__init__.py")
    assert helpers == ["_generic.py"]
