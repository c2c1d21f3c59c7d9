"""ACA 2026 plan templates: every row legal, labelled and storable."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

from pipelines.lib.conform import conform
from pipelines.lib.plans import (
    ACA_OOP_LIMIT_2026,
    HDHP_OOP_LIMIT_2026,
    METAL_AV_PCT,
    plan_templates,
)


@pytest.fixture(scope="module")
def plans() -> pl.DataFrame:
    return plan_templates()


def test_conforms_and_ids_unique(plans: pl.DataFrame) -> None:
    table = conform(plans, "plan_templates", "plans.py")
    assert table.num_rows == plans.height == 10
    assert plans["plan_id"].is_unique().all()


def test_limits_from_domain() -> None:
    assert ACA_OOP_LIMIT_2026 == {"self_only": 10600, "family": 21200}
    assert HDHP_OOP_LIMIT_2026 == {"self_only": 8500, "family": 17000}
    assert METAL_AV_PCT == {"bronze": 60, "silver": 70, "gold": 80, "platinum": 90}


def test_every_oop_max_within_legal_limit(plans: pl.DataFrame) -> None:
    for row in plans.iter_rows(named=True):
        limit = ACA_OOP_LIMIT_2026[row["coverage"]]
        if "hdhp" in row["plan_id"]:
            limit = min(limit, HDHP_OOP_LIMIT_2026[row["coverage"]])
        assert row["oop_max"] <= limit, row["plan_id"]
        assert row["deductible"] <= row["oop_max"], row["plan_id"]
        assert 0 <= row["coinsurance_pct"] <= 100


def test_av_matches_metal_level(plans: pl.DataFrame) -> None:
    for row in plans.iter_rows(named=True):
        assert row["actuarial_value_pct"] == METAL_AV_PCT[row["metal_level"]]
        assert f"{row['metal_level']} = {row['actuarial_value_pct']}%" in row["source"]


def test_coverage_pairs_and_levels(plans: pl.DataFrame) -> None:
    assert set(plans["metal_level"]) == set(METAL_AV_PCT)
    assert set(plans["market"]) == {"individual"}
    counts = plans.group_by("coverage").len().sort("coverage").rows()
    assert counts == [("family", 5), ("self_only", 5)]


def test_hdhp_has_no_copays_before_deductible(plans: pl.DataFrame) -> None:
    hdhp = plans.filter(pl.col("plan_id").str.contains("hdhp"))
    assert hdhp.height == 2 and set(hdhp["metal_level"]) == {"bronze"}
    for col in ("copay_primary_care", "copay_specialist", "copay_urgent_care",
                "copay_emergency"):
        assert (hdhp[col] == 0).all()
    assert hdhp["source"].str.contains("Rev. Proc. 2025-19", literal=True).all()


def test_source_cites_rules_and_says_template(plans: pl.DataFrame) -> None:
    for src in plans["source"]:
        assert "45 CFR 156.130" in src and "45 CFR 156.140(b)" in src
        assert "representative template values" in src
        assert "not a specific insurer's plan" in src


def test_limit_problems_flags_illegal_rows(plans: pl.DataFrame) -> None:
    from pipelines.lib.plans import limit_problems

    assert limit_problems(plans) == []
    bad = plans.with_columns(
        pl.when(pl.col("plan_id").str.contains("silver-self"))
        .then(pl.lit(Decimal("10600.01"))).otherwise(pl.col("oop_max"))
        .cast(pl.Decimal(12, 2)).alias("oop_max"),
        pl.when(pl.col("plan_id").str.contains("gold-family"))
        .then(pl.lit(70, dtype=pl.Int8)).otherwise(pl.col("actuarial_value_pct"))
        .alias("actuarial_value_pct"),
    )
    probs = limit_problems(bad)
    assert any("silver-self-only: OOP max 10600.01 above the 2026 limit 10600" in p for p in probs)
    assert any("gold-family: AV 70%" in p for p in probs)
    assert len(probs) == 2
