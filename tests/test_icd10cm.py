"""ICD-10-CM tabular XML and CMS order-file parsers: fixtures, bad inputs, the real 2026 files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError
from pipelines.lib.icd10cm import dotted, parse_icd10cm_order, parse_icd10cm_tabular
from pipelines.lib.icd10cm_index import (
    code_columns,
    parse_drug_table,
    parse_eindex,
    parse_neoplasm_table,
    unresolved_codes,
)

XML = "icd10cm/icd10c-tabular-April-1-2026.xml"
CODE_LIST = "icd10cm/code-list-April-2026.txt"
ORDER_EXCERPT = "icd10cm/icd10cm_order_2026.excerpt.txt"

# Established by comparing the code list with the XML (see test_billable_equals_code_list_leaves):
# 74,719 unique leaves, as DOMAIN.md says; SOURCES.md's 74,736 matches no counting of either file.
REAL_BILLABLE = 74_719
REAL_ROWS = 98_505  # = entries in the code list (it lists single-category blocks like B20 twice)


@pytest.fixture(scope="module")
def small(fixtures: Path) -> pl.DataFrame:
    data = (fixtures / "icd10cm" / "tabular_small.xml").read_bytes()
    return parse_icd10cm_tabular(data, "tabular_small.xml")


def row(df: pl.DataFrame, code: str) -> dict:
    rows = df.filter(pl.col("code") == code).to_dicts()
    assert len(rows) == 1, f"{code}: {len(rows)} rows"
    return rows[0]


# --- fixture: tree shape and conventions -------------------------------------------------------

def test_small_conforms(small: pl.DataFrame) -> None:
    table = conform(small, "icd10cm", "tabular_small.xml")
    assert table.num_rows == small.height
    assert small["code"].is_unique().all()


def test_chapter_block_category_rows(small: pl.DataFrame) -> None:
    ch = row(small, "1")
    assert (ch["kind"], ch["parent"], ch["chapter"], ch["block"], ch["category"], ch["depth"]) \
        == ("chapter", None, "1", None, None, 1)
    assert ch["includes"] == "diseases generally recognized as communicable or transmissible"
    assert ch["excludes2"].split("\n") == [
        "carrier or suspected carrier of infectious disease (Z22.-)",
        "influenza and other acute respiratory infections (J00-J22)",
    ]
    blk = row(small, "A00-A09")
    assert (blk["kind"], blk["parent"], blk["block"], blk["depth"]) == ("block", "1", "A00-A09", 2)
    single = row(small, "B20-B20")  # single-category block must not collide with category B20
    assert single["kind"] == "block"
    cat = row(small, "A00")
    assert (cat["kind"], cat["parent"], cat["category"], cat["billable"], cat["depth"]) \
        == ("category", "A00-A09", "A00", False, 3)


def test_leaf_kinds_and_depth(small: pl.DataFrame) -> None:
    b20 = row(small, "B20")  # a 3-character leaf: still kind 'category', but billable
    assert (b20["kind"], b20["billable"], b20["parent"], b20["block"]) \
        == ("category", True, "B20-B20", "B20-B20")
    assert b20["excludes1"].startswith("asymptomatic human immunodeficiency")
    sub = row(small, "A01.0")
    assert (sub["kind"], sub["billable"], sub["depth"], sub["parent"]) \
        == ("subcategory", False, 4, "A01")
    leaf = row(small, "A01.01")
    assert (leaf["kind"], leaf["billable"], leaf["depth"], leaf["category"]) \
        == ("code", True, 5, "A01")
    assert leaf["description"] == "Typhoid meningitis"  # whitespace collapsed
    assert leaf["includes"] is None and leaf["excludes1"] is None
    assert not small.filter((pl.col("kind") == "code") & ~pl.col("billable")).height


def test_inclusion_terms_are_not_includes(small: pl.DataFrame) -> None:
    assert row(small, "A00.0")["includes"] is None


def test_seventh_character_expansion(small: pl.DataFrame) -> None:
    base = row(small, "S93.401")
    assert (base["kind"], base["billable"], base["depth"]) == ("subcategory", False, 6)
    a = row(small, "S93.401A")
    assert (a["kind"], a["billable"], a["parent"], a["depth"], a["category"], a["block"]) \
        == ("code", True, "S93.401", 7, "S93", "S90-S99")
    assert a["description"] == "Sprain of unspecified ligament of right ankle, initial encounter"
    assert {"S93.401A", "S93.401D", "S93.401S"} <= set(small["code"])
    # placeholder X padding
    assert row(small, "T78.40XA")["parent"] == "T78.40"
    w19 = row(small, "W19")
    assert (w19["kind"], w19["billable"]) == ("category", False)
    fall = row(small, "W19.XXXA")
    assert (fall["parent"], fall["depth"], fall["description"]) \
        == ("W19", 4, "Unspecified fall, initial encounter")
    assert "W19.XXXD" in set(small["code"]) and "W19.XXXS" in set(small["code"])


def test_seventh_character_nearest_ancestor_wins(small: pl.DataFrame) -> None:
    codes = set(small["code"])
    assert {"H40.1110", "H40.1111"} <= codes
    assert "H40.1129" in codes and "H40.1120" not in codes
    assert not row(small, "H40.111")["billable"]


def test_seventh_character_prose_exception(small: pl.DataFrame) -> None:
    codes = set(small["code"])
    assert {"S06.1X0A", "S06.1X0D", "S06.1X0S", "S06.1X7A"} <= codes
    assert "S06.1X7D" not in codes and "S06.1X7S" not in codes


def test_dotted() -> None:
    assert dotted("E119") == "E11.9" and dotted("E11") == "E11" and dotted("W19XXXA") == "W19.XXXA"


# --- bad inputs --------------------------------------------------------------------------------

def test_malformed_xml_names_file_and_line(fixtures: Path) -> None:
    data = (fixtures / "icd10cm" / "tabular_small.xml").read_bytes()
    broken = data.replace(b"</desc>\n          <diag>\n            <name>A01.00", b"\n", 1)
    assert broken != data
    with pytest.raises(SourceFormatError) as err:
        parse_icd10cm_tabular(broken, "broken.xml")
    assert err.value.source == "broken.xml"
    assert err.value.row is not None and err.value.row > 40
    assert "malformed XML" in str(err.value) and "row" in str(err.value)


def test_truncated_xml() -> None:
    with pytest.raises(SourceFormatError, match=r"cut\.xml, row 3.*malformed XML"):
        parse_icd10cm_tabular(b"<ICD10CM.tabular>\n<chapter>\n", "cut.xml")


def test_diag_without_name_names_its_line(fixtures: Path) -> None:
    data = (fixtures / "icd10cm" / "tabular_missing_name.xml").read_bytes()
    with pytest.raises(SourceFormatError) as err:
        parse_icd10cm_tabular(data, "tabular_missing_name.xml")
    assert err.value.row == 11  # the line of the <diag> that lacks <name>
    assert err.value.column == "diag"
    assert str(err.value).startswith("tabular_missing_name.xml, row 11")
    assert "<name>" in str(err.value)


@pytest.mark.parametrize("data", [b"", b"  \n"])
def test_empty_xml(data: bytes) -> None:
    with pytest.raises(SourceFormatError, match=r"empty\.xml, row 1: file is empty"):
        parse_icd10cm_tabular(data, "empty.xml")


def test_wrong_root_and_bad_code() -> None:
    with pytest.raises(SourceFormatError, match=r"x\.xml, row 2.*unexpected root"):
        parse_icd10cm_tabular(b"<?xml version='1.0'?>\n<html></html>", "x.xml")
    bad = (b"<ICD10CM.tabular><chapter><name>1</name><desc>c</desc>\n<section id='A00-A09'>"
           b"<desc>s</desc>\n<diag><name>A0</name><desc>d</desc></diag></section></chapter>"
           b"</ICD10CM.tabular>")
    with pytest.raises(SourceFormatError, match=r"x\.xml, row 3.*malformed ICD-10-CM code"):
        parse_icd10cm_tabular(bad, "x.xml")


def test_unknown_seventh_character_exception_wording_fails(fixtures: Path) -> None:
    data = (fixtures / "icd10cm" / "tabular_small.xml").read_bytes()
    odd = data.replace(b"7th characters D and S do not apply to codes in category S06",
                       b"Some 7th characters do not apply here")
    with pytest.raises(SourceFormatError, match="unrecognized 7th-character exception"):
        parse_icd10cm_tabular(odd, "odd.xml")


# --- order file --------------------------------------------------------------------------------

def test_order_fixture(fixtures: Path) -> None:
    df = parse_icd10cm_order((fixtures / "icd10cm" / "order_small.txt").read_bytes(), "o.txt")
    assert df.columns == ["order_number", "code", "billable", "short_description",
                          "long_description"]
    assert df["code"].to_list()[:3] == ["A00", "A00.0", "A00.9"]
    assert df.filter(pl.col("code") == "A01.0")["billable"].item() is False
    assert df.filter(pl.col("code") == "B20")["billable"].item() is True


def test_order_agrees_with_xml_fixture(fixtures: Path, small: pl.DataFrame) -> None:
    order = parse_icd10cm_order((fixtures / "icd10cm" / "order_small.txt").read_bytes(), "o.txt")
    joined = order.join(small, on="code", how="left")
    assert joined["description"].null_count() == 0
    assert (joined["billable"] == joined["billable_right"]).all()
    assert (joined["long_description"] == joined["description"]).all()


@pytest.mark.parametrize(("line", "column"), [
    (b"00001 A00     0 Cholera", "1-78"),
    (b"0000X A00     0 Cholera" + b" " * 53 + b"Cholera", "1-5"),
    (b"00001 A00     7 Cholera" + b" " * 53 + b"Cholera", "15"),
    (b"00001 a.0     0 Cholera" + b" " * 53 + b"Cholera", "7-13"),
])
def test_order_bad_records(line: bytes, column: str) -> None:
    good = b"00001 A00     0 Cholera" + b" " * 53 + b"Cholera\r\n"
    with pytest.raises(SourceFormatError) as err:
        parse_icd10cm_order(good + line + b"\r\n", "order.txt")
    assert (err.value.source, err.value.row, err.value.column) == ("order.txt", 2, column)


def test_order_empty() -> None:
    with pytest.raises(SourceFormatError, match=r"order\.txt, row 1: file is empty"):
        parse_icd10cm_order(b"", "order.txt")


# --- real 2026 files ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real(mirror: Path) -> pl.DataFrame:
    return parse_icd10cm_tabular((mirror / XML).read_bytes(), XML)


def code_list_leaves(text: str) -> set[str]:
    """Leaves of the flat list: entries (not chapters/blocks) not extended by the next entry."""
    entries = [e.strip() for e in text.splitlines() if e.strip()]
    leaves = set()
    for i, entry in enumerate(entries):
        if entry.isdigit() or "-" in entry:
            continue
        nxt = entries[i + 1] if i + 1 < len(entries) else ""
        if not nxt.startswith(entry):
            leaves.add(entry)
    return leaves


def test_real_conforms(real: pl.DataFrame) -> None:
    table = conform(real, "icd10cm", XML)
    assert table.num_rows == REAL_ROWS
    counts = dict(real.group_by("kind").len().iter_rows())
    assert counts["chapter"] == 22 and counts["block"] == 297


def test_billable_equals_code_list_leaves(real: pl.DataFrame, mirror: Path) -> None:
    leaves = code_list_leaves((mirror / CODE_LIST).read_text())
    assert len(leaves) == REAL_BILLABLE
    billable = real.filter("billable")["code"].str.replace(".", "", literal=True)
    assert billable.len() == REAL_BILLABLE
    assert set(billable) == leaves
    # every code-list entry that is not a chapter/block is a node of the parsed tree
    entries = {e.strip() for e in (mirror / CODE_LIST).read_text().splitlines()}
    codes = {e for e in entries if e and not e.isdigit() and "-" not in e}
    tree = real.filter(~pl.col("kind").is_in(["chapter", "block"]))["code"]
    assert set(tree.str.replace(".", "", literal=True)) == codes


MUST_BILL = ["E11.9", "E11.22", "I12.9", "N18.31", "S93.401A", "S52.521A", "S82.64XA",
             "T63.441A", "S01.81XA", "W19.XXXA", "Z86.0100", "M54.50", "S06.0X0A", "T78.40XA",
             "S01.81XS", "S93.402D", "W01.0XXA", "I10", "U07.1", "Z00.00", "H66.91", "M17.11"]
NOT_BILL = ["E11", "I50", "J45", "N18.3", "M54.5", "R10.3", "Z86.010", "S52.52", "S93.401",
            "W19", "S52.521"]


def test_domain_billable_codes(real: pl.DataFrame) -> None:
    flags = dict(real.select("code", "billable").iter_rows())
    assert {c: flags.get(c) for c in MUST_BILL} == dict.fromkeys(MUST_BILL, True)
    assert {c: flags.get(c) for c in NOT_BILL} == dict.fromkeys(NOT_BILL, False)
    assert "S06.1X7D" not in flags and "S06.1X7A" in flags


def test_real_descriptions_and_tree(real: pl.DataFrame) -> None:
    assert row(real, "E11.9")["description"] == "Type 2 diabetes mellitus without complications"
    e11 = row(real, "E11")
    assert (e11["kind"], e11["block"], e11["chapter"], e11["parent"]) \
        == ("category", "E08-E13", "4", "E08-E13")
    assert row(real, "W19.XXXA")["description"] == "Unspecified fall, initial encounter"
    assert "(S39.012" in row(real, "M54.5")["excludes1"]
    # every non-chapter row's parent exists
    parents = set(real["parent"].drop_nulls())
    assert parents <= set(real["code"])


def test_real_order_excerpt_agrees_with_xml(real: pl.DataFrame, mirror: Path) -> None:
    order = parse_icd10cm_order((mirror / ORDER_EXCERPT).read_bytes(), ORDER_EXCERPT)
    assert order.height == 100
    joined = order.join(real, on="code", how="left")
    assert joined["description"].null_count() == 0
    mismatch = joined.filter((pl.col("billable") != pl.col("billable_right"))
                             | (pl.col("long_description") != pl.col("description")))
    assert mismatch.height == 0, mismatch.select("code", "long_description", "description")


# --- coder's notes kept per node (bundle format 2) ---------------------------------------------

@pytest.fixture(scope="module")
def notes(fixtures: Path) -> pl.DataFrame:
    data = (fixtures / "icd10cm" / "tabular_notes.xml").read_bytes()
    return parse_icd10cm_tabular(data, "tabular_notes.xml")


def test_inclusion_terms_and_instructions_are_kept_per_node(notes: pl.DataFrame) -> None:
    conform(notes, "icd10cm", "tabular_notes.xml")  # the bundle schema holds every new column
    assert row(notes, "J02.0")["inclusion_terms"].split("\n") == [
        "Septic pharyngitis", "Streptococcal sore throat"]
    assert row(notes, "J02.0")["excludes2"] == "scarlet fever (A38.-)"
    assert row(notes, "J02")["inclusion_terms"] == "acute sore throat"  # not pushed down
    n18 = row(notes, "N18")
    assert n18["code_first"].split("\n")[1].startswith("diabetic chronic kidney disease (E08.22")
    assert n18["use_additional_code"].endswith("kidney transplant status (Z94.0)")
    assert row(notes, "N18.1")["code_first"] is None
    chapter = row(notes, "10")
    assert chapter["notes"].startswith("When a respiratory condition")
    assert "Z77.22" in chapter["use_additional_code"]


def test_seventh_character_definitions_at_their_node(notes: pl.DataFrame) -> None:
    s52 = row(notes, "S52")
    assert s52["seventh_characters"].split("\n") == [
        "A: initial encounter for closed fracture",
        "B: initial encounter for open fracture type I or II "
        "(also: initial encounter for open fracture NOS)",
        "D: subsequent encounter for closed fracture with routine healing",
        "S: sequela"]
    assert s52["code_also"] == "any associated open wound"
    assert s52["notes"].split("\n") == [
        "A fracture not indicated as open or closed should be coded to closed",
        "The appropriate 7th character is to be added to all codes from category S52"]
    # the expansion uses the extension text only, and expanded rows inherit (carry nothing)
    b = row(notes, "S52.501B")
    assert b["description"] == ("Unspecified fracture of the lower end of right radius, "
                                "initial encounter for open fracture type I or II")
    assert all(b[c] is None for c in ("seventh_characters", "notes", "inclusion_terms"))
    assert row(notes, "S52.5")["inclusion_terms"] == "Fracture of distal end of radius"


def test_real_tabular_notes(mirror: Path) -> None:
    df = parse_icd10cm_tabular((mirror / XML).read_bytes(), XML)
    assert df["inclusion_terms"].drop_nulls().len() == 6_809  # every <inclusionTerm> block
    assert df["seventh_characters"].drop_nulls().len() == 508  # every <sevenChrDef>
    assert df["code_first"].drop_nulls().len() == 363
    assert "Streptococcal sore throat" in row(df, "J02.0")["inclusion_terms"]
    assert row(df, "H66.9")["inclusion_terms"].split("\n")[1] == "Acute otitis media NOS"
    assert row(df, "E11.22")["use_additional_code"].startswith("code to identify stage")
    s06 = row(df, "S06")
    assert s06["seventh_characters"] == "A: initial encounter\nD: subsequent encounter\nS: sequela"
    assert "7th characters D and S do not apply" in s06["notes"]


# --- External Cause Index, Neoplasm Table, Table of Drugs and Chemicals ------------------------

def _index(fixtures: Path, name: str) -> bytes:
    return (fixtures / "icd10cm" / name).read_bytes()


def by_path(df: pl.DataFrame, path: str) -> dict:
    rows = df.filter(pl.col("path") == path).to_dicts()
    assert len(rows) == 1, f"{path}: {len(rows)} rows"
    return rows[0]


def test_eindex_fixture(fixtures: Path) -> None:
    df = parse_eindex(_index(fixtures, "eindex_small.xml"), "eindex_small.xml")
    conform(df, "icd10cm_eindex", "eindex_small.xml")
    assert df["seq"].to_list() == list(range(1, df.height + 1))
    acc = by_path(df, "Accident")
    assert (acc["title"], acc["nemod"], acc["code"], acc["level"], acc["letter"]) == (
        "Accident", "(to)", "X58", 0, "A")
    air = by_path(df, "Accident, aircraft")
    assert (air["nemod"], air["see_also"], air["code"]) == (
        "(in transit) (powered)", "Accident, transport, aircraft", None)
    assert by_path(df, "Accident, aircraft, due to, caused by cataclysm")["see"] == \
        "Forces of nature, by type"
    assert by_path(df, "Accident, boat, boating, striking swimmer, powered")["code"] == "V94.11"
    assert by_path(df, "Bite, bitten by, alligator")["code"] == "W58.01"
    # text on both sides of a nemod stays in the title; <subcat> is a code
    same = by_path(df, "Fall, falling, on same level NEC")
    assert (same["title"], same["nemod"], same["code"]) == ("on same level NEC", "(from)",
                                                            "W18.30")
    # after a deeper branch the path is cut back to the new term's level
    assert by_path(df, "Fall, falling, on same level NEC, due to, ice or snow")["code"] == \
        "W00.0"
    war = by_path(df, "War operations")
    assert (war["see_category"], war["code"]) == ("Y36", None)
    assert by_path(df, "War operations, explosion")["code"] == "Y36.20-"


def test_neoplasm_fixture(fixtures: Path) -> None:
    df = parse_neoplasm_table(_index(fixtures, "neoplasm_small.xml"), "neoplasm_small.xml")
    conform(df, "icd10cm_neoplasm", "neoplasm_small.xml")
    lung = by_path(df, "Neoplasm, neoplastic, lung")
    assert [lung[c] for c in code_columns("icd10cm_neoplasm")] == [
        "C34.9-", "C78.0-", "D02.2-", "D14.3-", "D38.1", "D49.1"]
    colon = by_path(df, "Neoplasm, neoplastic, colon")
    assert (colon["malignant_primary"], colon["benign"], colon["see_also"]) == (
        "C18.9", None, "Neoplasm, intestine, large")  # "-" cells are null
    skin = by_path(df, "Neoplasm, neoplastic, skin")
    assert (skin["see"], skin["nemod"], skin["malignant_primary"]) == (
        "Neoplasm, skin, by site", "(nonmelanoma)", None)
    assert by_path(df, "Neoplasm, neoplastic, lung, upper lobe")["level"] == 2


def test_drug_fixture(fixtures: Path) -> None:
    df = parse_drug_table(_index(fixtures, "drug_small.xml"), "drug_small.xml")
    conform(df, "icd10cm_drug", "drug_small.xml")
    acet = by_path(df, "Acetaminophen")
    assert [acet[c] for c in code_columns("icd10cm_drug")] == [
        "T39.1X1", "T39.1X2", "T39.1X3", "T39.1X4", "T39.1X5", "T39.1X6"]
    ethyl = by_path(df, "Alcohol, ethyl")
    assert (ethyl["nemod"], ethyl["poisoning_accidental"], ethyl["adverse_effect"]) == (
        "(beverage)", "T51.0X1", None)  # "--": no adverse-effect code for a non-drug
    assert by_path(df, "Aspirin")["see"] == "Acetylsalicylic acid"
    assert by_path(df, "2-propanol")["letter"] == "#"


def test_index_bad_inputs_name_file_and_line(fixtures: Path) -> None:
    drug = _index(fixtures, "drug_small.xml")
    with pytest.raises(SourceFormatError, match=r"d\.xml.*column headings are not the neoplasm"):
        parse_neoplasm_table(drug, "d.xml")
    with pytest.raises(SourceFormatError, match=r"d\.xml.*no table columns"):
        parse_eindex(drug, "d.xml")
    with pytest.raises(SourceFormatError, match=r"e\.xml.*column headings"):
        parse_drug_table(_index(fixtures, "eindex_small.xml"), "e.xml")
    bad = drug.replace(b"<cell col=\"2\">T39.1X1</cell>", b"<cell col=\"2\">T39.1X 1</cell>")
    with pytest.raises(SourceFormatError) as err:
        parse_drug_table(bad, "bad.xml")
    assert (err.value.row, err.value.column) == (27, "cell col=2")  # the <mainTerm>
    assert "malformed ICD-10-CM code" in str(err.value) and "T39.1X 1" in str(err.value)
    skip = _index(fixtures, "eindex_small.xml").replace(b'<term level="3">', b'<term level="4">',
                                                        1)
    with pytest.raises(SourceFormatError, match=r"s\.xml, row 2\d.*term level does not follow"):
        parse_eindex(skip, "s.xml")
    with pytest.raises(SourceFormatError, match=r"t\.xml, row 3.*malformed XML"):
        parse_eindex(b"<ICD10CM.index>\n<letter><title>A</title>\n<mainTerm>", "t.xml")
    with pytest.raises(SourceFormatError, match=r"x\.xml, row 1: file is empty"):
        parse_drug_table(b"", "x.xml")
    no_title = _index(fixtures, "eindex_small.xml").replace(b"<title>dog</title>", b"")
    with pytest.raises(SourceFormatError, match=r"<term> has no <title>"):
        parse_eindex(no_title, "n.xml")


def test_unresolved_codes() -> None:
    tab = {"W58", "W58.0", "W58.01", "C34", "C34.9", "C34.90", "T39.1X1"}
    assert unresolved_codes(["W58.01", "C34.9-", "C34.-", "T39.1X1"], tab) == []
    assert unresolved_codes(["W58.02", "C35.-", "D49.1"], tab) == ["W58.02", "C35.-", "D49.1"]


REAL_INDEX = {"icd10cm_eindex": ("icd10cm/icd-10-cm-eindex-2025.xml", parse_eindex, 8_064, 6_661),
              "icd10cm_neoplasm": ("icd10cm/icd-10-cm-neoplasm-2025.xml", parse_neoplasm_table,
                                   1_939, 9_018),
              "icd10cm_drug": ("icd10cm/icd-10-cm-drug-2025.xml", parse_drug_table, 7_428,
                               40_026)}


@pytest.mark.parametrize("name", sorted(REAL_INDEX))
def test_real_index_files(mirror: Path, name: str) -> None:
    from pipelines.lib.checks import table_problems

    rel, parse, rows, codes = REAL_INDEX[name]
    df = parse((mirror / rel).read_bytes(), rel)
    # counts from SOURCES.md section 9b: mainTerms + terms, code elements / code cells
    assert df.height == rows
    found = [c for col in code_columns(name) for c in df[col].drop_nulls().to_list()]
    assert len(found) == codes
    assert not any(table_problems(conform(df, name, rel), name).values())
    tab = parse_icd10cm_tabular((mirror / XML).read_bytes(), XML)
    assert unresolved_codes(found, set(tab["code"])) == []


# --- the committed bundle (format 2) ------------------------------------------------------------

def test_committed_bundle_holds_the_index_tables_and_notes() -> None:
    from clarus_env.reference import REPO_BUNDLES, ReferenceBundle

    ref = ReferenceBundle(REPO_BUNDLES / "2026C")
    m = ref.manifest
    assert m["format_version"] == 2 and "inclusion_terms" in m["format_changes"]["2"]
    for name, rows in (("icd10cm_eindex", 8_064), ("icd10cm_neoplasm", 1_939),
                       ("icd10cm_drug", 7_428)):
        out = m["outputs"][name]
        assert (out["rows"], out["releases"], out["built_from"]) == (rows, ["FY2025"], [name])
        assert ref.table(name).num_rows == rows
    inputs = {i["key"]: i for i in m["inputs"]}
    assert inputs["icd10cm_eindex"]["sha256"] == \
        "41fa87021d75527d740e120171efe84d995a852d9fd2b76524f483489b59cd23"
    j020 = ref.icd10cm("J02.0")
    assert "Streptococcal sore throat" in j020["inclusion_terms"].split("\n")
    assert ref.icd10cm("S52")["seventh_characters"].startswith("A: initial encounter for closed")
    assert "(E08.22, E09.22, E10.22, E11.22, E13.22)" in ref.icd10cm("N18")["code_first"]
