"""Fixtures shared by the fake server's tests."""

import pytest

from mutagent.fakeserver import FakeModelServer


@pytest.fixture
def server():
    """A fake model server on loopback, stopped after the test."""
    with FakeModelServer() as srv:
        yield srv
