"""abductive_conflict (medium, 22 checks): decide whether a same-day bundling denial is right
after reading all four sources — the insurer's claim record and EOB, the provider record, and
the NCCI PtP table — and file what the data calls for."""

from __future__ import annotations

from ..base import BillingTask
from .checks import CHECKS
from .generator import APPEAL_REASONS, FINDINGS, generate
from .oracle import oracle

TASK = BillingTask(
    name="abductive_conflict",
    difficulty="medium",
    api_call_budget=30,
    cooldowns={"check_regulatory_rule": 2},
    generate=generate,
    checks=CHECKS,
    oracle=oracle,
    findings=FINDINGS,
    appeal_reasons=APPEAL_REASONS,
    finding_meanings={
        "legitimate_denial": "the bundling denial is right: the NCCI edit applies and nothing "
                             "distinct was documented (or the edit allows no modifier)",
        "modifier_bypass_ignored": "the claim carries a bypass modifier the documentation "
                                   "supports and the payer ignored it",
        "missing_modifier": "the documentation supports a distinct service but the claim lacks "
                            "the bypass modifier",
        "no_active_edit": "no active NCCI edit pairs the two codes on the date of service",
    },
    appeal_reason_meanings={
        "modifier_bypass_documented": "the bypass modifier is supported by the documentation",
        "no_active_edit": "no active NCCI edit covers the pair",
        "missing_modifier": "a corrected claim adds the modifier the documentation supports",
        "medical_necessity": "the denied service was medically necessary",
    },
    description=(
        "A claim with two codes on one date of service was partly denied as bundled (CO-97 or "
        "CO-236 with a bundling remark). The insurer's claim record and EOB say the denial is "
        "right; the NCCI procedure-to-procedure table and the provider's documentation decide. "
        "With no active edit the denial must be appealed; with indicator 0 it stands; with "
        "indicator 1 it depends on the notes (a distinct site, lesion, time interval or a "
        "separately managed problem) and on whether the claim carries the bypass modifier: "
        "appeal the ignored bypass, ask the provider for a corrected claim when the modifier is "
        "missing (appeal_reason missing_modifier states why), or let the denial stand when "
        "nothing distinct was done. Concluding "
        "legitimate_denial before reading the NCCI edit and the provider record trips a TRAP "
        "check."),
)
