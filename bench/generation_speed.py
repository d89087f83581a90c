"""Mutant generation speed: seconds per 1,000 lines, mutagent's and mutmut's on the same files.

mutagent: ``generate_for_source`` with the agent operators on every ``.py`` file of a corpus
package (the same call ``bench/corpus/score.py`` times; issue 24 asks for <= 0.5 s per 1,000
lines on litellm, the largest corpus package). mutmut (a dependency of the benchmarks): its own
generation step, ``mutmut.mutation.file_mutation.mutate_file_contents`` on the same files, i.e.
parsing, finding every mutation and rendering the trampolined module it would write to
``mutants/``. mutmut reads its configuration from the working directory at first use, so it runs
in a temporary directory holding a minimal ``[tool.mutmut]`` table; no file is written.

Both figures are given in CPU seconds (``time.process_time``: what the generation costs,
whatever else the machine runs) and in wall seconds, with the load average at the start and at
the end, because a wall-clock figure on a loaded machine measures the machine.

Usage: ``python bench/generation_speed.py [--package litellm] [--every N] [--no-mutmut]``
(``--every 10``: every tenth file, for a quick figure).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / "corpus" / ".cache" / "src"


def package_files(package: str, every: int) -> tuple[Path, list[Path]]:
    """The sdist directory of ``package`` in the corpus cache and its import package's files."""
    prefix = package.replace("-", "_") + "-"
    candidates = sorted(p for p in CACHE.glob(prefix + "*") if p.is_dir())
    if not candidates:
        raise SystemExit(f"no {package} sdist under {CACHE} (run bench/corpus/fetch.py)")
    sdist = candidates[-1]
    top = sdist / package.replace("-", "_")
    if not top.is_dir():
        top = sdist / "src" / package.replace("-", "_")
    return sdist, sorted(top.rglob("*.py"))[::every]


def timed(
    files: list[tuple[str, str]], generate: Callable[[str, str], int]
) -> tuple[float, float, int, list[str]]:
    """(CPU seconds, wall seconds, mutants, failed files) of ``generate`` over ``files``."""
    cpu = wall = 0.0
    mutants = 0
    failed: list[str] = []
    for name, text in files:
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        try:
            mutants += generate(name, text)
        except Exception as exc:  # noqa: BLE001 - a crash on one file is reported, not fatal
            failed.append(f"{name}: {type(exc).__name__}")
        cpu += time.process_time() - cpu_start
        wall += time.perf_counter() - wall_start
    return cpu, wall, mutants, failed


def mutagent_generator() -> Callable[[str, str], int]:
    from mutagent.mutation.generate import generate_for_source
    from mutagent.mutation.registry import select_operators

    operators = select_operators("agent")
    return lambda name, text: len(generate_for_source(text, name, operators, warn=lambda _: None))


def mutmut_generator(workdir: Path) -> Callable[[str, str], int] | str:
    """mutmut's generation of one file, or why it cannot be called."""
    (workdir / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["src"]\n')
    (workdir / "src").mkdir(exist_ok=True)
    os.chdir(workdir)
    try:
        from mutmut.mutation.file_mutation import mutate_file_contents
    except ImportError as exc:
        return f"mutmut's generation API is not importable ({exc})"
    return lambda name, text: len(mutate_file_contents(name, text).mutant_names)


def load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="litellm", help="corpus package (default: litellm)")
    parser.add_argument("--every", type=int, default=1, metavar="N", help="time every Nth file only")
    parser.add_argument("--no-mutmut", action="store_true", help="time mutagent alone")
    args = parser.parse_args(argv)
    sdist, paths = package_files(args.package, max(args.every, 1))
    files = [(p.relative_to(sdist).as_posix(), p.read_text(encoding="utf-8")) for p in paths]
    lines = sum(text.count("\n") + 1 for _, text in files)
    print(f"{sdist.name}: {len(files)} files, {lines:,} lines; load average {load()} ({os.cpu_count()} CPUs)")

    def report(tool: str, cpu: float, wall: float, mutants: int, failed: list[str]) -> None:
        print(
            f"{tool:9s} {cpu / lines * 1000:.3f} s/1000 lines CPU ({cpu:.1f} s), "
            f"{wall / lines * 1000:.3f} s/1000 lines wall ({wall:.1f} s), {mutants:,} mutants, "
            f"{len(failed)} file(s) failed"
        )
        for line in failed[:10]:
            print(f"          failed: {line}")

    mutagent = timed(files, mutagent_generator())
    report("mutagent", *mutagent)
    if not args.no_mutmut:
        with tempfile.TemporaryDirectory() as workdir:
            here = Path.cwd()
            generator = mutmut_generator(Path(workdir))
            if isinstance(generator, str):
                print(f"mutmut    not measured: {generator}")
            else:
                peer = timed(files, generator)
                report("mutmut", *peer)
                cpu_ratio, wall_ratio = mutagent[0] / peer[0], mutagent[1] / peer[1]
                print(f"ratio     mutagent / mutmut: {cpu_ratio:.2f} (CPU), {wall_ratio:.2f} (wall)")
            os.chdir(here)
    print(f"load average at the end {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
