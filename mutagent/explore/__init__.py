"""Fault exploration: how the agent loop handles the faults its suite does not script.

For each passing test that talks to ``fake_model`` and each fault that fits its dialect and its
script, the test runs once more with that fault inserted (``mutagent.fakeserver.inject``), in
a forked child of a warm worker with per-test coverage. The lines that run only under a fault
are that fault's handling code, whatever it is called; a run that crashes on a raw transport
error, hangs or sends a malformed next request is a finding with the test that shows it.

``catalogue`` says which faults fit which scripted step, ``schedule`` orders the runs within the
time budget, ``results`` keeps what they did and derives the handling code and the findings.
The engine runs them (``mutagent.engine.orchestration.exploration``).
"""
