"""``deductive_liability`` (easy, 17 checks): the arithmetic chain from fee to balance.

The agent reads the insurer's EOB, the provider's ledger and statement, the plan's cost
sharing and the card processor's log, finds the one planted error (copay not credited,
duplicate capture or posting, coinsurance on billed, deductible already met, balance
billing), and files the right resolution with the right party for the overcharge, to the
cent.
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
        "provider's record and ledger, the plan document and the payment processor log; find "
        "the billing error; write a diagnosis naming the responsible party and the amount the "
        "patient was overcharged (to the cent); draft and submit the resolution (refund "
        "request, balance correction or claim reprocessing) for that amount; tell the "
        "patient, audit and close the case."
    ),
)
