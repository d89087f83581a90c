"""Static decisions, made in the engine process before any mutant runs: which files are code and
which are tests (``discover``), where a mutant executes and which covering tests it selects
(``analysis``; module-level constants narrowed to their readers' tests: ``narrow``, ``readers``,
``names``, ``imports``), which test a ``--fast`` mutant runs first (``order``), what a stored
result depends on (``fingerprint``) and where the mutants come from (``mutant_source``).

Nothing here starts a process or imports the target.
"""
