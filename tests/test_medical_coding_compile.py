"""The shortcuts that keep medical_coding compiles fast give exactly what they stand in for.

Each speed change in the note generator replaced a plain computation (a filter, a scan, a
case-insensitive search, a sample of a filtered list) by a cheaper one that must agree with it
on every input the generator can meet; these tests hold each to the plain form on those inputs
(and on adversarial ones), so a later edit of either side fails here rather than silently
changing compiled scenarios. The scenarios themselves are pinned byte for byte by
tests/test_scenarios.py (committed splits == on-demand compiles).
"""

from __future__ import annotations

import random
import re

import pytest

from clarus_env.reference import open_reference
from clarus_env.tasks.medical_coding import grammar, notes, tier2


@pytest.fixture(scope="module")
def pools() -> notes._Pools:
    return notes._pools(open_reference())


def _tier2_codes() -> list[str]:
    return [e["code"] for e in tier2.load()["codes"]]


def test_sample_excluding_draws_as_sample_of_the_filtered_list() -> None:
    for seed in range(3000):
        r = random.Random(seed)
        seq = [f"s{n}" for n in range(r.randint(0, 25))]
        excluded = set(r.sample(range(len(seq)), r.randint(0, len(seq))))
        k = r.randint(0, 5)
        a, b = random.Random(seed + 1), random.Random(seed + 1)
        want = grammar.sample(a, [x for n, x in enumerate(seq) if n not in excluded], k)
        assert grammar.sample_excluding(b, seq, excluded, k) == want, (seq, excluded, k)
        assert a.random() == b.random()  # the same number of draws


def test_sample_owned_pops_in_place_with_the_same_draws() -> None:
    for seed in range(500):
        seq = list(range(seed % 13))
        k = seed % 5
        a, b = random.Random(seed), random.Random(seed)
        mine = list(seq)
        assert grammar.sample(a, seq, k) == grammar.sample(b, mine, k, owned=True)
        assert a.random() == b.random()


def test_prefix_tables_agree_with_a_first_match_scan(pools: notes._Pools) -> None:
    codes = _tier2_codes() + sorted(pools.cat.all_icd10_codes()) + ["", "E", "E11", "R0", "H6"]
    for code in codes:
        assert grammar._SPECIALTY_TABLE.first(code) == next(
            (s for pre, s in grammar.SPECIALTY_BY_PREFIX if code.startswith(pre)), None), code
        assert notes._SYSTEMS_TABLE.first(code, ()) == next(
            (s for pre, s in notes._SYSTEMS_BY_PREFIX if code.startswith(pre)), ()), code


def test_fitting_tables_agree_with_the_filter_at_every_age(pools: notes._Pools) -> None:
    owned = (pools.chronic, pools.chronic_12, pools.history_like, pools.screen, pools.reason,
             pools.reason_not_minor, pools.reason_problem_not_minor)
    for pool in owned:
        for sex in ("female", "male"):
            for age in range(notes.MAX_AGE + 1):
                want = [c for c in pool if notes._fits(c, age, sex)]
                assert pools.fitting(pool, age, sex) == want, (age, sex)
    other = pools.chronic[:7]  # a list the pools do not own is filtered as it comes
    assert pools.fitting(other, 40, "male") == [c for c in other if notes._fits(c, 40, "male")]


def _texts(pools: notes._Pools) -> list[str]:
    """Complaints, findings and tier-2 phrasings the generator writes, and hard cases."""
    out = ["Lungs CLEAR bilaterally", "no RASH", "Temp 101.2 F", "BP 150/90", "afebrile",
           "ſkin clear", "RRR", "F/U of asthma", "Recheck of HTN", "here for PROCEDURE",
           "Establishing Care for gout", "cough x3 days", "knee pain follow-up",
           "scheduled procedure for wart", "transfer of care", "referred by ED"]
    for c in pools.cat.conditions:
        out += c.get("findings", []) + c.get("complaints", []) + c["synonyms"]
    for e in tier2.load()["codes"]:
        for phrases in e["phrases"].values():
            for p in phrases:
                out += [f.replace("{p}", p) for f in notes._T2_FINDINGS]
                out += [cc.replace("{p}", p) for ccs in notes._T2_CC.values() for cc in ccs]
    return out


@pytest.mark.parametrize(("words", "pattern"), [
    ("_FINDING_WORDS", "_FINDING_ANY"),
    ("_FOLLOW_UP_WORDS", "_FOLLOW_UP_CC"),
    ("_FOLLOW_UP_OPEN", "_FOLLOW_UP"),
])
def test_word_prefilters_never_skip_a_match(pools: notes._Pools, words: str,
                                            pattern: str) -> None:
    ws, pat = getattr(notes, words), getattr(notes, pattern)
    assert isinstance(pat, re.Pattern) and pat.flags & re.IGNORECASE
    matched = 0
    for text in _texts(pools):
        if pat.search(text):
            matched += 1
            assert notes._may_match(text, ws), text
    assert matched > 5  # the corpus exercises the patterns


def test_finding_kind_equals_the_regex_reading(pools: notes._Pools) -> None:
    for text in _texts(pools):
        text = text.rstrip(".")
        if notes._FINDING_ANY.search(text):
            want = (next((s for s, p in notes._NORMAL_FINDING if p.search(text)), None),
                    bool(notes._VITAL_FINDING.search(text)))
        else:
            want = (None, False)
        assert notes._finding_kind(text) == want, text
