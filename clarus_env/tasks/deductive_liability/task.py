"""``deductive_liability`` (easy, 17 checks): the arithmetic chain from fee to balance.

The agent reads the insurer's EOB, the provider's ledger and statement, the plan's cost
sharing and accumulators and the card processor's log, and decides whether the bill is
wrong: copay not credited, duplicate card capture or ledger posting, coinsurance on billed,
deductible already met, balance billing, out-of-pocket maximum ignored — or nothing at all.
It files the right resolution with the right party for the overcharge, to the cent, or closes
with ``no_action`` and confirms the patient's correct share.
"""

from __future__ import annotations

from ..base import BillingTask
from .checks import CHECKS
from .generator import FINDINGS, generate
from .oracle import oracle

TASK = BillingTask(
    name="deductive_liability",
    difficulty="easy",
    api_call_budget=25,
    cooldowns={"fetch_payment_processor_log": 2, "check_deadline": 1},
    generate=generate,
    checks=CHECKS,
    oracle=oracle,
    findings=FINDINGS,
    appeal_reasons=(),
    finding_meanings={
        "copay_not_credited": "a copay the patient paid at check-in that the provider's "
                              "ledger and statement never credited",
        "duplicate_charge": "the practice captured one card payment twice and kept both",
        "duplicate_posting": "one charge posted twice (as two units) on the provider's "
                             "ledger and statement",
        "coinsurance_on_billed": "coinsurance taken on the billed charge instead of the allowed "
                                 "amount (on the insurer's EOB or the practice's statement)",
        "deductible_already_met": "the insurer applied more deductible than the member had "
                                  "left (all of it, or part of it, already met)",
        "balance_billing": "the in-network provider bills the patient for the contractual "
                           "adjustment (CO-45: billed above allowed)",
        "oop_max_exceeded": "the patient's share ignores the plan's out-of-pocket maximum",
        "no_error": "the bill is right; the patient owes the share shown",
    },
    description=(
        "A patient disputes a bill for an in-network office visit. Read the EOB, the "
        "provider's record and ledger, the plan document and the payment processor log; decide "
        "whether there is a billing error (or no_error); write a diagnosis naming the finding, "
        "the responsible party ('none' when the bill is right) and the amount — the overcharge "
        "to the cent, or, when nothing is wrong, the patient's correct share of the visit; "
        "draft and submit the resolution (refund request, balance correction, claim "
        "reprocessing or an appeal of the insurer's determination, or no_action when the "
        "bill stands) for that amount; tell the patient, "
        "audit and close the case."
    ),
)
