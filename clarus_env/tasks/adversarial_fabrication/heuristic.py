"""A rule-following advocate for adversarial_fabrication that sees only observations.

It does the generic things well — authenticate, read every party's record, look up the NSA
rules and the dispute deadline, file, never back down — and reasons the way a hurried human
would: dates straight off the UTC timestamps, the 1-business-day GFE rule only, the bill
against the GFE's grand total (co-providers included), "the provider" as the party behind any
bill (it never asks whether a facility convened the GFE), and two deliberately generic rules:
every bill above a GFE is filed as an NSA dispute (no $400 test, no 120-day window), and every
counter-argument is rejected citing its core evidence, the payment processor log, without
asking which record refutes which claim. So it does well on plain cases and misses the subtle
ones (UTC vs local dates, the 3-day rule, co-provider sections, facility-convened estimates,
excesses under $400 or closed windows, rebuttals that need the facility's or the claim's
record).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any


def _cents(text: str) -> int:
    return int(Decimal(str(text)) * 100)


def _dollars(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _next_weekday(d: dt.date, n: int) -> dt.date:
    while n:
        d += dt.timedelta(days=1)
        if d.weekday() < 5:
            n -= 1
    return d


def _act(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


class HeuristicAgent:
    """Observation-only baseline: generic advocacy rules, naive about time and arithmetic."""

    def reset(self, observation: Any) -> None:
        obs = _as_dict(observation)
        self.case_id: str = obs["case_id"]
        found = re.search(r"claim ([A-Z]{1,4}-\d+)", obs["patient_complaint"])
        self.claim_id = found.group(1) if found else self.case_id
        self.records: dict[str, dict[str, Any]] = {}  # artifact type -> {"id", "data"}
        self.queue: list[dict[str, Any]] = [
            _act("authenticate_patient", patient_id=self.case_id),
            _act("fetch_claim_record", claim_id=self.claim_id),
            _act("fetch_payment_processor_log", patient_id=self.case_id),
            _act("fetch_provider_record", claim_id=self.claim_id),
            _act("fetch_payment_ledger", patient_id=self.case_id),
            _act("fetch_eob", claim_id=self.claim_id),
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
            self.records.setdefault(result["type"], {"id": result["artifact_id"],
                                                     "data": result["data"]})
        for c in result.get("counter_arguments", []):
            self.queue.insert(0, self._rebut(c))

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
            self.phase = "file"
            self.queue += self._diagnose_and_file()
        elif self.phase == "file":
            self.phase = "wrap"
            ids = [r["id"] for t, r in sorted(self.records.items())
                   if t in ("processor_log", "provider_record")]
            self.queue += [
                _act("notify_provider", position="maintain", cited_artifacts=ids,
                     message="We are maintaining the dispute of this bill."),
                _act("write_audit_entry", summary="Reviewed the patient's billing records "
                     "and filed a dispute; disclosed findings to patient and provider."),
                _act("close_case"),
            ]
        else:
            self.queue.append(_act("close_case"))

    def _diagnose_and_file(self) -> list[dict[str, Any]]:
        prv = self.records.get("provider_record", {}).get("data", {})
        clm = self.records.get("claim_record", {}).get("data", {})
        log = self.records.get("processor_log", {}).get("data", {})
        fac = self.records.get("facility_record", {}).get("data", {})
        gfe = prv.get("gfe", {})
        finding = "billed_above_gfe"
        sched = next((t["timestamp"][:10] for t in log.get("transactions", [])
                      if t.get("type") == "authorization"), None)
        gfe_date = gfe.get("gfe_date")
        deliveries = [e["timestamp"][:10] for e in log.get("events", [])
                      if e.get("template") == "good_faith_estimate"]
        deliveries += [m["timestamp"][:10] for m in fac.get("portal_messages", [])
                       if "Good Faith Estimate" in m.get("subject", "")]
        if sched and gfe_date and gfe_date < sched:
            finding = "gfe_backdated_before_scheduling"
        elif sched and deliveries:
            due = _next_weekday(dt.date.fromisoformat(sched), 1).isoformat()
            if min(deliveries) > due:
                finding = "gfe_issued_after_deadline"
        billed = _cents(clm.get("total_billed", "0"))
        estimate = _cents(gfe.get("total_expected_charges", "0"))
        excess = max(billed - estimate, 0)
        resolution = "nsa_dispute"  # generic: any bill above a GFE goes to PPDR
        cited = [r["id"] for t, r in sorted(self.records.items())
                 if t in ("processor_log", "provider_record", "claim_record")]
        return [
            _act("write_diagnosis", responsible_party="provider", finding=finding,
                 amount=_dollars(excess), cited_artifacts=cited),
            _act("send_patient_communication", message_type="explanation",
                 message=f"Your bill is ${_dollars(excess)} above your estimate; we are "
                         "disputing it for you."),
            _act("draft_resolution", resolution_type=resolution, amount=_dollars(excess),
                 cited_artifacts=cited),
            _act("submit_resolution"),
        ]

    def _rebut(self, counter: dict[str, Any]) -> dict[str, Any]:
        """Reject every counter-argument, citing the core evidence (the independent payment
        processor log) whatever the counter claims — it never asks which record refutes it."""
        rec = self.records.get("processor_log")
        cited = [rec["id"]] if rec else []
        return _act("reject_counter_argument", counter_id=counter["counter_id"],
                    cited_artifacts=cited, decision="reject",
                    rationale="The independent payment records do not support this.")


def _as_dict(observation: Any) -> dict[str, Any]:
    return observation.model_dump() if hasattr(observation, "model_dump") else dict(observation)
