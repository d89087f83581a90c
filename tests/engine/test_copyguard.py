"""The copy guard puts back what a mutant changed in the isolated copy, and nothing else."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mutagent.engine.orchestration.copyguard import CopyGuard


def make_pair(tmp_path: Path) -> tuple[Path, Path]:
    original = tmp_path / "tree"
    (original / "pkg").mkdir(parents=True)
    (original / "pkg" / "core.py").write_text("VALUE = 1\n")
    (original / "pkg" / "data.json").write_text('{"a": 1}\n')
    (original / "README.md").write_text("hello\n")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    return original, copy


def test_an_untouched_copy_needs_no_repair(tmp_path: Path) -> None:
    original, copy = make_pair(tmp_path)
    guard = CopyGuard(original, copy)
    assert not guard.repair()


def test_deleted_and_rewritten_files_come_back_from_the_tree(tmp_path: Path) -> None:
    original, copy = make_pair(tmp_path)
    guard = CopyGuard(original, copy)
    (copy / "pkg" / "core.py").unlink()
    (copy / "pkg" / "data.json").write_text('{"a": 2, "damaged": true}\n')
    repair = guard.repair()
    assert sorted(repair.restored) == [os.path.join("pkg", "core.py"), os.path.join("pkg", "data.json")]
    assert (copy / "pkg" / "core.py").read_text() == "VALUE = 1\n"
    assert (copy / "pkg" / "data.json").read_text() == '{"a": 1}\n'
    assert repair.changed_in_tree == []
    assert not guard.repair()  # once put back, it stays put back


def test_a_rewrite_of_the_same_size_is_caught_by_its_modification_time(tmp_path: Path) -> None:
    original, copy = make_pair(tmp_path)
    guard = CopyGuard(original, copy)
    target = copy / "pkg" / "core.py"
    target.write_text("VALUE = 2\n")  # same length
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert guard.repair().restored == [os.path.join("pkg", "core.py")]
    assert target.read_text() == "VALUE = 1\n"


def test_new_python_files_are_removed_and_other_new_files_are_left(tmp_path: Path) -> None:
    original, copy = make_pair(tmp_path)
    guard = CopyGuard(original, copy)
    (copy / "pkg" / "conftest.py").write_text("raise SystemExit\n")
    (copy / "run.log").write_text("a log line\n")
    repair = guard.repair()
    assert repair.removed == [os.path.join("pkg", "conftest.py")]
    assert not (copy / "pkg" / "conftest.py").exists()
    assert (copy / "run.log").exists()


def test_a_tree_edited_during_the_run_is_reported(tmp_path: Path) -> None:
    original, copy = make_pair(tmp_path)
    guard = CopyGuard(original, copy)
    (copy / "README.md").unlink()
    (original / "README.md").write_text("edited by the user meanwhile\n")
    repair = guard.repair()
    assert repair.changed_in_tree == ["README.md"]
    assert (copy / "README.md").read_text() == "edited by the user meanwhile\n"
