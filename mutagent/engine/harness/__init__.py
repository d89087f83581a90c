"""Code that runs inside the target's own pytest processes, never in the engine process.

* ``worker_plugin`` + ``worker``: a warm worker (pytest that collected the suite once) serving
  jobs; per job ``launchers.choose_launcher`` picks one of the three launchers: code swap
  (``child`` forks a child that swaps code objects in), zygote fork or fresh process.
* ``events``: the typed messages of the worker <-> child and worker <-> zygote pipes.
* ``baseline_plugin`` + ``probe``: the unmutated run's per-test coverage and durations.
* ``fresh_import`` (+ ``fresh_import_plugin``, ``fresh_import_files``): mutants only a fresh
  import applies, run in a child of the worker's ``zygote`` (``zygote_client``) or, when the
  zygote cannot be used, in a new ``python -m pytest`` subprocess.
* ``warm`` (work done once before forking), ``netblock`` (no outbound network), ``procs``,
  ``pytest_support`` (shared by the three plugins).

Kept import-light on purpose: the plugins are loaded with ``-p`` into every test process, and
must not drag libcst, rich or sqlite into them.
"""
