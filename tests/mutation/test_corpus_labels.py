"""The corpus benchmark's hand labels (bench/corpus/sites.toml) are well-formed, and its matcher
judges a mutant by the most specific label.

No network and no sdist is needed: the label file, the package manifest and the scorer's pure
functions are read as they are committed. A label that names an operator nobody has, lacks a
reason, or repeats another entry would silently distort recall and precision.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from types import ModuleType

import pytest
from testkit import REPO

from mutagent.mutation.registry import all_operators

CORPUS = REPO / "bench" / "corpus"


def _load(name: str) -> ModuleType:
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))  # score.py imports its sibling fetch.py
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


score = _load("score")
LABELS = score.load_labels(CORPUS / "sites.toml")
PACKAGES = score.load_packages(CORPUS / "packages.toml")


def test_the_corpus_has_six_packages_and_labels_of_both_kinds() -> None:
    assert len({p.name for p in PACKAGES}) >= 6
    kinds = Counter(label.kind for label in LABELS)
    assert kinds["site"] > 0 and kinds["non_site"] > 0


def test_every_operator_exists_or_is_one_of_the_two_new_ones() -> None:
    known = set(all_operators()) | set(score.NEW_OPERATORS)
    unknown = sorted({label.operator for label in LABELS} - known)
    assert unknown == []


def test_every_entry_has_a_reason_and_a_function() -> None:
    assert [label for label in LABELS if not label.reason.strip() or not label.function.strip()] == []


def test_every_label_points_at_a_listed_file_of_a_listed_package() -> None:
    files = {(p.name, f) for p in PACKAGES for f in p.files}
    assert [label.key for label in LABELS if (label.package, label.file) not in files] == []


def test_no_entry_is_listed_twice() -> None:
    counts = Counter(label.key for label in LABELS)
    assert [key for key, n in counts.items() if n > 1] == []


def test_packages_are_pinned() -> None:
    for package in PACKAGES:
        assert package.version and len(package.sha256) == 64 and package.files


def _label(kind: str, **fields: object) -> object:
    base = {"package": "p", "file": "f.py", "function": "loop", "operator": "retry-bound-off-by-one"}
    base.update(fields)
    return score.Label(kind=kind, reason="r", **base)


def _mutant(original: str, replacement: str = "x", operator: str = "retry-bound-off-by-one") -> dict:
    return {"operator": operator, "original": original, "replacement": replacement}


@pytest.mark.parametrize(
    ("original", "line", "expected"),
    [
        ("attempt > max_attempts", "if attempt > max_attempts or used <= 0:", "site"),
        ("used <= 0", "if attempt > max_attempts or used <= 0:", "non_site"),
    ],
)
def test_an_anchor_in_the_mutated_code_beats_one_elsewhere_on_its_line(
    original: str, line: str, expected: str
) -> None:
    site = _label("site", anchor=("attempt > max_attempts",))
    non_site = _label("non_site", anchor=("used <= 0",))
    verdict = score.judge(_mutant(original), [site, non_site], line)
    assert verdict.kind == expected


def test_an_exact_rewrite_label_only_matches_that_rewrite() -> None:
    non_site = _label("non_site", mutant="needs_approval -> True", operator="skip-approval")
    site = _label("site", anchor=("not needs_approval",), operator="skip-approval")
    line = "if not needs_approval:"
    wrong_way = score.judge(_mutant("needs_approval", "True", "skip-approval"), [site, non_site], line)
    right_way = score.judge(_mutant("not needs_approval", "True", "skip-approval"), [site, non_site], line)
    assert (wrong_way.kind, right_way.kind) == ("non_site", "site")


def test_after_tells_identical_lines_apart_by_what_precedes_them() -> None:
    close = "await _close(stream)"
    site = _label("site", anchor=("_close(stream)",), after="result = None")
    non_site = _label("non_site", anchor=("_close(stream)",), after="except StopAsyncIteration:")
    at_the_end = score.judge(_mutant(close), [site, non_site], close, "except StopAsyncIteration:\n  if x:")
    on_failure = score.judge(_mutant(close), [site, non_site], close, "result = None\n  if x:")
    elsewhere = score.judge(_mutant(close), [site, non_site], close, "pass")
    assert (at_the_end.kind, on_failure.kind, elsewhere) == ("non_site", "site", None)


def test_no_label_means_unjudged_and_a_tie_of_kinds_is_ambiguous() -> None:
    assert score.judge(_mutant("x > 1"), [], "if x > 1:") is None
    other_operator = _label("site", operator="skip-backoff")
    assert score.judge(_mutant("x > 1"), [other_operator], "if x > 1:") is None
    tie = [_label("site"), _label("non_site")]
    assert score.judge(_mutant("x > 1"), tie, "if x > 1:") == "ambiguous"


def test_function_spans_use_qualnames_with_locals() -> None:
    source = "class A:\n    def f(self):\n        def g():\n            return 1\n        return g\n"
    spans = score.function_spans(source)
    assert spans["A.f"] == (2, 5) and spans["A.f.<locals>.g"] == (3, 4)


# --- the blind split's ledger ---------------------------------------------------------------------
ledger = _load("ledger")


def _repo(tmp_path):
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "labels").mkdir()
    (tmp_path / "README.md").write_text("x\n")
    git("add", "README.md")
    git("commit", "-qm", "start")
    return git


def test_labels_committed_alone_may_be_scored_once(tmp_path) -> None:
    git = _repo(tmp_path)
    labels = tmp_path / "labels" / "pkg.toml"
    labels.write_text("[[package]]\n")
    git("add", "labels/pkg.toml")
    git("commit", "-qm", "labels of pkg")
    provenance = ledger.blind_check("pkg", labels, path=tmp_path / "blind.toml")
    assert provenance.labels_commit == git("rev-parse", "HEAD")
    overall = {"expected": 4, "found": 3, "recall": 0.75, "true": 5, "false": 1, "unjudged": 2}
    ledger.record_blind_score(
        "pkg", "1.0", provenance, {**overall, "precision": 5 / 6}, tmp_path / "blind.toml"
    )
    [entry] = ledger.ledger_entries(tmp_path / "blind.toml")
    assert (entry["package"], entry["found"], entry["labels_commit"]) == ("pkg", 3, provenance.labels_commit)
    with pytest.raises(ledger.BlindError, match="already scored blind"):
        ledger.blind_check("pkg", labels, path=tmp_path / "blind.toml")


def test_labels_not_committed_or_committed_with_other_files_are_refused(tmp_path) -> None:
    git = _repo(tmp_path)
    labels = tmp_path / "labels" / "pkg.toml"
    labels.write_text("[[package]]\n")
    with pytest.raises(ledger.BlindError, match="not committed"):
        ledger.blind_check("pkg", labels, path=tmp_path / "blind.toml")
    (tmp_path / "README.md").write_text("changed with the labels\n")
    git("add", "labels/pkg.toml", "README.md")
    git("commit", "-qm", "labels and something else")
    with pytest.raises(ledger.BlindError, match="also changes README.md"):
        ledger.blind_check("pkg", labels, path=tmp_path / "blind.toml")


def test_labels_edited_after_their_commit_are_refused(tmp_path) -> None:
    git = _repo(tmp_path)
    labels = tmp_path / "labels" / "pkg.toml"
    labels.write_text("[[package]]\n")
    git("add", "labels/pkg.toml")
    git("commit", "-qm", "labels of pkg")
    labels.write_text("[[package]]\n# tuned\n")
    with pytest.raises(ledger.BlindError, match="uncommitted changes"):
        ledger.blind_check("pkg", labels, path=tmp_path / "blind.toml")


def test_an_anchor_spanning_lines_marks_the_lines_it_covers_and_no_others() -> None:
    lines = ["Result(", "    tool_call_id=call.id,", "    mask=True,", ")"]
    lines += ["Result(", "    tool_call_id=call.id,", "    extra=e,", ")"]
    site = _label("site", operator="mismatch-tool-call-id", anchor=("tool_call_id=call.id,\n    extra=e,",))
    first = {"operator": "mismatch-tool-call-id", "original": "call.id", "replacement": "'x'", "line": 2}
    second = {**first, "line": 6}
    assert score.judge(first, [site], lines[1], near=score._near(lines, first)) is None
    assert score.judge(second, [site], lines[5], near=score._near(lines, second)) is site


def test_figures_per_role_sum_the_operators_of_that_role_and_every_operator_has_a_role() -> None:
    one = {"expected": 4, "found": 3, "emitted": 5, "ignored": 1, "true": 3, "false": 1, "unjudged": 1}
    two = {"expected": 6, "found": 6, "emitted": 6, "ignored": 0, "true": 6, "false": 0, "unjudged": 0}
    roles = score.by_role({"turn-limit-off-by-one": one, "unbounded-turns": two, "skip-approval": one})
    assert roles["turn bound"]["expected"] == 10 and roles["turn bound"]["found"] == 9
    assert roles["turn bound"]["precision"] == 9 / 10 and roles["approval"]["recall"] == 3 / 4
    agent = {name for name, op in all_operators().items() if op.family == "agent"}
    assert agent - set(score.ROLE_OF) <= {"skip-fault-handling"}, agent - set(score.ROLE_OF)
