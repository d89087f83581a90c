"""Separate virtual environments the benchmarks need, built once and cached outside the repository.

Never the user's environment: each one is a ``python -m venv`` under :data:`CACHE` (``/tmp`` by
default, ``MUTAGENT_BENCH_CACHE`` to move it), installed with pip, and reused while its marker file
records the same requirement list. The mutagent ones install this checkout editable, so they
measure whatever engine the checkout holds (the before/after instrument of an engine change).

    python bench/venvs.py            # build (or check) every environment now
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from common import REPO, BenchError, console

CACHE = Path(os.environ.get("MUTAGENT_BENCH_CACHE") or Path(tempfile.gettempdir()) / "mutagent-bench-cache")

# the pytest plugins a user's environment usually has (the "usual plugins")
USUAL_PLUGINS = ("hypothesis", "anyio", "pytest-asyncio", "pytest-timeout", "pytest-cov", "pytest-xdist")


@dataclass(frozen=True)
class Venv:
    """A named environment: what pip installs into it and whether this checkout is installed editable."""

    name: str
    requirements: tuple[str, ...]
    with_mutagent: bool = True

    @property
    def path(self) -> Path:
        return CACHE / self.name

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def _spec(self) -> str:
        return "\n".join([*self.requirements, f"mutagent editable from {REPO}" if self.with_mutagent else ""])

    def ensure(self) -> Venv:
        """Build the environment unless the cached one was built from the same requirement list."""
        marker = self.path / "bench-requirements.txt"
        if marker.is_file() and marker.read_text(encoding="utf-8") == self._spec() and self.python.exists():
            return self
        console.print(f"[dim]building the {self.name} venv in {self.path} (once)[/]")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(self.path)], check=True)
        packages = [*self.requirements, *(["-e", str(REPO)] if self.with_mutagent else [])]
        done = subprocess.run(
            [str(self.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise BenchError(f"pip could not build the {self.name} venv: {done.stderr.strip()[-600:]}")
        marker.write_text(self._spec(), encoding="utf-8")
        return self

    def packages(self) -> str:
        """The pytest plugins and test libraries actually installed (for the report)."""
        done = subprocess.run(
            [str(self.python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
            capture_output=True,
            text=True,
        )
        wanted = {"pytest", "hypothesis", "anyio", "coverage", *USUAL_PLUGINS}
        rows = [line for line in done.stdout.splitlines() if line.split("==")[0].lower() in wanted]
        return ", ".join(sorted(rows))


IRRADIATE = Venv("irradiate-0.4.3", ("irradiate==0.4.3",), with_mutagent=False)
BARE = Venv("bare", ("pytest-asyncio",))
# the sample agent's suite imports hypothesis itself, so its "bare" environment needs it
BARE_HYPOTHESIS = Venv("bare-hypothesis", ("pytest-asyncio", "hypothesis"))
PLUGINS = Venv("plugins", USUAL_PLUGINS)
ALL = (IRRADIATE, BARE, BARE_HYPOTHESIS, PLUGINS)


if __name__ == "__main__":
    for venv in ALL:
        venv.ensure()
        console.print(f"{venv.name}: {venv.path} ({venv.packages()})")
