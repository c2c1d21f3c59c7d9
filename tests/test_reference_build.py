"""Full builds from the real CMS mirror: row counts, byte-identical rebuild of the committed
bundle, and the official payment file reproduced to the cent through the pipeline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest
from dagster import DagsterInstance, materialize

from clarus_env.reference import REPO_BUNDLES, ReferenceBundle
from pipelines.definitions import make_definitions
from pipelines.resources import BundleStore, CmsSource

pytestmark = pytest.mark.slow


def build(mirror: Path, root: Path, release: str) -> object:
    defs = make_definitions(CmsSource(mirror_dir=str(mirror)), BundleStore(root=str(root)))
    with DagsterInstance.ephemeral() as instance:
        result = materialize(list(defs.assets), partition_key=release, instance=instance,
                             resources=defs.resources, raise_on_error=False)
    errors = [ev.event_specific_data.error.message for ev in result.all_events
              if ev.event_type_value == "STEP_FAILURE"]
    assert result.success, errors
    return result


@pytest.fixture(scope="module")
def rebuilt(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reference")
    build(mirror, root, "2026C")
    return root / "2026C"


def test_row_counts_match_sources(rebuilt: Path) -> None:
    ref = ReferenceBundle(rebuilt)
    rows = {name: out["rows"] for name, out in ref.manifest["outputs"].items()}
    assert rows["hcpcs_rvu"] == 19_356
    assert rows["gpci"] == 109
    assert rows["ncci_ptp"] == 2_546_017
    assert rows["mue"] == 14_677
    assert rows["hcpcs_level2"] == 9_006
    assert rows["carc"] == 407 and rows["carc_group"] == 5
    assert rows["rarc"] == 1_197
    assert rows["fee_schedule"] == 1_144_282
    assert rows["opps_rate"] == 18_682  # CY2025 final-rule Addendum B, every HCPCS code
    assert rows["asc_rate"] == 4_832  # April 2026 Addendum AA
    billable = pc.sum(ref.table("icd10cm").column("billable")).as_py()
    assert billable == 74_719  # leaves of code-list-April-2026.txt
    active = pc.sum(pc.is_null(ref.table("ncci_ptp").column("deletion_date"))).as_py()
    assert active == 1_669_820


def test_manifest_records_provenance(rebuilt: Path) -> None:
    m = json.loads((rebuilt / "manifest.json").read_text())
    inputs = {i["key"]: i for i in m["inputs"]}
    assert inputs["pprrvu"]["sha256"] == \
        "b7d197e73211ef6854c213c267d5fa9dec8df995db8e1ee7d44c0556ad7cee21"
    assert inputs["pprrvu"]["url"] == "https://www.cms.gov/files/zip/rvu26c-updated-06-30-2026.zip"
    assert inputs["ptp_complete"]["derived"] and inputs["ptp_complete"]["release"] == "2024Q3"
    assert inputs["ptp_complete"]["missing_columns"] == ["effective_date", "prior_1996"]
    assert inputs["ptp_f1"]["excerpt"] and inputs["ptp_f1"]["release"] == "2026Q3"
    assert m["outputs"]["ncci_ptp"]["releases"] == ["2024Q3"]
    assert m["outputs"]["ncci_ptp"]["cross_checked_with"] == ["ptp_f1"]
    assert any("152 of 155 pairs present" in n for n in m["outputs"]["ncci_ptp"]["notes"])
    assert m["outputs"]["fee_schedule"]["releases"] == ["RVU26C"]
    assert m["outputs"]["locality_county"]["releases"] == ["RVU25D"]
    assert any("OPPSCAP" in g for g in m["gaps"])
    assert inputs["opps_addendum_b"]["sha256"] == \
        "0ab69ea333f42cbc847e38a00b90776e9252feeea7cde3a49684c5edbd6e46b6"
    assert inputs["asc_addendum_aa"]["origin"] == "mirror:asc/2026/20260401/AA.csv"
    assert m["outputs"]["opps_rate"]["releases"] == ["CY2025-final"]
    assert m["outputs"]["opps_rate"]["cross_checked_with"] == ["opps_addendum_a"]
    assert any("6,635 of 6,635 codes with an APC and a rate are paid their APC's rate" in n
               for n in m["outputs"]["opps_rate"]["notes"])
    assert m["outputs"]["asc_rate"]["releases"] == ["2026-04"]
    assert any("56.322 (the conversion factor) on 3,931 of 3,931" in n
               for n in m["outputs"]["asc_rate"]["notes"])
    assert any("no CY2026 OPPS Addendum B" in g for g in m["gaps"])
    for out in m["outputs"].values():
        assert len(out["sha256"]) == 64 and out["rows"] > 0


def test_rebuild_is_byte_identical_to_committed_bundle(rebuilt: Path) -> None:
    committed = REPO_BUNDLES / "2026C"
    names = sorted(p.name for p in committed.iterdir())
    assert names == sorted(p.name for p in rebuilt.iterdir())
    different = [n for n in names if (committed / n).read_bytes() != (rebuilt / n).read_bytes()]
    assert different == [], "rebuild differs from the committed bundle: " + ", ".join(different)
    size = sum((committed / n).stat().st_size for n in names)
    assert size < 40e6


def test_2025d_reproduces_the_official_payment_file(mirror: Path, tmp_path: Path) -> None:
    result = build(mirror, tmp_path, "2025D")
    checks = {(e.asset_key.to_user_string(), e.check_name): e
              for e in result.get_asset_check_evaluations()}  # type: ignore[attr-defined]
    payment = checks[("fee_schedule", "payment_file")]
    assert payment.passed
    m = json.loads((tmp_path / "2025D" / "manifest.json").read_text())
    notes = m["outputs"]["fee_schedule"]["notes"]
    assert any("1,526 records of PFREV4.txt compared to the cent: all equal" in n for n in notes)
    assert "opps_cap" in m["outputs"]
    assert m["outputs"]["asc_rate"]["releases"] == ["2025-01"]
    assert m["outputs"]["asc_rate"]["rows"] == 4_183
    assert m["outputs"]["opps_rate"]["rows"] == 18_682
    # the mirror has no 2025 HCPCS/ICD-10-CM files: the manifest says the 2026 ones are used
    assert any("hcpcs_level2 is the January 2026 file" in g for g in m["gaps"]), m["gaps"]


def test_refresh_cli_publishes_the_committed_bundle(mirror: Path, tmp_path: Path) -> None:
    """``python -m pipelines.refresh`` as a data engineer runs it (execute_job against a real
    DAGSTER_HOME): the published 2026C is the committed bundle byte for byte, and a partial
    ``--select`` run afterwards passes the check gate from that instance's history and
    publishes the same release."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("")
    env = {**os.environ, "DAGSTER_HOME": str(home), "CLARUS_CMS_MIRROR": str(mirror),
           "CLARUS_BUNDLE_ROOT": str(tmp_path / "bundles")}
    committed = REPO_BUNDLES / "2026C"
    for extra in ([], ["--select", "pfs_raw,reference_bundle"]):
        out = subprocess.run([sys.executable, "-m", "pipelines.refresh", "--partition", "2026C",
                              *extra], cwd=REPO_BUNDLES.parents[1], env=env,
                             capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        published = tmp_path / "bundles" / "2026C"
        names = sorted(p.name for p in committed.iterdir())
        assert names == sorted(p.name for p in published.iterdir())
        assert [n for n in names
                if (committed / n).read_bytes() != (published / n).read_bytes()] == [], extra
