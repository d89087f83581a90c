"""pytest plugin (entry point ``pytest11``): the ``fake_model`` fixture.

Installing mutagent gives every suite the fixture. This module is imported by every pytest run
in the environment, so it imports nothing heavy: the server is imported inside the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mutagent.fakeserver.server import FakeModelServer


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
            record()
    problems = server.problems()
    if problems:
        pytest.fail("fake_model: " + "\n  ".join(["problems found:", *problems]), pytrace=False)
