"""Score mutagent's operators on the real-code corpus against the hand labels in ``sites.toml``.

For every labelled file of every fetched sdist (see ``fetch.py``) this runs ``mutagent list
--json`` (and ``mutagent map --json`` when that command exists), matches each emitted mutant to
the labels by (package, file, function, operator[, anchor or exact rewrite]) and prints, per
operator:

* expected: labelled agent sites; found: those with at least one (non-ignored) mutant; recall;
* emitted: mutants the operator produced on the labelled files (Ignored ones are counted apart);
* true / false: emitted mutants matching an expected site / a known non-site; precision =
  true / (true + false);
* unjudged: emitted mutants matching no label. They are listed so a human can label them; they
  count in neither recall nor precision.

A crash of ``mutagent list`` on a file is never read as "no mutants": the file is listed again
one operator at a time, and every operator that still crashes is reported as such (its labelled
sites in that file count as not found).

``--mutagent PATH`` selects the executable to measure, so the same labels can score another
worktree's operators. Generation speed (seconds per 1,000 lines) is measured in-process on the
largest corpus package with the Python interpreter that sits beside that executable.

The map output is recorded in the result file (per file, or the one-line error); it is not scored.

Usage: ``python bench/corpus/score.py [--mutagent PATH] [--out FILE] [--markdown FILE]
[--no-speed | --speed-package NAME] [--no-map]``.
Exit codes: 0 scored, 1 a package is not fetched or a label is malformed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetch import CORPUS, LABELS_DIR, Package, load_packages  # noqa: E402
from ledger import BlindError, blind_check, ledger_entries, record_blind_score  # noqa: E402

console = Console(highlight=False, width=None if sys.stdout.isatty() else 150)
NEW_OPERATORS = ("turn-limit-off-by-one", "unbounded-turns")


@dataclass(frozen=True)
class Label:
    """One hand-labelled expected site (``site``) or known non-site (``non_site``)."""

    kind: str  # "site" or "non_site"
    package: str
    file: str
    function: str
    operator: str
    reason: str
    anchor: tuple[str, ...] = ()  # any one of these substrings marks the place; () = the whole function
    mutant: str = ""  # "ORIGINAL -> REPLACEMENT": only the mutant with exactly this rewrite
    after: str = ""  # a substring of the three lines before the mutant: tells identical lines apart

    @property
    def key(self) -> tuple[str, str, str, str, tuple[str, ...]]:  # identity of the label
        return (
            self.package,
            self.file,
            self.function,
            self.operator,
            self.anchor + (self.mutant, self.after),
        )

    def strength(self, original: str, replacement: str, lines: str, near: str = "", index: int = 0) -> int:
        """How well a mutant matches: 3 = its exact rewrite is labelled, 2 = an anchor is in the
        mutated code itself, 1 = in its source line(s) (an anchor spanning several lines: one of its
        occurrences in ``near`` covers the mutant's first line, ``index`` in ``near``), 0 = the label
        has no anchor; -1 = no match."""
        if self.mutant:
            wanted_original, _, wanted_replacement = self.mutant.partition(" -> ")
            exact = (original.strip(), replacement.strip()) == (wanted_original, wanted_replacement)
            return 3 if exact else -1
        if not self.anchor:
            return 0
        if any(a in original for a in self.anchor):
            return 2
        if any(a in lines for a in self.anchor):
            return 1
        if any("\n" in a and _covers(a, near, index) for a in self.anchor):
            return 1
        return -1


def _covers(anchor: str, near: str, index: int) -> bool:
    """Does an occurrence of the multi-line ``anchor`` in ``near`` span line ``index`` of ``near``?"""
    start = near.find(anchor)
    while start >= 0:
        first = near.count("\n", 0, start)
        if first <= index <= first + anchor.count("\n"):
            return True
        start = near.find(anchor, start + 1)
    return False


@dataclass
class Crash:
    package: str
    file: str
    operator: str  # "*" when the whole listing crashed and could not be split
    error: str


@dataclass
class Outcome:
    """Everything measured on the corpus, written as the JSON result file."""

    mutagent: str
    operators: list[str]
    per_operator: dict[str, dict[str, Any]] = field(default_factory=dict)
    overall: dict[str, Any] = field(default_factory=dict)
    missed: list[dict[str, str]] = field(default_factory=list)
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[dict[str, Any]] = field(default_factory=list)
    crashes: list[dict[str, str]] = field(default_factory=list)
    map: dict[str, Any] = field(default_factory=dict)
    speed: dict[str, Any] = field(default_factory=dict)


def load_labels(path: Path = CORPUS / "sites.toml", labels_dir: Path | None = LABELS_DIR) -> list[Label]:
    """Every label of ``sites.toml`` and of the ``[[file]]`` tables of ``labels/*.toml``, flattened;
    KeyError/TypeError if an entry lacks a key."""
    sources = [path.read_text(encoding="utf-8")]
    if labels_dir is not None and labels_dir.is_dir():
        sources += [f.read_text(encoding="utf-8") for f in sorted(labels_dir.glob("*.toml"))]
    labels: list[Label] = []
    for text in sources:
        for group in tomllib.loads(text).get("file", []):
            for kind, key in (("site", "sites"), ("non_site", "non_sites")):
                for entry in group.get(key, []):
                    labels.append(
                        Label(
                            kind=kind,
                            package=group["package"],
                            file=group["path"],
                            function=entry["function"],
                            operator=entry["operator"],
                            reason=entry["reason"],
                            anchor=_anchors(entry.get("anchor", "")),
                            mutant=entry.get("mutant", ""),
                            after=entry.get("after", ""),
                        )
                    )
    return labels


def _anchors(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise TypeError(f"anchor must be a string or a list of strings, not {value!r}")


# --- running mutagent ---------------------------------------------------------------------------
def _run(command: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {result.returncode}"


def operator_names(mutagent: str) -> list[str]:
    """The agent operators of the measured executable."""
    result = _run([mutagent, "operators", "--operators", "agent", "--json"])
    if result.returncode != 0:
        raise RuntimeError(f"mutagent operators failed: {_last_line(result)}")
    return [entry["name"] for entry in json.loads(result.stdout)]


def list_file(
    mutagent: str, package: Package, file: str, operators: list[str], selected: bool = False
) -> tuple[list[dict[str, Any]], list[Crash]]:
    """The agent mutants of one file; on a crash, salvage what each operator alone still lists."""
    base = [mutagent, "list", str(package.source_dir), "--paths", file, "--json"]
    result = _run([*base, "--operators", ",".join(operators) if selected else "agent"])
    if result.returncode == 0:
        return json.loads(result.stdout), []
    mutants: list[dict[str, Any]] = []
    crashes: list[Crash] = []
    for name in operators:
        single = _run([*base, "--operators", name])
        if single.returncode == 0:
            mutants.extend(json.loads(single.stdout))
        else:
            crashes.append(Crash(package.name, file, name, _last_line(single)))
    return mutants, crashes


def map_file(mutagent: str, package: Package, file: str) -> dict[str, Any] | None:
    """``mutagent map --json`` of one file, or None when the command does not exist."""
    result = _run([mutagent, "map", str(package.source_dir), "--paths", file, "--json"])
    if result.returncode != 0:
        return {"error": _last_line(result)}
    try:
        return {"anatomy": json.loads(result.stdout)}
    except json.JSONDecodeError:
        return {"error": "map --json printed no JSON"}


def has_map(mutagent: str) -> bool:
    return _run([mutagent, "map", "--help"]).returncode == 0


# --- label checks ---------------------------------------------------------------------------
def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """``__qualname__`` -> (first line, last line) of every def/class of ``source`` (``<module>``: all)."""
    spans: dict[str, tuple[int, int]] = {"<module>": (1, source.count("\n") + 1)}

    def walk(node: ast.AST, prefix: str, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{'<locals>.' if in_function else ''}{child.name}"
                start, end = child.lineno, child.end_lineno or child.lineno
                if name in spans:  # @overload stubs and redefinitions: the union of their spans
                    start, end = min(start, spans[name][0]), max(end, spans[name][1])
                spans[name] = (start, end)
                walk(child, name + ".", not isinstance(child, ast.ClassDef))
            else:
                walk(child, prefix, in_function)

    walk(ast.parse(source), "", False)
    return spans


def stale_labels(packages: list[Package], labels: list[Label]) -> list[str]:
    """Labels whose function is not in the file or whose anchor is not in that function: a typo
    or a label that no longer points at the pinned code."""
    problems: list[str] = []
    by_name = {p.name: p for p in packages}
    cache: dict[tuple[str, str], tuple[list[str], dict[str, tuple[int, int]]]] = {}
    for label in labels:
        package = by_name.get(label.package)
        if package is None or label.file not in package.files:
            problems.append(f"{label.package} {label.file}: not a corpus file")
            continue
        if (label.package, label.file) not in cache:
            source = (package.source_dir / label.file).read_text(encoding="utf-8")
            cache[(label.package, label.file)] = (source.splitlines(), function_spans(source))
        lines, spans = cache[(label.package, label.file)]
        span = spans.get(label.function)
        if span is None:
            problems.append(f"{label.file}: no function {label.function}")
            continue
        body = "\n".join(lines[span[0] - 1 : span[1]])
        if label.anchor and not any(anchor in body for anchor in label.anchor):
            problems.append(f"{label.file} {label.function}: no anchor of {label.anchor} in it")
        if label.after and label.after not in body:
            problems.append(f"{label.file} {label.function}: no `after` {label.after!r} in it")
        if label.mutant and label.mutant.partition(" -> ")[0] not in body:
            problems.append(f"{label.file} {label.function}: the code of {label.mutant!r} is not in it")
    return problems


# --- matching -----------------------------------------------------------------------------------
def _source_lines(package: Package, file: str) -> list[str]:
    return (package.source_dir / file).read_text(encoding="utf-8").splitlines()


def _mutant_lines(lines: list[str], mutant: dict[str, Any]) -> str:
    first, last = mutant["line"], mutant.get("end_line") or mutant["line"]
    return "\n".join(lines[first - 1 : last])


NEAR = 8  # lines either side of a mutant that a multi-line anchor may span


def _near(lines: list[str], mutant: dict[str, Any]) -> tuple[str, int]:
    """The lines around a mutant and the index of its first line among them."""
    first = mutant["line"]
    start = max(first - 1 - NEAR, 0)
    return "\n".join(lines[start : first + NEAR]), first - 1 - start


def _lines_before(lines: list[str], mutant: dict[str, Any]) -> str:
    first = mutant["line"]
    return "\n".join(lines[max(first - 4, 0) : first - 1])


def judge(
    mutant: dict[str, Any],
    candidates: list[Label],
    lines: str,
    before: str = "",
    near: tuple[str, int] = ("", 0),
) -> Label | None | str:
    """The label ``mutant`` matches. The strongest match wins (an anchor found in the mutated code
    beats one found elsewhere on its line, which beats a label without anchor; at equal strength a
    label whose ``after`` is found in the ``before`` lines wins); "ambiguous" when a site and a
    non-site match equally well. A label whose ``after`` is not in ``before`` does not match."""
    original, replacement = mutant.get("original") or "", mutant.get("replacement") or ""
    scored = [
        ((c.strength(original, replacement, lines, *near), 1 if c.after else 0), c)
        for c in candidates
        if c.operator == mutant["operator"] and (not c.after or c.after in before)
    ]
    scored = [(score, c) for score, c in scored if score[0] >= 0]
    if not scored:
        return None
    best_score = max(score for score, _ in scored)
    best = [c for score, c in scored if score == best_score]
    if len({c.kind for c in best}) > 1:
        return "ambiguous"
    return best[0]


def _mutant_row(package: Package, mutant: dict[str, Any]) -> dict[str, Any]:
    return {
        "package": package.name,
        "file": mutant["file"],
        "function": mutant["scope"] or "<module>",
        "operator": mutant["operator"],
        "line": mutant["line"],
        "original": mutant["original"],
        "replacement": mutant["replacement"],
        "description": mutant["description"],
    }


# --- generation speed ---------------------------------------------------------------------------
_SPEED_SNIPPET = r"""
import json, sys, time
from pathlib import Path
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import select_operators
root, top = Path(sys.argv[1]), Path(sys.argv[2])
operators = select_operators("agent")
lines = seconds = mutants = 0
failed = []
files = sorted(p for p in (root / top).rglob("*.py"))
for path in files:
    text = path.read_text(encoding="utf-8")
    start = time.perf_counter()
    try:
        mutants += len(generate_for_source(text, path.relative_to(root).as_posix(), operators))
    except Exception as exc:
        failed.append(f"{path.relative_to(root).as_posix()}: {type(exc).__name__}")
    seconds += time.perf_counter() - start
    lines += text.count("\n") + 1
print(json.dumps({"files": len(files), "lines": lines, "seconds": seconds, "mutants": mutants,
                  "failed_files": failed}))
"""


def package_top(package: Package) -> str:
    """The import package directory inside the sdist (the common parent of its labelled files)."""
    first = Path(package.files[0])
    parts = first.parts
    return str(Path(*parts[:2])) if parts[0] == "src" else parts[0]


def measure_speed(mutagent: str, packages: list[Package], only: str | None = None) -> dict[str, Any]:
    """Seconds per 1,000 lines of agent-operator generation on the largest corpus package (or on
    the package named ``only``)."""
    python = Path(mutagent).with_name("python")
    if not python.exists():
        return {"error": f"no python beside {mutagent}"}

    def size(package: Package) -> int:
        top = package.source_dir / package_top(package)
        return sum(p.read_bytes().count(b"\n") for p in top.rglob("*.py"))

    candidates = [p for p in packages if only is None or p.name == only]
    if not candidates:
        return {"error": f"no corpus package {only}"}
    largest = max(candidates, key=size)
    top = package_top(largest)
    result = _run([str(python), "-c", _SPEED_SNIPPET, str(largest.source_dir), top], timeout=3600)
    if result.returncode != 0:
        return {"package": largest.name, "error": _last_line(result)}
    figures = json.loads(result.stdout)
    figures.update(package=f"{largest.name} {largest.version}", path=top)
    figures["seconds_per_1000_lines"] = figures["seconds"] / max(figures["lines"], 1) * 1000
    return figures


# --- scoring ------------------------------------------------------------------------------------
def score(
    mutagent: str,
    packages: list[Package],
    labels: list[Label],
    with_map: bool,
    only: list[str] | None = None,
) -> Outcome:
    operators = [name for name in operator_names(mutagent) if not only or name in only]
    outcome = Outcome(mutagent=mutagent, operators=operators)
    by_file: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for label in labels:
        by_file[(label.package, label.file)].append(label)
    found: set[tuple[str, str, str, str, str]] = set()
    emitted: Counter[str] = Counter()
    ignored: Counter[str] = Counter()
    true: Counter[str] = Counter()
    false: Counter[str] = Counter()
    unjudged: Counter[str] = Counter()
    crashed_ops: set[tuple[str, str, str]] = set()
    for package in packages:
        for file in package.files:
            mutants, crashes = list_file(mutagent, package, file, operators, selected=bool(only))
            for crash in crashes:
                outcome.crashes.append(asdict(crash))
                crashed_ops.add((package.name, file, crash.operator))
            if with_map:
                outcome.map[f"{package.name}:{file}"] = map_file(mutagent, package, file)
            lines = _source_lines(package, file)
            candidates_of_file = by_file.get((package.name, file), [])
            for mutant in mutants:
                operator = mutant["operator"]
                if mutant.get("ignored"):
                    ignored[operator] += 1
                    continue
                emitted[operator] += 1
                function = mutant["scope"] or "<module>"
                candidates = [c for c in candidates_of_file if c.function == function]
                verdict = judge(
                    mutant,
                    candidates,
                    _mutant_lines(lines, mutant),
                    _lines_before(lines, mutant),
                    _near(lines, mutant),
                )
                row = _mutant_row(package, mutant)
                if isinstance(verdict, Label) and verdict.kind == "site":
                    true[operator] += 1
                    found.add(verdict.key)
                elif isinstance(verdict, Label):
                    false[operator] += 1
                    outcome.false_positives.append({**row, "reason": verdict.reason})
                else:
                    unjudged[operator] += 1
                    outcome.unjudged.append({**row, "note": verdict or "no label"})
    sites = [label for label in labels if label.kind == "site"]
    expected = Counter(label.operator for label in sites)
    for label in sites:
        if label.key not in found:
            crashed = {(label.package, label.file, label.operator), (label.package, label.file, "*")}
            outcome.missed.append(
                {
                    **{k: v for k, v in asdict(label).items() if k not in ("kind", "anchor")},
                    "anchor": " | ".join(label.anchor),
                    "crashed": bool(crashed & crashed_ops),
                }
            )
    names = sorted(set(operators) | set(expected) | set(emitted))
    for name in names:
        hits = sum(1 for label in sites if label.operator == name and label.key in found)
        outcome.per_operator[name] = _figures(
            expected[name], hits, emitted[name], ignored[name], true[name], false[name], unjudged[name]
        )
        outcome.per_operator[name]["in_tool"] = name in operators
    total_found = sum(1 for label in sites if label.key in found)
    outcome.overall = _figures(
        len(sites),
        total_found,
        sum(emitted.values()),
        sum(ignored.values()),
        sum(true.values()),
        sum(false.values()),
        sum(unjudged.values()),
    )
    return outcome


def _figures(
    expected: int, found: int, emitted: int, ignored: int, true: int, false: int, unjudged: int
) -> dict[str, Any]:
    return {
        "expected": expected,
        "found": found,
        "recall": found / expected if expected else None,
        "emitted": emitted,
        "ignored": ignored,
        "true": true,
        "false": false,
        "unjudged": unjudged,
        "precision": true / (true + false) if true + false else None,
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


#: The role of the agent loop each operator's sites play (issue 24 asks for figures per role):
#: an operator rewrites the nodes of one role; a role may have two operators.
ROLE_OF: dict[str, str] = {
    "turn-limit-off-by-one": "turn bound",
    "unbounded-turns": "turn bound",
    "keep-partial-history": "history rollback",
    "retry-bound-off-by-one": "retry bound",
    "unbounded-retry": "retry bound",
    "skip-backoff": "backoff",
    "ignore-retry-after": "Retry-After source",
    "misclassify-retryable": "classification",
    "drop-disconnect-handling": "classification",
    "enable-sdk-retries": "SDK retries off",
    "ignore-idempotency-key": "idempotency key",
    "skip-stop-marker-check": "stop check",
    "ignore-length-stop": "length stop",
    "accept-empty-response": "empty-reply check",
    "drop-response-close": "stream release",
    "drop-idle-timeout": "idle timeout",
    "overwrite-closed-block": "closed block",
    "mismatch-tool-call-id": "tool-call id",
    "truncate-tool-results": "tool result",
    "swallow-tool-error": "tool error",
    "skip-tool-allowlist": "allow-list",
    "skip-argument-validation": "argument parsing and validation",
    "accept-truncated-tool-arguments": "argument parsing and validation",
    "skip-approval": "approval",
    "skip-tenant-check": "tenant scope",
}

_COUNTS = ("expected", "found", "emitted", "ignored", "true", "false", "unjudged")


def by_role(per_operator: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The per-operator figures summed per role (operators with no role keep their own name)."""
    sums: dict[str, dict[str, int]] = {}
    for name, figures in per_operator.items():
        role = sums.setdefault(ROLE_OF.get(name, name), dict.fromkeys(_COUNTS, 0))
        for count in _COUNTS:
            role[count] += int(figures[count])
    return {role: _figures(*(counts[c] for c in _COUNTS)) for role, counts in sums.items()}


def markdown_table(outcome: Outcome) -> str:
    """The per-operator table as Markdown (for bench/RESULTS.md and the corpus README)."""
    columns = ("operator", "expected", "found", "recall", "emitted", "ignored", "true", "false")
    columns += ("unjudged", "precision")
    rows = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for name, f in [*outcome.per_operator.items(), ("**overall**", outcome.overall)]:
        label = name if f.get("in_tool", True) else f"{name} (not in this mutagent)"
        cells = [label, f["expected"], f["found"], _pct(f["recall"]), f["emitted"], f["ignored"]]
        cells += [f["true"], f["false"], f["unjudged"], _pct(f["precision"])]
        rows.append("| " + " | ".join(str(c) for c in cells) + " |")
    rows += ["", "| role | operators | expected | found | recall | true | false | unjudged | precision |"]
    rows.append("|" + "---|" * 9)
    for role, f in by_role(outcome.per_operator).items():
        operators = ", ".join(n for n in outcome.per_operator if ROLE_OF.get(n, n) == role)
        cells = [role, operators, f["expected"], f["found"], _pct(f["recall"]), f["true"], f["false"]]
        cells += [f["unjudged"], _pct(f["precision"])]
        rows.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def print_outcome(outcome: Outcome, title: str = "") -> None:
    table = Table(title=f"{title or 'corpus score'} of {outcome.mutagent}", title_justify="left")
    for column in ("operator", "expected", "found", "recall", "emitted", "ignored", "true", "false"):
        table.add_column(column, justify="left" if column == "operator" else "right")
    table.add_column("unjudged", justify="right")
    table.add_column("precision", justify="right")
    rows = list(outcome.per_operator.items()) + [("overall", outcome.overall)]
    for name, f in rows:
        label = name if f.get("in_tool", True) else f"{name} (not in tool)"
        table.add_row(
            label,
            str(f["expected"]),
            str(f["found"]),
            _pct(f["recall"]),
            str(f["emitted"]),
            str(f["ignored"]),
            str(f["true"]),
            str(f["false"]),
            str(f["unjudged"]),
            _pct(f["precision"]),
            end_section=name == rows[-2][0],
        )
    console.print(table)
    for crash in outcome.crashes:
        where = f"{crash['package']} {crash['file']} [{crash['operator']}]"
        console.print(f"[red]crash[/] {where}: {crash['error']}")
    if outcome.unjudged:
        console.print(f"[yellow]{len(outcome.unjudged)} unjudged mutant(s)[/] (label them in sites.toml):")
        for row in outcome.unjudged:
            console.print(
                f"  {row['package']} {row['file']}:{row['line']} {row['function']} "
                f"[magenta]{row['operator']}[/] {row['original'][:60]!r} ({row['note']})"
            )
    if outcome.map:
        mapped = sum(1 for v in outcome.map.values() if v and "anatomy" in v)
        console.print(f"mutagent map: {mapped}/{len(outcome.map)} files mapped")
    else:
        console.print("mutagent map: not available in this mutagent (skipped)")
    speed = outcome.speed
    if "seconds_per_1000_lines" in speed:
        console.print(
            f"generation speed on {speed['package']} ({speed['path']}, {speed['files']} files, "
            f"{speed['lines']:,} lines): {speed['seconds']:.1f} s, "
            f"{speed['seconds_per_1000_lines']:.3f} s per 1,000 lines, {speed['mutants']} mutants, "
            f"{len(speed['failed_files'])} file(s) crashed"
        )
        for failed in speed["failed_files"]:
            console.print(f"  [red]generation crashed[/] on {failed}")
    elif speed:
        console.print(f"generation speed: not measured ({speed.get('error')})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Recall and precision of the operators on the corpus.")
    beside = Path(sys.executable).with_name("mutagent")  # the venv this script runs in
    default = str(beside) if beside.exists() else shutil.which("mutagent") or "mutagent"
    parser.add_argument("--mutagent", default=default, help="mutagent executable to measure")
    parser.add_argument("--out", type=Path, default=CORPUS / "results.json", help="JSON result file")
    parser.add_argument("--markdown", type=Path, help="also write the per-operator table as Markdown")
    parser.add_argument("--no-speed", action="store_true", help="skip the generation-speed measurement")
    parser.add_argument("--speed-package", metavar="NAME", help="time generation on this package instead")
    parser.add_argument("--no-map", action="store_true", help="skip `mutagent map` even when it exists")
    parser.add_argument(
        "--blind",
        metavar="NAME",
        help="score one test-split package for the first and only time and record it in blind.toml",
    )
    parser.add_argument(
        "--package", action="append", metavar="NAME", help="score only this dev package (repeatable)"
    )
    parser.add_argument("--operators", metavar="A,B", help="score only these operators (comma list)")
    args = parser.parse_args(argv)
    try:
        every_package = load_packages()
    except (KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as error:
        console.print(f"error: package manifest: {error}")
        return 1
    if args.blind:
        chosen = [p for p in every_package if p.name == args.blind]
        if not chosen or chosen[0].split != "test" or chosen[0].labels is None:
            console.print(f"error: {args.blind} is not a test-split package with a labels/ file")
            return 2
        try:
            provenance = blind_check(args.blind, chosen[0].labels)
        except BlindError as error:
            console.print(f"error: {error}")
            return 2
        packages = chosen
    else:
        packages = [p for p in every_package if p.split == "dev"]
        if args.package:
            unknown = sorted(set(args.package) - {p.name for p in packages})
            if unknown:
                console.print(f"error: not a dev-split package: {', '.join(unknown)}")
                return 2
            packages = [p for p in packages if p.name in args.package]
    absent = [p.name for p in packages if not p.source_dir.is_dir()]
    if absent:
        console.print(f"error: not fetched: {', '.join(absent)} (run python bench/corpus/fetch.py)")
        return 1
    try:
        labels = load_labels()
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as error:
        console.print(f"error: labels: {error}")
        return 1
    names = {p.name for p in packages}
    only = [name.strip() for name in args.operators.split(",")] if args.operators else None
    if args.blind and only:
        console.print("error: a blind score covers every operator")
        return 2
    labels = [label for label in labels if label.package in names and (not only or label.operator in only)]
    for problem in stale_labels(packages, labels):
        console.print(f"[yellow]label:[/] {problem}")
    mutagent = str(Path(args.mutagent).resolve()) if Path(args.mutagent).exists() else args.mutagent
    with_map = not args.no_map and has_map(mutagent)
    started = time.perf_counter()
    outcome = score(mutagent, packages, labels, with_map, only)
    if not args.no_speed and not args.blind and not args.package and not only:
        outcome.speed = measure_speed(mutagent, packages, args.speed_package)
    title = f"blind (first) score of {args.blind}" if args.blind else f"dev split ({len(packages)} packages)"
    print_outcome(outcome, title)
    if args.blind:
        entry = record_blind_score(args.blind, packages[0].version, provenance, outcome.overall)
        console.print(
            f"recorded in {CORPUS.name}/blind.toml: {entry['found']}/{entry['sites']} sites found, "
            f"{entry['true']} true, {entry['false']} false, {entry['unjudged']} unjudged mutants; "
            "commit it, then the package may move to the dev split"
        )
    print_test_split(every_package)
    args.out.write_text(json.dumps(asdict(outcome), indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown_table(outcome), encoding="utf-8")
    console.print(f"written {args.out} in {time.perf_counter() - started:.0f} s")
    return 0


def print_test_split(packages: list[Package]) -> None:
    """The test split's figures: each package's first score as recorded, never a new one."""
    entries = ledger_entries()
    table = Table(title="test split: first (blind) scores, from blind.toml", title_justify="left")
    for column in ("package", "labels", "measured at", "sites", "found", "recall", "true", "false"):
        table.add_column(
            column, justify="left" if column in ("package", "labels", "measured at") else "right"
        )
    table.add_column("unjudged", justify="right")
    table.add_column("precision", justify="right")
    for entry in entries:
        recall = entry["recall"] if entry["recall"] != "" else None
        precision = entry["precision"] if entry["precision"] != "" else None
        table.add_row(
            f"{entry['package']} {entry['version']}",
            entry["labels_commit"][:10],
            entry["measured_at"][:10],
            str(entry["sites"]),
            str(entry["found"]),
            _pct(recall),
            str(entry["true"]),
            str(entry["false"]),
            str(entry["unjudged"]),
            _pct(precision),
        )
    if entries:
        sites = sum(e["sites"] for e in entries)
        found = sum(e["found"] for e in entries)
        true = sum(e["true"] for e in entries)
        false = sum(e["false"] for e in entries)
        table.add_row(
            "overall",
            "",
            "",
            str(sites),
            str(found),
            _pct(found / sites if sites else None),
            str(true),
            str(false),
            str(sum(e["unjudged"] for e in entries)),
            _pct(true / (true + false) if true + false else None),
            end_section=True,
        )
        console.print(table)
    waiting = [
        p.name for p in packages if p.split == "test" and p.name not in {e["package"] for e in entries}
    ]
    if waiting:
        console.print(f"test split, labelled and not yet scored: {', '.join(waiting)}")


if __name__ == "__main__":
    sys.exit(main())
