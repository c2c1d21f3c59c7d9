"""The oracle's script for ``deductive_liability``: the intended path, read off ``expected``.

Authenticate, read every party's record for the claim (the processor log once: it is rate
limited), check the governing deadline, diagnose citing exactly the records that support the
finding (``relevant_ids``), draft and file the resolution for the overcharge — or, where the
bill is right, the ``no_action`` closure for the patient's confirmed share — tell the patient,
notify the provider when the provider must act, audit, close. Fifteen or sixteen calls within
the budget of 25.
"""

from __future__ import annotations

from typing import Any

from ..common import dollars

PARTY_TEXT = {"insurer": "the plan", "provider": "the practice", "none": "no one"}
WHAT = {
    "copay_not_credited": "the copay you paid at check-in was never credited to your account",
    "duplicate_charge": "the practice charged your card twice for the same payment",
    "duplicate_posting": "a charge was posted twice on your account",
    "coinsurance_on_billed": "your coinsurance was computed on the billed charge instead of "
                             "the allowed amount",
    "deductible_already_met": "deductible was applied although your deductible was already met",
    "balance_billing": "the in-network practice billed you the contractual write-off (CO-45)",
    "oop_max_exceeded": "your cost sharing went past your plan's out-of-pocket maximum",
    "no_error": "your bill is correct: the plan's cost sharing was applied as your plan says",
}


def _act(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


def oracle(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The action list that passes all 17 checks for this scenario."""
    case, exp = scenario["case"], scenario["expected"]
    amount = dollars(exp["amount_cents"])
    evidence = list(exp["relevant_ids"])
    party, finding, resolution = exp["responsible_party"], exp["finding"], exp["resolution_type"]
    if finding == "no_error":
        summary = (f"No billing error: {WHAT[finding]}; the patient's share of the visit is "
                   f"{amount}, balance still owed {dollars(exp['correct_balance_cents'])}.")
        body = f"No filing: the bill stands; the patient's share of ${amount} is correct."
        told = (f"We checked your bill against your plan and the insurer's explanation of "
                f"benefits: {WHAT[finding]}. Your share of the visit is ${amount}; there is "
                f"nothing to dispute.")
    else:
        summary = (f"{WHAT[finding].capitalize()}; overcharge {amount}; correct balance "
                   f"{dollars(exp['correct_balance_cents'])}.")
        body = (f"Request to {PARTY_TEXT[party]}: {WHAT[finding]}. Please correct the "
                f"patient's account by ${amount}.")
        told = (f"We found that {WHAT[finding]}. You were overcharged ${amount}; we filed a "
                f"{resolution.replace('_', ' ')} with {PARTY_TEXT[party]}.")
    plan = [
        _act("authenticate_patient", patient_id=case["patient_id"]),
        _act("fetch_payment_processor_log", patient_id=case["patient_id"]),
        _act("fetch_eob", claim_id=case["claim_id"]),
        _act("fetch_payment_ledger", patient_id=case["patient_id"]),
        _act("fetch_plan_document", plan_id=case["plan_id"]),
        _act("fetch_provider_record", claim_id=case["claim_id"]),
        _act("fetch_claim_record", claim_id=case["claim_id"]),
        _act("check_regulatory_rule", rule="cost_sharing"),
        _act("check_deadline", deadline_type="internal_appeal"
             if resolution in ("claim_reprocessing", "no_action") else "refund_request"),
        _act("write_diagnosis", responsible_party=party, finding=finding, amount=amount,
             cited_artifacts=evidence, summary=summary),
        _act("draft_resolution", resolution_type=resolution, amount=amount,
             cited_artifacts=evidence, body=body),
        _act("submit_resolution"),
        _act("send_patient_communication", message_type="explanation", message=told),
    ]
    if party == "provider":
        plan.append(_act("notify_provider", cited_artifacts=evidence, position="maintain",
                         message=f"Please correct account: {WHAT[finding]} (${amount})."))
    plan += [
        _act("write_audit_entry",
             summary="Accessed claim record, EOB, provider record, ledger, plan document and "
                     "processor log for the billing dispute; disclosed findings to the "
                     "patient and the responsible party only."),
        _act("close_case"),
    ]
    return plan
