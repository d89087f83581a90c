"""Real projects' own suites under mutagent: no harness error, no false flaky, the same statuses
every run, the tree untouched (issue 26).

For each ``[[project]]`` of ``projects.toml``: download the pinned sdist with pip and check its
sha256, unpack it outside the repository (``$MUTAGENT_BENCH_CACHE/realsuites``, default
``/tmp/mutagent-bench-cache/realsuites``), build the project's own venv (its suite's
dependencies and this checkout of mutagent, editable), run plain pytest on the selection, then
``mutagent run`` ``--runs`` times (3), each from scratch (``.mutagent/`` removed), and check:

* no mutant is a RuntimeError and no run ends in a harness error (exit 4, a traceback);
* no test is flagged flaky that plain pytest does not reproduce: each flagged test is run again
  alone in plain pytest; one that passes there is a false flaky;
* every run gives every mutant the same status;
* the project's tree is byte-identical afterwards (``.mutagent/`` aside) to what it was after
  plain pytest (which may write files of its own: inline-snapshot's ``.inline-snapshot/``).

It prints, per project, mutagent's wall time over plain pytest's and the mutants per minute, and
writes every figure to ``--out`` (JSON). ``--engine DIR`` runs mutagent from another checkout (put
first on ``PYTHONPATH``), for before/after figures: ``git archive REV | tar -x -C DIR``.

    python bench/realsuites/run.py [--only NAME ...] [--runs 3] [--engine DIR] [--out FILE]

Exit 0 when every check holds on every project, 1 otherwise, 2 on bad usage or a failed download
or install. Not part of ``.ci/run``: it downloads packages and takes tens of minutes; its
fixture-level checks are ordinary tests (``tests/engine/test_real_suite_shapes.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = Path(os.environ.get("MUTAGENT_BENCH_CACHE") or Path(tempfile.gettempdir()) / "mutagent-bench-cache")
ROOT = CACHE / "realsuites"
FLAKY_LINE = re.compile(r"tests pass in a plain pytest run but not when run alone[^:]*: (.*?); fix them")

console = Console(stderr=True, highlight=False)


class BenchError(Exception):
    """A download, checksum or install that failed: the project cannot be measured."""


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    sha256: str
    kind: str
    root: str
    deps: tuple[str, ...]
    tests: str
    paths: tuple[str, ...]
    operators: str
    pythonpath: tuple[str, ...]


def load_projects(path: Path = HERE / "projects.toml") -> list[Project]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Project(
            name=p["name"],
            version=p["version"],
            sha256=p["sha256"],
            kind=p["kind"],
            root=p["root"],
            deps=tuple(p["deps"]),
            tests=p["tests"],
            paths=tuple(p["paths"]),
            operators=p.get("operators", "agent"),
            pythonpath=tuple(p.get("pythonpath", [])),
        )
        for p in data["project"]
    ]


# --- the project: sdist, tree, venv ---------------------------------------------------------------
def sdist(project: Project) -> Path:
    """The pinned sdist, downloaded once with pip and checked against its sha256."""
    folder = ROOT / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    found = [p for p in folder.glob("*.tar.gz") if p.name.lower() == f"{project.root}.tar.gz".lower()]
    if not found:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "--disable-pip-version-check", "-d", str(folder), f"{project.name}=={project.version}"],
            capture_output=True, text=True,
        )  # fmt: skip
        found = [p for p in folder.glob("*.tar.gz") if p.name.lower() == f"{project.root}.tar.gz".lower()]
        if done.returncode != 0 or not found:
            raise BenchError(
                f"pip could not download {project.name}=={project.version}: {done.stderr[-400:]}"
            )
    digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
    if digest != project.sha256:
        raise BenchError(f"{found[0].name}: sha256 {digest} is not the pinned {project.sha256}")
    return found[0]


def fresh_tree(project: Project) -> Path:
    """The sdist unpacked anew (a run never starts from an earlier run's leftovers)."""
    archive = sdist(project)
    work = ROOT / "work"
    target = work / project.root
    shutil.rmtree(target, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    return target


def venv(project: Project) -> Path:
    """The project's venv (its suite's dependencies and this checkout, editable), built once per
    requirement list; returns its python."""
    path = ROOT / "venvs" / project.name
    python = path / "bin" / "python"
    spec = "\n".join([*project.deps, f"mutagent editable from {REPO}"])
    marker = path / "realsuites-requirements.txt"
    if python.exists() and marker.is_file() and marker.read_text(encoding="utf-8") == spec:
        return python
    console.print(f"[dim]{project.name}: building its venv in {path} (once)[/]")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            *project.deps,
            "-e",
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise BenchError(f"pip could not build the {project.name} venv: {done.stderr.strip()[-600:]}")
    marker.write_text(spec, encoding="utf-8")
    return python


def tree_digest(root: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``root`` but mutagent's own ``.mutagent/``."""
    found: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not (Path(current) == root and d == ".mutagent"))
        for name in sorted(files):
            path = Path(current) / name
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


# --- runs ------------------------------------------------------------------------------------------
def _env(extra_path: list[str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join(extra_path)
    return env


def plain_pytest(python: Path, tree: Path, project: Project, args: list[str]) -> tuple[float, int, str]:
    """Wall seconds, exit code and closing line of plain pytest on ``args`` in the project's tree."""
    xdist = ["-n", "0", "-p", "no:randomly"] if _has(python, "xdist") else []
    command = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", *xdist, *args]
    started = time.monotonic()
    done = subprocess.run(
        command,
        cwd=tree,
        env=_env([str(tree / p) for p in project.pythonpath]),
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    lines = [line for line in done.stdout.strip().splitlines() if line.strip()]
    return wall, done.returncode, lines[-1] if lines else done.stderr.strip()[-200:]


def _has(python: Path, module: str) -> bool:
    done = subprocess.run(
        [
            str(python),
            "-c",
            f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)",
        ],
        capture_output=True,
    )
    return done.returncode == 0


@dataclass
class MutagentRun:
    wall: float
    exit: int
    statuses: dict[str, str]
    flaky: list[str]
    harness_error: str
    closing: str

    @property
    def runtime_errors(self) -> int:
        return sum(1 for status in self.statuses.values() if status == "RuntimeError")


def mutagent_run(python: Path, tree: Path, project: Project, engine: Path | None) -> MutagentRun:
    shutil.rmtree(tree / ".mutagent", ignore_errors=True)
    env = _env([str(engine)] if engine else [])
    command = [str(python), "-m", "mutagent", "run", str(tree), "--tests", project.tests]
    command += [arg for path in project.paths for arg in ("--paths", path)]
    command += ["--operators", project.operators]
    started = time.monotonic()
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    text = done.stdout + "\n" + done.stderr
    flagged = FLAKY_LINE.search(text.replace("\n", " "))
    flaky = [part.split(" (")[0].strip() for part in flagged.group(1).split("; ")] if flagged else []
    statuses: dict[str, str] = {}
    report = tree / ".mutagent" / "realsuites-report.json"
    if (tree / ".mutagent").is_dir():
        subprocess.run(
            [str(python), "-m", "mutagent", "report", str(tree), "--json", str(report), "-q"],
            cwd=tree, env=env, capture_output=True, text=True,
        )  # fmt: skip
    if report.is_file():
        data = json.loads(report.read_text(encoding="utf-8"))
        for file in data.get("files", {}).values():
            for mutant in file.get("mutants", []):
                statuses[mutant["id"]] = mutant["status"]
    harness = ""
    if done.returncode == 4 or "Traceback (most recent call last)" in text:
        harness = text.strip()[-600:]
    closing = next((line for line in text.splitlines() if re.match(r"\d+ mutants in ", line)), "")
    return MutagentRun(wall, done.returncode, statuses, flaky, harness, closing)


@dataclass
class ProjectResult:
    name: str
    version: str
    kind: str
    tests: int = 0
    plain_wall: float = 0.0
    plain_closing: str = ""
    runs: list[MutagentRun] = field(default_factory=list)
    false_flaky: list[str] = field(default_factory=list)
    reproduced_flaky: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    tree_unchanged: bool = True
    plain_wrote: list[str] = field(default_factory=list)  # files plain pytest itself left in the tree
    error: str = ""

    @property
    def mutants(self) -> int:
        return len(self.runs[0].statuses) if self.runs else 0

    @property
    def runtime_errors(self) -> int:
        return sum(run.runtime_errors for run in self.runs) + sum(1 for run in self.runs if run.harness_error)

    @property
    def median_wall(self) -> float:
        return statistics.median(run.wall for run in self.runs) if self.runs else 0.0

    @property
    def ok(self) -> bool:
        return (
            not self.error
            and self.runtime_errors == 0
            and not self.false_flaky
            and not self.differing
            and self.tree_unchanged
            and all(run.exit in (0, 1) for run in self.runs)
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(mutants=self.mutants, runtime_errors=self.runtime_errors, ok=self.ok)
        return data


def bench(project: Project, runs: int, engine: Path | None) -> ProjectResult:
    result = ProjectResult(project.name, project.version, project.kind)
    try:
        python = venv(project)
        tree = fresh_tree(project)
    except BenchError as exc:
        result.error = str(exc)
        return result
    pristine = tree_digest(tree)
    result.plain_wall, code, result.plain_closing = plain_pytest(
        python, tree, project, shlex.split(project.tests)
    )
    before = tree_digest(tree)  # what mutagent must leave as it is (plain pytest's own files included)
    result.plain_wrote = sorted(set(before) - set(pristine))
    counted = re.search(r"(\d+) passed", result.plain_closing)
    result.tests = int(counted.group(1)) if counted else 0
    console.print(f"{project.name}: plain pytest {result.plain_wall:.1f}s ({result.plain_closing})")
    if code != 0:
        result.error = f"plain pytest is not green on the selection: {result.plain_closing}"
        return result
    for number in range(1, runs + 1):
        run = mutagent_run(python, tree, project, engine)
        result.runs.append(run)
        console.print(
            f"{project.name}: mutagent run {number}: exit {run.exit}, {run.wall:.1f}s, "
            f"{len(run.statuses)} mutants, {run.runtime_errors} RuntimeError, flaky {run.flaky or 'none'}"
        )
        for nodeid in run.flaky:
            if nodeid in result.false_flaky or nodeid in result.reproduced_flaky:
                continue
            _, alone, _ = plain_pytest(python, tree, project, [nodeid])
            (result.reproduced_flaky if alone != 0 else result.false_flaky).append(nodeid)
    first = result.runs[0].statuses
    for run in result.runs[1:]:
        result.differing += sorted(
            m for m in set(first) | set(run.statuses) if first.get(m) != run.statuses.get(m)
        )
    result.differing = sorted(set(result.differing))
    shutil.rmtree(tree / ".mutagent", ignore_errors=True)
    result.tree_unchanged = tree_digest(tree) == before
    return result


COLUMNS = (
    "project", "kind", "tests", "mutants", "plain pytest s", "mutagent s: median (runs)", "mutagent / plain",
    "mutants/min", "RuntimeError", "false flaky (reproduced)", "same statuses", "tree unchanged",
)  # fmt: skip


def rows(results: list[ProjectResult]) -> list[list[str]]:
    """One row of figures per project (``COLUMNS``)."""
    found = []
    for r in results:
        if r.error:
            found.append([f"{r.name} {r.version}", r.kind, r.error[:80], *[""] * (len(COLUMNS) - 3)])
            continue
        ratio = r.median_wall / r.plain_wall if r.plain_wall else 0.0
        per_minute = r.mutants / (r.median_wall / 60) if r.median_wall else 0.0
        found.append([
            f"{r.name} {r.version}",
            r.kind,
            str(r.tests),
            str(r.mutants),
            f"{r.plain_wall:.1f}",
            f"{r.median_wall:.1f} ({', '.join(f'{run.wall:.0f}' for run in r.runs)})",
            f"{ratio:.1f}x",
            f"{per_minute:.1f}",
            str(r.runtime_errors),
            f"{len(r.false_flaky)} ({len(r.reproduced_flaky)})",
            "yes" if not r.differing else f"no: {len(r.differing)} differ",
            "yes" if r.tree_unchanged else "NO",
        ])  # fmt: skip
    return found


def table(results: list[ProjectResult]) -> Table:
    grid = Table(title="real projects' own suites under mutagent")
    for column in COLUMNS:
        grid.add_column(column)
    for row in rows(results):
        grid.add_row(*row)
    return grid


def markdown(results: list[ProjectResult]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows(results)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these projects only")
    parser.add_argument("--runs", type=int, default=3, help="mutagent runs per project (default 3)")
    parser.add_argument("--engine", type=Path, help="run mutagent from this checkout (before/after)")
    parser.add_argument("--out", type=Path, help="write every figure here (JSON)")
    args = parser.parse_args(argv)
    projects = load_projects()
    if args.only:
        unknown = set(args.only) - {p.name for p in projects}
        if unknown:
            console.print(f"error: no project named {', '.join(sorted(unknown))} in projects.toml")
            return 2
        projects = [p for p in projects if p.name in args.only]
    if args.engine is not None and not (args.engine / "mutagent" / "__init__.py").is_file():
        console.print(f"error: --engine {args.engine} holds no mutagent package")
        return 2
    results = [bench(project, args.runs, args.engine) for project in projects]
    Console(highlight=False, width=200).print(table(results))
    print(markdown(results))
    if args.out:
        args.out.write_text(json.dumps([r.to_json() for r in results], indent=1), encoding="utf-8")
    if any(r.error for r in results):
        return 2
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
