"""A rule-based advocate for ``deductive_liability`` that sees only observations.

Generic advocacy rules, no access to the scenario: authenticate, read the EOB, processor log,
ledger, provider record, plan and claim record for the claim named in the complaint (the plan
id and the codes come from the EOB), look up the claim's codes, the cost-sharing rule and both
deadlines, then reason over what it read:

1. two settled card payments of the same amount on the same card minutes apart, neither
   voided nor refunded → the practice charged twice (``duplicate_charge``, provider); the
   practice's stated credit policy decides refund vs applying the credit to an open balance;
2. the patient's share recomputed from the plan (copay for the visit, remaining deductible
   from the plan's accumulator — less this claim's own deductible where the snapshot is dated
   on or after the EOB's processing — coinsurance on the allowed amount) — if the EOB asks
   more, the insurer erred (deductible already met, or coinsurance on billed) → claim reprocessing;
3. everything asked of the patient since the visit (card payments plus the open ledger
   balance and any balance the ledger moved to a payment plan, less self-pay items bought at
   the visit) beyond the EOB's patient responsibility
   → the provider erred, named from the ledger (a line's unreversed charges above the EOB's
   billed charge for it: posted twice, or keyed at two units; less
   written off than the EOB's CO-45, a check-in payment never posted);
4. otherwise the bill stands (``no_error``): confirm the EOB's patient share.

It does not apply the out-of-pocket maximum, so an EOB that ignored the cap looks right to it;
that keeps it below the oracle. The hooks ``decide`` / ``respond`` / ``hide`` / ``cite_all``
let ``clarus audit`` build shortcut agents and ablations on the same process.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

CLAIM_RE = re.compile(r"\bCLM-\d+\b")
PRIMARY_CARE = ("family medicine", "internal medicine", "pediatrics", "general practice")
# which records show each finding (generic knowledge of where such an error is visible)
SHOWS = {
    "copay_not_credited": ("processor_log", "payment_ledger", "provider_record"),
    "duplicate_charge": ("processor_log", "payment_ledger", "provider_record"),
    "duplicate_posting": ("payment_ledger", "provider_record", "claim_record"),
    "coinsurance_on_billed": ("eob", "plan_document"),
    "coinsurance_on_billed:provider": ("provider_record", "eob", "plan_document"),
    "deductible_already_met": ("eob", "plan_document"),
    "balance_billing": ("payment_ledger", "eob", "provider_record"),
    "oop_max_exceeded": ("eob", "plan_document"),
    "no_error": ("eob", "plan_document", "payment_ledger"),
}
KEYS = ("finding", "responsible_party", "resolution_type", "amount_cents")


def _cents(v: Any) -> int:
    try:
        return int((Decimal(str(v)) * 100).to_integral_value())
    except Exception:  # noqa: BLE001 - a malformed amount is treated as zero
        return 0


def _dollars(c: int) -> str:
    return f"{c / 100:.2f}"


def _when(ts: str) -> dt.datetime:
    return dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _get(obs: Any, key: str) -> Any:
    return obs[key] if isinstance(obs, dict) else getattr(obs, key)


def _pct(amount: int, pct: int) -> int:
    return int((Decimal(amount) * pct / 100).to_integral_value(rounding="ROUND_HALF_UP"))


def _ded_left(plan: dict[str, Any], eob: dict[str, Any] | None = None) -> int:
    """Deductible room before the claim: the plan's deductible less what the plan of record
    counts as met (the accumulator prints only what was met). A snapshot dated on or after the
    EOB's processing already counts this claim's deductible (and the copays that count toward
    it) as processed, so those come back off first: otherwise a deductible the claim itself
    used up would look applied twice. The totals stop at the deductible, so where the
    accumulator's history holds a reading dated before the EOB's processing, that reading is
    the room before the claim (round 8b)."""
    acc = plan.get("member_accumulators", {})
    done = str(eob.get("processed_date", "~")) if eob is not None else "~"
    before = [h for h in acc.get("history") or [] if str(h.get("as_of", "")) < done]
    if before:
        last = max(before, key=lambda h: str(h.get("as_of", "")))
        return max(0, _cents(plan.get("deductible", "0"))
                   - _cents(last.get("deductible_met_ytd", "0")))
    met = _cents(acc.get("deductible_met_ytd", "0"))
    if eob is not None and str(acc.get("as_of", "")) >= str(eob.get("processed_date", "~")):
        counts = bool(plan.get("copays_count_toward_deductible"))
        met -= sum(_cents(ln.get("deductible", "0"))
                   + (_cents(ln.get("copay", "0")) if counts else 0)
                   for ln in eob.get("lines", []))
    return max(0, _cents(plan.get("deductible", "0")) - met)


class HeuristicAgent:
    """Observation-only baseline: reads the evidence, misses the out-of-pocket cap."""

    privileged = False

    def __init__(self, decide: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 respond: Callable[[dict[str, Any], dict[str, Any]], str] | None = None,
                 hide: frozenset[str] | set[str] = frozenset(), cite_all: bool = False
                 ) -> None:
        self.decide_hook = decide
        self.respond_hook = respond  # this task raises no counter-arguments
        self.hide = frozenset(hide)
        self.cite_all = cite_all
        self.decision: dict[str, Any] = {}

    def reset(self, observation: Any, **_: Any) -> None:
        self.case_id = _get(observation, "case_id")
        self.complaint = _get(observation, "patient_complaint")
        self.initial = (observation.model_dump() if hasattr(observation, "model_dump")
                        else dict(observation))
        m = CLAIM_RE.search(self.complaint or "")
        self.claim_id = m.group(0) if m else None
        self.records: dict[str, dict[str, Any]] = {}  # type -> {"artifact_id", "data"}
        self.seen: list[str] = []  # every artifact id any result returned, in order
        self.decision = {}
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
        if self.claim_id:
            self.queue.append(self._a("fetch_claim_record", claim_id=self.claim_id))
        self.queue += [self._a("check_regulatory_rule", rule="cost_sharing"),
                       self._a("check_deadline", deadline_type="internal_appeal")]
        self.planned_eob = False
        self.decided = False

    @staticmethod
    def _a(name: str, **params: Any) -> dict[str, Any]:
        return {"action_type": name, "parameters": params}

    def act(self, observation: Any) -> dict[str, Any]:
        res = _get(observation, "last_action_result")
        if isinstance(res, dict) and "artifact_id" in res and "data" in res:
            if res["artifact_id"] not in self.seen:
                self.seen.append(res["artifact_id"])
            if "type" in res:
                self.records.setdefault(res["type"], {"artifact_id": res["artifact_id"],
                                                      "data": res["data"]})
        if not self.planned_eob and "eob" in self.records:
            self.planned_eob = True  # ids from the EOB (fetched even when its data is hidden)
            eob = self.records["eob"]["data"]
            extra = []
            if eob.get("plan_id"):
                extra.append(self._a("fetch_plan_document", plan_id=eob["plan_id"]))
            for ln in eob.get("lines", [])[:2]:
                if ln.get("hcpcs"):
                    extra.append(self._a("lookup_procedure_code", code=ln["hcpcs"]))
            self.queue[0:0] = extra
        if not self.queue and not self.decided:
            self.decided = True
            self.queue = self._conclude()
        if self.queue:
            return self.queue.pop(0)
        return self._a("close_case")

    # -- reasoning ---------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        """What a decision may use: the complaint, the first observation and the data of
        every record read whose type is not hidden."""
        return {"complaint": self.complaint, "case_id": self.case_id,
                "initial_observation": self.initial,
                "records": {t: r["data"] for t, r in sorted(self.records.items())
                            if t not in self.hide}}

    @staticmethod
    def _payments(log: dict[str, Any]) -> list[dict[str, Any]]:
        txns = log.get("transactions", [])
        undone = {t.get("original_transaction_id") for t in txns
                  if t.get("type") in ("refund", "void")}
        return [t for t in txns if t.get("type") in ("capture", "sale")
                and t.get("status") == "settled" and t.get("transaction_id") not in undone]

    def _keyed_twice(self, ledger: dict[str, Any], log: dict[str, Any], dos: str) -> int:
        """What the ledger charges for self-pay items since the visit beyond what the card
        paid for each at its sale (the log's "<item> at check-in" captures that day)."""
        sold: dict[tuple[str, str], int] = {}
        for t in self._payments(log):
            desc = str(t.get("description", ""))
            if desc.endswith(" at check-in") and not desc.startswith("Copay"):
                key = (str(t.get("timestamp", ""))[:10], desc[:-len(" at check-in")])
                sold[key] = sold.get(key, 0) + _cents(t["amount"])
        excess = 0
        for e in ledger.get("entries", []):
            desc = str(e.get("description", ""))
            if (e.get("type") == "charge" and str(e.get("date", "")) >= dos
                    and desc.endswith(" (self-pay, not billed to insurance)")):
                paid = sold.get((str(e.get("date")), desc.split(" (self-pay")[0]))
                if paid is not None and _cents(e.get("amount", "0")) > paid:
                    excess += _cents(e.get("amount", "0")) - paid
        return excess

    def _duplicate(self, log: dict[str, Any]) -> int | None:
        paid = self._payments(log)
        for i, a in enumerate(paid):
            for b in paid[i + 1:]:
                if (a.get("amount") == b.get("amount") and a.get("last4") == b.get("last4")
                        and abs((_when(b["timestamp"]) - _when(a["timestamp"]))
                                .total_seconds()) <= 600):
                    return _cents(a["amount"])
        return None

    @staticmethod
    def _true_share(eob: dict[str, Any], plan: dict[str, Any], specialty: str) -> int:
        """The patient's share per the plan's terms and accumulator (no OOP cap)."""
        copays = plan.get("copays", {})
        benefits = plan.get("benefits", {})
        kind = "primary_care" if specialty.lower() in PRIMARY_CARE else "specialist"
        visit_copay = _cents(copays.get(kind, "0")) \
            if benefits.get("office_visit", {}).get("copay_applies") else 0
        ded_left = _ded_left(plan, eob)
        pct = int(plan.get("coinsurance_pct", 0))
        counts = bool(plan.get("copays_count_toward_deductible"))
        total = 0
        for ln in eob.get("lines", []):
            allowed = _cents(ln.get("allowed", "0"))
            if str(ln.get("hcpcs", "")).startswith("992") and visit_copay > 0:
                cp, ded, co = min(visit_copay, allowed), 0, 0
            else:
                cp, ded = 0, min(ded_left, allowed)
                co = _pct(allowed - ded, pct)
            ded_left = max(0, ded_left - ded - (cp if counts else 0))
            total += cp + ded + co
        return total

    def _decide(self, view: dict[str, Any]) -> dict[str, Any]:
        rec = view["records"]
        eob, plan = rec.get("eob"), rec.get("plan_document")
        ledger, log = rec.get("payment_ledger"), rec.get("processor_log")
        prov = rec.get("provider_record")
        balance = _cents(ledger.get("balance", "0")) if ledger else 0
        # a balance moved to a payment plan is off the ledger but still owed: what is open is
        # the ledger's balance plus what it transferred to the plan
        balance += sum(_cents(e.get("amount", "0")) for e in (ledger or {}).get("entries", [])
                       if e.get("type") == "adjustment"
                       and str(e.get("description", "")).startswith("Balance transferred to"))
        if log is not None:
            dup = self._duplicate(log)
            if dup is not None:
                policy = (prov or {}).get("financial_policy", "")
                apply_first = "applied to any open balance" in policy
                resolution = ("balance_correction" if apply_first and balance >= dup
                              else "refund_request")
                return {"finding": "duplicate_charge", "responsible_party": "provider",
                        "resolution_type": resolution, "amount_cents": dup}
        if eob is None:  # nothing to reason from: dispute the open balance
            return {"finding": "balance_billing", "responsible_party": "provider",
                    "resolution_type": "balance_correction", "amount_cents": balance}
        pr_eob = _cents(eob.get("totals", {}).get("patient_responsibility", "0"))
        dos = eob.get("date_of_service", "0000-00-00")
        card = sum(_cents(t["amount"]) for t in self._payments(log or {})
                   if str(t.get("timestamp", ""))[:10] >= dos)
        # self-pay items bought since the visit (charges outside the claim) are not the bill
        claim = str(eob.get("claim_id", ""))
        self_pay = sum(_cents(e.get("amount", "0")) for e in (ledger or {}).get("entries", [])
                       if e.get("type") == "charge" and str(e.get("date", "")) >= dos
                       and not str(e.get("reference", "")).startswith(claim))
        # ... at what the card paid for them when sold (paid in full at the desk): an item's
        # charge above its capture that day was keyed twice, and the excess is asked wrongly
        keyed_twice = self._keyed_twice(ledger or {}, log or {}, dos)
        self_pay -= keyed_twice
        # a balance brought forward from before the visit is owed for something else
        before = [e for e in (ledger or {}).get("entries", [])
                  if str(e.get("date", "")) < dos]
        carried = _cents(before[-1].get("balance_after", "0")) if before else 0
        asked = card + balance - self_pay - carried
        if plan is not None:
            specialty = ((prov or {}).get("provider", {}).get("specialty")
                         or "family medicine")
            share = self._true_share(eob, plan, specialty)
            if pr_eob > share:
                ded_eob = sum(_cents(ln.get("deductible", "0")) for ln in eob.get("lines", []))
                ded_left = _ded_left(plan, eob)
                finding = ("deductible_already_met" if ded_eob > ded_left
                           else "coinsurance_on_billed")
                return {"finding": finding, "responsible_party": "insurer",
                        "resolution_type": "claim_reprocessing",
                        "amount_cents": max(asked - share, 0)}
        over = asked - pr_eob
        if over > 0 and ledger is not None:
            entries = [e for e in ledger.get("entries", [])
                       if str(e.get("reference", "")).startswith(claim)]
            charges = [(e.get("amount"), e.get("reference"))
                       for e in entries if e.get("type") == "charge"]
            for e in entries:  # a charge entered twice and reversed is no longer doubled
                if e.get("type") == "adjustment" and "reversal" in str(e.get("description", "")
                                                                      ).lower():
                    key = (e.get("amount"), e.get("reference"))
                    if key in charges:
                        charges.remove(key)
            co45 = sum(_cents(a.get("amount", "0")) for ln in eob.get("lines", [])
                       for a in ln.get("adjustments", []) if str(a.get("carc")) == "45")
            written_off = sum(_cents(e.get("amount", "0")) for e in entries
                              if e.get("type") == "adjustment"
                              and "reversal" not in str(e.get("description", "")).lower())
            # a front-desk line may cite several card transactions ("TXN-a; TXN-b")
            posted = {ref.strip() for e in ledger.get("entries", [])
                      for ref in str(e.get("reference")).split(";")}
            uncredited = [t for t in self._payments(log or {})
                          if str(t.get("timestamp", ""))[:10] == dos
                          and t.get("transaction_id") not in posted]
            # a practice that posts the desk's card payments as a day's deposit batch cites
            # the batch, not the transactions: the visit day's batch lines credit uncited
            # payments up to their total, by amount (what they cannot cover was never posted)
            batch_left = sum(_cents(e.get("amount", "0")) for e in ledger.get("entries", [])
                             if e.get("type") == "patient_payment"
                             and str(e.get("date", "")) == dos
                             and "deposit batch" in str(e.get("description", "")).lower())
            still = []
            for t in uncredited:
                if _cents(t["amount"]) <= batch_left:
                    batch_left -= _cents(t["amount"])
                else:
                    still.append(t)
            uncredited = still
            # a line posted twice: its unreversed charges total more than the EOB's billed
            # charge for it (two rows of one amount, or one row keyed at two units)
            billed = {f"{claim} line {ln.get('line')}": _cents(ln.get("billed", "0"))
                      for ln in eob.get("lines", [])}
            on_line: dict[str, int] = {}
            for amount, ref_ in charges:
                on_line[str(ref_)] = on_line.get(str(ref_), 0) + _cents(amount or "0")
            if keyed_twice or any(on_line.get(r, 0) > b for r, b in billed.items()):
                finding = "duplicate_posting"
            elif written_off < co45 and over == co45 - written_off:
                finding = "balance_billing"
            elif uncredited:
                finding = "copay_not_credited"
            else:
                finding = "coinsurance_on_billed"
            return {"finding": finding, "responsible_party": "provider",
                    "resolution_type": "refund_request" if balance <= 0
                    else "balance_correction", "amount_cents": over}
        if over > 0:  # no ledger to read: the EOB says less than the patient was asked
            return {"finding": "balance_billing", "responsible_party": "provider",
                    "resolution_type": "balance_correction", "amount_cents": over}
        return {"finding": "no_error", "responsible_party": "none",
                "resolution_type": "no_action", "amount_cents": pr_eob}

    def _conclude(self) -> list[dict[str, Any]]:
        view = self.view()
        decision = self._decide(view)
        if self.decide_hook is not None:
            override = self.decide_hook(view) or {}
            for k in (*KEYS, "appeal_reason"):
                if k in override:
                    decision[k] = override[k]
        if decision.get("amount_cents") is None:
            decision["amount_cents"] = 0
        self.decision = decision
        finding, party = decision["finding"], decision["responsible_party"]
        resolution = decision["resolution_type"]
        money = _dollars(int(decision["amount_cents"]))
        if self.cite_all:
            cited = list(self.seen)
        else:
            key = f"{finding}:provider" if (finding == "coinsurance_on_billed"
                                            and party == "provider") else finding
            cited = [self.records[t]["artifact_id"] for t in SHOWS.get(key, SHOWS["no_error"])
                     if t in self.records]
        plan = [
            self._a("write_diagnosis", responsible_party=party, finding=finding, amount=money,
                    cited_artifacts=cited, summary=f"{finding}: {money}"),
            self._a("draft_resolution", resolution_type=resolution, amount=money,
                    cited_artifacts=cited, body=f"{resolution} for {money} ({finding})."),
            self._a("submit_resolution"),
            self._a("send_patient_communication", message_type="explanation",
                    message=(f"We reviewed your bill: it is correct; your share is ${money}."
                             if finding == "no_error" else
                             f"We reviewed your bill and filed a {resolution} for ${money}.")),
        ]
        if party == "provider":
            plan.append(self._a("notify_provider", cited_artifacts=cited, position="maintain",
                                message=f"Please correct the account: {finding}, ${money}."))
        plan += [
            self._a("write_audit_entry", summary="Reviewed EOB, ledger, plan, provider record, "
                                                  "claim record and processor log for the "
                                                  "dispute."),
            self._a("close_case"),
        ]
        return plan
