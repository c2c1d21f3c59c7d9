"""The committed 2026C bundle, read through clarus_env as an arena would read it."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from clarus_env import open_reference
from clarus_env.cli import main

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ref():  # noqa: ANN201
    return open_reference(REPO / "bundles" / "reference" / "2026C")


def test_domain_fee_examples(ref) -> None:  # noqa: ANN001
    # DOMAIN.md §5: 99213 Houston / Manhattan / Alabama, non-facility and facility
    assert ref.fee("99213", "04412", "18") == Decimal("96.33")
    assert ref.fee("99213", "04412", "18", facility=True) == Decimal("58.85")
    assert ref.fee("99213", "13202", "01") == Decimal("107.63")
    assert ref.fee("99213", "10112", "00", facility=True) == Decimal("54.77")
    # 71046 global vs its components (one-cent rounding gap is CMS's, not ours)
    assert ref.fee("71046", "04412", "18") == Decimal("33.20")
    assert ref.fee("71046", "04412", "18", modifier="26") == Decimal("10.18")
    assert ref.fee("71046", "04412", "18", modifier="TC") == Decimal("23.01")
    assert ref.fee("80053", "04412", "18") is None  # status X: paid on the lab fee schedule


def test_domain_ncci_and_mue_examples(ref) -> None:  # noqa: ANN001
    for c1, c2, mod in [("96372", "99211", "0"), ("80053", "80048", "0"), ("12002", "12001", "0"),
                        ("20610", "99213", "1"), ("69210", "69209", "1")]:
        edit = ref.ncci_edit(c1, c2)
        assert edit is not None and edit["modifier_indicator"] == mod, (c1, c2, edit)
    assert ref.ncci_edit("11104", "11103") is None
    assert (ref.mue("20610")["mue_units"], ref.mue("20610")["mai"]) == (2, "3")
    assert ref.mue("99396")["mue_units"] == 0


def test_codes_and_descriptions(ref) -> None:  # noqa: ANN001
    assert ref.rvu("99213")["work_rvu"] == Decimal("1.30")
    assert ref.rvu("99213")["global_days"] == "XXX"
    assert ref.describe("G0439")
    assert ref.hcpcs_level2("A4206")["kind"] == "code"
    assert ref.icd10cm("E11.22")["billable"] is True
    assert ref.icd10cm("E11")["billable"] is False
    assert ref.icd10cm("N18.3")["billable"] is False
    assert [n["code"] for n in ref.icd10cm_ancestors("S93.401A")][-1] == "19"
    assert ref.carc("97")["stop_date"] is None and ref.carc("15")["stop_date"] is not None
    assert ref.rarc("N19") is not None
    bronze = ref.plan("aca2026-individual-bronze-self-only")
    assert bronze["oop_max"] <= Decimal("10600")


def test_cli_summary_and_lookup(capsys) -> None:  # noqa: ANN001
    assert main(["reference", "summary"]) == 0
    out = capsys.readouterr().out
    assert "ncci_ptp" in out and "2,546,017" in out and "known gaps" in out
    assert main(["reference", "lookup", "--fee", "99213", "--ncci", "96372", "99211",
                 "--icd10cm", "E11.22"]) == 0
    out = capsys.readouterr().out
    assert "$96.33" in out and "modifier indicator 0" in out and "billable" in out


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "clarus_env.cli", "reference", "summary",
                          "--bundle", str(tmp_path)], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 2
    assert out.stderr.startswith("clarus: ") and "Traceback" not in out.stderr
    assert main(["reference", "lookup", "--icd10cm", "ZZZ.9"]) == 1
