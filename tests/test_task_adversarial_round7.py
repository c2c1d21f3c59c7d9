"""adversarial_fabrication, issue 8 round 7 (red team round 6): the cues it planned to close,
re-derived on fresh seeds and pinned.

The round-6 red team passed 0.892 / 0.887 (test / dev) with boosted trees over the pairwise
differences of every printed timestamp plus each one's UTC hour, the bill minus the estimate's
own section and name matches between records. Its report was lost; each of its planned fixes
was re-derived here before touching the generator, and each cue turned out to be drawn alike
in every branch already (round 6's changes), so these tests pin that:

* times of day: the local and the UTC hour of the booking (deposit authorization) and of the
  GFE's delivery, in every timing branch alike — and an evening delivery on the deadline day
  (already the next UTC date) is timely as often as the evening rate says;
* time zones: the facility's zone in every timing branch alike, so a UTC hour does not carry
  the zone and through it the branch;
* name matches: which printed entity names coincide between records (the merchant, the biller,
  the site, ``booked_by``, the physician group's legal name, the provider record's practice)
  follows one law in every finding — they tell who scheduled and who bills, and the finding
  only through the records' dates and amounts;
* the filing: the share of each GFE timing is the same after every resolution type.

Each bar sits well under what the cue read before the fix it pins (round 3: the filing moved
the timing shares by 0.3-0.5; round 4: an hour / evening rate that depended on the branch) and
over the sampling noise of the seeds used (total-variation distance between two branches'
distributions of about 0.03-0.06 on these sizes).
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections import Counter, defaultdict
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario

TASK = "adversarial_fabrication"
FRESH = range(920_000, 924_000)  # 4,000 seeds outside every split and round 6's fresh range
TV_BAR = 0.08  # total variation between two timing branches' distributions
ENTITY = re.compile(r",? (PLLC|P\.C\.|LLC|P\.A\.|Inc\.)$")


@cache
def _ref() -> Any:
    return open_reference()


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _name(text: str) -> str:
    """A printed entity name as a reader matches it: without the entity suffix or the site
    after a dash ("X Group, P.C." and "X Group - main office" are the same X Group)."""
    return ENTITY.sub("", text).split(" - ")[0].strip().lower()


@cache
def _row(seed: int) -> dict[str, Any]:
    """What a shortcut reads of one scenario: the hours and zone, the name-match pattern, the
    expected finding, party and filing, and the branch's timing."""
    s = compile_scenario(TASK, seed, _ref())
    a = {x["type"]: x["data"] for x in s["artifacts"] if not x["distractor"]}
    fac, plog, clm, prv = (a["facility_record"], a["processor_log"], a["claim_record"],
                           a["provider_record"])
    zone = ZoneInfo(fac["time_zone"])
    sent = [e["timestamp"] for e in plog["events"] if e.get("template") == "good_faith_estimate"]
    sent += [m["timestamp"] for m in fac["portal_messages"] if "Good Faith" in m["subject"]]
    auth = next(t["timestamp"] for t in plog["transactions"] if t["type"] == "authorization")
    booked, delivered = _utc(auth), _utc(sent[0])
    names = {"merchant": plog["merchant"]["name"], "biller": clm["provider"]["name"],
             "site": fac["name"], "booked_by": fac["encounter"]["booked_by"],
             "group": fac["credentialed_physician_group"]["legal_name"],
             "practice": prv["provider"]["name"]}
    pattern = tuple(_name(names[x]) == _name(names[y])
                    for x, y in itertools.combinations(sorted(names), 2))
    e = s["expected"]
    return {"timing": s["variant"]["timing"], "finding": e["finding"],
            "party": e["responsible_party"], "filing": e["resolution_type"],
            "zone": fac["time_zone"], "names": pattern,
            "booked_local_hour": booked.astimezone(zone).hour // 4,
            "booked_utc_hour": booked.hour // 4,
            "delivered_local_hour": delivered.astimezone(zone).hour // 4,
            "delivered_utc_hour": delivered.hour // 4,
            "delivered_local": delivered.astimezone(zone).date(),
            "delivered_utc": delivered.date(),
            "deadline": dt.date.fromisoformat(e["gfe_deadline"]),
            "utc_stamps": [_utc(t).hour for t in (auth, sent[0])]}


def _rows() -> list[dict[str, Any]]:
    return [_row(s) for s in FRESH]


def _tv(a: Counter[Any], b: Counter[Any]) -> float:
    na, nb = sum(a.values()), sum(b.values())
    return sum(abs(a[k] / na - b[k] / nb) for k in set(a) | set(b)) / 2


def _worst_tv(rows: list[dict[str, Any]], key: str, by: str = "timing") -> float:
    groups: dict[str, Counter[Any]] = defaultdict(Counter)
    for r in rows:
        groups[r[by]][r[key]] += 1
    return max(_tv(groups[x], groups[y]) for x, y in itertools.combinations(sorted(groups), 2))


@pytest.mark.parametrize("key", ["booked_local_hour", "booked_utc_hour", "delivered_local_hour",
                                 "delivered_utc_hour", "zone"])
def test_times_of_day_and_zones_are_drawn_alike_in_every_timing(key: str) -> None:
    """Red team round 6, planned fixes 2 and 3: the hour (in 4-hour bands, local and UTC) of
    the booking and of the GFE's delivery, and the facility's zone, have one distribution in
    every timing branch (timely / late / backdated): worst pairwise total variation at most
    0.08 over 4,000 fresh seeds (measured 0.02-0.05 on 6,000). An evening rate or a zone mix
    drawn per branch (round 4) moves it by 0.15 or more."""
    assert _worst_tv(_rows(), key) <= TV_BAR, key


def test_an_evening_delivery_on_the_deadline_day_is_timely() -> None:
    """Planned fix 2: a GFE delivered in the evening of its deadline day in the facility's
    zone is on time although its UTC date is already the next day; such deliveries are a
    sizeable part of the timely ones delivered on the deadline day, so "UTC date after the
    deadline" does not mean late (and late GFEs are delivered after the deadline's local
    day, never on it)."""
    rows = _rows()
    on_day = [r for r in rows if r["timing"] == "timely" and r["delivered_local"] == r["deadline"]]
    evening = [r for r in on_day if r["delivered_utc"] > r["deadline"]]
    assert len(on_day) >= 1000 and 0.25 <= len(evening) / len(on_day) <= 0.6, (
        len(on_day), len(evening))
    assert all(r["delivered_local"] > r["deadline"] for r in rows if r["timing"] != "timely")


def test_name_matches_follow_one_law_in_every_finding() -> None:
    """Planned fix 4: the pattern of coinciding names between the processor log's merchant,
    the claim's biller, the facility record's site name, its ``booked_by`` and physician group,
    and the provider record's practice has one distribution in every finding (worst pairwise
    total variation at most 0.08; measured 0.01-0.06), and a pattern -> finding table fitted on
    half the seeds reads the finding at most 0.03 above the modal share on the other half. The
    names say who scheduled and who bills; which of the two is answerable follows from the
    finding, which only the dates and amounts give."""
    rows = _rows()
    assert _worst_tv(rows, "names", by="finding") <= TV_BAR
    fit, score = rows[::2], rows[1::2]
    table: dict[Any, Counter[str]] = defaultdict(Counter)
    for r in fit:
        table[r["names"]][r["finding"]] += 1
    overall = Counter(r["finding"] for r in fit).most_common(1)[0][0]
    hits = sum((table[r["names"]].most_common(1) or [(overall, 0)])[0][0] == r["finding"]
               for r in score)
    modal = Counter(r["finding"] for r in score).most_common(1)[0][1]
    assert (hits - modal) / len(score) <= 0.03


def test_the_filing_says_nothing_about_the_timing() -> None:
    """Planned fix 5 (the PARTIAL leak): after every resolution type (no_action, balance
    correction, dispute) the GFE's timing shares are the overall ones within 0.05 (measured
    within 0.02 on 6,000 seeds). Round 3's 86-90% of balance corrections after a late or
    backdated GFE moved them by 0.3-0.5. What the in-repo ``partial_processor_log`` agent
    still passes is the floor the task's structure sets: every no_violation scenario (a
    timely GFE, a bill within it; 10-15% by design) has one whole answer, and a dispute
    accepts ``billed_above_gfe`` against the biller after every timing (45 CFR 149.620)."""
    rows = _rows()
    overall = Counter(r["timing"] for r in rows)
    for filing in ("no_action", "balance_correction", "nsa_dispute"):
        sub = Counter(r["timing"] for r in rows if r["filing"] == filing)
        for timing, n in overall.items():
            assert abs(sub[timing] / sum(sub.values()) - n / len(rows)) <= 0.05, (filing, timing)


@pytest.mark.slow
def test_boosted_trees_over_utc_hours_and_zone_do_not_read_the_timing() -> None:
    """The red team's hour columns on their own: boosted trees over the UTC hour of the
    booking and of the delivery plus the facility's zone, fitted on half the fresh seeds,
    read the GFE's timing at most 0.03 above the modal share on the other half (measured on
    the committed splits -0.02 / -0.03 on test / dev for every printed hour, +0.00 / +0.03
    for the zone)."""
    np = pytest.importorskip("numpy")
    ensemble = pytest.importorskip("sklearn.ensemble")
    rows = _rows()
    zones = sorted({r["zone"] for r in rows})
    x = np.array([[*r["utc_stamps"], zones.index(r["zone"])] for r in rows], dtype=float)
    y = np.array([r["timing"] for r in rows])
    model = ensemble.HistGradientBoostingClassifier(max_iter=100, learning_rate=0.05,
                                                    random_state=0)
    model.fit(x[::2], y[::2])
    acc = float(np.mean(model.predict(x[1::2]) == y[1::2]))
    modal = Counter(y[1::2]).most_common(1)[0][1] / len(y[1::2])
    assert acc - modal <= 0.03, (acc, modal)
