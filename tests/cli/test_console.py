"""One-line errors print their message verbatim, square brackets included."""

from mutagent import console


def test_error_keeps_square_brackets(capsys):
    console.err_console.width = 200
    console.error("unknown key 'x' in [tool.mutagent] of pyproject.toml")
    assert "[tool.mutagent]" in capsys.readouterr().err


def test_warning_keeps_square_brackets(capsys):
    console.warning("skipping [broken] file")
    assert "[broken]" in capsys.readouterr().err
