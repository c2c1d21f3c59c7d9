"""A rule-following advocate for abductive_conflict that sees only observations.

Its rules are the ones a diligent but generic advocate applies: authenticate, read every
record the claim points to, look the codes and the pair up, check the appeal window, then
"appeal every bundling denial" — citing the modifier when the line carries one, otherwise
arguing that no edit should apply. It never reads what the NCCI lookup says (modifier
indicator, whether the edit is active), so it wins the cases where an appeal is due and
loses the subtle ones: indicator-0 edits (no modifier can bypass them, the denial stands)
and missing modifiers (the provider must correct the claim; an appeal is the wrong filing).
"""

from __future__ import annotations

import re
from typing import Any

CLAIM_RE = re.compile(r"\bCLM-\d+\b")
BUNDLING_CARCS = {"97", "236", "234"}
NCCI_MODIFIERS = {"25", "57", "58", "59", "78", "79", "91", "XE", "XS", "XP", "XU", "RT", "LT",
                  "E1", "E2", "E3", "E4", "FA", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8",
                  "F9", "TA", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "LC", "LD",
                  "LM", "RC", "RI", "24", "27"}


def _a(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


class HeuristicAgent:
    """Observation-only baseline: generic evidence gathering plus a modifier rule."""

    privileged = False

    def reset(self, observation: Any, **_: Any) -> None:
        """Start a case from its header; any privileged keyword (scenario=...) is ignored."""
        self.case_id: str = observation.case_id
        m = CLAIM_RE.search(observation.patient_complaint)
        self.claim_id: str | None = m.group(0) if m else None
        self.ids: dict[str, str] = {}
        self.lines: list[dict[str, Any]] = []
        self.denied: str | None = None
        self.paid: str | None = None
        self.plan_id: str | None = None
        self.others: list[str] = []
        self.queue: list[dict[str, Any]] = [_a("authenticate_patient", patient_id=self.case_id)]
        if self.claim_id:
            self.queue += [_a("fetch_claim_record", claim_id=self.claim_id),
                           _a("fetch_eob", claim_id=self.claim_id),
                           _a("fetch_provider_record", claim_id=self.claim_id)]
        self.phase = "gather"

    # -- reading results -------------------------------------------------------------------
    def _read(self, observation: Any) -> None:
        res = observation.last_action_result
        if not res or observation.last_action_error:
            return
        kind = observation.last_action_type
        data = res.get("data") or {}
        if res.get("artifact_id") and data.get("claim_id", self.claim_id) == self.claim_id:
            self.ids.setdefault(res.get("type", ""), res["artifact_id"])
        if kind == "fetch_claim_record":
            self.lines = list(data.get("lines", []))
            self.plan_id = data.get("plan_id")
        elif kind == "fetch_eob" and data.get("claim_id") == self.claim_id:
            for line in data.get("lines", []):
                carcs = {a.get("carc") for a in line.get("adjustments", [])
                         if a.get("group") == "CO"}
                if carcs & BUNDLING_CARCS:
                    self.denied = line.get("hcpcs")
                elif self.paid is None:
                    self.paid = line.get("hcpcs")
            if not self.lines:
                self.lines = list(data.get("lines", []))
        elif kind == "fetch_provider_record":
            history = (data.get("statement") or {}).get("account_history", [])
            self.others = [h["claim_id"] for h in history if h.get("claim_id")]

    def _modifier_on_claim(self) -> bool:
        return any(m in NCCI_MODIFIERS for line in self.lines for m in line.get("modifiers", []))

    # -- planning --------------------------------------------------------------------------
    def _plan_lookups(self) -> None:
        for other in self.others:  # "read everything the records point to"
            self.queue.append(_a("fetch_eob", claim_id=other))
        if self.plan_id:
            self.queue.append(_a("fetch_plan_document", plan_id=self.plan_id))
        if self.denied:
            self.queue.append(_a("lookup_procedure_code", code=self.denied))
            if self.paid:
                self.queue.append(_a("check_regulatory_rule", rule="ncci_ptp",
                                     code_1=self.paid, code_2=self.denied))
                self.queue.append(_a("lookup_procedure_code", code=self.paid))
        self.queue.append(_a("check_deadline", deadline_type="internal_appeal"))

    def _plan_filing(self) -> None:
        cites = [self.ids[t] for t in ("claim_record", "eob", "provider_record", "ncci_edit")
                 if t in self.ids]
        denied = self.denied or "the denied service"
        party, resolution = "insurer", "appeal"
        if self._modifier_on_claim():
            finding, reason = "modifier_bypass_ignored", "modifier_bypass_documented"
            why = "was billed with a modifier for a separate service"
        else:
            finding, reason = "no_active_edit", "no_active_edit"
            why = "should not have been bundled"
        extra: dict[str, Any] = {"appeal_reason": reason}
        told = (f"The {denied} {why}, so we appealed the bundling denial. You owe nothing for "
                "it meanwhile.")
        self.queue += [
            _a("write_diagnosis", responsible_party=party, finding=finding,
               cited_artifacts=cites, summary=f"{denied} denied as bundled."),
            _a("draft_resolution", resolution_type=resolution, cited_artifacts=cites,
               body=f"Bundling denial of {denied} on claim {self.claim_id}.", **extra),
            _a("submit_resolution"),
            _a("send_patient_communication", message=told, message_type="explanation"),
            _a("notify_provider", message=f"Regarding the bundling denial of {denied} on "
               f"claim {self.claim_id}: {resolution.replace('_', ' ')} filed. Please do not "
               "bill the patient for the denied line.", cited_artifacts=cites),
            _a("write_audit_entry", summary=f"Reviewed claim {self.claim_id} records; filed "
               f"{resolution}; patient and provider informed."),
            _a("close_case"),
        ]

    def act(self, observation: Any) -> dict[str, Any]:
        """The next action: drain the queue, planning the next phase when it runs dry."""
        self._read(observation)
        if not self.queue:
            if self.phase == "gather":
                self.phase = "lookup"
                self._plan_lookups()
            elif self.phase == "lookup":
                self.phase = "file"
                self._plan_filing()
        if self.queue:
            return self.queue.pop(0)
        return _a("close_case")
