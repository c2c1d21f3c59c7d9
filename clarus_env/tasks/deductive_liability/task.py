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
