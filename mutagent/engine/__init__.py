"""The engine behind ``mutagent run``.

Kept import-light on purpose: the pytest plugins in this package (``baseline_plugin``,
``worker_plugin``, ``fallback_plugin``) are loaded with ``-p`` inside the target's own test
processes, and importing them must not drag libcst, rich or sqlite into every mutant run.

Flow (``runner.run_engine``): discover the target (``discover``) -> copy it to an isolated
workspace (``sandbox``) -> baseline with per-test coverage (``baseline``) -> control run of every
test in the forking harness (``pool``/``worker_plugin``) -> one plan per mutant (``plan``,
``analysis``; module-level constants select only their readers' tests: ``narrow``/``readers``)
-> warm forking workers run the plans (``pool``, ``worker``, ``child``; lazy imports and pydantic
schemas prepared once before forking: ``warm``) -> results streamed into the store.

Mutants only a fresh import applies (module level, class bodies, def headers) run in a child
forked from the worker's zygote (``zygote``, ``zygote_client``, ``fallback``), a process that
imported the suite's third-party modules once; ``zygote_control`` checks the tests judging them
pass unmutated there, and ``fallback_result`` holds the verdict rules shared with the slow path
(a new ``python -m pytest`` per mutant).
"""
