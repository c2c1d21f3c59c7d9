"""The intended path through an abductive_conflict case, read from the expected outcome:
all four sources before any conclusion, the deadline before filing, then the filing the
data calls for (appeal, corrected-claim request, or no action with an explanation)."""

from __future__ import annotations

from typing import Any

from ..common import dollars


def _a(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


PATIENT_TEXT = {
    "legitimate_denial": "The {denied} was denied correctly: NCCI bundles it into the {paid} "
                         "billed the same day, and nothing in the record allows billing it "
                         "separately. The denial is a contractual (CO) adjustment, so you owe "
                         "nothing for it and the practice may not bill you for it. No appeal "
                         "is needed.",
    "modifier_bypass_ignored": "The {denied} was separately documented and billed with the "
                               "right modifier, which this NCCI edit allows. We filed an "
                               "appeal with your insurer. You owe nothing for it meanwhile.",
    "missing_modifier": "The {denied} was a separate service, but the claim was sent without "
                        "the modifier NCCI requires. We asked the practice to send a "
                        "corrected claim; the insurer's denial stands until then, and you "
                        "owe nothing for the denied amount.",
    "no_active_edit": "There is no active NCCI edit bundling the {denied} with the {paid}, "
                      "so the insurer's bundling denial is wrong. We filed an appeal. You "
                      "owe nothing for it meanwhile.",
}
PROVIDER_TEXT = {
    "legitimate_denial": "The NCCI edit {pair} applies and the documentation does not "
                         "support a bypass, so the denial of {denied} stands. It is a CO "
                         "adjustment: please do not bill the patient for it.",
    "modifier_bypass_ignored": "We appealed the denial of {denied}: the edit {pair} allows an "
                               "NCCI-associated modifier and your record documents a distinct "
                               "service. Please hold the balance; do not bill the patient.",
    "missing_modifier": "Please submit a corrected claim (frequency code 7) for {denied} with "
                        "the NCCI-associated modifier your documentation supports; the edit "
                        "{pair} allows a bypass. Do not bill the patient for the denied line.",
    "no_active_edit": "We appealed the bundling denial of {denied}: the NCCI table has no "
                      "active edit for {pair}. Please hold the balance; do not bill the "
                      "patient.",
}


def oracle(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The action list that passes every check (budget 30, check_regulatory_rule used once)."""
    case, e = scenario["case"], scenario["expected"]
    claim = case["claim_id"]
    paid, denied = e["paid_code"], e["denied_code"]
    amount = dollars(e["amount_cents"])
    fmt = {"paid": paid, "denied": denied, "pair": e["ncci_pair"]}
    cites = [e["claim_record_id"], e["eob_id"], e["provider_record_id"], e["ncci_ref_id"]]
    draft: dict[str, Any] = {"resolution_type": e["resolution_type"], "amount": amount,
                             "cited_artifacts": cites,
                             "body": f"Claim {claim}: {PROVIDER_TEXT[e['finding']].format(**fmt)}"}
    if e["appeal_reason"] != "none":
        draft["appeal_reason"] = e["appeal_reason"]
    return [
        _a("authenticate_patient", patient_id=case["patient_id"]),
        _a("fetch_claim_record", claim_id=claim),
        _a("fetch_eob", claim_id=claim),
        _a("fetch_provider_record", claim_id=claim),
        _a("lookup_procedure_code", code=denied),
        _a("check_regulatory_rule", rule="ncci_ptp", code_1=paid, code_2=denied),
        _a("lookup_procedure_code", code=paid),
        _a("check_deadline", deadline_type=e["deadline_type"]),
        _a("write_diagnosis", responsible_party=e["responsible_party"], finding=e["finding"],
           amount=amount, cited_artifacts=cites,
           summary=f"{denied} denied as bundled with {paid}; NCCI {e['ncci_pair']} "
                   f"indicator {e['modifier_indicator']}; provider record reviewed."),
        _a("draft_resolution", **draft),
        _a("submit_resolution"),
        _a("send_patient_communication", message=PATIENT_TEXT[e["finding"]].format(**fmt),
           message_type="explanation"),
        _a("notify_provider", message=PROVIDER_TEXT[e["finding"]].format(**fmt),
           cited_artifacts=[e["ncci_ref_id"], e["provider_record_id"]]),
        _a("write_audit_entry", summary=f"Case {case['case_id']}: read claim record, EOB and "
                                        "provider record for claim " + claim + "; NCCI and "
                                        "deadline lookups; filed " + e["resolution_type"] +
                                        "; patient and provider informed."),
        _a("close_case"),
    ]
