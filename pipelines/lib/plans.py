"""Cost-sharing templates for ACA 2026 individual-market plans (the ``plan_templates`` table).

Arenas need a patient's plan terms to compute what a patient owes, and must never hand an agent
a plan that could not legally be sold.  The legal limits below are facts with citations
(DOMAIN.md section 2); the deductibles, copays and coinsurance are *representative template
values* chosen inside those limits to look like typical marketplace plans, not any insurer's
actual plan, and every row's ``source`` says so.
"""

from __future__ import annotations

from decimal import Decimal

import polars as pl

# 45 CFR 156.130(a); 2026 premium adjustment percentage from the Marketplace Integrity and
# Affordability final rule, 90 FR 27074 (June 25, 2025).
ACA_OOP_LIMIT_2026 = {"self_only": Decimal("10600"), "family": Decimal("21200")}
# IRC 223(c)(2)(A)(ii) as indexed by IRS Rev. Proc. 2025-19 (DOMAIN.md: secondary source, not
# re-checked against the IRS text).  An HSA-qualified plan must meet this *and* the ACA limit.
HDHP_OOP_LIMIT_2026 = {"self_only": Decimal("8500"), "family": Decimal("17000")}
# 45 CFR 156.140(b): share of expected allowed costs the plan pays for a standard population.
METAL_AV_PCT = {"bronze": 60, "silver": 70, "gold": 80, "platinum": 90}

_ACA_CITE = ("OOP max limit 2026: 45 CFR 156.130(a) ($10,600 self-only / $21,200 other than "
             "self-only; 90 FR 27074, June 25, 2025). AV: 45 CFR 156.140(b) ({level} = {av}%, "
             "nominal metal-level value, not a computed AV of this template).")
_HDHP_CITE = (" HSA-qualified HDHP OOP max 2026: $8,500 self-only / $17,000 family "
              "(IRC 223(c)(2), IRS Rev. Proc. 2025-19, as quoted in DOMAIN.md and not "
              "re-checked against the IRS text); all services except preventive care are "
              "subject to the deductible, so there are no copays.")
_TEMPLATE_NOTE = (" Deductible, coinsurance and copay amounts are representative template values "
                  "chosen within these limits, not a specific insurer's plan.")

SCHEMA: dict[str, pl.DataType] = {
    "plan_id": pl.String(), "market": pl.String(), "metal_level": pl.String(),
    "coverage": pl.String(), "deductible": pl.Decimal(12, 2), "coinsurance_pct": pl.Int8(),
    "copay_primary_care": pl.Decimal(12, 2), "copay_specialist": pl.Decimal(12, 2),
    "copay_urgent_care": pl.Decimal(12, 2), "copay_emergency": pl.Decimal(12, 2),
    "copays_count_toward_deductible": pl.Boolean(), "oop_max": pl.Decimal(12, 2),
    "actuarial_value_pct": pl.Int8(), "source": pl.String(),
}

# (key, metal, hdhp, self-only deductible, coinsurance %, copays PCP/specialist/urgent/ER,
#  copays count toward deductible, self-only OOP max).  Family deductible and OOP max are twice
# the self-only values (the common "2x" design); per 45 CFR 156.130 each person in a family
# plan is also capped at the self-only ACA limit (embedded limit), which the arena applies.
_TEMPLATES: list[tuple[str, str, bool, int, int, tuple[int, int, int, int], bool, int]] = [
    ("bronze", "bronze", False, 7500, 40, (50, 100, 75, 500), False, 10600),
    ("bronze-hdhp", "bronze", True, 6000, 30, (0, 0, 0, 0), False, 8500),
    ("silver", "silver", False, 5000, 30, (40, 80, 75, 450), False, 9800),
    ("gold", "gold", False, 1500, 20, (25, 50, 50, 350), True, 8000),
    ("platinum", "platinum", False, 0, 10, (10, 20, 25, 150), False, 4000),
]


def _money(value: int) -> Decimal:
    return Decimal(value).quantize(Decimal("0.01"))


def plan_templates() -> pl.DataFrame:
    """Return the self-only and family template rows for every metal level.

    Copay columns hold 0 when the benefit has no copay (deductible then coinsurance apply);
    ``copays_count_toward_deductible`` says whether copays paid reduce the remaining
    deductible, which is plan-specific (DOMAIN.md section 2) and thus part of each template.
    """
    rows: dict[str, list] = {k: [] for k in SCHEMA}
    for key, metal, hdhp, deductible, coins, copays, count, oop in _TEMPLATES:
        av = METAL_AV_PCT[metal]
        cite = _ACA_CITE.format(level=metal, av=av) + (_HDHP_CITE if hdhp else "") \
            + _TEMPLATE_NOTE
        for coverage, factor in (("self_only", 1), ("family", 2)):
            values = (f"aca2026-individual-{key}-{coverage.replace('_', '-')}", "individual",
                      metal, coverage, _money(deductible * factor), coins,
                      *(_money(c) for c in copays), count, _money(oop * factor), av, cite)
            for col, value in zip(SCHEMA, values, strict=True):
                rows[col].append(value)
    return pl.DataFrame(rows, schema=SCHEMA)


def limit_problems(df: pl.DataFrame) -> list[str]:
    """Rows that could not legally be sold (the blocking ``legal_limits`` check).

    Kept apart from :func:`plan_templates` so an edited template, or a table from elsewhere,
    is held to the same limits before it reaches a scenario.
    """
    problems = []
    for r in df.iter_rows(named=True):
        pid, coverage = r["plan_id"], r["coverage"]
        limits = [ACA_OOP_LIMIT_2026]
        if "hdhp" in pid:
            limits.append(HDHP_OOP_LIMIT_2026)
        cap = min(lim.get(coverage, Decimal("Infinity")) for lim in limits)
        if coverage not in ACA_OOP_LIMIT_2026:
            problems.append(f"{pid}: unknown coverage {coverage!r}")
        elif r["oop_max"] > cap:
            problems.append(f"{pid}: OOP max {r['oop_max']} above the 2026 limit {cap}")
        if r["deductible"] > r["oop_max"]:
            problems.append(f"{pid}: deductible {r['deductible']} above its OOP max")
        if METAL_AV_PCT.get(r["metal_level"]) != r["actuarial_value_pct"]:
            problems.append(f"{pid}: AV {r['actuarial_value_pct']}% is not the "
                            f"{r['metal_level']} level's {METAL_AV_PCT.get(r['metal_level'])}%")
        if not 0 <= r["coinsurance_pct"] <= 100:
            problems.append(f"{pid}: coinsurance {r['coinsurance_pct']}% out of range")
    return problems
