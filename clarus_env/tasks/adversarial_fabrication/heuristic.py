"""A rule-following advocate for adversarial_fabrication that sees only observations.

It plays the whole process (authenticate, read every party's record — keys found in the
observations —, the NSA rules and the PPDR deadline, diagnose, tell the patient, decide, answer
the counter-arguments, notify, audit, close) and reasons over the evidence the way a careful
but hurried human would:

* it converts the processor log's UTC timestamps to the facility's local time (offsets and
  daylight period from the facility record) and compares the GFE date with the booking (the
  deposit authorization) and the deadline with the GFE's delivery — it takes the 3-day rule
  for a service 10+ weekdays ahead and the 1-day rule otherwise, but counts business days as
  Monday–Friday, forgetting federal holidays (so a deadline across a holiday comes a day
  early to it);
* it holds a GFE timing failure against whoever took the booking deposit (the other party
  when that is not the biller) and a bill above the estimate against the biller;
* it calls the biller a facility only when it bills on an
  institutional claim (UB-04) or describes itself as a surgical center or hospital
  department — so an imaging or sleep center is "a provider" to it, though 45 CFR
  149.610(a)(2) makes it a facility;
* it holds the bill against the biller's own GFE section (found by the biller's name; the
  estimate's bottom line when no section carries it) and tests the $400 PPDR threshold, but
  counts the 120-day window from the statement's date rather than from its receipt — wrong
  for a mailed bill read in the last days of its window.

It concedes the EHR counter when its own reading found the GFE timely, rejects the emergency
exception citing the claim and the facility's registration, and rejects the legal threat.

Hooks for ``clarus audit``: ``decide(view)`` replaces its decision, ``respond(view, counter)``
its answer to each counter, ``hide`` makes record types unseen by its reasoning (it still
fetches them), ``cite_all`` cites every id seen in every citing action.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

THRESHOLD_CENTS = 40_000
PPDR_DAYS = 120


def _cents(text: Any) -> int:
    try:
        return int(Decimal(str(text)) * 100)
    except (InvalidOperation, ValueError):
        return 0


def _dollars(cents: int) -> str:
    cents = max(int(cents), 0)
    return f"{cents // 100}.{cents % 100:02d}"


def _date(text: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


def _weekdays_after(d: dt.date, n: int) -> dt.date:
    while n:
        d += dt.timedelta(days=1)
        if d.weekday() < 5:
            n -= 1
    return d


def _weekdays_between(a: dt.date, b: dt.date) -> int:
    """Weekdays in (a, b]: five per whole week, then the days left over one by one (the
    day-by-day walk took ~9 µs a call for a booking weeks ahead of the service)."""
    weeks, rest = divmod(max((b - a).days, 0), 7)
    start = a.weekday()
    return weeks * 5 + sum((start + i) % 7 < 5 for i in range(1, rest + 1))


OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def _offset_hours(text: Any) -> int | None:
    m = OFFSET.match(str(text or ""))
    if not m:
        return None
    return (-1 if m.group(1) == "-" else 1) * int(m.group(2))


def _act(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


class HeuristicAgent:
    """Observation-only baseline: reads the evidence, naive about holidays, claim forms and
    the start of the PPDR window."""

    privileged = False

    def __init__(self, decide: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 respond: Callable[[dict[str, Any], dict[str, Any]], str] | None = None,
                 hide: frozenset[str] | set[str] = frozenset(), cite_all: bool = False) -> None:
        self._decide_hook = decide
        self._respond_hook = respond
        self.hide = frozenset(hide)
        self.cite_all = cite_all

    def reset(self, observation: Any, **_: Any) -> None:
        obs = _as_dict(observation)
        self.initial = obs
        self.case_id: str = obs["case_id"]
        self.complaint: str = obs.get("patient_complaint", "")
        found = re.search(r"claim ([A-Z]{1,4}-\d+)", self.complaint)
        self.claim_id = found.group(1) if found else self.case_id
        self.records: dict[str, dict[str, Any]] = {}  # artifact type -> {"id", "data"}
        self.seen: list[str] = []  # every artifact id seen, in order
        self.decision: dict[str, Any] = {}
        self.queue: list[dict[str, Any]] = [
            _act("authenticate_patient", patient_id=self.case_id),
            _act("fetch_payment_processor_log", patient_id=self.case_id),
            _act("fetch_claim_record", claim_id=self.claim_id),
            _act("fetch_provider_record", claim_id=self.claim_id),
            _act("fetch_payment_ledger", patient_id=self.case_id),
        ]
        self.phase = "gather"

    # -- the policy ------------------------------------------------------------------------
    def act(self, observation: Any) -> dict[str, Any]:
        obs = _as_dict(observation)
        self._absorb(obs.get("last_action_result"))
        if not self.queue:
            self._plan_next()
        return self.queue.pop(0)

    def _absorb(self, result: dict[str, Any] | None) -> None:
        if not result:
            return
        if "artifact_id" in result and "data" in result:
            aid = result["artifact_id"]
            if aid not in self.seen:
                self.seen.append(aid)
            self.records.setdefault(result["type"], {"id": aid, "data": result["data"]})
        for c in result.get("counter_arguments", []):
            self.queue.insert(0, self._answer(c))

    def _data(self, atype: str) -> dict[str, Any]:
        """A record's data as the reasoning may use it (hidden types read as empty)."""
        if atype in self.hide:
            return {}
        return self.records.get(atype, {}).get("data", {}) or {}

    def _id(self, atype: str) -> str | None:
        return self.records.get(atype, {}).get("id")

    def _cite(self, *types: str) -> list[str]:
        if self.cite_all:
            return list(self.seen)
        return [i for i in (self._id(t) for t in types) if i]

    def _plan_next(self) -> None:
        if self.phase == "gather":
            self.phase = "rules"
            fac = self.records.get("claim_record", {}).get("data", {}).get("facility_id")
            if fac:
                self.queue.append(_act("fetch_facility_record", facility_id=fac))
            self.queue += [_act("check_regulatory_rule", rule=r) for r in
                           ("nsa_good_faith_estimate", "nsa_dispute_resolution",
                            "nsa_balance_billing")]
            self.queue.append(_act("check_deadline", deadline_type="nsa_dispute"))
        elif self.phase == "rules":
            self.phase = "decide"
            self.queue += self._diagnose_and_decide()
        elif self.phase == "decide":
            self.phase = "wrap"
            filed = self.decision.get("resolution_type") != "no_action"
            self.queue += [
                _act("notify_provider", position="maintain",
                     cited_artifacts=self._cite("processor_log", "provider_record"),
                     message="We are maintaining the dispute of this bill." if filed else
                     "The bill matches the estimate; the patient will not dispute it."),
                _act("write_audit_entry", summary="Reviewed the patient's billing records; "
                     "disclosed findings to patient and provider."),
                _act("close_case"),
            ]
        else:
            self.queue.append(_act("close_case"))

    # -- reasoning -------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        return {"complaint": self.complaint, "case_id": self.case_id,
                "initial_observation": self.initial,
                "records": {t: r["data"] for t, r in sorted(self.records.items())
                            if t not in self.hide}}

    def _local_date(self, stamp: Any) -> dt.date | None:
        """The facility's local calendar date of a UTC timestamp (its offsets and daylight
        period from the facility record; UTC date when the facility record is unseen)."""
        try:
            utc = dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        except ValueError:
            return None
        offsets = self._data("facility_record").get("utc_offsets") or {}
        std = _offset_hours(offsets.get("standard"))
        if std is None:
            return utc.date()
        local = utc + dt.timedelta(hours=std)
        dst = _offset_hours(offsets.get("daylight"))
        period = str(offsets.get("daylight_period_2026", ""))
        parts = re.findall(r"\d{4}-\d{2}-\d{2}", period)
        if dst is not None and len(parts) == 2:
            start, end = _date(parts[0]), _date(parts[1])
            if start and end and start <= local.date() < end:
                local = utc + dt.timedelta(hours=dst)
        return local.date()

    def own_decision(self) -> dict[str, Any]:
        prv, clm = self._data("provider_record"), self._data("claim_record")
        log, fac = self._data("processor_log"), self._data("facility_record")
        led, dl = self._data("payment_ledger"), self._data("deadline")
        gfe = prv.get("gfe") or {}
        # the convener: whoever bills; a facility only on an institutional claim form or when
        # it calls itself a surgical center or hospital department (imaging and sleep centers
        # slip through as "providers")
        kind = str((prv.get("provider") or {}).get("type", "")).lower()
        party = ("facility" if str(clm.get("claim_form", "")).startswith("UB-04")
                 or "surgical center" in kind or "hospital" in kind else "provider")
        billed = _cents(clm.get("total_billed") or (prv.get("statement") or {}).get(
            "total_charges") or 0)
        biller = (clm.get("provider") or {}).get("name")
        own = next((s for s in gfe.get("providers") or [] if s.get("name") == biller), None)
        estimate = _cents(own.get("expected_total") if own else
                          gfe.get("total_expected_charges", 0))
        excess = billed - estimate if gfe else 0
        # timing
        sched = next((self._local_date(t.get("timestamp")) for t in log.get("transactions", [])
                      if t.get("type") == "authorization"), None)
        gfe_date = _date(gfe.get("gfe_date"))
        stamps = [e.get("timestamp") for e in log.get("events", [])
                  if e.get("template") == "good_faith_estimate"]
        stamps += [m.get("timestamp") for m in fac.get("portal_messages", [])
                   if "Good Faith Estimate" in str(m.get("subject", ""))]
        delivered = [d for d in (self._local_date(s) for s in stamps) if d]
        finding = "billed_above_gfe"
        if sched and gfe_date and gfe_date < sched:
            finding = "gfe_backdated_before_scheduling"
        elif sched and delivered:
            # the rule from the lead, in weekdays (holidays forgotten here too)
            dos = _date(clm.get("date_of_service")) or _date(
                (prv.get("appointment") or {}).get("service_date"))
            rule = 3 if dos and _weekdays_between(sched, dos) >= 10 else 1
            due = _weekdays_after(sched, rule)
            if min(delivered) > due:
                finding = "gfe_issued_after_deadline"
        if finding == "billed_above_gfe" and gfe and excess <= 0:
            finding = "no_violation"  # timely and within the estimate
        # the PPDR window, counted (naively) from the statement's date
        stmt = _date((led.get("statement") or {}).get("statement_date")) or _date(
            (prv.get("statement") or {}).get("statement_date"))
        today = _date(dl.get("as_of"))
        window_open = not (stmt and today) or (today - stmt).days <= PPDR_DAYS
        # the GFE's timing is the duty of whoever scheduled (took the booking deposit): when
        # that merchant is not the biller, it is the other kind of party
        merchant = (log.get("merchant") or {}).get("name") if isinstance(
            log.get("merchant"), dict) else log.get("merchant")
        if finding.startswith("gfe_") and merchant and biller and merchant != biller:
            party = "provider" if party == "facility" else "facility"
        if finding == "no_violation":
            return {"finding": finding, "responsible_party": "none",
                    "resolution_type": "no_action", "amount_cents": 0}
        if gfe and excess <= 0:  # a GFE violation, but nothing billed above the estimate
            return {"finding": finding, "responsible_party": party,
                    "resolution_type": "no_action", "amount_cents": 0}
        resolution = ("nsa_dispute" if excess >= THRESHOLD_CENTS and window_open
                      else "balance_correction")
        return {"finding": finding, "responsible_party": party,
                "resolution_type": resolution, "amount_cents": max(excess, 0)}

    def _diagnose_and_decide(self) -> list[dict[str, Any]]:
        decision = self.own_decision()
        if self._decide_hook is not None:
            override = self._decide_hook(self.view()) or {}
            for k in ("finding", "responsible_party", "resolution_type", "appeal_reason",
                      "amount_cents"):
                if k in override:
                    decision[k] = override[k]
        if decision.get("amount_cents") is None:
            decision["amount_cents"] = 0
        self.decision = decision
        amount = _dollars(decision["amount_cents"])
        cited = self._cite("provider_record", "processor_log", "facility_record",
                           "claim_record")
        actions = [
            _act("write_diagnosis", responsible_party=decision["responsible_party"],
                 finding=decision["finding"], amount=amount, cited_artifacts=cited),
        ]
        if decision["resolution_type"] == "no_action":
            late = decision["finding"] in ("gfe_backdated_before_scheduling",
                                           "gfe_issued_after_deadline")
            return actions + [
                _act("send_patient_communication", message_type="explanation",
                     message="Your bill is within your Good Faith Estimate, so there is "
                             "nothing to dispute" + (
                                 "; the estimate itself broke the timing rule, which you can "
                                 "report to the No Surprises Help Desk." if late else
                                 " and the estimate was on time.")),
                _act("draft_resolution", resolution_type="no_action", amount="0.00",
                     cited_artifacts=cited),
                _act("submit_resolution"),
            ]
        return actions + [
            _act("send_patient_communication", message_type="explanation",
                 message=f"Your bill is ${amount} above your estimate; we are acting on it "
                         "for you."),
            _act("draft_resolution", resolution_type=decision["resolution_type"],
                 amount=amount, cited_artifacts=cited),
            _act("submit_resolution"),
        ]

    def _answer(self, counter: dict[str, Any]) -> dict[str, Any]:
        """Answer one counter-argument: by its own reading of the evidence, or the hook's."""
        text = str(counter.get("text", "")).lower()
        if self._respond_hook is not None:
            decision = self._respond_hook(self.view(), dict(counter))
        elif "emergency" in text:
            decision = "reject"
        elif "estimate" in text and ("ehr" in text or "health record" in text):
            timely = self.decision.get("finding") in ("billed_above_gfe", "no_violation")
            decision = "concede" if timely else "reject"
        else:
            decision = "reject"
        if "emergency" in text:
            cited = self._cite("claim_record", "facility_record")
        elif "estimate" in text:
            cited = self._cite("processor_log", "facility_record")
        else:
            cited = (list(self.seen) if self.cite_all else
                     [i for i in self.seen if i.startswith("RULE-NSA-DISPUTE")][:1])
        return _act("reject_counter_argument", counter_id=counter["counter_id"],
                    cited_artifacts=cited, decision="concede" if decision == "concede"
                    else "reject", rationale="Answered from the independent records.")


def _as_dict(observation: Any) -> dict[str, Any]:
    return observation.model_dump() if hasattr(observation, "model_dump") else dict(observation)
