"""The medical-coding catalog: authored conditions, external causes and procedures (JSON).

The catalog is data, not code, so that coders can review it and so that every code in it can be
checked mechanically against the reference bundle: :func:`catalog_problems` returns a list of
human-readable problems (empty on a good catalog) instead of raising, because a test wants to see
all of them at once.

A condition produces its codes either from ``codes`` or from the chosen entry of ``variants``
(laterality, CKD stage, with/without exacerbation, ...). Injury conditions carry ``seventh``: their
codes are stems that get the encounter character (A initial, D subsequent, S sequela) appended,
padded with the placeholder ``X`` to six characters first, as ICD-10-CM I.A.4-5 requires.
External-cause stems get the same 7th character as the injury they accompany.

A plain condition may carry ``synonym_codes``: a synonym whose words the ICD-10-CM tabular gives
to another code ("bronchitis" is J40, not the J20.9 of "acute bronchitis") emits that code
instead, with the tabular reason in ``why``. :mod:`.tabular_check` tests every synonym against the
tabular's titles, inclusion terms and Excludes1 notes, so a row whose words belong to another code
fails the build.

Acceptable alternatives (what a competent coder may defensibly submit instead) are data too:
``alternatives`` (per expected code, optionally only when one of ``phrases`` is in the note),
``sequence_free`` (codes any of which may be listed first), ``digit_modifiers`` (F/T modifiers
that stand for the side on a digit procedure), and on procedures ``clia_waived`` (QW optional),
``optional_supply`` (a drug supply the note documents by dose), ``bilateral_without_50``
(PPRRVU bilateral indicator 2: the code is reported once, with or without 50) and ``medicare``
(the HCPCS code Medicare requires instead of the CPT code).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

CATALOG_DIR = Path(__file__).resolve().parent / "catalog"

CONDITION_KINDS = frozenset(
    {
        "symptom",
        "acute",
        "minor",
        "chronic",
        "pregnancy",
        "encounter",
        "history",
        "status",
        "preventive",
        "injury",
        "sequela",
    }
)
PROBLEMS = frozenset(
    {
        "minor",
        "acute",
        "acute_systemic",
        "chronic_stable",
        "chronic_exacerbation",
        "severe",
        "history",
        "status",
        "preventive",
    }
)
PROCEDURE_KINDS = frozenset(
    {"em_new", "em_est", "preventive_new", "preventive_est", "procedure", "test", "vaccine"}
)
SEXES = frozenset({"any", "female", "male"})
SIDES = ("right", "left", "bilateral")
SEVENTH = frozenset({"A", "D", "S"})
MODIFIERS = frozenset({"RT", "LT", "50", "25"})
DIGIT_MODIFIERS = frozenset(
    {"FA", "TA", *(f"F{i}" for i in range(10)), *(f"T{i}" for i in range(10))}
)
BAD_RVU_STATUS = frozenset({"D", "I"})  # deleted / not valid for Medicare


def with_seventh(stem: str, char: str) -> str:
    """``S93.401`` + ``A`` -> ``S93.401A``; shorter stems (``W19``) are padded with X to 6."""
    raw = stem.replace(".", "").upper()
    raw = raw.ljust(6, "X") + char
    return f"{raw[:3]}.{raw[3:]}"


@dataclass(frozen=True)
class Catalog:
    conditions: list[dict[str, Any]]
    external_causes: list[dict[str, Any]]
    procedures: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]] = field(repr=False)
    causes_by_id: dict[str, dict[str, Any]] = field(repr=False)
    procedures_by_id: dict[str, dict[str, Any]] = field(repr=False)

    def variants(self, condition: dict[str, Any]) -> list[dict[str, Any]]:
        """The condition's variants; a plain condition has one implicit variant (built once
        per condition and its codes list: cases ask for it several times each)."""
        got = condition.get("variants")
        if got:
            return got
        got = _IMPLICIT.get(condition["id"])
        if got is None or got[0]["codes"] is not condition["codes"]:
            got = _IMPLICIT[condition["id"]] = [
                {"id": "", "phrases": [""], "codes": condition["codes"]}]
        return got

    def codes_for(
        self,
        condition: dict[str, Any],
        variant: dict[str, Any],
        seventh: str | None,
        synonym: str | None = None,
    ) -> list[str]:
        """The codes one (condition, variant, encounter, synonym) produces, in sequencing order."""
        codes = list(variant["codes"])
        special = condition.get("synonym_codes", {}).get(synonym or "")
        if special:
            codes = list(special["codes"])
        if condition.get("seventh"):
            if seventh is None:
                raise ValueError(f"{condition['id']} needs a 7th character")
            return [with_seventh(c, seventh) for c in codes]
        return codes

    def all_icd10_codes(self) -> dict[str, list[str]]:
        """Every ICD-10-CM code the catalog can emit -> the ids that emit it (for validation)."""
        out: dict[str, list[str]] = {}
        for cond in self.conditions:
            chars = cond.get("seventh") or [None]
            for v in self.variants(cond):
                for ch in chars:
                    for syn in [None, *cond.get("synonym_codes", {})]:
                        for code in self.codes_for(cond, v, ch, syn):
                            out.setdefault(code, []).append(cond["id"])
            for alt in cond.get("alternatives", []):
                for code in alt["accept"]:
                    out.setdefault(code, []).append(cond["id"] + " (alternative)")
            for cid in cond.get("external_causes", []):
                cause = self.causes_by_id.get(cid)
                if cause:
                    for ch in chars:
                        out.setdefault(with_seventh(cause["stem"], ch or "A"), []).append(cid)
                        for alt in cause.get("alternatives", ()):
                            for stem in alt["accept"]:
                                out.setdefault(with_seventh(stem, ch or "A"), []).append(
                                    cid + " (alternative)")
        return out


_IMPLICIT: dict[str, list[dict[str, Any]]] = {}


def _read(name: str) -> dict[str, Any]:
    return json.loads((CATALOG_DIR / name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """Parse both JSON files once per process (the generator must not re-read them per case)."""
    cond = _read("conditions.json")
    proc = _read("procedures.json")
    conditions = cond["conditions"]
    causes = cond["external_causes"]
    procedures = proc["procedures"]
    return Catalog(
        conditions=conditions,
        external_causes=causes,
        procedures=procedures,
        by_id={c["id"]: c for c in conditions},
        causes_by_id={c["id"]: c for c in causes},
        procedures_by_id={p["id"]: p for p in procedures},
    )


def _structure_problems(cat: Catalog) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for c in cat.conditions:
        cid = c.get("id", "?")
        if cid in seen:
            out.append(f"condition {cid}: duplicate id")
        seen.add(cid)
        for key in (
            "name",
            "kind",
            "synonyms",
            "findings",
            "rule",
            "sex",
            "age",
            "groups",
            "problem",
            "complaints",
        ):
            if not c.get(key):
                out.append(f"condition {cid}: missing {key}")
        if ("codes" in c) == ("variants" in c):
            out.append(f"condition {cid}: needs exactly one of codes/variants")
        if c.get("kind") not in CONDITION_KINDS:
            out.append(f"condition {cid}: unknown kind {c.get('kind')!r}")
        if c.get("problem") not in PROBLEMS:
            out.append(f"condition {cid}: unknown problem {c.get('problem')!r}")
        if c.get("sex") not in SEXES:
            out.append(f"condition {cid}: unknown sex {c.get('sex')!r}")
        age = c.get("age") or [0, -1]
        if not (len(age) == 2 and 0 <= age[0] <= age[1] <= 120):
            out.append(f"condition {cid}: bad age range {age}")
        variants = cat.variants(c)
        sided = [v for v in variants if "side" in v]
        if sided and len(sided) != len(variants):
            out.append(f"condition {cid}: some variants have a side and some do not")
        for v in variants:
            if not v.get("codes") or not v.get("phrases"):
                out.append(f"condition {cid}/{v.get('id')}: variant needs codes and phrases")
            if v.get("side") not in (None, *SIDES):
                out.append(f"condition {cid}/{v.get('id')}: unknown side {v.get('side')!r}")
            if v.get("problem") not in (None, *PROBLEMS):
                out.append(f"condition {cid}/{v.get('id')}: unknown problem {v.get('problem')!r}")
        for s in c.get("synonyms", []):
            if "{side}" in s and not sided:
                out.append(f"condition {cid}: synonym {s!r} has {{side}} but no sided variants")
            if "{v}" in s and "variants" not in c:
                out.append(f"condition {cid}: synonym {s!r} has {{v}} but no variants")
        if sided and not all("{side}" in s for s in c["synonyms"]):
            out.append(f"condition {cid}: every synonym of a sided condition must name the side")
        if "variants" in c and not sided and not all("{v}" in s for s in c["synonyms"]):
            out.append(f"condition {cid}: every synonym of a variant condition must carry {{v}}")
        for syn, spec in c.get("synonym_codes", {}).items():
            if syn not in c.get("synonyms", []):
                out.append(f"condition {cid}: synonym_codes names {syn!r}, not a synonym")
            if "variants" in c or c.get("seventh") or c.get("kind") == "symptom":
                # a symptom's words are drawn again for the CC, HPI and negations: every
                # synonym of a symptom must carry the same code
                out.append(f"condition {cid}: synonym_codes only on plain, non-symptom conditions")
            if not spec.get("codes") or not spec.get("why"):
                out.append(f"condition {cid}: synonym_codes[{syn!r}] needs codes and why")
        for syn in c.get("tabular_ok", {}):
            if syn not in c.get("synonyms", []):
                out.append(f"condition {cid}: tabular_ok names {syn!r}, not a synonym")
        emitted = {x for v in variants for x in v.get("codes", [])}
        for alt in c.get("alternatives", []):
            if alt.get("code") not in emitted or not alt.get("accept") or not alt.get("why"):
                out.append(f"condition {cid}: an alternative needs an emitted code, accept, why")
            for ph in alt.get("phrases", []):
                if ph not in c.get("synonyms", []):
                    out.append(f"condition {cid}: alternative phrase {ph!r} is not a synonym")
        for code in c.get("sequence_free", []):
            if not all(code in v.get("codes", []) for v in variants):
                out.append(f"condition {cid}: sequence_free {code} not emitted by every variant")
        for side, mod in c.get("digit_modifiers", {}).items():
            if side not in SIDES or mod not in DIGIT_MODIFIERS:
                out.append(f"condition {cid}: bad digit modifier {side}->{mod}")
        for ch in c.get("seventh", []):
            if ch not in SEVENTH:
                out.append(f"condition {cid}: unknown 7th character {ch!r}")
        if c.get("kind") == "injury" and not c.get("seventh"):
            out.append(f"condition {cid}: an injury needs its 7th characters")
        for sid in c.get("integral", []):
            if cat.by_id.get(sid, {}).get("kind") != "symptom":
                out.append(f"condition {cid}: integral {sid!r} is not a symptom condition")
        unc = c.get("uncertain")
        if unc:
            if not unc.get("terms") or not unc.get("symptoms"):
                out.append(f"condition {cid}: uncertain needs terms and symptoms")
            for sid in unc.get("symptoms", []):
                if cat.by_id.get(sid, {}).get("kind") != "symptom":
                    out.append(
                        f"condition {cid}: uncertain symptom {sid!r} is not a symptom condition"
                    )
        n = c.get("illnesses")
        if n is not None and (not isinstance(n, int) or n < 2 or c.get("kind") != "chronic"):
            out.append(f"condition {cid}: illnesses counts the 2+ chronic diseases a row names")
        for rid in c.get("requires_any", []):
            if rid not in cat.by_id:
                out.append(f"condition {cid}: requires unknown condition {rid!r}")
        for xid in c.get("external_causes", []):
            if xid not in cat.causes_by_id:
                out.append(f"condition {cid}: unknown external cause {xid!r}")
        for pid in c.get("procedures", []):
            p = cat.procedures_by_id.get(pid)
            if p is None:
                out.append(f"condition {cid}: unknown procedure {pid!r}")
                continue
            if max(age[0], p["age"][0]) > min(age[1], p["age"][1]):
                out.append(f"condition {cid}: procedure {pid} age range does not overlap")
            if "any" not in (p["sex"], c.get("sex")) and p["sex"] != c.get("sex"):
                out.append(f"condition {cid}: procedure {pid} sex {p['sex']} conflicts")
            mods = p.get("laterality_modifiers")
            if mods:
                if not sided or not c.get("site"):
                    out.append(f"condition {cid}: procedure {pid} needs a side and a site")
                if any(v.get("side") == "bilateral" for v in sided) and "50" not in mods:
                    out.append(f"condition {cid}: bilateral variant but {pid} has no modifier 50")
    for cause in cat.external_causes:
        for alt in cause.get("alternatives", []):
            if not alt.get("accept") or not alt.get("why") or not set(
                    alt.get("phrases", [])) <= set(cause["phrases"]):
                out.append(f"external cause {cause['id']}: an alternative needs accept, why and "
                           "phrases of its own")
    pseen: set[str] = set()
    for p in cat.procedures:
        pid = p.get("id", "?")
        if pid in pseen:
            out.append(f"procedure {pid}: duplicate id")
        pseen.add(pid)
        if p.get("kind") not in PROCEDURE_KINDS:
            out.append(f"procedure {pid}: unknown kind {p.get('kind')!r}")
        if p.get("sex") not in SEXES:
            out.append(f"procedure {pid}: unknown sex {p.get('sex')!r}")
        if not p.get("synonyms"):
            out.append(f"procedure {pid}: no synonyms")
        age = p.get("age") or [0, -1]
        if not (len(age) == 2 and 0 <= age[0] <= age[1] <= 120):
            out.append(f"procedure {pid}: bad age range {age}")
        for m in p.get("laterality_modifiers", []):
            if m not in MODIFIERS:
                out.append(f"procedure {pid}: unknown modifier {m!r}")
        if p.get("bilateral_without_50") and "50" not in p.get("laterality_modifiers", []):
            out.append(f"procedure {pid}: bilateral_without_50 but no modifier 50")
        supply = p.get("optional_supply")
        if supply and not (supply.get("code") and supply.get("when") and supply.get("why")):
            out.append(f"procedure {pid}: optional_supply needs code, when and why")
    return out


def catalog_problems(ref: Any, catalog: Catalog | None = None) -> list[str]:
    """Everything wrong with the catalog against ``ref``: [] means every code is usable.

    Checks that every ICD-10-CM code any condition, variant, 7th character or external cause can
    produce is a billable leaf, that every CPT exists in PPRRVU with a status other than D
    (deleted) or I (not valid), and that ids, references and age/sex constraints are consistent.
    """
    cat = catalog or load_catalog()
    out = _structure_problems(cat)
    for code, owners in sorted(cat.all_icd10_codes().items()):
        node = ref.icd10cm(code)
        if node is None:
            out.append(f"ICD-10-CM {code} ({', '.join(owners)}): not in the code set")
        elif not node["billable"]:
            out.append(f"ICD-10-CM {code} ({', '.join(owners)}): not billable ({node['kind']})")
        elif node["code"] != code:
            out.append(f"ICD-10-CM {code} ({', '.join(owners)}): stored as {node['code']}")
    for p in cat.procedures:
        extra = [x for x in (p.get("medicare"), (p.get("optional_supply") or {}).get("code")) if x]
        for code in [p["cpt"], *extra]:
            row = ref.rvu(code)
            if row is None:
                out.append(f"CPT {code} ({p['id']}): not in PPRRVU")
            elif row["status"] in BAD_RVU_STATUS:
                out.append(f"CPT {code} ({p['id']}): PPRRVU status {row['status']}")
        if p.get("bilateral_without_50"):
            row = ref.rvu(p["cpt"])
            if row is not None and row.get("bilat_surg") != "2":
                out.append(f"CPT {p['cpt']} ({p['id']}): bilateral_without_50 but PPRRVU "
                           f"bilateral indicator {row.get('bilat_surg')!r} (needs 2)")
    return out


def procedure_statuses(ref: Any, catalog: Catalog | None = None) -> dict[str, str]:
    """CPT -> PPRRVU status, so reports can show which codes are payable (A) and which are not."""
    cat = catalog or load_catalog()
    out = {}
    for p in cat.procedures:
        row = ref.rvu(p["cpt"])
        out[p["cpt"]] = row["status"] if row else "?"
    return out
