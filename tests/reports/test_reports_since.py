"""``--since REV``: the lines changed since a revision, from a real temporary git repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from testkit.sample_runs import make_mutant

from mutagent.errors import UsageError
from mutagent.mutants.since import changed_lines, filter_changed, parse_diff, unquote_path

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BEFORE = "".join(f"line_{i} = {i}\n" for i in range(1, 11))


def git(repo: Path, *args: str) -> str:
    env_args = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", "-C", str(repo), *env_args, *args], capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "loop.py").write_text(BEFORE)
    (root / "pkg" / "same.py").write_text(BEFORE)
    (root / "gone.py").write_text(BEFORE)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_modified_added_and_uncommitted_lines(repo: Path):
    lines = BEFORE.splitlines(keepends=True)
    lines[2] = "line_3 = 33\n"  # modified
    lines.insert(6, "extra = 1\n")  # added: new line 7
    del lines[9]  # a pure deletion adds no line
    (repo / "pkg" / "loop.py").write_text("".join(lines))
    git(repo, "commit", "-q", "-am", "edit")
    (repo / "gone.py").unlink()
    with open(repo / "pkg" / "same.py", "a") as handle:
        handle.write("tail = 11\n")  # uncommitted: still "since REV"
    changed = changed_lines(repo, "HEAD~1")
    assert changed == {"pkg/loop.py": {3, 7}, "pkg/same.py": {11}}


def test_untracked_files_count_as_entirely_new(repo: Path):
    (repo / "pkg" / "new.py").write_text("a = 1\nb = 2\nc = 3")
    (repo / ".gitignore").write_text("ignored.py\n")
    (repo / "ignored.py").write_text("x = 1\n")
    changed = changed_lines(repo, "HEAD")
    assert changed["pkg/new.py"] == {1, 2, 3}
    assert "ignored.py" not in changed


def test_paths_are_relative_to_a_subdirectory_root(repo: Path):
    (repo / "pkg" / "loop.py").write_text(BEFORE.replace("line_5 = 5", "line_5 = 55"))
    (repo / "gone.py").write_text(BEFORE.replace("line_1 = 1", "line_1 = 11"))  # outside pkg/: not reported
    assert changed_lines(repo / "pkg", "HEAD") == {"loop.py": {5}}


def test_unusual_file_names(repo: Path):
    (repo / "pkg" / "é tab.py").write_text("v = 1\n")
    git(repo, "add", ".")
    assert changed_lines(repo, "HEAD")["pkg/é tab.py"] == {1}
    assert unquote_path('"pkg/\\303\\251\\ttab.py"') == "pkg/é\ttab.py"


def test_filter_keeps_only_mutants_on_changed_lines(repo: Path):
    (repo / "pkg" / "loop.py").write_text(BEFORE.replace("line_4 = 4", "line_4 = 44"))
    changed = changed_lines(repo, "HEAD")
    on_4 = make_mutant("pkg/loop.py", BEFORE, "op", 4, "4", "5")
    on_5 = make_mutant("pkg/loop.py", BEFORE, "op", 5, "5", "6")
    other = make_mutant("pkg/same.py", BEFORE, "op", 4, "4", "5")
    assert filter_changed([on_4, on_5, other], changed) == [on_4]


def test_bad_revision_is_a_clear_usage_error(repo: Path):
    with pytest.raises(UsageError, match="unknown git revision 'no-such-branch'"):
        changed_lines(repo, "no-such-branch")
    with pytest.raises(UsageError, match="not a git revision"):
        changed_lines(repo, "--output=/tmp/x")


def test_outside_a_git_repository(tmp_path: Path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # even if /tmp sits inside a repository
    with pytest.raises(UsageError, match="not inside a git repository"):
        changed_lines(plain, "HEAD")


def test_parse_diff_handles_counts_and_deletions():
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        "@@ -3 +3 @@\n-a\n+b\n"
        "@@ -10,0 +11,2 @@\n+c\n+d\n"
        "@@ -20,2 +21,0 @@\n-e\n-f\n"
        "diff --git a/y.py b/y.py\n--- a/y.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
    )
    assert parse_diff(diff) == {"x.py": {3, 11, 12}}
