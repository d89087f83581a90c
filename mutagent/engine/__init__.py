"""The engine behind ``mutagent run``.

Kept import-light on purpose: the pytest plugins in this package (``baseline_plugin``,
``worker_plugin``, ``fallback_plugin``) are loaded with ``-p`` inside the target's own test
processes, and importing them must not drag libcst, rich or sqlite into every mutant run.

Flow (``runner.run_engine``): discover the target (``discover``) -> copy it to an isolated
workspace (``sandbox``) -> baseline with per-test coverage (``baseline``) -> control run of every
test in the forking harness (``pool``/``worker_plugin``) -> one plan per mutant (``plan``,
``analysis``) -> warm forking workers run the plans (``pool``) -> results streamed into the store.
"""
