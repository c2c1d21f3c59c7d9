"""Office/outpatient E/M level from medical decision making or total time (CPT 2021+).

The level of 99202-99205 / 99212-99215 is chosen by **either** MDM **or** total practitioner
time on the date of the encounter (AMA CPT E/M Services Guidelines, effective 1 January 2021,
"Levels of Medical Decision Making (MDM)" table; time thresholds as revised for CPT 2024, where
each level's time "must be met or exceeded"). The note generator writes the MDM *elements* into a
note and derives the level here; an agent must derive it the same way from what the note says.
Keeping the table a pure function of a few counts lets unit tests cover every cell of it and the
2-of-3 rule without a note in sight.

MDM has three elements; the level is the highest at which **two of the three** are met or
exceeded, which is the median of the three element levels:

======== ========================================= ================================ ===========
Level    Number/complexity of problems             Amount/complexity of data        Risk
======== ========================================= ================================ ===========
straight 1 self-limited or minor problem           minimal or none                  minimal
low      2+ self-limited/minor; 1 stable chronic;  limited: Cat 1 any 2 of notes,   low (e.g.
         1 acute uncomplicated illness/injury      results, orders; or Cat 2        OTC drugs)
                                                   independent historian
moderate 1+ chronic with exacerbation/progression; moderate: 1 of 3 -- Cat 1 any 3  moderate (Rx
         2+ stable chronic; undiagnosed new        of notes, results, orders,       drug mgmt,
         problem with uncertain prognosis; acute   historian; Cat 2 independent     minor
         illness with systemic symptoms; acute     interpretation of a test; Cat 3  surgery w/
         complicated injury                        discussion with an external      risk factors)
                                                   physician/QHP
high     chronic illness with severe exacerbation; extensive: 2 of the 3            high (drug
         acute/chronic illness or injury posing a  categories above                 therapy w/
         threat to life or bodily function                                          intensive
                                                                                    monitoring,
                                                                                    hospitalization)
======== ========================================= ================================ ===========
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

LEVELS = ("straightforward", "low", "moderate", "high")
RANK = {name: i for i, name in enumerate(LEVELS)}

# Problem kinds the note can document, and the MDM problem level each stands for on its own.
PROBLEM_KINDS = {
    "minor": 0,  # self-limited or minor
    "acute": 1,  # acute, uncomplicated illness or injury
    "chronic_stable": 1,  # stable chronic illness
    "acute_systemic": 2,  # acute illness with systemic symptoms
    "acute_complicated": 2,  # acute complicated injury
    "chronic_exacerbation": 2,  # chronic illness with exacerbation, progression or side effects
    "undiagnosed": 2,  # undiagnosed new problem with uncertain prognosis
    "severe": 3,  # severe exacerbation / threat to life or bodily function
}
RISKS = ("minimal", "low", "moderate", "high")

# Total time on the date of the encounter (minutes) that a level needs, CPT 2024 wording.
TIME_NEW = ((60, 5), (45, 4), (30, 3), (15, 2))
TIME_EST = ((40, 5), (30, 4), (20, 3), (10, 2))


def problems_level(kinds: Iterable[str]) -> int:
    """Problem element (0 straightforward .. 3 high) for the problems addressed at the visit.

    History, status and preventive entries are not problems addressed and are ignored. Two or
    more minor problems make "low"; two or more stable chronic illnesses make "moderate".
    """
    counted = [k for k in kinds if k in PROBLEM_KINDS]
    if not counted:
        return 0
    level = max(PROBLEM_KINDS[k] for k in counted)
    if sum(1 for k in counted if k == "minor") >= 2:
        level = max(level, 1)
    if sum(1 for k in counted if k == "chronic_stable") >= 2:
        level = max(level, 2)
    return level


class Data(NamedTuple):
    """What the note documents under "amount and/or complexity of data to be reviewed and
    analyzed". Each count is of *unique* sources/tests, as the AMA table counts them. (A named
    tuple, immutable like a frozen dataclass at a fraction of its construction cost: every
    generated visit builds one.)"""

    external_notes: int = 0  # review of prior external note(s), each unique source
    results_reviewed: int = 0  # review of the result(s) of each unique test
    tests_ordered: int = 0  # ordering of each unique test
    independent_historian: bool = False
    independent_interpretation: bool = False  # of a test performed by another physician
    discussion_external: bool = False  # discussion of management with an external physician

    def category1(self) -> int:
        return self.external_notes + self.results_reviewed + self.tests_ordered


def data_level(d: Data) -> int:
    """Data element (0 minimal .. 3 extensive) by the AMA 2021 categories."""
    cat1_moderate = d.category1() + int(d.independent_historian) >= 3
    categories = sum((cat1_moderate, d.independent_interpretation, d.discussion_external))
    if categories >= 2:
        return 3
    if categories == 1:
        return 2
    if d.category1() >= 2 or d.independent_historian:
        return 1
    return 0


def mdm_level(problems: int, data: int, risk: int) -> int:
    """MDM level (0 straightforward .. 3 high): two of the three elements must meet or exceed
    it, i.e. the median of the three."""
    for x, name in ((problems, "problems"), (data, "data"), (risk, "risk")):
        if not 0 <= x <= 3:
            raise ValueError(f"MDM {name} level must be 0..3, got {x!r}")
    return sorted((problems, data, risk))[1]


def em_level_from_mdm(mdm: int) -> int:
    """Office E/M level 2..5 for an MDM level 0..3 (99202/99212 = straightforward)."""
    return mdm + 2


def em_level_from_time(minutes: int, new: bool) -> int | None:
    """Office E/M level by total time on the date of the encounter, or None below 99202/99212
    (99211 is not selected by time)."""
    for floor, level in TIME_NEW if new else TIME_EST:
        if minutes >= floor:
            return level
    return None


def time_range(level: int, new: bool) -> tuple[int, int]:
    """The minutes that select ``level`` (upper bound: one below the next level; 5 is capped
    at the start of prolonged services, 75 new / 55 established)."""
    table = dict((lv, floor) for floor, lv in (TIME_NEW if new else TIME_EST))
    if level not in table:
        raise ValueError(f"office E/M level must be 2..5, got {level!r}")
    hi = table.get(level + 1, 75 if new else 55) - 1
    return table[level], hi


def em_code(level: int, new: bool) -> str:
    """99202-99205 (new) or 99212-99215 (established)."""
    if not 2 <= level <= 5:
        raise ValueError(f"office E/M level must be 2..5, got {level!r}")
    return f"99{'20' if new else '21'}{level}"
