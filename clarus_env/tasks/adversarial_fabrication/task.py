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
    finding_meanings={
        "gfe_backdated_before_scheduling": "the Good Faith Estimate carries a date before the "
                                           "service was really scheduled (backdated)",
        "gfe_issued_after_deadline": "the Good Faith Estimate was delivered after the 1- or "
                                     "3-business-day deadline of 45 CFR 149.610",
        "billed_above_gfe": "the bill is above the billing party's own section of the GFE "
                            "($400 or more within 120 days of receipt: a patient-provider "
                            "dispute)",
        "no_violation": "the GFE was timely and the bill is within the estimate",
    },
    appeal_reason_meanings={
        "billed_400_over_gfe": "billed at least $400 above the GFE",
        "gfe_backdated": "the GFE was backdated",
        "gfe_issued_late": "the GFE was delivered after its deadline",
        "price_above_self_pay_rate": "the price is above the self-pay rate",
    },
    description=(
        "A self-pay patient received a bill after a Good Faith Estimate. Compare the GFE date "
        "on the provider record with the payment processor's UTC timestamps (the deposit "
        "authorized at booking, estimate deliveries) and the facility's records, in the "
        "facility's local time and business days, to tell whether the GFE was backdated, late "
        "or timely (45 CFR 149.610). The GFE's timing is the convener's duty: the party that "
        "scheduled the service (149.610(a)(2)), a provider or a facility such as an ASC, "
        "hospital outpatient department or imaging center, which may or may not be the party "
        "that bills. Compare the billing party's total charges with its own section (its "
        "expected charges) on the GFE. At least $400 over and within 120 days of receiving the "
        "bill: file a patient-provider dispute (nsa_dispute) of the excess; a smaller excess "
        "or a closed window: a balance correction of the excess; nothing wrong: draft a "
        "no_action decision, file nothing and explain the bill to the patient. After a filing "
        "the billing party sends three counter-arguments: reject each one the records refute "
        "and concede one they bear out, citing the records that decide it."),
    meta={"phase_2_checks": 6, "responsible_party_note": "for a late or backdated GFE the "
          "convener, the party that scheduled the service (45 CFR 149.610(a)(2); it may or may "
          "not bill); for a bill above the GFE the billing party, measured against its own "
          "section: the provider (physician practice) or the facility (an ASC, hospital "
          "outpatient department, imaging or sleep center); none when nothing is wrong; the "
          "outcome check also grades the finding, the task's central deduction"},
)
