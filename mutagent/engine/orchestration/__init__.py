"""The engine process: what runs when, on which worker, and what becomes of the results.

``runner`` drives a run from start to finish: the isolated workspace (``sandbox``, ``copyguard``),
the baseline (``baseline``, with the pytest arguments of ``invocation`` and the fault log of
``faults``), the trust check of the zygote (``zygote_trust_check``), one plan per mutant
(``plan``), the warm workers (``pool``), progress (``progress``) and the run's own numbers
(``run_stats``). Verdicts come from :mod:`mutagent.engine.verdict`.
"""
