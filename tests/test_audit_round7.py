"""Round-7 learners of `clarus audit` (red team round 6) on synthetic views where a leak is
planted: word counts split by the year of the item they sit in (``gb_wordcounts_years``), the
per-family router (``router_gb``), and the UTC hour and business-day lags the date relation
learner (``pairwise_dates``, informational) reads. Each test fails if the learner, or the
feature it needs, is removed or broken; each control shows the leak is out of reach of the
learners that were there before, or that the learner finds nothing where nothing is
planted."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

pytest.importorskip("sklearn")

from clarus_env import audit_learned  # noqa: E402 - after the skip
from clarus_env.audit import (  # noqa: E402
    RELATION_RULES,
    DateMatrix,
    learned_rule,
    record_year_counts,
    view_leaves,
)
from clarus_env.audit_learned import code_path, route_candidates, router_rule  # noqa: E402
from tests.test_audit_relations import _accuracy, _rule, _trainset  # noqa: E402


# -- gb_wordcounts_years ----------------------------------------------------------------------
def test_year_counts_bucket_words_by_their_items_own_date() -> None:
    record = {"as_of": "2026-11-02",
              "events": [{"at": "2026-03-01T10:00:00Z", "what": "Copay capture"},
                         {"at": "2025-12-30T10:00:00Z", "what": "Copay capture"},
                         {"at": "2023-01-05", "what": "Copay refund"},
                         {"what": "Copay note"}],
              "policy": {"text": "copay policy"}}
    counts = record_year_counts(record, 2026)
    # a dated item goes to its own year's bucket; an undated one to the nearest dated object
    # around it (here the record itself, dated 2026); digits and dates are never words
    assert counts["this_year~copay"] == 3 and counts["this_year~capture"] == 1
    assert counts["last_year~capture"] == 1 and counts["older~refund"] == 1
    assert counts["this_year~policy"] == 1 and "undated~copay" not in counts
    assert record_year_counts({"items": [{"what": "copay"}]}, 2026)["undated~copay"] == 1
    # the view's own year is the one most of its dates print, not a due date a year later
    view = {"records": {"log": record, "deadline": {"due": "2027-05-01"}}}
    lv = view_leaves(view)
    assert lv.year_counts["log~this_year~capture"] == 1.0
    assert lv.year_counts["log~last_year~capture"] == 1.0


def _captures(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any],
                                                                 dict[str, Any]]:
    """Two copay captures in every log, among filler events; the finding is whether both fall
    in the view's own year (a duplicate this year) or one of them the year before. Totals,
    list lengths and words are the same in both branches. With ``planted`` False the years
    are drawn apart from the finding."""
    dup = rng.random() < 0.5
    both = dup if planted else rng.random() < 0.5
    this = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(300))
    other = this if both else dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(360))
    events = [{"timestamp": f"{d.isoformat()}T{rng.randrange(8, 20):02d}:00:00Z",
               "description": "Copay at check-in", "type": "capture"} for d in (this, other)]
    for _ in range(4):
        d = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(700))
        events.append({"timestamp": f"{d.isoformat()}T12:00:00Z",
                       "description": rng.choice(("Card authorization", "Refund to card",
                                                  "Portal payment")), "type": "auth"})
    rng.shuffle(events)
    view = {"complaint": "", "records": {
        "processor_log": {"transactions": events},
        "claim": {"date_of_service": this.isoformat(), "billed": f"{rng.randint(50, 900)}.00",
                  "posted": this.isoformat(), "statement": this.isoformat()}}}
    return view, {"finding": "duplicate_charge" if dup else "other", "amount_cents": 0}


def test_year_counts_find_this_years_second_capture() -> None:
    rng = random.Random(71)
    train = _trainset([_captures(rng) for _ in range(500)])
    fresh = [_captures(rng) for _ in range(300)]
    assert _accuracy(_rule(train, "gb_wordcounts_years"), fresh, "finding") >= 0.95
    # the control: the totals (every log holds two captures) stay near the modal share
    assert _accuracy(_rule(train, "gb_wordcounts_numbers"), fresh, "finding") <= 0.65


def test_year_counts_find_nothing_where_the_years_are_drawn_alike() -> None:
    rng = random.Random(72)
    train = _trainset([_captures(rng, planted=False) for _ in range(500)])
    fresh = [_captures(rng, planted=False) for _ in range(300)]
    assert _accuracy(_rule(train, "gb_wordcounts_years"), fresh, "finding") <= 0.62


# -- router_gb ----------------------------------------------------------------------------------
FAMILIES = {"97": ("97110", "97140", "97530"), "99": ("99213", "99214"),
            "11": ("11102", "11104"), "20": ("20610", "20611")}
# per family, twelve second-line codes (48 in all: more than a categorical leaf may have, so
# one global model drops the leaf as an id); the first six of each are "bundled"
SECOND = {fam: [f"{letter}{4000 + 7 * i}" for i in range(12)]
          for fam, letter in zip(sorted(FAMILIES), "GJKQ", strict=True)}


def _family_view(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any],
                                                                    dict[str, Any]]:
    """A claim whose finding is which of its family's twelve second-line codes it holds (the
    first code's family): inside a family the code is a category a tree splits on; across
    families the 48 codes are too many to be one, so a single global model never reads
    them. A noise amount and a noise label stand beside. With ``planted`` False the finding
    is drawn apart from the code."""
    fam = rng.choice(sorted(FAMILIES))
    i = rng.randrange(12)
    hit = i < 6 if planted else rng.random() < 0.5
    lines = [{"hcpcs": rng.choice(FAMILIES[fam]), "billed": f"{rng.randint(20, 400)}.00"},
             {"hcpcs": SECOND[fam][i], "billed": "10.00"}]
    view = {"complaint": "", "records": {
        "claim_record": {"lines": lines, "colour": rng.choice(("red", "blue"))},
        "amounts": {"noise": f"{rng.randint(0, 100)}.00"}}}
    return view, {"finding": "bundled" if hit else "separate", "amount_cents": 0}


def test_router_finds_the_code_family_and_routes_each_family_to_its_own_trees() -> None:
    rng = random.Random(81)
    rows = [_family_view(rng) for _ in range(900)]
    train = _trainset(rows)
    fresh = [_family_view(rng) for _ in range(300)]
    leaves = [view_leaves(v) for v, _ in rows]
    assert code_path(leaves) == "claim_record.lines[0].hcpcs"
    names = [name for name, _ in route_candidates(leaves, [e["finding"] for _, e in rows])]
    assert names[0] == "claim_record.lines[0].hcpcs[:2]"
    router = _rule(train, "router_gb")  # a learned shortcut, held to the bars as they are
    assert router.route == names[0]
    routed = _accuracy(router, fresh, "finding")
    assert routed >= 0.93
    # the control: one global model over the same leaves cannot read the second code
    assert _accuracy(_rule(train, "gb_records"), fresh, "finding") <= 0.65
    again = router_rule(train)
    assert again is not None and [again(v) for v, _ in fresh[:40]] == [
        router(v) for v, _ in fresh[:40]]


def test_router_finds_nothing_where_nothing_is_planted(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    rng = random.Random(82)
    train = _trainset([_family_view(rng, planted=False) for _ in range(600)])
    fresh = [_family_view(rng, planted=False) for _ in range(300)]
    router = router_rule(train)
    assert router is not None and _accuracy(router, fresh, "finding") <= 0.6
    # without a code on the claim the family is no candidate
    monkeypatch.setattr(audit_learned, "CODE", audit_learned.re.compile(r"^$x"))
    leaves = [view_leaves(v) for v in train.views or []]
    assert code_path(leaves) is None


# -- pairwise_dates: UTC hours and business days ------------------------------------------------
def test_date_matrix_counts_business_days_around_a_holiday_and_reads_utc_hours() -> None:
    def leaves(a: str, b: str) -> Any:
        return view_leaves({"records": {"log": {"booked": a, "sent": b}}})

    # Friday 2026-05-22 to Tuesday 2026-05-26: 4 calendar days, 1 business day (Memorial Day)
    rows = [leaves("2026-05-22T23:30:00-05:00", "2026-05-26T10:00:00Z"),
            leaves("2026-05-18T08:00:00+02:00", "2026-05-19T10:00:00Z"),
            leaves("2026-05-18T08:00:00Z", "2026-05-21T10:00:00Z")]
    matrix = DateMatrix(rows)
    x = matrix.transform(rows)
    col = {c: i for i, c in enumerate(matrix.columns)}
    assert x[0, col["log.booked -bd log.sent"]] == -1 and x[0, col["log.booked - log.sent"]] == -4
    assert x[1, col["log.booked -bd log.sent"]] == -1
    assert x[2, col["log.booked -bd log.sent"]] == -3
    # 23:30 at UTC-5 is 04:30 UTC; 08:00 at UTC+2 is 06:00 UTC
    assert x[0, col["log.booked@hour"]] == 4.5 and x[1, col["log.booked@hour"]] == 6.0


def _zoned(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """A booking printed in one of five local offsets; 'pm' when it was made at noon UTC or
    later. The printed local hour, shifted by -8 to +10 hours, tells much less. With
    ``planted`` False the finding is drawn apart from the hour."""
    offset = rng.choice((-8, -5, 0, 3, 10))
    utc = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
        minutes=rng.randrange(365 * 24 * 60))
    local = utc + dt.timedelta(hours=offset)
    sign = "+" if offset >= 0 else "-"
    stamp = local.strftime("%Y-%m-%dT%H:%M:00") + f"{sign}{abs(offset):02d}:00"
    late = utc.hour >= 12 if planted else rng.random() < 0.5
    service = (utc + dt.timedelta(days=rng.randint(3, 30))).date().isoformat()
    view = {"complaint": "", "records": {"log": {"booked": stamp, "service": service}}}
    return view, {"finding": "pm" if late else "am", "amount_cents": 0}


def test_pairwise_dates_read_the_utc_hour_of_a_zoned_timestamp() -> None:
    rng = random.Random(91)
    train = _trainset([_zoned(rng) for _ in range(600)])
    fresh = [_zoned(rng) for _ in range(300)]
    rule = RELATION_RULES["pairwise_dates"](train)
    assert rule is not None and _accuracy(rule, fresh, "finding") >= 0.95
    # the control: the printed (local) hour, the dates' other parts and holiday distances
    alone = learned_rule(train, ("dates", "holidays"))
    assert alone is not None and _accuracy(alone, fresh, "finding") <= 0.8


def test_pairwise_dates_find_no_hour_where_none_is_planted() -> None:
    rng = random.Random(92)
    train = _trainset([_zoned(rng, planted=False) for _ in range(500)])
    fresh = [_zoned(rng, planted=False) for _ in range(300)]
    rule = RELATION_RULES["pairwise_dates"](train)
    assert rule is not None and _accuracy(rule, fresh, "finding") <= 0.6


# -- the audit reports them ---------------------------------------------------------------------
def test_audit_reports_the_round7_agents_on_a_small_split() -> None:
    from clarus_env.audit import audit_splits

    agents = ["gb_wordcounts_years", "router_gb", "pairwise_dates"]
    rep = audit_splits("deductive_liability", ["dev"], limit=2, train_limit=120,
                       agents=agents)[0]
    assert [r["agent"] for r in rep["agents"]] == agents
    assert [r["kind"] for r in rep["agents"]] == ["shortcut", "shortcut", "relation"]
