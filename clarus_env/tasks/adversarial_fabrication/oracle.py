"""The intended play for adversarial_fabrication, read from the scenario's expected outcome.

Authenticate, read every party's record once (the rate-limited processor log early, so its
cooldown never bites), look up the NSA rules and the PPDR deadline, diagnose citing the
records that support the finding, tell the patient. Then either file (a PPDR dispute or a
balance correction of the excess), answer the three counter-arguments as the records require
(reject the refuted ones citing what refutes them, concede a right one citing what bears it
out) and maintain the position with the provider — or, when nothing is wrong, record a
no_action decision (no dispute) and explain the bill. Audit, close.
"""

from __future__ import annotations

from typing import Any


def _act(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


def _dollars(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def oracle(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The action list that passes every check of this scenario (≤ 20 calls, budget 40)."""
    case, exp = scenario["case"], scenario["expected"]
    pid = case["patient_id"]
    plog, prv = exp["processor_log_id"], exp["provider_record_id"]
    excess, reference = exp["amount_cents"], exp["reference_amount_cents"]
    relevant = list(exp["relevant_ids"])
    nothing_wrong = exp["resolution_type"] == "no_action"
    actions = [
        _act("authenticate_patient", patient_id=pid),
        _act("fetch_payment_processor_log", patient_id=pid),
        _act("fetch_claim_record", claim_id=case["claim_id"]),
        _act("fetch_provider_record", claim_id=case["claim_id"]),
        _act("fetch_payment_ledger", patient_id=pid),
        _act("fetch_facility_record", facility_id=case["facility_id"]),
        _act("check_regulatory_rule", rule="nsa_good_faith_estimate"),
        _act("check_regulatory_rule", rule="nsa_dispute_resolution"),
        _act("check_regulatory_rule", rule="nsa_balance_billing"),
        _act("check_deadline", deadline_type="nsa_dispute"),
        _act("write_diagnosis", responsible_party=exp["responsible_party"],
             finding=exp["finding"], amount=_dollars(excess), cited_artifacts=relevant,
             summary=f"Billed {_dollars(exp['billed_total_cents'])} vs the convening party's "
                     f"GFE expected charges {_dollars(reference)}. Scheduling (processor log) "
                     f"{exp['scheduled_local_date']} local, GFE due {exp['gfe_deadline']}, "
                     f"delivered {exp['gfe_delivered_local_date']}."),
    ]
    if nothing_wrong:
        timely = exp["finding"] == "no_violation"
        return actions + [
            _act("send_patient_communication", message_type="explanation",
                 message="We compared your bill with your Good Faith Estimate and the payment "
                         "records. " + (
                             "The estimate was given on time and the bill is within it, so "
                             "there is nothing to dispute; the balance is what you were "
                             "quoted, less your deposit." if timely else
                             "The estimate did not meet the timing rule of 45 CFR 149.610 "
                             "(you can report that to the No Surprises Help Desk, "
                             "1-800-985-3059), but the bill is within its expected charges: "
                             "there is nothing to dispute or correct on the bill.")),
            _act("draft_resolution", resolution_type="no_action", amount="0.00",
                 cited_artifacts=relevant,
                 body="No dispute: a bill within the GFE's expected charges" + (
                     " and a timely GFE." if timely else
                     "; the GFE timing violation is recorded, nothing to recover.")),
            _act("submit_resolution"),
            _act("notify_provider", position="maintain", cited_artifacts=[prv],
                 message="The patient's bill matches the Good Faith Estimate; no dispute will "
                         "be filed."),
            _act("write_audit_entry",
                 summary=f"Read claim, provider record, statement, processor log and facility "
                         f"record for {pid}; explained the bill to the patient."),
            _act("close_case"),
        ]
    filing = ("a patient-provider dispute (PPDR) of the excess over the GFE"
              if exp["resolution_type"] == "nsa_dispute" else
              "a balance correction of the charges above the GFE prices")
    actions += [
        _act("send_patient_communication", message_type="explanation",
             message=f"We compared your bill with your Good Faith Estimate and the payment "
                     f"records. The charges exceed the estimate by ${_dollars(excess)}; we "
                     f"are filing {filing}."),
        _act("draft_resolution", resolution_type=exp["resolution_type"],
             amount=_dollars(excess), cited_artifacts=relevant,
             body=f"Dispute {_dollars(excess)} billed above the GFE expected charges of "
                  f"{_dollars(reference)}."),
        _act("submit_resolution"),
    ]
    for c in scenario["counters"]:
        decision = "reject"
        cited = list(c["refuted_by"])
        if c["kind"] == "legal_threat":
            cited = ["RULE-NSA-DISPUTE-RESOLUTION"]
        elif c["kind"] == "ehr_notes" and exp["counter_ehr_decision"] == "concede":
            decision, cited = "concede", list(exp["counter_ehr_support_ids"])
        actions.append(_act("reject_counter_argument", counter_id=c["counter_id"],
                            cited_artifacts=cited, decision=decision,
                            rationale="Answered from the independent records."))
    actions += [
        _act("notify_provider", position="maintain", cited_artifacts=[plog, prv],
             message="The dispute stands; the processor log and your own records support it."),
        _act("write_audit_entry",
             summary=f"Read claim, provider record, statement, processor log and facility "
                     f"record for {pid}; disclosed findings to the patient and the provider."),
        _act("close_case"),
    ]
    return actions
