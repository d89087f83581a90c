"""pytest plugin (entry point ``pytest11``): the ``fake_model`` fixture.

Installing mutagent gives every suite the fixture. This module is imported by every pytest run
in the environment, so it imports nothing heavy: the server is imported inside the fixture.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mutagent.fakeserver.server import FakeModelServer


EXPLORE_ENV = "MUTAGENT_EXPLORE"  # ``mutagent.fakeserver.inject.ENV``, without importing it
_RAISED = pytest.StashKey[dict]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Under fault exploration only: keep what the test's call raised and through which frames,
    for the fixture's record (an error escaping the agent's code is not one the test raised)."""
    yield
    if call.when == "call" and call.excinfo is not None and os.environ.get(EXPLORE_ENV):
        error = call.excinfo.value
        kind = type(error)
        name = kind.__qualname__
        if kind.__module__ != "builtins":
            name = f"{kind.__module__}.{name}"
        frames = [[str(entry.path), entry.lineno + 1, entry.name] for entry in call.excinfo.traceback]
        item.stash[_RAISED] = {"type": name, "frames": frames[-40:]}


@pytest.fixture
def fake_model(request: pytest.FixtureRequest) -> Iterator[FakeModelServer]:
    """A started fake model server on its own port, closed after the test.

    Teardown fails the test when a request went beyond the script, broke the tool-call
    invariants, or the server hit an internal error: one request too many is always red.
    """
    from mutagent.fakeserver import inject
    from mutagent.fakeserver.faultlog import attach
    from mutagent.fakeserver.server import FakeModelServer

    server = FakeModelServer().start()
    attach(server, request.node.nodeid)  # mutagent's baseline: log what this test scripts
    record = inject.attach(server, request.node.nodeid)  # mutagent's fault exploration
    try:
        yield server
    finally:
        server.close()
        if record is not None:
            record(request.node.stash.get(_RAISED, None))
    problems = server.problems()
    if problems:
        pytest.fail("fake_model: " + "\n  ".join(["problems found:", *problems]), pytrace=False)
