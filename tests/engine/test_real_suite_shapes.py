"""Shapes of real projects' own suites that the harness must run as plain pytest does (issue 26).

Each fixture is a small target laid out like the public SDK it stands for: a module a namespace
package of a src layout loads lazily (a package ``__getattr__`` and ``importlib.import_module``),
tests under ``anyio.fail_after`` deadlines, a suite with ``filterwarnings = error`` and a plugin
module imported before pytest could rewrite it. Each run uses hand-written mutants, so the test
is about the harness, not the operators. ``bench/realsuites/`` runs the real projects.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, tree_hash, write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.model import RunData, Status
from mutagent.store import load_run_data


def run_engine(root: Path, specs: list[HandMutant], **settings: object) -> tuple[RunStats, RunData, str]:
    output = io.StringIO()
    config = EngineConfig(root=root, workers=1, timeout_constant=2.0, **settings)  # type: ignore[arg-type]
    stats = Engine(config, Console(file=output, width=200), HandMutants(specs)).run()
    return stats, load_run_data(root), output.getvalue()


def statuses(data: RunData) -> dict[str, tuple[Status, str]]:
    return {m.description: (data.result_of(m).status, data.result_of(m).status_reason) for m in data.mutants}


# --- a lazily loaded module of a namespace package in a src layout (issue 26, item 2) ----------
LAZY = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        pythonpath = ["src"]
    """,
    # src/acme has no __init__.py: acme is a namespace package, as mistralai is in its sdist
    "src/acme/sdk/__init__.py": """
        import importlib

        _LAZY = {"stream_events": ".events"}


        def __getattr__(name):
            if name in _LAZY:
                return getattr(importlib.import_module(_LAZY[name], __name__), name)
            raise AttributeError(name)
    """,
    "src/acme/sdk/events.py": """
        DONE = "[DONE]"


        def stream_events(chunks):
            for chunk in chunks:
                if chunk == DONE:
                    return
                yield chunk
    """,
    "tests/test_events.py": """
        from acme import sdk


        def test_stops_at_done():
            assert list(sdk.stream_events(["a", "[DONE]", "b"])) == ["a"]


        def test_passes_chunks_through():
            assert list(sdk.stream_events(["a", "b"])) == ["a", "b"]
    """,
}


def test_a_lazily_loaded_module_of_a_namespace_package_is_mutated_not_a_harness_error(tmp_path: Path) -> None:
    root = write_target(tmp_path / "lazy_sdk", LAZY)
    before = tree_hash(root)
    events = "src/acme/sdk/events.py"
    _, data, output = run_engine(
        root,
        [
            HandMutant(events, "chunk == DONE", "chunk != DONE", description="body"),
            HandMutant(events, 'DONE = "[DONE]"', 'DONE = "[END]"', description="module level"),
        ],
    )
    found = statuses(data)
    assert found["body"][0] is Status.KILLED, found
    assert found["module level"][0] is Status.KILLED, found
    assert "never imported the mutated module" not in output
    assert tree_hash(root) == before


# --- filterwarnings = error, with plugins the zygote imported before pytest (issue 26, item 3) --
STRICT = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        filterwarnings = ["error"]
        asyncio_default_fixture_loop_scope = "function"
    """,
    "shop/__init__.py": "",
    "shop/config.py": """
        import warnings

        LIMIT = 3


        def limit():
            return LIMIT
    """,
    # anyio is a pytest11 plugin (pytest marks it for assertion rewriting at start-up): the
    # baseline imports it from outside the copy, so the zygote preloads it before pytest runs
    "tests/test_config.py": """
        import anyio


        def test_limit():
            assert limit_now() == 3


        def limit_now():
            from shop.config import limit

            return limit()


        def test_anyio_is_there():
            assert anyio.get_all_backends()
    """,
}


def test_filterwarnings_error_keeps_the_zygote_and_still_applies_to_the_tests(tmp_path: Path) -> None:
    root = write_target(tmp_path / "strict", STRICT)
    config = "shop/config.py"
    stats, data, output = run_engine(
        root,
        [
            HandMutant(config, "LIMIT = 3", "LIMIT = 4", description="changed"),
            # the same value, with a DeprecationWarning at import: only the user's
            # filterwarnings = error makes it fail the tests (a collection error)
            HandMutant(
                config,
                "LIMIT = 3",
                'LIMIT = warnings.warn("LIMIT moves", DeprecationWarning) or 3',
                description="warns",
            ),
        ],
    )
    found = statuses(data)
    assert "zygote control run failed" not in output, output
    assert stats.zygote_imports == 2, (stats.fresh_imports, output)
    assert found["changed"][0] is Status.KILLED, found
    assert found["warns"][0] is Status.KILLED, found  # the user's filter still applies


# --- anyio deadlines around a lazily loaded part of the SDK (issue 26, item 1) -------------------
DEADLINES = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        asyncio_default_fixture_loop_scope = "function"
    """,
    "sdk/__init__.py": """
        import importlib


        def __getattr__(name):
            if name == "beta":  # loaded on first use, as mistralai's sub-clients are
                return importlib.import_module(".beta", __name__)
            raise AttributeError(name)
    """,
    # stands for the SDK's lazily loaded sub-clients: in mistralai 3.7.0 their first import
    # (hundreds of pydantic models) took 4 to 8 s here, inside the tests' anyio.fail_after(1)
    "sdk/beta.py": """
        import time

        import anyio

        time.sleep(1.5)


        async def ping():
            await anyio.sleep(0.01)  # a request's await: where a passed deadline cancels
            return "pong"
    """,
    "tests/conftest.py": """
        import pytest


        @pytest.fixture
        def anyio_backend():
            return "asyncio"
    """,
    "tests/test_beta.py": """
        import anyio
        import pytest

        import sdk


        @pytest.mark.anyio
        async def test_the_client_answers():
            assert await sdk.beta.ping() == "pong"


        @pytest.mark.anyio
        async def test_the_client_answers_quickly():
            with anyio.fail_after(1):
                assert await sdk.beta.ping() == "pong"
    """,
}


def test_a_deadline_test_after_a_lazy_import_is_not_flagged_flaky(tmp_path: Path) -> None:
    """In plain pytest the second test runs after the first imported ``sdk.beta`` (a suite's
    collection or earlier tests do that for an SDK's lazy modules) and takes milliseconds. Each
    forked child started from the worker's state after collection, without ``sdk.beta``, so the
    control run of that test alone imported it inside its one-second deadline: TimeoutError, a
    false flaky. The workers now load what the baseline's tests imported of the target too."""
    root = write_target(tmp_path / "deadlines", DEADLINES)
    stats, data, output = run_engine(
        root, [HandMutant("sdk/beta.py", 'return "pong"', 'return "pang"', description="body")]
    )
    assert "flaky" not in output, output
    found = statuses(data)
    assert found["body"][0] is Status.KILLED, found
    assert stats.fresh_imports == 0, found  # the lazily loaded function is swapped in the worker
