"""Unit tests of the engine's pure parts: where a mutant executes, imports, discovery, configuration,
environment scrubbing and the network block."""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

import pytest
from testkit.engine_targets import write_target

from mutagent.config import build_config
from mutagent.engine.harness import netblock
from mutagent.engine.orchestration.sandbox import scrub_environment
from mutagent.engine.selection.analysis import SourceMap, find_code, locate
from mutagent.engine.selection.discover import discover
from mutagent.engine.selection.imports import ImportGraph, imported_modules, select_tests_in
from mutagent.errors import UsageError
from mutagent.model import Location

SOURCE = textwrap.dedent("""
    import functools

    LIMIT = 3


    def deco(f):
        @functools.wraps(f)
        def wrapper(*args):
            return f(*args)
        return wrapper


    @deco
    def run(x, retries=LIMIT):
        if x > LIMIT:
            return x
        return x + 1


    def make():
        count = 0

        def inner(step=1):
            return count + step

        class Local:
            size = 2

            def get(self):
                return self.size

        return inner, Local


    class Agent:
        model = "m"

        @property
        def name(self):
            return "a"

        @name.setter
        def name(self, value):
            self._name = value

    handler = lambda event: event + 1
""").lstrip("\\n")


def at(text: str, nth: int = 0) -> Location:
    """Location of the ``nth`` occurrence of ``text`` in SOURCE."""
    start = -1
    for _ in range(nth + 1):
        start = SOURCE.index(text, start + 1)
    line = SOURCE.count("\n", 0, start) + 1
    col = start - (SOURCE.rfind("\n", 0, start) + 1)
    return Location(line, col, line, col + len(text))


def line_of(text: str) -> int:
    return SOURCE.count("\n", 0, SOURCE.index(text)) + 1


SMAP = SourceMap(SOURCE)


def test_a_function_body_swaps_that_function() -> None:
    locus = locate(SMAP, at("return x + 1"))
    assert locus.levels == (("run", line_of("@deco\ndef run")),)  # decorated: starts at the decorator
    assert not locus.file_wide
    assert line_of("return x + 1") in locus.lines


def test_an_if_header_selects_only_its_header_line() -> None:
    locus = locate(SMAP, at("x > LIMIT"))
    assert locus.lines == {line_of("if x > LIMIT")}


def test_a_nested_function_swaps_every_enclosing_level() -> None:
    locus = locate(SMAP, at("count + step"))
    assert locus.levels == (("make", line_of("def make")), ("inner", line_of("def inner")))


def test_a_method_of_a_class_inside_a_function() -> None:
    locus = locate(SMAP, at("return self.size"))
    assert [name for name, _ in locus.levels] == ["make", "get"]


def test_a_class_body_inside_a_function_swaps_the_function() -> None:
    locus = locate(SMAP, at("size = 2"))
    assert locus.levels == (("make", line_of("def make")),)


def test_a_default_of_a_nested_def_runs_in_the_enclosing_function() -> None:
    locus = locate(SMAP, at("step=1"))
    assert locus.levels == (("make", line_of("def make")),)
    assert line_of("return count + step") in locus.lines  # callers of inner run its body


def test_a_default_of_a_top_level_def_is_import_time_but_selects_by_body() -> None:
    locus = locate(SMAP, at("retries=LIMIT"))
    assert locus.levels == ()
    assert not locus.file_wide
    assert line_of("return x + 1") in locus.lines


@pytest.mark.parametrize("text", ["LIMIT = 3", 'model = "m"'])
def test_module_level_and_class_bodies_are_file_wide(text: str) -> None:
    locus = locate(SMAP, at(text))
    assert locus.levels == () and locus.file_wide


def test_property_getter_and_setter_are_told_apart_by_first_line() -> None:
    getter, setter = locate(SMAP, at('return "a"')), locate(SMAP, at("self._name = value"))
    assert getter.levels[0][0] == setter.levels[0][0] == "name"
    assert getter.levels[0][1] != setter.levels[0][1]
    code = compile(SOURCE, "m.py", "exec")
    assert find_code(code, *getter.levels[0]) is not find_code(code, *setter.levels[0])


def test_a_module_level_lambda_body_swaps_the_lambda() -> None:
    locus = locate(SMAP, at("event + 1"))
    assert locus.levels == (("<lambda>", line_of("handler = lambda")),)
    assert find_code(compile(SOURCE, "m.py", "exec"), *locus.levels[0]) is not None


def test_non_ascii_columns_are_characters() -> None:
    source = 's = "é"; f = lambda v: v + 1\n'
    start = source.index("v + 1")
    locus = locate(SourceMap(source), Location(1, start, 1, start + 5))
    assert locus.levels == (("<lambda>", 1),)


# A client whose request() makes the idempotency key once, before its retry loop, in a class
# whose body and module read values at import time (issue 26: the per-attempt key mutant was run
# as an import-time mutant and reported at ``cast_to = ...``, a line it never edits).
CLIENT = textwrap.dedent("""
    import uuid

    DEFAULT_MAX_RETRIES = 2


    class Client:
        max_retries = DEFAULT_MAX_RETRIES
        idempotency_header = "Idempotency-Key"

        def _idempotency_key(self):
            return f"retry-{uuid.uuid4()}"

        def request(self, cast_to, options):
            cast_to = self._maybe_override_cast_to(cast_to, options)
            if options.idempotency_key is None and options.method != "get":
                options.idempotency_key = self._idempotency_key()
            for retries_taken in range(self.max_retries + 1):
                remaining = self.max_retries - retries_taken
                try:
                    return self._send(cast_to, options, remaining)
                except TimeoutError:
                    continue
""").lstrip("\n")


def test_a_block_mutation_in_a_method_body_is_located_at_its_edit_and_swaps_the_method() -> None:
    from mutagent.mutation.generate import generate_for_source
    from mutagent.mutation.registry import select_operators

    (mutant,) = [
        m
        for m in generate_for_source(CLIENT, "client.py", select_operators("ignore-idempotency-key"))
        if "per attempt" in m.description
    ]
    edited = CLIENT.count("\n", 0, CLIENT.index("remaining = self.max_retries")) + 1
    assert (mutant.location.start_line, mutant.location.end_line) == (edited, edited)  # not cast_to's line
    mutated = mutant.mutated_source(CLIENT).splitlines()
    assert mutated[edited - 1].strip() == "options.idempotency_key = self._idempotency_key()"
    locus = locate(SourceMap(CLIENT), mutant.location)
    request = CLIENT.count("\n", 0, CLIENT.index("def request")) + 1
    assert locus.levels == (("request", request),)  # a code swap of the method, not a fresh import
    assert not locus.file_wide and locus.lines == {edited}


def test_an_edit_over_several_statements_of_a_method_body_swaps_the_method() -> None:
    start, end = CLIENT.index("if options.idempotency_key"), CLIENT.index("remaining = ")
    location = Location(
        CLIENT.count("\n", 0, start) + 1, 8, CLIENT.count("\n", 0, end) + 1, 8 + len("remaining")
    )
    locus = locate(SourceMap(CLIENT), location)
    assert [name for name, _ in locus.levels] == ["request"]
    assert not locus.file_wide
    first = CLIENT.count("\n", 0, start) + 1
    assert {first, first + 1, first + 2} <= locus.lines  # the if, its body and the loop header
    assert CLIENT.count("\n", 0, CLIENT.index("cast_to = self")) + 1 not in locus.lines


def test_import_graph_follows_relative_and_transitive_imports() -> None:
    files = {
        "pkg/__init__.py": "from .api import serve\n",
        "pkg/config.py": "LIMIT = 3\n",
        "pkg/api.py": "from . import config\n\ndef serve():\n    return config.LIMIT\n",
        "pkg/other.py": "import json\n",
        "tests/test_api.py": "from pkg import serve\n",
        "tests/test_other.py": "import pkg.other\n",
    }
    modules = {
        "pkg/__init__.py": "pkg",
        "pkg/config.py": "pkg.config",
        "pkg/api.py": "pkg.api",
        "pkg/other.py": "pkg.other",
        "tests/test_api.py": "test_api",
        "tests/test_other.py": "test_other",
    }
    graph = ImportGraph(files, modules)
    assert imported_modules(files["pkg/api.py"], "pkg.api", False) >= {"pkg", "pkg.config"}
    dependents = graph.dependents("pkg/config.py")
    assert {"pkg/api.py", "pkg/__init__.py", "tests/test_api.py"} <= dependents
    assert "pkg/other.py" not in dependents
    tests = ["tests/test_api.py::test_a", "tests/test_other.py::test_b", "tests/sub/test_c.py::test_c"]
    assert select_tests_in({"tests/test_api.py"}, tests) == {"tests/test_api.py::test_a"}
    assert select_tests_in({"tests/sub/conftest.py"}, tests) == {"tests/sub/test_c.py::test_c"}


def test_discovery_of_a_package_target_and_its_module_names(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "agent",
        {
            "__init__.py": "",
            "loop.py": "",
            "tests/__init__.py": "",
            "tests/conftest.py": "",
            "tests/test_loop.py": "",
            ".venv/lib/x.py": "",
            "build/gen.py": "",
        },
    )
    target = discover(root)
    assert target.sources == ["__init__.py", "loop.py"]
    assert target.module_name("loop.py") == ("agent.loop", "")
    assert target.module_name("__init__.py") == ("agent", "")
    assert "tests/test_loop.py" in target.tests


def test_discovery_of_a_project_layout(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "proj",
        {
            "setup.py": "",
            "conftest.py": "",
            "src/pkg/__init__.py": "",
            "src/pkg/core.py": "",
            "scripts/tool.py": "",
            "tests/test_core.py": "",
            "test_top.py": "",
        },
    )
    target = discover(root)
    assert target.sources == ["src/pkg/__init__.py", "src/pkg/core.py"]
    assert target.module_name("src/pkg/core.py") == ("pkg.core", "proj/src")
    assert target.import_roots() == ["proj/src"]


@pytest.mark.parametrize(
    "files, message",
    [
        ({"tests/test_a.py": ""}, "no Python sources"),
        ({"pkg/__init__.py": "", "pkg/a.py": ""}, "no tests found"),
    ],
)
def test_discovery_errors_are_one_line(tmp_path: Path, files: dict[str, str], message: str) -> None:
    root = write_target(tmp_path / "t", files)
    with pytest.raises(UsageError, match=message):
        discover(root)


def test_a_missing_or_file_target_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        discover(tmp_path / "nope")
    (tmp_path / "file.py").write_text("")
    with pytest.raises(UsageError, match="not a directory"):
        discover(tmp_path / "file.py")


def test_config_merges_pyproject_and_command_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.mutagent]\nworkers = 3\ntimeout-factor = 4\n"
        'tests = "tests/ -k agent"\npass_env = ["MY_TOKEN"]\n'
    )
    config = build_config(tmp_path, {"workers": "2", "fast": True, "paths": None})
    assert (config.workers, config.timeout_factor, config.fast) == (2, 4.0, True)
    assert config.tests == ["tests/", "-k", "agent"] and config.pass_env == ["MY_TOKEN"]


@pytest.mark.parametrize(
    "table, message",
    [
        ("wokers = 2", "unknown key 'wokers'"),
        ("workers = 0", "workers must be a whole number"),
        ("timeout-factor = -1", "timeout-factor must be a number greater than 0"),
        ("fast = 'yes'", "fast must be true or false"),
        ("paths = 3", "paths must be a string or a list"),
    ],
)
def test_bad_pyproject_keys_are_named(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.mutagent]\n{table}\n")
    with pytest.raises(UsageError, match=message):
        build_config(tmp_path, {})


def test_bad_command_line_values_are_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--timeout-constant"):
        build_config(tmp_path, {"timeout_constant": "soon"})


def test_secrets_are_scrubbed_unless_passed() -> None:
    env = scrub_environment(
        {
            "ANTHROPIC_API_KEY": "k",
            "OPENAI_API_KEY": "k",
            "GH_TOKEN": "t",
            "DB_PASSWORD": "p",
            "MY_SECRET_THING": "s",
            "PATH": "/bin",
            "HOME": "/root",
            "KEEP_TOKEN": "x",
        },
        ["KEEP_TOKEN"],
    )
    assert set(env) >= {"PATH", "HOME", "KEEP_TOKEN"}
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GH_TOKEN", "DB_PASSWORD", "MY_SECRET_THING"} & set(
        env
    )


@pytest.mark.parametrize(
    "host, local",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.9.9.9", True),
        ("0.0.0.0", True),
        ("192.0.2.1", False),
        ("api.anthropic.com", False),
        ("10.0.0.1", False),
        ("::ffff:127.0.0.1", True),
    ],
)
def test_only_loopback_counts_as_local(host: str, local: bool) -> None:
    assert netblock.is_local(host) is local


def test_the_network_block_raises_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, getattr(socket.socket, name))
    for name in ("create_connection", "getaddrinfo"):
        monkeypatch.setattr(socket, name, getattr(socket, name))
    monkeypatch.setattr(netblock, "_installed", False)
    netblock.install()
    with pytest.raises(netblock.NetworkBlockedError, match=r"192\.0\.2\.1:80"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)
    with socket.socket() as sock, pytest.raises(OSError, match="192.0.2.1"):
        sock.connect(("192.0.2.1", 443))
    with pytest.raises(OSError, match="example.invalid"):
        socket.getaddrinfo("example.invalid", 443)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=1):
            pass  # loopback still works: the fake model server lives there
