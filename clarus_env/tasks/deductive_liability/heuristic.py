"""A rule-based advocate for ``deductive_liability`` that sees only observations.

Generic advocacy rules, no access to the scenario: authenticate, read the EOB, processor
log, ledger, plan and provider record for the claim named in the complaint; flag two settled
card payments of the same amount on the same card within ten minutes with no refund or void
as a processor duplicate; otherwise compare what the patient was charged (card payments
since the visit plus the open ledger balance) with the EOB's patient responsibility and
dispute the difference with the provider. It trusts the EOB, so errors the insurer made
(deductible already met, coinsurance on billed) are beyond it: there it disputes the open
balance with the provider and gets the party, the filing and the amount wrong.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

CLAIM_RE = re.compile(r"\bCLM-\d+\b")


def _cents(v: Any) -> int:
    return int((Decimal(str(v)) * 100).to_integral_value())


def _dollars(c: int) -> str:
    return f"{c / 100:.2f}"


def _when(ts: str) -> dt.datetime:
    return dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))


class HeuristicAgent:
    """Observation-only baseline: decent where the provider or processor erred."""

    privileged = False

    def reset(self, observation: Any, **_: Any) -> None:
        self.case_id = observation.case_id
        m = CLAIM_RE.search(observation.patient_complaint)
        self.claim_id = m.group(0) if m else None
        self.records: dict[str, dict[str, Any]] = {}  # type -> {"artifact_id", "data"}
        self.queue: list[dict[str, Any]] = [
            self._a("authenticate_patient", patient_id=self.case_id)]
        if self.claim_id:
            self.queue.append(self._a("fetch_eob", claim_id=self.claim_id))
        self.queue += [
            self._a("fetch_payment_processor_log", patient_id=self.case_id),
            self._a("fetch_payment_ledger", patient_id=self.case_id),
        ]
        if self.claim_id:
            self.queue.append(self._a("fetch_provider_record", claim_id=self.claim_id))
        self.queue.append(self._a("check_deadline", deadline_type="refund_request"))
        self.planned_plan = False
        self.decided = False

    @staticmethod
    def _a(name: str, **params: Any) -> dict[str, Any]:
        return {"action_type": name, "parameters": params}

    def act(self, observation: Any) -> dict[str, Any]:
        res = observation.last_action_result
        if isinstance(res, dict) and "data" in res and "type" in res:
            self.records.setdefault(res["type"], {"artifact_id": res["artifact_id"],
                                                  "data": res["data"]})
        if not self.planned_plan and "eob" in self.records:
            self.planned_plan = True
            plan_id = self.records["eob"]["data"].get("plan_id")
            if plan_id:
                self.queue.insert(0, self._a("fetch_plan_document", plan_id=plan_id))
        if not self.queue and not self.decided:
            self.decided = True
            self.queue = self._conclude()
        if self.queue:
            return self.queue.pop(0)
        return self._a("close_case")

    # -- reasoning ---------------------------------------------------------------------
    def _duplicate(self) -> int | None:
        log = self.records.get("processor_log", {}).get("data", {})
        txns = log.get("transactions", [])
        undone = {t.get("original_transaction_id") for t in txns
                  if t.get("type") in ("refund", "void")}
        paid = [t for t in txns if t.get("type") in ("capture", "sale")
                and t.get("status") == "settled" and t["transaction_id"] not in undone]
        for i, a in enumerate(paid):
            for b in paid[i + 1:]:
                if (a["amount"] == b["amount"] and a.get("last4") == b.get("last4")
                        and abs((_when(b["timestamp"]) - _when(a["timestamp"]))
                                .total_seconds()) <= 600):
                    return _cents(a["amount"])
        return None

    def _conclude(self) -> list[dict[str, Any]]:
        eob = self.records.get("eob", {}).get("data", {})
        ledger = self.records.get("payment_ledger", {}).get("data", {})
        log = self.records.get("processor_log", {}).get("data", {})
        cited = [r["artifact_id"] for t, r in sorted(self.records.items())
                 if t in ("eob", "payment_ledger", "processor_log", "provider_record")]
        dup = self._duplicate()
        if dup is not None:
            party, finding, resolution, amount = ("payment_processor", "duplicate_charge",
                                                  "refund_request", dup)
        else:
            pr = _cents(eob.get("totals", {}).get("patient_responsibility", "0"))
            dos = eob.get("date_of_service", "0000-00-00")
            txns = log.get("transactions", [])
            undone = {t.get("original_transaction_id") for t in txns
                      if t.get("type") in ("refund", "void")}
            paid = sum(_cents(t["amount"]) for t in txns
                       if t.get("type") in ("capture", "sale") and t.get("status") == "settled"
                       and t["timestamp"][:10] >= dos and t["transaction_id"] not in undone)
            balance = _cents(ledger.get("balance", "0"))
            over = paid + balance - pr
            entries = [e for e in ledger.get("entries", [])
                       if self.claim_id and str(e.get("reference", "")).startswith(
                           self.claim_id)]
            if over > 0:
                party = "provider"
                resolution = "refund_request" if balance <= 0 else "balance_correction"
                amount = over
                charges = [(e["description"], e["amount"], e["reference"]) for e in entries
                           if e.get("type") == "charge"]
                if len(charges) != len(set(charges)):
                    finding = "duplicate_posting"
                elif not any(e.get("type") == "adjustment" for e in entries):
                    finding = "balance_billing"
                elif not any(e.get("type") == "patient_payment" and e.get("date") == dos
                             for e in ledger.get("entries", [])):
                    finding = "copay_not_credited"
                else:
                    finding = "coinsurance_on_billed"
            else:  # nothing visible: ask the provider to re-verify the open balance
                party, finding, resolution = "provider", "no_error", "balance_correction"
                amount = balance if balance > 0 else pr
        money = _dollars(amount)
        return [
            self._a("write_diagnosis", responsible_party=party, finding=finding, amount=money,
                    cited_artifacts=cited, summary=f"{finding}: {money}"),
            self._a("draft_resolution", resolution_type=resolution, amount=money,
                    cited_artifacts=cited, body=f"Please correct {money} ({finding})."),
            self._a("submit_resolution"),
            self._a("send_patient_communication", message_type="explanation",
                    message=f"We reviewed your bill and filed a {resolution} for ${money}."),
            self._a("write_audit_entry", summary="Reviewed EOB, ledger, plan, provider record "
                                                  "and processor log for the dispute."),
            self._a("close_case"),
        ]
