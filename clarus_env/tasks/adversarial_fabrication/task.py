"""Task definition: adversarial_fabrication (hard, 28 checks = 22 + 6 for phase 2)."""

from __future__ import annotations

from ..base import BillingTask
from .checks import CHECKS
from .generator import FINDINGS, generate
from .oracle import oracle

APPEAL_REASONS = ("billed_400_over_gfe", "gfe_backdated", "gfe_issued_late",
                  "price_above_self_pay_rate")

TASK = BillingTask(
    name="adversarial_fabrication",
    difficulty="hard",
    api_call_budget=40,
    cooldowns={"fetch_payment_processor_log": 2},
    generate=generate,
    checks=CHECKS,
    oracle=oracle,
    findings=FINDINGS,
    appeal_reasons=APPEAL_REASONS,
    description=(
        "A self-pay patient was billed more than the Good Faith Estimate of the convening "
        "provider or facility that scheduled the service. Compare "
        "the GFE date on the provider record with the payment processor's UTC timestamps (the "
        "deposit taken at scheduling, estimate deliveries) and the facility's records, in the "
        "facility's local time and business days, to tell whether the GFE was backdated or "
        "late (45 CFR 149.610). Compare the convening party's total charges with its "
        "own expected charges on the GFE: at least $400 over and within 120 days of receiving the "
        "bill, file a patient-provider dispute (nsa_dispute) of the excess; otherwise ask for "
        "a balance correction of the excess. After filing, the billing party sends three "
        "counter-arguments; reject each, citing the record that refutes it."),
    meta={"phase_2_checks": 6, "responsible_party_note": "the convening party that issued "
          "the GFE and the bill: the provider (physician practice) or the facility (an ASC or "
          "hospital outpatient department that scheduled the procedure and bills its facility "
          "charges); the outcome check also grades the finding, the task's central deduction"},
)
