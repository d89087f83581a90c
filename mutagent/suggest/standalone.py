"""A test module of its own for tests built from other modules' tests (``suggest --write FILE``).

A candidate uses its model test's module: its imports (``b``, ``ToolCall``, the agent's error
classes), its helpers and module-level fixtures. A module of its own imports exactly the names
its tests use from there: an import of the model module is repeated as it is (a relative import
stays relative, which holds in the same directory), and a name the model module defines itself
is imported from that module (relatively inside a package, by its bare name in a directory
pytest puts on ``sys.path``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

import libcst as cst


@dataclass(frozen=True)
class Piece:
    """One test function, the module it was modelled on, and the import lines it adds."""

    code: str
    model_file: str  # relative to the target
    model: cst.Module
    imports: tuple[str, ...] = ()


def _used(code: str) -> set[str]:
    names: set[str] = set()

    def walk(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            names.add(node.value)
        for child in node.children:
            walk(child)

    walk(cst.parse_module(code))
    return names


def _bindings(module: cst.Module) -> dict[str, str]:
    """Module-level name -> how to bring it into another module: an import line to repeat, or
    ``""`` for a name the module defines itself."""
    found: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            found[node.name.value] = ""
            continue
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for small in node.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = module.code_for_node(alias.name)
                    bound = alias.asname.name.value if alias.asname else dotted.split(".")[0]  # type: ignore[union-attr]
                    found[bound] = f"import {module.code_for_node(alias).rstrip(', ')}"
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                dots = "." * len(small.relative)
                source = dots + (module.code_for_node(small.module) if small.module is not None else "")
                for alias in small.names:
                    name = module.code_for_node(alias.name)
                    bound = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                    found[bound] = f"from {source} import {module.code_for_node(alias).rstrip(', ')}"
            elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = small.targets if isinstance(small, cst.Assign) else [small]
                for target in targets:
                    if isinstance(target.target, cst.Name):
                        found[target.target.value] = ""
    return found


def module_reference(model_file: str, target_file: str, package: bool) -> str:
    """How ``target_file`` imports ``model_file``: ``.test_x`` in the same package, ``test_x`` in
    the same non-package directory (pytest puts it on ``sys.path``), else its dotted path."""
    model, target = PurePosixPath(model_file), PurePosixPath(target_file)
    if model.parent == target.parent:
        return f".{model.stem}" if package else model.stem
    return ".".join(model.with_suffix("").parts)


def standalone(pieces: list[Piece], target_file: str, packages: set[str]) -> str:
    """The text of a module holding every piece's function, with the imports they need
    (``packages``: the directories, relative to the target, that are packages)."""
    lines: list[str] = ["from __future__ import annotations", ""]
    imports: list[str] = []
    for piece in pieces:
        used = _used(piece.code)
        bindings = _bindings(piece.model)
        reference = module_reference(
            piece.model_file, target_file, str(PurePosixPath(piece.model_file).parent) in packages
        )
        for name in sorted(used):
            how = bindings.get(name)
            if how is None or name == "annotations":
                continue
            imports.append(how or f"from {reference} import {name}")
        imports.extend(piece.imports)
    lines += list(dict.fromkeys(i for i in imports if "__future__" not in i))
    body = "\n\n\n".join(piece.code.rstrip("\n") for piece in pieces)
    return "\n".join(lines) + "\n\n\n" + body + "\n"
