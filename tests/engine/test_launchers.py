"""One launcher interface for code swap, zygote fork and fresh process, chosen in one function."""

from __future__ import annotations

import marshal
from types import SimpleNamespace
from typing import Any

from mutagent.engine.harness.launchers import (
    CodeSwapLauncher,
    FreshProcessLauncher,
    ZygoteLauncher,
    choose_launcher,
)
from mutagent.engine.messages import CodeSwap, FreshImportSource, JobEnd, JobResult, JobSpec, Launcher, Mode


def _live(x: int) -> int:
    return x + 1


def _closure() -> Any:
    y = 1

    def inner() -> int:
        return y

    return inner


KEY = ("pkg/mod.py", "_live", _live.__code__.co_firstlineno)
INDEX = {KEY: [_live]}
SOURCE = FreshImportSource("pkg.mod", "/copy/pkg/mod.py", "X = 2\n")


def _fork(job: JobSpec, swaps: list[tuple[Any, Any]]) -> JobResult:
    return JobResult.done(()).but(detail=f"forked with {len(swaps)} swaps")


def _fresh(zygote: bool, problem: str | None = None) -> Any:
    boots: list[int] = []
    runner = SimpleNamespace(zygote=object() if zygote else None, zygote_problem=problem, boots=boots)
    runner.ensure_zygote = lambda: boots.append(1) or 0.7
    return runner


def test_a_live_function_is_swapped_in_a_forked_child() -> None:
    job = JobSpec(("t::a",), 1.0, swap=(CodeSwap(KEY, marshal.dumps((lambda x: x - 1).__code__)),))
    launcher, mode, why = choose_launcher(job, INDEX, _fork, _fresh(True))
    assert isinstance(launcher, CodeSwapLauncher) and launcher.name is Launcher.CODE_SWAP
    assert mode is Mode.SWAP and why == "" and launcher.swaps[0][0] == KEY
    assert launcher.run(job).detail == "forked with 1 swaps"
    plain, mode, _ = choose_launcher(JobSpec.plain(["t::a"], 1.0), INDEX, _fork, _fresh(True))
    assert isinstance(plain, CodeSwapLauncher) and mode is Mode.PLAIN and plain.swaps == []


def test_what_a_swap_cannot_apply_is_a_fresh_import_saying_why() -> None:
    missing = JobSpec(
        ("t::a",), 1.0, swap=(CodeSwap(("pkg/mod.py", "gone", 9), marshal.dumps(_live.__code__)),)
    )
    _, mode, why = choose_launcher(missing, INDEX, _fork, _fresh(True))
    assert mode is Mode.FRESH_IMPORT and why == "gone is not loaded after collection"
    closure = JobSpec(("t::a",), 1.0, swap=(CodeSwap(KEY, marshal.dumps(_closure().__code__)),))
    _, mode, why = choose_launcher(closure, INDEX, _fork, _fresh(True))
    assert mode is Mode.FRESH_IMPORT and why == "the closure variables of _live change"
    module_level = JobSpec(("t::a",), 1.0, swap=None, fresh_import=SOURCE)
    _, mode, why = choose_launcher(module_level, INDEX, _fork, _fresh(True))
    assert mode is Mode.FRESH_IMPORT and why == "runs at import time"


def test_a_fresh_import_runs_in_the_zygote_when_it_can_and_in_a_new_process_otherwise() -> None:
    job = JobSpec(("t::a",), 1.0, swap=None, fresh_import=SOURCE)
    running = _fresh(True)
    launcher, _, _ = choose_launcher(job, INDEX, _fork, running)
    assert isinstance(launcher, ZygoteLauncher) and launcher.booted == 0.7 and running.boots == [1]
    broken = _fresh(False, "the zygote could not start: threads")
    launcher, _, _ = choose_launcher(job, INDEX, _fork, broken)
    assert isinstance(launcher, FreshProcessLauncher)
    assert launcher.zygote_problem == "the zygote could not start: threads"
    told = _fresh(True)  # the trust check said the zygote is wrong for these tests
    launcher, _, _ = choose_launcher(job.but(launcher=Launcher.FRESH_PROCESS), INDEX, _fork, told)
    assert isinstance(launcher, FreshProcessLauncher) and launcher.zygote_problem is None
    assert told.boots == []  # the zygote is not even started


def test_the_trust_check_never_falls_back_to_a_new_process() -> None:
    control = JobSpec(
        ("t::a",), 1.0, swap=None, fresh_import=FreshImportSource("m", "/m.py", "", control=True)
    ).but(launcher=Launcher.ZYGOTE)
    launcher, _, _ = choose_launcher(control, INDEX, _fork, _fresh(False, "the zygote is disabled"))
    assert isinstance(launcher, ZygoteLauncher)
    result = launcher.run(control)
    assert result.status is JobEnd.ERROR and result.detail == "the zygote is disabled"
