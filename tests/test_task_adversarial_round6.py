"""adversarial_fabrication, issue 8 round 6 (red team round 5): the backdated story's gap,
one evening rate, the zones whose UTC date leads or trails the local one, and the rule shares.

Each test reads printed dates the way a shortcut does (UTC dates as printed, no time zone, no
business days, no holidays) and checks that the relation it reads stays near the modal
finding. Tables are fitted on one half of the seeds and scored on the other (or on train
against the committed dev and test splits), so a table cannot memorise its own scoring set.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.splits import seeds

TASK = "adversarial_fabrication"
FRESH = range(910_000, 912_400)  # 2,400 seeds outside every split


@cache
def _ref() -> Any:
    return open_reference()


def _d(text: str) -> dt.date:
    return dt.date.fromisoformat(text[:10])


@cache
def _row(seed: int) -> dict[str, Any]:
    """The printed dates of one scenario (UTC dates as printed) and its expected finding."""
    s = compile_scenario(TASK, seed, _ref())
    a = {x["type"]: x["data"] for x in s["artifacts"] if not x["distractor"]}
    prv, plog, fac, led = (a["provider_record"], a["processor_log"], a["facility_record"],
                           a["payment_ledger"])
    txn = {t["type"]: t["timestamp"] for t in plog["transactions"]}
    sent = [e["timestamp"] for e in plog["events"] if e.get("template") == "good_faith_estimate"]
    sent += [m["timestamp"] for m in fac["portal_messages"] if "Good Faith" in m["subject"]]
    dates = {"scheduled_on": _d(prv["appointment"]["scheduled_on"]),
             "gfe_date": _d(prv["gfe"]["gfe_date"]),
             "service_date": _d(prv["appointment"]["service_date"]),
             "auth": _d(txn["authorization"]), "capture": _d(txn["capture"]),
             "delivered": _d(sent[0]), "statement": _d(led["statement"]["statement_date"]),
             "receipt": _d(led["statement"]["delivered_to_patient"])}
    return {"dates": dates, "auth_hour": int(txn["authorization"][11:13]),
            "finding": s["expected"]["finding"], "timing": s["variant"]["timing"],
            "state": fac["state"]}


def _gain(fit: list[dict[str, Any]], score: list[dict[str, Any]],
          key: Callable[[dict[str, Any]], Any]) -> float:
    """Accuracy of a key -> modal finding table fitted on ``fit`` and scored on ``score``,
    minus the modal finding's share on ``score``."""
    table: dict[Any, Counter[str]] = defaultdict(Counter)
    for r in fit:
        table[key(r)][r["finding"]] += 1
    overall = Counter(r["finding"] for r in fit).most_common(1)[0][0]
    hits = sum((table[key(r)].most_common(1) or [(overall, 0)])[0][0] == r["finding"]
               for r in score)
    modal = Counter(r["finding"] for r in score).most_common(1)[0][1]
    return (hits - modal) / len(score)


def _fresh() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = [_row(s) for s in FRESH]
    return rows[::2], rows[1::2]


def test_backdated_story_books_on_its_printed_date_and_overlaps_honest_records() -> None:
    """A backdated story is booked on its printed GFE date (gap 0), one local day before the
    real booking; every booking is an evening one at the same rate; and the stated booking
    against the authorization's UTC date takes -1 and 0 in every branch (the zones whose UTC
    date trails the local one in the morning - Guam - or leads it in the evening)."""
    diffs: dict[bool, Counter[int]] = {True: Counter(), False: Counter()}
    flips: dict[str, list[bool]] = defaultdict(list)
    for seed in FRESH:
        r = _row(seed)
        d = r["dates"]
        backdated = r["timing"] == "dated_before_scheduling"
        if backdated:
            assert d["scheduled_on"] == d["gfe_date"], seed
        diffs[backdated][(d["scheduled_on"] - d["auth"]).days] += 1
        flips[r["timing"]].append(r["auth_hour"] < 10)
    assert {-1, 0} <= set(diffs[True]) and {-1, 0} <= set(diffs[False]), diffs
    assert 1 in diffs[False] and -2 in diffs[True], diffs
    shares = {t: sum(v) / len(v) for t, v in flips.items()}
    assert max(shares.values()) - min(shares.values()) < 0.06, shares
    states = Counter(_row(s)["state"] for s in FRESH)
    assert all(states[s] >= 60 for s in ("HI", "AK", "GU")), states


def test_no_single_subtraction_of_printed_dates_reads_the_finding() -> None:
    """Over 2,400 fresh seeds no difference of two printed dates (UTC dates as printed) reads
    the finding by more than 0.11 above the modal share (red team round 5: the stated booking
    or GFE date two days before the authorization's UTC date named backdated GFEs alone,
    +0.12 to +0.16). A backdated GFE's stated booking is one local day before the real one
    by definition, so its difference from the authorization is an honest one's shifted by a
    day: the share of backdated bookings whose UTC date already leads the local one (evening)
    is the floor of this gain (about 0.2 x 0.45), reached here."""
    fit, score = _fresh()
    names = list(fit[0]["dates"])
    gains = {(x, y): _gain(fit, score, lambda r, x=x, y=y: (r["dates"][x] - r["dates"][y]).days)
             for x, y in itertools.combinations(names, 2)}
    worst = max(gains.items(), key=lambda kv: kv[1])
    assert worst[1] <= 0.11, worst


@pytest.mark.parametrize("split", ["dev", "test", "fresh"])
def test_lead_and_weekday_lag_tables_stay_near_the_modal_finding(split: str) -> None:
    """The provider record's lead (service date - stated booking) reads the finding at most
    0.065 above the modal share and the (booking weekday, UTC-day lag of the delivery) table
    at most 0.1, fitted on train and scored on dev / test (150 / 250 scenarios: a gain's
    sampling error is about 0.04), and at most 0.05 half against half of 2,400 fresh seeds
    (measured 0.00 and 0.02). At 0.9 / 0.35 shares of the 3-day rule the lead
    alone marked late and backdated GFEs (red team round 5, pattern B: +0.113 on dev, and the
    lag table +0.108 on test). The two trade off: a timely GFE goes out within its rule's
    business days and a late one after them, so the lag separates them unless the rule (which
    the lead prints) differs by branch; the shares are 0.75 / 0.5 and the deliveries packed at
    the deadline from both sides."""
    if split == "fresh":
        fit, score = _fresh()
    else:
        fit = [_row(s) for s in seeds("train", TASK)]
        score = [_row(s) for s in seeds(split, TASK)]

    def lead(r: dict[str, Any]) -> int:
        return (r["dates"]["service_date"] - r["dates"]["scheduled_on"]).days

    def lag(r: dict[str, Any]) -> tuple[int, int]:
        return r["dates"]["auth"].weekday(), (r["dates"]["delivered"] - r["dates"]["auth"]).days

    bars = (0.05, 0.05) if split == "fresh" else (0.065, 0.1)
    assert _gain(fit, score, lead) <= bars[0], split
    assert _gain(fit, score, lag) <= bars[1], split
