"""Every role recogniser's examples are executable documentation, like the operators' examples:
a must-match example has exactly one site whose code is the example's ``site``, a must-not-match
example has no site at all. The meta-tests hold each recogniser to the interface: its sites are
among the nodes it considers, ``explain`` calls exactly those sites sites, and every site carries
evidence."""

from __future__ import annotations

import re

import pytest

from mutagent.anatomy.evidence import RoleExample, RoleRecogniser, Source
from mutagent.anatomy.recognisers import RECOGNISERS, recogniser
from mutagent.mutation.context import SourceContext
from mutagent.mutation.registry import all_operators

KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
ROLES = sorted(RECOGNISERS.values(), key=lambda r: r.role)
CASES = [
    pytest.param(role, index, example, id=f"{role.role}-{index}")
    for role in ROLES
    for index, example in enumerate(role.examples)
]


def _code(ctx: SourceContext, node: object) -> str:
    return " ".join(ctx.code(node).split())  # type: ignore[arg-type]


@pytest.mark.parametrize(("role", "index", "example"), CASES)
def test_role_example(role: RoleRecogniser, index: int, example: RoleExample) -> None:
    ctx = SourceContext(example.source, f"example_{index}.py")
    # One node may be a site of two kinds (a retry predicate's bound is shifted by one operator
    # and removed by another): count nodes, not sites.
    found = list({id(site.node): _code(ctx, site.node) for site in role.sites(ctx)}.values())
    if example.must_not_match:
        assert not found, f"{role.role} must find no site here ({example.note}), found {found}"
        return
    assert found.count(example.site) == 1, f"{role.role} example {index}: {example.site!r} not among {found}"


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.role)
def test_role_meets_the_interface(role: RoleRecogniser) -> None:
    assert KEBAB.match(role.role) and role.summary.strip() and role.family.strip()
    assert sum(1 for e in role.examples if not e.must_not_match) >= 2
    assert sum(1 for e in role.examples if e.must_not_match) >= 2
    assert recogniser(role.role) is role


@pytest.mark.parametrize(("role", "index", "example"), CASES)
def test_explain_agrees_with_the_sites(role: RoleRecogniser, index: int, example: RoleExample) -> None:
    """Each site is considered and explained as a site, with evidence; every other considered
    node on a line is explained as no site, with what was missing."""
    ctx = SourceContext(example.source, f"example_{index}.py")
    sites = {(id(site.node), site.kind): site for site in role.sites(ctx)}
    considered = {(id(node), kind) for node, kind in role.considered(ctx)}
    assert set(sites) <= considered
    for site in sites.values():
        assert site.present and all(isinstance(e.source, Source) and e.text for e in site.present)
    lines = {ctx.position(node).start.line for node, _ in role.considered(ctx)}
    for line in lines:
        for candidate in role.explain(ctx, line):
            assert candidate.site == ((id(candidate.node), candidate.kind) in sites)
            if not candidate.site:
                assert candidate.missing, f"{_code(ctx, candidate.node)}: no site, but nothing missing"


def test_every_operator_role_has_a_recogniser() -> None:
    named = {role for operator in all_operators().values() for role in operator.roles}
    assert named <= set(RECOGNISERS), named - set(RECOGNISERS)
    assert {"turn-bound", "retry-bound"} <= named


def test_turn_bound_explains_a_near_miss() -> None:
    """Pagination names no turns: the while test is weighed, found to decide the loop and to talk
    to the model through a listing call, and refused for its names."""
    source = (
        "def list_all(client, max_pages=5):\n"
        "    page = 1\n"
        "    while page <= max_pages:\n"
        "        client.messages.create(page=page)\n"
        "        page += 1\n"
    )
    ctx = SourceContext(source, "pages.py")
    (candidate,) = RECOGNISERS["turn-bound"].explain(ctx, 3)
    assert not candidate.site and candidate.kind == "comparison"
    assert any(e.source is Source.STRUCTURE and "while test" in e.text for e in candidate.present)
    assert any(e.source is Source.NAMES and "page, max_pages" in e.text for e in candidate.missing)


def test_turn_bound_site_says_where_the_model_is_reached() -> None:
    (example,) = [
        e for e in RECOGNISERS["turn-bound"].examples if e.site == "self._rounds >= self._round_cap"
    ]
    ctx = SourceContext(example.source, "runner.py")
    (site,) = RECOGNISERS["turn-bound"].sites(ctx)
    texts = [str(e) for e in site.present]
    assert "call graph: compared in _should_halt(), which the turn loop calls" in texts
    assert any(
        t.startswith("call graph: the loop at line 3 talks to the model: calls _step() ->") for t in texts
    )
    assert site.missing == (
        site.missing[0].__class__(Source.STRUCTURE, "no limit error raised at the bound: the loop just ends"),
    )


def test_retry_bound_explains_an_accounting_test() -> None:
    """``failed_attempts <= 0`` names attempts, decides and sits in a retry-named helper, yet
    compares a counter with 0: the explanation says that is what it lacks."""
    (example,) = [e for e in RECOGNISERS["retry-bound"].examples if "failed_attempts" in e.source]
    ctx = SourceContext(example.source, "usage.py")
    check = next(c for c in RECOGNISERS["retry-bound"].explain(ctx, 2) if c.kind == "limit-check")
    assert not check.site
    assert [e.source for e in check.present] == [Source.NAMES, Source.STRUCTURE, Source.NAMES]
    assert [e.text for e in check.missing] == [
        "every target compares a counter with 0 or 1: a first-attempt test"
    ]


def test_retry_bound_kinds_split_between_its_two_operators() -> None:
    from mutagent.anatomy.retry.bound import OFF_BY_ONE_KINDS, UNBOUNDED_KINDS

    source = (
        "import time\n\n"
        "def post(client, body, max_tries=3):\n"
        "    tries = 0\n"
        "    while True:\n"
        "        tries += 1\n"
        "        try:\n"
        "            return client.post('/v1/chat/completions', json=body)\n"
        "        except TimeoutError:\n"
        "            if tries >= max_tries:\n"
        "                raise\n"
        "            time.sleep(2 ** tries)\n"
    )
    ctx = SourceContext(source, "post.py")
    kinds = [
        (site.kind, " ".join(ctx.code(site.node).split())) for site in RECOGNISERS["retry-bound"].sites(ctx)
    ]
    assert kinds == [("limit-check", "tries >= max_tries"), ("counter-step", "tries += 1")]
    assert {"limit-check"} <= set(OFF_BY_ONE_KINDS) and {"counter-step"} <= set(UNBOUNDED_KINDS)
