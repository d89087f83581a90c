"""Helpers for mutagent's own tests (not shipped): tiny generated targets with hand-written
mutants (``engine_targets``) and hand-built runs for the report tests (``sample_runs``).

``tests/conftest.py`` puts ``tests/`` on ``sys.path`` so every test folder imports ``testkit``.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository's root
FIXTURES = REPO / "tests" / "fixtures"  # shared data files (report schema, fake plugin dist)
