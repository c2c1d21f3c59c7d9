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
    description=(
        "A claim with two codes on one date of service was partly denied as bundled (CO-97 or "
        "CO-236 with a bundling remark). The insurer's claim record and EOB say the denial is "
        "right; the provider record and the NCCI procedure-to-procedure table may say "
        "otherwise. Read all four, decide whether the denial is legitimate (indicator 0), was "
        "wrongly applied despite a documented NCCI-associated modifier, needs a corrected "
        "claim because the modifier is missing, or rests on an edit that is not active, and "
        "file accordingly. Concluding legitimate_denial before reading the NCCI edit and the "
        "provider record trips a TRAP check."),
)
