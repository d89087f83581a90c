"""The engine behind ``mutagent run``, in three subpackages named after who runs the code:

* :mod:`~mutagent.engine.selection` — static decisions in the engine process: which files are
  code and tests, which covering tests a mutant selects, what a stored result depends on.
* :mod:`~mutagent.engine.orchestration` — the engine process itself: workspace, baseline, trust
  check of the zygote, plans, the pool of warm workers, progress (entry: ``runner.run_engine``).
* :mod:`~mutagent.engine.harness` — code loaded into the target's own pytest processes: the warm
  worker and its forked children, the baseline probe, fresh-import runs through the zygote or a
  new ``python -m pytest``.

Between them: ``protocol`` (length-prefixed pickles on pipes) carries the messages, and
``verdict`` holds the one set of rules that turns a job's result into a status.

Kept import-light on purpose: the harness plugins are loaded with ``-p`` inside the target's test
processes, and importing them must not drag libcst, rich or sqlite into every mutant run.
"""
