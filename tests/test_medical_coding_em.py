"""The AMA 2021 office E/M table as a pure function: every element level, the 2-of-3 rule and
the time thresholds (including the edges), so the generator's expected level follows the table."""

from __future__ import annotations

import itertools

import pytest

from clarus_env.tasks.medical_coding.em import (
    Data,
    data_level,
    em_code,
    em_level_from_mdm,
    em_level_from_time,
    mdm_level,
    problems_level,
    time_range,
)


@pytest.mark.parametrize(
    ("kinds", "level"),
    [
        ([], 0),
        (["minor"], 0),
        (["history", "status", "preventive"], 0),
        (["minor", "minor"], 1),
        (["acute"], 1),
        (["chronic_stable"], 1),
        (["chronic_stable", "history"], 1),
        (["chronic_stable", "chronic_stable"], 2),
        (["acute", "acute"], 1),  # two acute uncomplicated problems stay low
        (["chronic_exacerbation"], 2),
        (["acute_systemic"], 2),
        (["acute_complicated"], 2),
        (["undiagnosed"], 2),
        (["chronic_exacerbation", "chronic_exacerbation"], 2),  # not high without severity
        (["acute_systemic", "chronic_exacerbation", "chronic_stable"], 2),
        (["severe"], 3),
        (["severe", "minor"], 3),
    ],
)
def test_problem_levels(kinds, level) -> None:
    assert problems_level(kinds) == level


@pytest.mark.parametrize(
    ("data", "level"),
    [
        (Data(), 0),
        (Data(tests_ordered=1), 0),
        (Data(results_reviewed=1, tests_ordered=1), 1),  # Cat 1: any two
        (Data(external_notes=2), 1),
        (Data(independent_historian=True), 1),  # Cat 2 alone is limited
        (Data(independent_interpretation=True), 2),
        (Data(discussion_external=True), 2),
        (Data(tests_ordered=3), 2),  # Cat 1: any three
        (Data(tests_ordered=2, independent_historian=True), 2),  # historian counts toward three
        (Data(external_notes=1, results_reviewed=1, tests_ordered=1), 2),
        (Data(tests_ordered=3, independent_interpretation=True), 3),
        (Data(tests_ordered=3, discussion_external=True), 3),
        (Data(independent_interpretation=True, discussion_external=True), 3),
        (Data(tests_ordered=2, independent_interpretation=True), 2),  # Cat 1 short of three
    ],
)
def test_data_levels(data, level) -> None:
    assert data_level(data) == level


def test_two_of_three_rule_over_every_combination() -> None:
    for p, d, r in itertools.product(range(4), repeat=3):
        level = mdm_level(p, d, r)
        meeting = sum(x >= level for x in (p, d, r))
        assert meeting >= 2, (p, d, r)
        # no higher level has two elements meeting it
        assert all(sum(x >= hi for x in (p, d, r)) < 2 for hi in range(level + 1, 4)), (p, d, r)


@pytest.mark.parametrize(
    ("p", "d", "r", "code_new", "code_est"),
    [
        (0, 0, 0, "99202", "99212"),
        (1, 1, 0, "99203", "99213"),
        (1, 0, 2, "99203", "99213"),  # Rx management alone does not lift a low visit
        (2, 0, 2, "99204", "99214"),  # moderate problems + Rx management
        (2, 2, 0, "99204", "99214"),
        (3, 3, 1, "99205", "99215"),
        (2, 3, 3, "99205", "99215"),
        (3, 0, 0, "99202", "99212"),  # one high element alone counts for nothing
    ],
)
def test_levels_map_to_office_codes(p, d, r, code_new, code_est) -> None:
    level = em_level_from_mdm(mdm_level(p, d, r))
    assert em_code(level, True) == code_new
    assert em_code(level, False) == code_est


@pytest.mark.parametrize(
    ("minutes", "new", "level"),
    [
        (14, True, None), (15, True, 2), (29, True, 2), (30, True, 3), (44, True, 3),
        (45, True, 4), (59, True, 4), (60, True, 5), (74, True, 5),
        (9, False, None), (10, False, 2), (19, False, 2), (20, False, 3), (29, False, 3),
        (30, False, 4), (39, False, 4), (40, False, 5), (54, False, 5),
    ],
)
def test_time_thresholds(minutes, new, level) -> None:
    assert em_level_from_time(minutes, new) == level


def test_time_ranges_select_their_own_level() -> None:
    for new in (True, False):
        for level in range(2, 6):
            lo, hi = time_range(level, new)
            assert em_level_from_time(lo, new) == level
            assert em_level_from_time(hi, new) == level
            assert em_level_from_time(lo - 1, new) != level


def test_bad_inputs_name_what_was_wrong() -> None:
    with pytest.raises(ValueError, match="risk"):
        mdm_level(1, 1, 4)
    with pytest.raises(ValueError, match="2..5"):
        em_code(1, True)
    with pytest.raises(ValueError, match="2..5"):
        time_range(6, False)
