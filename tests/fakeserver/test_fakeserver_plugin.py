"""The ``fake_model`` pytest fixture: registered through the ``pytest11`` entry point, one fresh
server per test, and a red test whenever a request goes beyond the script or breaks the
tool-call invariants (proven by running a small suite in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

import pytest

from mutagent.fakeserver import behaviours as b

INNER_SUITE = """
import http.client
import json

from mutagent.fakeserver import behaviours as b

BODY = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}


def post(server, body=BODY):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("POST", "/v1/messages", body=json.dumps(body))
    status = conn.getresponse().status
    conn.close()
    return status


def test_green(fake_model):
    fake_model.script(b.ok())
    assert post(fake_model) == 200


def test_one_request_too_many(fake_model):
    fake_model.script(b.ok())
    assert post(fake_model) == 200
    assert post(fake_model) == 500  # the test body passes; teardown must still make it red


def test_orphan_tool_result(fake_model):
    orphan = dict(BODY, messages=[{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_bad", "content": "x"}]}])
    assert post(fake_model, orphan) == 400


def test_each_test_gets_a_fresh_server(fake_model):
    assert fake_model.request_count == 0 and fake_model.remaining == []
"""


def plugin_registered() -> bool:
    return any(ep.value == "mutagent.fakeserver.plugin" for ep in entry_points(group="pytest11"))


def test_plugin_is_declared_as_a_pytest11_entry_point() -> None:
    if not plugin_registered():
        pytest.skip("mutagent is not installed (pip install -e .): the entry point cannot be checked")
    (ep,) = [ep for ep in entry_points(group="pytest11") if ep.value == "mutagent.fakeserver.plugin"]
    assert ep.name == "mutagent_fake_model"


def test_fixture_makes_extra_requests_and_violations_red(tmp_path) -> None:
    suite = tmp_path / "test_inner.py"
    suite.write_text(textwrap.dedent(INNER_SUITE))
    # Only our plugin, loaded explicitly: third-party plugins would just slow the run down (the
    # entry point itself is checked above and used in-process below).
    command = [sys.executable, "-m", "pytest", str(suite), "-q", "-rE", "-p", "no:cacheprovider",
               "-p", "mutagent.fakeserver.plugin"]  # fmt: skip
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "4 passed, 2 errors" in output, output  # the calls pass; teardown errors make the run red
    assert "ERROR at teardown of test_one_request_too_many" in output
    assert "1 request(s) beyond the script: #1 POST /v1/messages" in output
    assert "ERROR at teardown of test_orphan_tool_result" in output
    assert "'toolu_bad' answers no tool call" in output


def test_plugin_import_does_not_load_the_server() -> None:
    code = (
        "import sys, mutagent.fakeserver.plugin; print(sorted(m for m in sys.modules if 'fakeserver.' in m))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "['mutagent.fakeserver.plugin']", result.stderr


def test_the_fixture_in_this_process(request) -> None:
    if not plugin_registered():
        pytest.skip("mutagent is not installed: fake_model comes from its entry point")
    fake_model = request.getfixturevalue("fake_model")
    assert fake_model.base_url.startswith("http://127.0.0.1:") and fake_model.request_count == 0
    fake_model.script(b.empty())
    assert fake_model.remaining == ["empty"]
