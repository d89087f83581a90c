"""``mutagent list`` and ``mutagent operators``: what a user sees before running anything."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mutagent.cli import main
from mutagent.mutation.registry import all_operators


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "__init__.py").write_text("")
    (tmp_path / "agent" / "loop.py").write_text(
        textwrap.dedent(
            """\
            MAX_RETRIES = 3


            def attempts(n):
                return n + 1  # mutagent: skip=generic-number cosmetic
            """
        )
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_loop.py").write_text("def test_x():\n    assert 1 + 1 == 2\n")
    (tmp_path / "conftest.py").write_text("X = 1\n")
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_json_has_the_documented_fields(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "list", str(project), "--operators", "generic-number", "--json")
    assert code == 0
    mutants = json.loads(out)
    assert [(m["file"], m["line"], m["description"]) for m in mutants] == [
        ("agent/loop.py", 1, "3 -> 4"),
        ("agent/loop.py", 5, "1 -> 2"),
    ]
    first, second = mutants
    assert {"id", "operator", "file", "line", "description"} <= set(first)
    assert first["operator"] == "generic-number" and first["scope"] == "" and not first["ignored"]
    assert second["scope"] == "attempts" and second["ignored_reason"] == "cosmetic"


@pytest.mark.parametrize("as_json", [False, True])
def test_list_fails_on_a_file_with_a_syntax_error_as_run_does(
    project: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    (project / "agent" / "broken.py").write_text("def oops(:\n    pass\n")
    code, out, err = _run(
        capsys, "list", str(project), "--operators", "generic", *(["--json"] if as_json else [])
    )
    assert code == 2 and out == ""  # `mutagent run` stops at the same file with exit 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: agent/broken.py: cannot parse")


def test_list_is_readable_at_80_columns(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mutagent.console import console

    monkeypatch.setattr(console, "width", 80)
    (project / "agent" / "loop.py").write_text(
        "import anthropic\n\n\n"
        "def make_client():\n"
        "    return anthropic.Anthropic(api_key='k', max_retries=0)\n"
    )
    code, out, _ = _run(capsys, "list", str(project), "--operators", "enable-sdk-retries")
    assert code == 0
    (mutant,) = json.loads(
        _run(capsys, "list", str(project), "--operators", "enable-sdk-retries", "--json")[1]
    )
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    # every word of the id, the place, the operator and the description is there, uncut
    assert lines[0].split() == [mutant["id"], "agent/loop.py:5", "enable-sdk-retries"]
    assert " ".join(" ".join(lines[1:-1]).split()) == mutant["description"]
    assert lines[-1] == "1 mutant (0 ignored) from 1 operator in 1 of 2 files"


def test_list_marks_ignored_mutants(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", str(project), "--operators", "generic-number")
    assert code == 0
    assert "Ignored:" in out and "cosmetic" in out
    assert "agent/loop.py:1" in out and "agent/loop.py:5" in out
    assert "2 mutants (1 ignored) from 1 operator in 1 of 2 files" in out  # __init__, loop


def test_list_paths_narrow_the_sources(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent" / "other.py").write_text("LIMIT = 5\n")
    code, out, _ = _run(
        capsys, "list", str(project), "--paths", "agent/other.py", "--operators", "generic-number", "--json"
    )
    assert code == 0
    assert [m["file"] for m in json.loads(out)] == ["agent/other.py"]


@pytest.mark.parametrize("target", ["missing", "agent/loop.py"])
def test_list_rejects_a_path_that_is_not_a_directory(
    project: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    code, out, err = _run(capsys, "list", str(project / target))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_list_unknown_operator(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "list", str(project), "--operators", "skip-bakcoff")
    assert code == 2 and out == ""
    assert "unknown operator 'skip-bakcoff'" in err and "did you mean 'skip-backoff'" in err


def test_list_reads_operators_from_pyproject(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.mutagent]\noperators = "generic-name"\n')
    (project / "agent" / "flags.py").write_text("STREAM = True\n")
    code, out, _ = _run(capsys, "list", str(project), "--json")
    assert code == 0
    assert {m["operator"] for m in json.loads(out)} == {"generic-name"}


def test_operators_json_lists_every_operator(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "operators", "--json")
    assert code == 0
    entries = json.loads(out)
    assert {e["name"] for e in entries} == set(all_operators())
    for entry in entries:
        assert set(entry) == {"name", "family", "description", "failure", "hint", "examples"}
        assert all(set(example) == {"before", "after", "note"} for example in entry["examples"])
    families = [e["family"] for e in entries]
    assert families.index("generic") > len(families) - families[::-1].index("agent") - 1  # agent first


def test_operators_table_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "operators", "--operators", "generic-swap-op")
    assert code == 0
    text = " ".join(out.split())
    assert "generic-swap-op" in text and "kill it:" in text and "examples 5+2" in text
    code, out, _ = _run(capsys, "operators", "--operators", "generic-swap-op", "-v")
    assert code == 0
    assert "example 1: mutant" in out and "-    return a + b" in out and "+    return a - b" in out
    assert "no mutant" in out
