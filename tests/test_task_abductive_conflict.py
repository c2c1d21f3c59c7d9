"""abductive_conflict: the oracle passes everything on dev and test, every check can fail in
every branch, the TRAP fires exactly when it should, outcomes are balanced and follow from
the NCCI table *and* the provider's notes, dev/test pairs never occur in train, no
claim-level rule predicts the outcome, citations are graded for precision, the first filing
is what counts, details never reveal an expected value, the distractor looks like any
record, amounts equal the MPFS formula and the plan terms, compiling is deterministic, and
the baselines order as they should (random < heuristic < oracle)."""

from __future__ import annotations

import collections
import copy
import datetime as dt
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest

from clarus_env.agents.random_agent import RandomAgent
from clarus_env.env import ClarusEnv
from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario, content_hash
from clarus_env.splits import seeds
from clarus_env.tasks import get_task
from clarus_env.tasks.abductive_conflict import catalog as cat
from clarus_env.tasks.abductive_conflict import generator as gen
from clarus_env.tasks.abductive_conflict.heuristic import (
    HeuristicAgent,
    _anatomy,
)
from clarus_env.tasks.common import cents, cost_share, describe, dollars, pct_of, plan_terms

TASK = "abductive_conflict"
DEV = list(seeds("dev"))
TEST = list(seeds("test"))
TEST_SAMPLE = TEST[::5]
OUTCOME_FIELDS = ("finding", "responsible_party", "resolution_type", "appeal_reason")


@pytest.fixture(scope="module")
def ref() -> Any:
    return open_reference()


@pytest.fixture(scope="module")
def dev(ref: Any) -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, ref) for s in DEV]


@pytest.fixture(scope="module")
def test_split(ref: Any) -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, ref) for s in TEST]


@pytest.fixture(scope="module")
def train(ref: Any) -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, ref) for s in seeds("train")]


@pytest.fixture(scope="module")
def env(ref: Any) -> ClarusEnv:
    return ClarusEnv(TASK, reference=ref)


def by_branch(dev: list[dict[str, Any]], branch: str) -> dict[str, Any]:
    return next(s for s in dev if s["variant"]["branch"] == branch)


def play(env: ClarusEnv, scenario: dict[str, Any], actions: list[dict[str, Any]],
         pad: bool = False) -> dict[str, Any]:
    """Run a scripted trajectory to its end (close_case, or the budget when ``pad``)."""
    env.reset(scenario=copy.deepcopy(scenario))
    r = None
    for a in actions:
        r = env.step(a)
        if r.done:
            break
    while pad and (r is None or not r.done):
        r = env.step({"action_type": "write_audit_entry", "parameters": {"summary": "pad"}})
    assert r is not None and r.done, "trajectory did not end"
    return r.info["grade"]


def passed(grade: dict[str, Any]) -> dict[str, bool]:
    return {c["id"]: c["passed"] for c in grade["checks"]}


def oracle(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return get_task(TASK).oracle(scenario)


def drop(actions: list[dict[str, Any]], *names: str) -> list[dict[str, Any]]:
    return [a for a in actions if a["action_type"] not in names]


def edit(actions: list[dict[str, Any]], name: str, **params: Any) -> list[dict[str, Any]]:
    out = copy.deepcopy(actions)
    for a in out:
        if a["action_type"] == name:
            a["parameters"].update(params)
            a["parameters"] = {k: v for k, v in a["parameters"].items() if v is not None}
    return out


# -- the contract ----------------------------------------------------------------------------
def test_task_definition() -> None:
    t = get_task(TASK)
    assert t.n_checks == 22 and len({c.id for c in t.checks}) == 22
    assert "legitimate_denial" in t.findings
    assert t.cooldowns == {"check_regulatory_rule": 2} and 25 <= t.api_call_budget <= 35


@pytest.mark.parametrize("split_seeds", [DEV, TEST], ids=["dev", "test"])
def test_oracle_passes_every_check(ref: Any, env: ClarusEnv, split_seeds: list[int]) -> None:
    for seed in split_seeds:
        scenario = compile_scenario(TASK, seed, ref)
        env.reset(scenario=scenario)
        for a in oracle(scenario):
            r = env.step(a)
            assert r.observation.last_action_error is None, (seed, a, r.observation)
        grade = r.info["grade"]
        assert grade["passed"] == 22, (seed, [c for c in grade["checks"] if not c["passed"]])


# -- every check can fail ----------------------------------------------------------------------
def _failing(scenario: dict[str, Any]) -> dict[str, tuple[list[dict[str, Any]], bool]]:
    """check id -> (a trajectory that fails it, whether it must be padded to the budget)."""
    o = oracle(scenario)
    e = scenario["expected"]
    first = next(i for i, a in enumerate(o) if a["action_type"] == "fetch_claim_record")
    lookups = [a for a in o if a["action_type"] in ("lookup_procedure_code",
                                                    "check_regulatory_rule")]
    wrong_party = "patient" if e["responsible_party"] != "patient" else "insurer"
    wrong_type = "refund_request"
    paired = [a if a["action_type"] != "check_regulatory_rule" else
              {"action_type": "lookup_procedure_code",
               "parameters": {"code": e["paid_code"], "paired_code": e["denied_code"]}}
              for a in o]
    late_deadline = drop(o, "check_deadline")
    sub = next(i for i, a in enumerate(late_deadline) if a["action_type"] == "submit_resolution")
    late_deadline.insert(sub + 1, {"action_type": "check_deadline",
                                   "parameters": {"deadline_type": "internal_appeal"}})
    trap = [a for a in o if a not in lookups and a["action_type"] != "fetch_provider_record"]
    trap = edit(trap, "write_diagnosis", finding="legitimate_denial")
    unauth = o[1:first + 1] + o[:1] + o[first + 1:]
    return {
        "authenticated": (unauth, False),
        "eob_fetched": (drop(o, "fetch_eob"), False),
        "provider_record_fetched": (drop(o, "fetch_provider_record"), False),
        "code_looked_up": (drop(o, "lookup_procedure_code"), False),
        "ncci_rule_checked": (paired, False),
        "diagnosis_written": (drop(o, "write_diagnosis"), False),
        "draft_written": (drop(o, "draft_resolution", "submit_resolution"), False),
        "submitted": (drop(o, "submit_resolution"), False),
        "deadline_checked": (drop(o, "check_deadline"), False),
        "deadline_before_submit": (late_deadline, False),
        "patient_told": (edit(o, "send_patient_communication", message_type="status_update"),
                         False),
        "provider_notified": (drop(o, "notify_provider"), False),
        "audit_entry": (drop(o, "write_audit_entry"), False),
        "case_closed": (drop(o, "close_case"), True),
        "diagnosis_cites_two": (edit(o, "write_diagnosis",
                                     cited_artifacts=[e["provider_record_id"]]), False),
        "cites_provider_record": (edit(o, "write_diagnosis", cited_artifacts=[
            e["claim_record_id"], e["eob_id"], e["ncci_ref_id"]]), False),
        "cites_ncci_lookup": (edit(o, "write_diagnosis", cited_artifacts=[
            e["claim_record_id"], e["eob_id"], e["provider_record_id"]]), False),
        "trap_premature_legitimate_denial": (trap, False),
        "responsible_party_and_finding": (edit(o, "write_diagnosis",
                                               responsible_party=wrong_party), False),
        "resolution_type": (edit(o, "draft_resolution", resolution_type=wrong_type), False),
        "appeal_reason": ((edit(o, "draft_resolution", appeal_reason="medical_necessity")
                           if e["appeal_reason"] != "none" else
                           edit(o, "draft_resolution", resolution_type="appeal",
                                appeal_reason="modifier_bypass_documented")), False),
        "no_compliance_violation": (unauth, False),
    }


@pytest.mark.parametrize("branch", gen.BRANCHES)
def test_each_check_can_fail(dev: list[dict[str, Any]], env: ClarusEnv, branch: str) -> None:
    scenario = by_branch(dev, branch)
    cases = _failing(scenario)
    assert set(cases) == {c.id for c in get_task(TASK).checks}
    for cid, (actions, pad) in cases.items():
        grade = play(env, scenario, actions, pad=pad)
        result = passed(grade)
        assert not result[cid], (branch, cid, grade)
        detail = next(c["detail"] for c in grade["checks"] if c["id"] == cid)
        assert detail and "\n" not in detail


def test_appeal_reason_when_no_appeal_is_due(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    """Where nothing is due, the check wants no appeal filed AND the patient told why; a
    corrected claim must state the modifier it adds (``missing_modifier``), and neither an
    appeal nor a corrected claim without that reason passes."""
    for branch in ("a0", "a1m", "a1n"):
        scenario = by_branch(dev, branch)
        o = oracle(scenario)
        assert passed(play(env, scenario, o))["appeal_reason"]
        silent = drop(o, "send_patient_communication")
        assert not passed(play(env, scenario, silent))["appeal_reason"]
        nothing_filed = drop(o, "submit_resolution")
        assert not passed(play(env, scenario, nothing_filed))["appeal_reason"]
    scenario = by_branch(dev, "c")
    o = oracle(scenario)
    assert scenario["expected"]["appeal_reason"] == "missing_modifier"
    assert passed(play(env, scenario, o))["appeal_reason"]
    for change in ({"appeal_reason": None},
                   {"resolution_type": "appeal", "appeal_reason": "missing_modifier"},
                   {"appeal_reason": "modifier_bypass_documented"}):
        assert not passed(play(env, scenario, edit(o, "draft_resolution", **change)))[
            "appeal_reason"], change
    nothing_filed = drop(o, "submit_resolution")
    assert not passed(play(env, scenario, nothing_filed))["appeal_reason"]


def test_do_nothing_scores_almost_nothing(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    for branch in gen.BRANCHES:
        scenario = by_branch(dev, branch)
        result = passed(play(env, scenario, [{"action_type": "close_case", "parameters": {}}]))
        # closing an unworked case, or reaching no conclusion, earns nothing
        assert sorted(k for k, v in result.items() if v) == []


def test_rate_limited_rule_check(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    scenario = dev[0]
    e = scenario["expected"]
    rule = {"action_type": "check_regulatory_rule",
            "parameters": {"rule": "ncci_ptp", "code_1": e["paid_code"],
                           "code_2": e["denied_code"]}}
    env.reset(scenario=copy.deepcopy(scenario))
    env.step({"action_type": "authenticate_patient",
              "parameters": {"patient_id": scenario["case"]["patient_id"]}})
    assert env.step(rule).observation.last_action_result["found"] is True
    assert "rate limited" in env.step(rule).observation.last_action_error


# -- the TRAP -------------------------------------------------------------------------------------
def _trap_trajectory(scenario: dict[str, Any], finding: str, evidence: bool,
                     provider_record: bool = True, ncci: bool = True) -> list[dict[str, Any]]:
    e = scenario["expected"]
    case = scenario["case"]
    out = [{"action_type": "authenticate_patient",
            "parameters": {"patient_id": case["patient_id"]}},
           {"action_type": "fetch_claim_record", "parameters": {"claim_id": case["claim_id"]}},
           {"action_type": "fetch_eob", "parameters": {"claim_id": case["claim_id"]}}]
    if evidence and provider_record:
        out.append({"action_type": "fetch_provider_record",
                    "parameters": {"claim_id": case["claim_id"]}})
    if evidence and ncci:
        out.append({"action_type": "check_regulatory_rule",
                    "parameters": {"rule": "ncci_ptp", "code_1": e["denied_code"],
                                   "code_2": e["paid_code"]}})
    out.append({"action_type": "write_diagnosis",
                "parameters": {"responsible_party": "none", "finding": finding,
                               "cited_artifacts": [e["claim_record_id"], e["eob_id"]]}})
    # reading the evidence *after* concluding does not undo a premature conclusion
    out += [{"action_type": "fetch_provider_record",
             "parameters": {"claim_id": case["claim_id"]}},
            {"action_type": "lookup_procedure_code",
             "parameters": {"code": e["paid_code"], "paired_code": e["denied_code"]}},
            {"action_type": "close_case", "parameters": {}}]
    return out


@pytest.mark.parametrize("branch", gen.BRANCHES)
def test_trap_fires_exactly_when_it_should(dev: list[dict[str, Any]], env: ClarusEnv,
                                           branch: str) -> None:
    scenario = by_branch(dev, branch)
    other = "no_active_edit" if branch != "d" else "missing_modifier"
    trap = "trap_premature_legitimate_denial"
    cases = {
        ("legitimate_denial", True): True,   # concluded after consulting the evidence
        ("legitimate_denial", False): False,  # premature closure: the TRAP fires
        (other, True): True,
        (other, False): True,  # wrong or premature, but not the trapped conclusion
    }
    for (finding, evidence), ok in cases.items():
        grade = play(env, scenario, _trap_trajectory(scenario, finding, evidence))
        assert passed(grade)[trap] is ok, (branch, finding, evidence, grade["checks"])
    # half the evidence is not the evidence: each of the two sources is required
    for pr, nc in ((True, False), (False, True)):
        grade = play(env, scenario, _trap_trajectory(scenario, "legitimate_denial", True,
                                                     provider_record=pr, ncci=nc))
        assert not passed(grade)[trap]


def test_trap_does_not_reward_the_wrong_conclusion(dev: list[dict[str, Any]],
                                                   env: ClarusEnv) -> None:
    """A careful legitimate_denial on a wrongful denial passes the TRAP but not the outcome."""
    scenario = by_branch(dev, "b")
    o = oracle(scenario)
    o = edit(o, "write_diagnosis", finding="legitimate_denial", responsible_party="none")
    o = edit(o, "draft_resolution", resolution_type="no_action", appeal_reason=None)
    result = passed(play(env, scenario, o))
    assert result["trap_premature_legitimate_denial"]
    assert not result["responsible_party_and_finding"] and not result["resolution_type"]
    assert not result["appeal_reason"]


# -- outcomes vary and follow from the data ------------------------------------------------
@pytest.mark.parametrize("split", ["dev", "test"])
def test_outcome_balance(dev: list[dict[str, Any]], test_split: list[dict[str, Any]],
                         split: str) -> None:
    """No outcome field above 50% modal; every finding present (no active edit, which the
    lookup alone decides, is kept at about 3%: an edit-only agent beats the modal class by its
    share); every branch present; every split has the designed branch shares exactly."""
    scenarios = dev if split == "dev" else test_split
    for field in OUTCOME_FIELDS:
        counts = collections.Counter(s["expected"][field] for s in scenarios)
        assert counts.most_common(1)[0][1] / len(scenarios) <= 0.50, (field, counts)
    findings = collections.Counter(s["expected"]["finding"] for s in scenarios)
    assert set(findings) == set(gen.FINDINGS) and min(findings.values()) >= 0.03 * len(
        scenarios), findings
    assert set(collections.Counter(s["variant"]["branch"] for s in scenarios)) == set(
        gen.BRANCHES)
    for name in ("train", "dev", "test"):  # the designed shares, exactly
        split_seeds = list(seeds(name, TASK))
        got = collections.Counter(gen.branch_of(x, random.Random(0)) for x in split_seeds)
        for branch, per_mille in gen.SHARES:
            assert abs(got[branch] - per_mille * len(split_seeds) / 1000) <= 1, (name, got)
    # the edit decides d and a0 alone: d well under 5% (an edit-only agent passes the modal
    # share plus d's, the pass bar is the modal share + 0.05), a0 below d (legitimate denial
    # under half); the four indicator-1 cells are equal
    cells = collections.Counter(s["variant"]["branch"] for s in scenarios)
    assert cells["d"] <= 0.034 * len(scenarios) and cells["a0"] < cells["d"], cells
    assert cells["d"] + cells["a0"] >= 0.05 * len(scenarios), cells
    assert max(cells[b] for b in ("b", "c", "a1m", "a1n")) - min(
        cells[b] for b in ("b", "c", "a1m", "a1n")) <= 1


def _derive(scenario: dict[str, Any]) -> tuple[str, str, str, str]:
    """The outcome re-derived from what the agent can read: the NCCI lookup, the claim's
    modifiers and whether the notes document a distinct service."""
    ncci = next(r for r in scenario["references"] if r["type"] == "ncci_edit")["data"]
    claim = next(a for a in scenario["artifacts"] if a["type"] == "claim_record")["data"]
    mods = {m for line in claim["lines"] for m in line["modifiers"]} - {"GP"}
    distinct = scenario["variant"]["distinct_documented"]
    if not ncci["edit_exists"]:
        return "no_active_edit", "insurer", "appeal", "no_active_edit"
    if ncci["modifier_indicator"] == "0" or not distinct:
        return "legitimate_denial", "none", "no_action", "none"
    if mods:
        return "modifier_bypass_ignored", "insurer", "appeal", "modifier_bypass_documented"
    return "missing_modifier", "provider", "corrected_claim_request", "missing_modifier"


ASPECT_OF = {w: i for pair in gen.ASPECTS.values() for i, words in enumerate(pair)
             for w in words}
WHERE = re.compile(r"(\d+) (cm|mm) from the")


def _where(note: str) -> tuple[int | None, int | None]:
    """A skin note's aspect (0 or 1 of its site's two, whichever wording) and its distance
    from the landmark in mm."""
    aspect = next((i for w, i in ASPECT_OF.items() if f", {w}," in note), None)
    m = WHERE.search(note)
    return aspect, (int(m.group(1)) * (10 if m.group(2) == "cm" else 1)) if m else None


def _sites_distinct(provider: dict[str, Any]) -> bool:
    """An exact reading of two procedure notes (unlike the heuristic's rule of thumb): a
    median-nerve block is distinct only on the other hand; two lesions at one named site are
    distinct when their aspects or their distances from the site's landmark (in cm or mm)
    differ; otherwise the named sites decide."""
    # the procedure sentence (a remark on the other side may follow it)
    notes = [_spelled(n.split(": ", 1)[1].split(". ")[0]) for n in provider["notes"]
             if n.startswith("Line ")]
    if any("median nerve" in n for n in notes):
        sides = [{w for w in ("left", "right") if w in n.lower()} for n in notes]
        return sides[0] != sides[1]
    aspects = "|".join(re.escape(w) for w in sorted(ASPECT_OF, key=len, reverse=True))
    a, b = (re.sub(rf"\([^)]*\)|\d+ (cm|mm) from the [a-z ]+|, ({aspects}),", ",", n)
            for n in notes)
    if _anatomy(a) != _anatomy(b):
        return True
    wa, wb = _where(notes[0]), _where(notes[1])
    return bool(wa[1] and wb[1] and wa != wb)


def test_expected_follows_from_the_bundle_and_the_notes(ref: Any, dev: list[dict[str, Any]],
                                                        test_split: list[dict[str, Any]]
                                                        ) -> None:
    for s in dev + test_split:
        e, v = s["expected"], s["variant"]
        assert _derive(s) == tuple(e[f] for f in OUTCOME_FIELDS), s["seed"]
        c1, c2 = e["paid_code"], e["denied_code"]
        edit_row = ref.ncci_edit(c1, c2)
        if e["modifier_indicator"] == "none":
            assert edit_row is None and ref.ncci_edit(c2, c1) is None
            assert v["edit_status"] in ("deleted", "never_listed")
        else:  # an active edit: the paid code is its column 1, the denied code column 2
            assert edit_row["modifier_indicator"] == e["modifier_indicator"]
        for code in (c1, c2):  # no add-on (ZZZ) or major-surgery codes, priced in the office
            row = ref.rvu(code)
            assert row["status"] == "A" and not row["nonfac_na"]
            assert row["global_days"] in gen.PRICED_GLOBALS
        # two biopsies never: the second lesion would take an add-on code (11103/11105)
        assert not {c1, c2} <= {"11102", "11104", "11106"}
        # where the notes are machine-readable (sites, clock times), they say what the
        # variant says; office visits are read by a person, clock times are checked exactly
        # in test_domain_fixes (the heuristic reads them by a rule of thumb)
        provider = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        if v["family"] not in ("em", "therapy"):
            assert _sites_distinct(provider) is v["distinct_documented"], s["seed"]
        # the denial carries a real, current CARC and RARC
        denied = next(line for a in s["artifacts"] if a["type"] == "eob"
                      and not a["distractor"] for line in a["data"]["lines"]
                      if line["hcpcs"] == e["denied_code"])
        carc = denied["adjustments"][0]["carc"]
        assert denied["adjustments"][0]["group"] == "CO" and carc in ("97", "236")
        assert ref.carc(carc)["stop_date"] is None
        assert ref.rarc(denied["rarcs"][0]["code"])["stop_date"] is None
        for dx in next(a for a in s["artifacts"] if a["type"] == "claim_record")["data"][
                "diagnoses"]:
            assert ref.icd10cm(dx)["billable"]


def test_totals_stay_inside_the_paid_code(ref: Any) -> None:
    """Pairs defined by a total (two repairs of one class, two nail counts): the parts add up
    inside the paid code's range, so the paid code alone is the right coding and the
    denial is right."""
    for (paid, denied), total in cat.TOTALS.items():
        for k in range(300):
            rng = random.Random(k)
            a = gen._measure(paid, (paid, denied), rng)
            key = "size" if "size" in a else "n"
            b = gen._measure(denied, (paid, denied), rng, a[key])
            table = cat.SIZES if key == "size" else cat.COUNTS
            assert table[paid][0] <= a[key] <= table[paid][1]
            assert table[denied][0] <= b[key] <= table[denied][1]
            assert a[key] + b[key] <= total + 1e-9


def test_em_levels_fit_what_the_visit_managed() -> None:
    levels = collections.Counter(p.level for p in cat.PROBLEMS)
    assert set(levels) == {*cat.EM_LEVELS, "99211"}
    assert all(p.dx != "J06.9" or p.level == "99212" for p in cat.PROBLEMS)


def test_splits_are_pair_disjoint(ref: Any, dev: list[dict[str, Any]],
                                  test_split: list[dict[str, Any]],
                                  train: list[dict[str, Any]]) -> None:
    pools = gen._derived(ref)["pools"]
    def pairs(split: str) -> set[frozenset[str]]:
        return {frozenset(p) for fam in pools[split].values() for ps in fam.values()
                for p in ps}
    assert not pairs("train") & pairs("dev") and not pairs("train") & pairs("test")
    assert not pairs("dev") & pairs("test")
    seen = {frozenset(s["variant"]["pair"].split("/")) for s in train}
    for s in dev + test_split:
        assert frozenset(s["variant"]["pair"].split("/")) not in seen, s["seed"]
    # hundreds of real pairs across the families
    assert len(pairs("train")) >= 300


def test_no_claim_level_shortcut(dev: list[dict[str, Any]], test_split: list[dict[str, Any]],
                                 train: list[dict[str, Any]]) -> None:
    """Tables learned on train from what the claim shows (codes, modifiers, pointers,
    denial codes) predict no outcome field much better than the modal class."""
    def feats(s: dict[str, Any]) -> dict[str, Any]:
        e = s["expected"]
        claim = next(a for a in s["artifacts"] if a["type"] == "claim_record")["data"]
        lines = {line["hcpcs"]: line for line in claim["lines"]}
        mods = tuple(sorted(m for line in claim["lines"] for m in line["modifiers"]
                            if m != "GP"))
        adj = claim["adjudication"][-1] if claim["adjudication"][-1]["status"] == "denied" \
            else claim["adjudication"][0]
        return {"denied": e["denied_code"], "paid": e["paid_code"], "mods": bool(mods),
                "ptr": lines[e["paid_code"]]["diagnosis_pointers"]
                != lines[e["denied_code"]]["diagnosis_pointers"],
                "ndx": len(claim["diagnoses"]), "carc": (adj.get("carc"), adj.get("rarc"))}
    rules = {"denied": lambda f: f["denied"], "paid": lambda f: f["paid"],
             "mods": lambda f: f["mods"], "carc": lambda f: f["carc"],
             "mods+ptr+ndx": lambda f: (f["mods"], f["ptr"], f["ndx"]),
             "denied+mods": lambda f: (f["denied"], f["mods"])}
    for field in OUTCOME_FIELDS:
        modal = collections.Counter(s["expected"][field] for s in train).most_common(1)[0][0]
        for name, key in rules.items():
            table: dict[Any, collections.Counter[str]] = collections.defaultdict(
                collections.Counter)
            for s in train:
                table[key(feats(s))][s["expected"][field]] += 1
            for held in (dev, test_split):
                share = collections.Counter(s["expected"][field] for s in held).most_common(
                    1)[0][1] / len(held)
                hits = sum((table[key(feats(s))].most_common(1)[0][0]
                            if key(feats(s)) in table else modal) == s["expected"][field]
                           for s in held)
                assert hits / len(held) <= share + 0.12, (field, name, hits / len(held),
                                                          share)


def test_distractor_looks_like_any_record(dev: list[dict[str, Any]]) -> None:
    shape = re.compile(r"^(CR|EOB|PRV|PLAN)-\d{7}$")
    for s in dev:
        ids = [a["artifact_id"] for a in s["artifacts"]]
        assert all(shape.match(i) for i in ids), ids
        numbers = [i.split("-")[1] for i in ids]
        real = [a for a in s["artifacts"] if not a["distractor"]]
        fake = [a for a in s["artifacts"] if a["distractor"]]
        assert len(fake) == 1 and fake[0]["type"] == "eob"
        assert len(set(numbers)) == len(numbers) or numbers.count(
            fake[0]["artifact_id"].split("-")[1]) == 1
        assert {a["type"] for a in real} == {"claim_record", "eob", "provider_record",
                                             "plan_document"}


def test_citation_precision_defeats_citing_everything(dev: list[dict[str, Any]],
                                                      env: ClarusEnv) -> None:
    evidence = ("diagnosis_cites_two", "cites_provider_record", "cites_ncci_lookup")
    for s in dev[:30]:
        assert set(json.loads(json.dumps(s["expected"]["relevant_ids"]))) == {
            s["expected"]["claim_record_id"], s["expected"]["provider_record_id"],
            s["expected"]["ncci_ref_id"]}
        obs = env.reset(scenario=copy.deepcopy(s))
        agent = HeuristicAgent(cite_all=True)
        agent.reset(obs)
        for _ in range(40):
            r = env.step(agent.act(obs))
            obs = r.observation
            if r.done:
                break
        result = passed(r.info["grade"])
        assert not any(result[c] for c in evidence), s["seed"]
        # the oracle's citations (claim, EOB, provider record, NCCI) are precise
        assert all(passed(play(env, s, oracle(s)))[c] for c in evidence)


def test_the_first_filing_is_what_counts(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    outcome = ("responsible_party_and_finding", "resolution_type", "appeal_reason")
    for branch in ("b", "a1m", "c", "d"):
        s = by_branch(dev, branch)
        e = s["expected"]
        o = oracle(s)
        wrong_party = next(p for p in ("insurer", "provider", "none")
                           if p not in (e["responsible_party"], e["responsible_party_alt"]))
        # a wrong diagnosis filed on, corrected after the filing: still wrong
        sub = next(i for i, a in enumerate(o) if a["action_type"] == "submit_resolution")
        dx = next(a for a in o if a["action_type"] == "write_diagnosis")
        late = copy.deepcopy(o[:sub + 1])
        for a in late:
            if a["action_type"] == "write_diagnosis":
                a["parameters"]["responsible_party"] = wrong_party
        late += [copy.deepcopy(dx)] + o[sub + 1:]
        assert not passed(play(env, s, late))["responsible_party_and_finding"], branch
        # the right diagnosis filed on, a wrong one written afterwards: still right
        flip = copy.deepcopy(dx)
        flip["parameters"]["responsible_party"] = wrong_party
        after = o[:sub + 1] + [flip] + o[sub + 1:]
        result = passed(play(env, s, after))
        assert all(result[c] for c in outcome), (branch, result)


def test_details_never_reveal_the_expected_answer(dev: list[dict[str, Any]],
                                                  env: ClarusEnv) -> None:
    for branch in gen.BRANCHES:
        s = by_branch(dev, branch)
        e = s["expected"]
        o = oracle(s)
        o = edit(o, "write_diagnosis", finding="missing_modifier" if branch != "c" else
                 "no_active_edit", responsible_party="patient",
                 cited_artifacts=[e["eob_id"]])
        o = edit(o, "draft_resolution", resolution_type="refund_request", appeal_reason=None,
                 cited_artifacts=[e["eob_id"]])
        grade = play(env, s, o)
        text = " ".join(c["detail"] for c in grade["checks"])
        outcome_text = " ".join(c["detail"] for c in grade["checks"]
                                if c["family"] == "outcome")
        for secret in (e["provider_record_id"], e["ncci_ref_id"], e["claim_record_id"],
                       e["ncci_pair"], "(correct)", "(incorrect)"):
            assert secret not in text, (branch, secret, text)
        for field in ("responsible_party", "resolution_type"):
            if e[field] == "none":
                continue
            assert re.search(rf"\b{e[field]}\b", outcome_text) is None, (branch, field,
                                                                           outcome_text)
        if e["appeal_reason"] != "none":
            assert e["appeal_reason"] not in outcome_text


# -- amounts --------------------------------------------------------------------------------------
def _share(code: str, allowed: int, plan: dict[str, Any], ded_left: int,
           oop_left: int) -> dict[str, int]:
    copay = cents(plan["copays"]["primary_care"]) if code.startswith("992") else 0
    if copay:
        return cost_share(allowed, copay=copay, deductible_left=0, coinsurance_pct=0,
                          oop_left=oop_left)
    return cost_share(allowed, copay=0, deductible_left=ded_left,
                      coinsurance_pct=plan["coinsurance_pct"], oop_left=oop_left)


def _fee(ref: Any, code: str, loc: dict[str, str]) -> int:
    rvu = ref.rvu(code)
    g = ref.locality(loc["mac"], loc["locality"])
    amount = (rvu["work_rvu"] * g["work_gpci"] + rvu["nonfac_pe_rvu"] * g["pe_gpci"]
              + rvu["mp_rvu"] * g["mp_gpci"]) * rvu["conversion_factor"]
    fee = cents(amount)
    assert fee == cents(ref.fee(code, loc["mac"], loc["locality"]))
    return fee


def test_amounts_follow_the_fee_schedule_and_plan(ref: Any, dev: list[dict[str, Any]]) -> None:
    for s in dev:
        e, v = s["expected"], s["variant"]
        loc = v["locality"]
        arts = {a["type"] if not a["distractor"] else "prior": a["data"] for a in s["artifacts"]}
        plan = arts["plan_document"]
        assert plan["template_id"] == v["plan_template"]
        markup = v["markup_pct"]
        fee_paid = _fee(ref, e["paid_code"], loc)
        fee_denied = _fee(ref, e["denied_code"], loc)
        assert e["amount_cents"] == fee_denied
        lines = {line["hcpcs"]: line for line in arts["eob"]["lines"]}
        paid, denied = lines[e["paid_code"]], lines[e["denied_code"]]
        billed_paid = -(-pct_of(fee_paid, markup) // 100) * 100
        billed_denied = -(-pct_of(fee_denied, markup) // 100) * 100
        assert (paid["billed"], paid["allowed"]) == (dollars(billed_paid), dollars(fee_paid))
        assert paid["allowed_basis"]["amount"] == dollars(fee_paid)
        assert (denied["billed"], denied["allowed"]) == (dollars(billed_denied), "0.00")
        assert denied["adjustments"][0]["amount"] == dollars(billed_denied)
        assert e["denied_billed_cents"] == billed_denied
        # accumulators: the prior visit (if any), then the extra %, then this claim
        deductible, oop_max = cents(plan["deductible"]), cents(plan["out_of_pocket_max"])
        met = oop = 0
        if "prior" in arts:
            pline = arts["prior"]["lines"][0]
            pfee = _fee(ref, pline["hcpcs"], loc)
            pshare = _share(pline["hcpcs"], pfee, plan, deductible, oop_max)
            assert pline["allowed"] == dollars(pfee)
            assert pline["billed"] == dollars(-(-pct_of(pfee, markup) // 100) * 100)
            assert pline["patient_responsibility"] == dollars(pshare["patient"])
            assert pline["plan_paid"] == dollars(pshare["plan_paid"])
            # a copay counts toward the deductible when the plan document says so
            counts = plan["copays_count_toward_deductible"]
            met = min(deductible, pshare["deductible"] + (pshare["copay"] if counts else 0))
            oop = pshare["patient"]
            assert arts["prior"]["accumulators"]["deductible_met_ytd"] == dollars(met)
        extra = pct_of(deductible - met, v["deductible_met_extra_pct"])
        met, oop = met + extra, oop + extra
        share = _share(e["paid_code"], fee_paid, plan, deductible - met, oop_max - oop)
        for k in ("deductible", "coinsurance", "copay", "plan_paid"):
            assert paid[k] == dollars(share[k]), (s["seed"], k)
        assert paid["patient_responsibility"] == dollars(share["patient"])
        total_adj = sum(cents(a["amount"]) for a in paid["adjustments"])
        assert billed_paid - total_adj == share["plan_paid"]  # the 835 balancing rule
        acc = arts["eob"]["accumulators"]
        credit = share["deductible"] + (
            share["copay"] if plan["copays_count_toward_deductible"] else 0)
        assert acc["deductible_met_ytd"] == dollars(min(deductible, met + credit))
        assert acc["oop_met_ytd"] == dollars(oop + share["patient"])
        totals = arts["eob"]["totals"]
        assert totals["billed"] == dollars(billed_paid + billed_denied)
        assert totals["patient_responsibility"] == dollars(share["patient"])
        statement = arts["provider_record"]["statement"]
        assert statement["patient_balance"] == dollars(share["patient"])
        assert (cents(statement["charges"]) - cents(statement["insurance_paid"])
                - cents(statement["contractual_adjustments"])
                - cents(statement["held_pending_insurer"])) == share["patient"]
        for r in s["references"]:
            if r["type"] == "code_reference":
                assert cents(Decimal(r["data"]["fee"]["amount"])) == _fee(ref, r["key"], loc)


def test_cached_plan_draw_equals_common_plan_terms(ref: Any) -> None:
    data = gen._derived(ref)
    for k in range(40):
        assert gen._plan(ref, data, random.Random(k)) == plan_terms(
            ref, random.Random(k), coverage="self_only")


# -- determinism and speed -------------------------------------------------------------------------
def test_deterministic_across_processes(ref: Any) -> None:
    picks = DEV[:5] + TEST_SAMPLE[:5]
    here = [content_hash(compile_scenario(TASK, s, ref)) for s in picks]
    assert here == [content_hash(compile_scenario(TASK, s, ref)) for s in picks]
    code = ("import json;from clarus_env.scenario import compile_scenario,content_hash;"
            "from clarus_env.reference import open_reference;ref=open_reference();"
            f"print(json.dumps([content_hash(compile_scenario({TASK!r},s,ref)) "
            f"for s in {picks}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert json.loads(out.stdout) == here


def test_scenarios_differ_and_hide_the_answer(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    assert len({content_hash(s) for s in dev}) == len(dev)
    for s in dev[:20]:
        obs = env.reset(scenario=copy.deepcopy(s))
        text = json.dumps(obs.model_dump())
        assert s["expected"]["finding"] not in text and s["expected"]["claim_record_id"] \
            not in text
        assert s["case"]["claim_id"] in s["case"]["patient_complaint"]


# -- baselines ------------------------------------------------------------------------------------
def _run(env: ClarusEnv, agent: Any, scenario: dict[str, Any]) -> float:
    obs = env.reset(scenario=copy.deepcopy(scenario))
    agent.reset(obs, seed=scenario["seed"])
    for _ in range(env.task.api_call_budget + 5):
        r = env.step(agent.act(obs))
        obs = r.observation
        if r.done:
            return r.info["grade"]["score"]
    raise AssertionError("episode did not end")


def _play_agent(env: ClarusEnv, agent: Any, scenario: dict[str, Any]) -> dict[str, Any]:
    obs = env.reset(scenario=copy.deepcopy(scenario))
    agent.reset(obs, seed=scenario["seed"])
    for _ in range(env.task.api_call_budget + 5):
        r = env.step(agent.act(obs))
        obs = r.observation
        if r.done:
            return r.info["grade"]
    raise AssertionError("episode did not end")


def test_heuristic_between_random_and_oracle(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    oracle_grades = [play(env, s, oracle(s)) for s in dev]
    heuristic = [_play_agent(env, HeuristicAgent(), s) for s in dev]
    random_mean = statistics.mean(_run(env, RandomAgent(TASK, seed=s["seed"]), s) for s in dev)
    h_mean = statistics.mean(g["score"] for g in heuristic)
    assert random_mean < h_mean < statistics.mean(g["score"] for g in oracle_grades)
    h_pass = statistics.mean(g["passed"] == g["total"] for g in heuristic)
    assert 0.0 < h_pass < 1.0
    assert all(g["passed"] == g["total"] for g in oracle_grades)


def test_heuristic_must_read_the_evidence(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    """With the NCCI edit and the notes hidden it falls back to a generic guess (and does
    not crash, even with every record hidden); the notes alone matter too."""
    def accuracy(hide: frozenset[str]) -> float:
        return statistics.mean(_play_agent(env, HeuristicAgent(hide=hide), s)[
            "outcome_correct"] for s in dev)
    full = accuracy(frozenset())
    no_notes = accuracy(frozenset({"provider_record"}))
    blind = accuracy(frozenset({"provider_record", "ncci_edit"}))
    modal = collections.Counter(s["expected"]["finding"] for s in dev).most_common(1)[0][1] / len(
        dev)
    assert full > no_notes + 0.1 and no_notes > blind
    assert blind <= modal + 0.10
    accuracy(frozenset({"claim_record", "eob", "provider_record", "plan_document",
                        "ncci_edit", "code_reference", "deadline", "regulation"}))


def test_heuristic_hooks(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    seen: list[dict[str, Any]] = []

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        seen.append(view)
        return {"finding": "no_active_edit", "responsible_party": "insurer",
                "resolution_type": "appeal", "appeal_reason": "no_active_edit",
                "amount_cents": None}
    s = by_branch(dev, "d")
    agent = HeuristicAgent(decide=decide, hide=frozenset({"provider_record"}))
    grade = _play_agent(env, agent, s)
    assert grade["outcome_correct"] and agent.decision["finding"] == "no_active_edit"
    view = seen[0]
    assert set(view) == {"complaint", "case_id", "initial_observation", "records"}
    assert "provider_record" not in view["records"] and "ncci_edit" in view["records"]


# -- red-team regressions (shortcuts found on the previous generator) ----------------------
def _claim(s: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in s["artifacts"] if a["type"] == "claim_record")["data"]


def test_no_seed_in_any_visible_id(dev: list[dict[str, Any]]) -> None:
    """The case id's digits come from the rng (one shape everywhere), never the seed."""
    shape = re.compile(r"^CLR-\d{6}-[A-Z0-9]{4}$")
    for s in dev:
        ids = [s["case"]["case_id"], s["case"]["claim_id"], s["case"]["plan_id"],
               *(a["artifact_id"] for a in s["artifacts"])]
        assert shape.match(s["case"]["case_id"]), s["case"]["case_id"]
        assert not any(str(s["seed"]) in i for i in ids), (s["seed"], ids)


def test_neighbouring_seeds_say_nothing_about_each_other() -> None:
    """No seed-pair balancing: whether 2k is a legitimate denial does not fix 2k+1's
    answer."""
    for name in ("train", "test"):
        split_seeds = list(seeds(name, TASK))
        pairs = [(a, a + 1) for a in split_seeds[::2] if a + 1 in split_seeds]
        legit = {x: gen.OUTCOME[gen.branch_of(x, random.Random(0))][0] == "legitimate_denial"
                 for pair in pairs for x in pair}
        one = sum(legit[a] != legit[b] for a, b in pairs) / len(pairs)
        assert 0.35 < one < 0.65, (name, one)


def test_pointers_and_diagnoses_do_not_stand_in_for_the_notes(
        dev: list[dict[str, Any]], test_split: list[dict[str, Any]]) -> None:
    """Every line points to every diagnosis (3 or 4); the count of diagnoses is distributed
    alike whether or not the notes document a distinct service."""
    counts: dict[bool, collections.Counter[int]] = {True: collections.Counter(),
                                                    False: collections.Counter()}
    for s in dev + test_split:
        claim = _claim(s)
        letters = ["ABCD"[i] for i in range(len(claim["diagnoses"]))]
        assert len(letters) in (3, 4)
        assert all(line["diagnosis_pointers"] == letters for line in claim["lines"])
        if s["variant"]["branch"] in ("b", "c", "a1m", "a1n"):
            counts[s["variant"]["distinct_documented"]][len(letters)] += 1
    share = {k: c[4] / sum(c.values()) for k, c in counts.items()}
    assert abs(share[True] - share[False]) < 0.2, share


def test_no_code_that_names_the_status(ref: Any, train: list[dict[str, Any]]) -> None:
    """No stop-smoking counseling (never edited) or nurse visit (only indicator 0); in the
    train pools of the families drawn for several statuses, the paid and the denied code
    are distributed alike under every status (fitted weights), and an indicator-0 code
    also occurs under another status."""
    for s in train:
        e = s["expected"]
        assert not {e["paid_code"], e["denied_code"]} & {"99406", "99407", "99211"}
    data = gen._derived(ref)
    fitted = data["balanced"]["train"]
    assert set(fitted) == {"therapy"}  # ("apart" pairs are drawn only without an edit)
    for fam, by_status in fitted.items():
        for role in (0, 1):
            margins = []
            for pairs, weights in by_status.values():
                tot = sum(weights)
                m: dict[str, float] = collections.defaultdict(float)
                for p, w in zip(pairs, weights, strict=True):
                    m[p[role]] += w / tot
                margins.append(m)
            a, b = margins
            assert set(a) == set(b), (fam, role)
            assert all(abs(a[c] - b[c]) < 0.02 for c in a), (fam, role)
    anchors = data["anchors"]["train"]
    drawn = {c for pairs, _ in fitted["therapy"].values() for p in pairs for c in p}
    assert set(anchors["0"]["therapy"]) <= drawn
    assert set(anchors["0"]["proc"]) <= set(anchors["1"]["proc"])


def _surface(s: dict[str, Any]) -> list[str]:
    """What a red-team naive Bayes read: codes, code families, modifiers, pointer counts,
    diagnoses, line order and the denial codes of the claim record."""
    claim = _claim(s)
    denied = {a["line"] for a in claim["adjudication"] if a["status"] == "denied"}
    out = [f"ndx:{len(claim['diagnoses'])}", *(f"dx:{d}" for d in claim["diagnoses"])]
    for line in claim["lines"]:
        role = "den" if line["line"] in denied else "paid"
        out += [f"{role}:{line['hcpcs']}", f"{role}:pre:{line['hcpcs'][:3]}",
                f"{role}:line:{line['line']}", f"{role}:nptr:{len(line['diagnosis_pointers'])}",
                *(f"{role}:mod:{m}" for m in line["modifiers"])]
    for a in claim["adjudication"]:
        if a["status"] == "denied":
            out += [f"carc:{a['carc']}", f"rarc:{a['rarc']}"]
    return out


def test_red_team_claim_agents_stay_near_the_modal_class(
        train: list[dict[str, Any]], dev: list[dict[str, Any]],
        test_split: list[dict[str, Any]]) -> None:
    """The red team's two strongest agents that read neither the notes nor the NCCI lookup:
    its hand rule (a never-edited code, more than one pointer on the denied line and the
    modifier) and a naive Bayes over the claim record's surface, fitted on train."""
    def hand_rule(s: dict[str, Any]) -> str:
        claim = _claim(s)
        if any(line["hcpcs"].startswith("994") for line in claim["lines"]):
            return "no_active_edit"
        den = {a["line"] for a in claim["adjudication"] if a["status"] == "denied"}
        multi = any(len(line["diagnosis_pointers"]) > 1 for line in claim["lines"]
                    if line["line"] in den)
        mod = any(m != "GP" for line in claim["lines"] for m in line["modifiers"])
        if multi:
            return "modifier_bypass_ignored" if mod else "missing_modifier"
        return "legitimate_denial"

    prior = collections.Counter(s["expected"]["finding"] for s in train)
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for s in train:
        seen[s["expected"]["finding"]].update(set(_surface(s)))
    vocab = {w for c in seen.values() for w in c}

    def bayes(s: dict[str, Any]) -> str:
        words = set(_surface(s)) & vocab
        def score(label: str) -> float:
            n = prior[label]
            return math.log(n) + sum(math.log((seen[label][w] + 0.5) / (n + 1)) for w in words)
        return max(sorted(prior), key=score)

    for held in (dev, test_split):
        modal = collections.Counter(s["expected"]["finding"] for s in held).most_common(
            1)[0][1] / len(held)
        for agent in (hand_rule, bayes):
            acc = statistics.mean(agent(s) == s["expected"]["finding"] for s in held)
            assert acc <= modal + 0.10, (agent.__name__, acc, modal)


def test_the_claim_does_not_say_whether_the_service_was_distinct(
        train: list[dict[str, Any]], test_split: list[dict[str, Any]]) -> None:
    """Inside the indicator-1 branches, a table from the claim (family, modifier) to
    'distinct documented' does little better than its majority: only the notes decide."""
    def key(s: dict[str, Any]) -> tuple[Any, ...]:
        mods = any(m != "GP" for line in _claim(s)["lines"] for m in line["modifiers"])
        return (s["variant"]["family"], mods)
    table: dict[Any, collections.Counter[bool]] = collections.defaultdict(collections.Counter)
    ind1 = [s for s in train if s["variant"]["branch"] in ("b", "c", "a1m", "a1n")]
    for s in ind1:
        table[key(s)][s["variant"]["distinct_documented"]] += 1
    held = [s for s in test_split if s["variant"]["branch"] in ("b", "c", "a1m", "a1n")]
    acc = statistics.mean((table[key(s)].most_common(1)[0][0] if key(s) in table else True)
                          == s["variant"]["distinct_documented"] for s in held)
    base = collections.Counter(s["variant"]["distinct_documented"] for s in held)
    assert acc <= base.most_common(1)[0][1] / len(held) + 0.10, acc


def _therapy_interval(note: str) -> tuple[int, int, str]:
    """A therapy note's (start, end) minute and region, from any of the three ways the notes
    write a service's time (start-end, start and duration, duration and end)."""
    region = note.rstrip(".").rsplit(", ", 1)[1]
    m = re.search(r"(\d\d):(\d\d)(?:–| to )(\d\d):(\d\d)", note)
    if m:
        h1, m1, h2, m2 = map(int, m.groups())
        return h1 * 60 + m1, h2 * 60 + m2, region
    m = re.search(r"(\d\d):(\d\d) for (\d+) min|(\d+) min starting (\d\d):(\d\d)", note)
    if m:
        g = [int(x) for x in m.groups() if x is not None]
        hh, mm, n = (g[0], g[1], g[2]) if m.group(1) else (g[1], g[2], g[0])
        return hh * 60 + mm, hh * 60 + mm + n, region
    m = re.search(r"(\d+) min(?: ending|, finished) (\d\d):(\d\d)", note)
    assert m, note
    n, hh, mm = map(int, m.groups())
    return hh * 60 + mm - n, hh * 60 + mm, region


def test_domain_fixes(dev: list[dict[str, Any]], test_split: list[dict[str, Any]]) -> None:
    """A nerve block "distinct" only on the other limb; a not-distinct therapy service lies
    wholly inside the paid one's minutes, same region; no active edit on a therapy pair
    always comes with separate minutes; a legitimate CO denial accepts provider too."""
    for s in dev + test_split:
        v, e = s["variant"], s["expected"]
        prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        notes = {n.split("(")[1].split(")")[0]: n for n in prov["notes"][:2]}
        if e["finding"] == "legitimate_denial":
            assert e["responsible_party_alt"] == "provider"
        if "64450" in notes:
            assert "occipital" not in notes["64450"]
            other = next(c for c in notes if c != "64450")
            side = "right" if "right" in notes["64450"] else "left"
            if v["distinct_documented"] and side in notes[other]:
                assert "wrist" not in notes[other] and "carpal" not in notes[other], notes
        if v["family"] == "therapy":
            ps, pe, r1 = _therapy_interval(notes[e["paid_code"]])
            ds, de, r2 = _therapy_interval(notes[e["denied_code"]])
            from clarus_env.tasks.abductive_conflict import catalog
            if {e["paid_code"], e["denied_code"]} & set(catalog.SITE_DECIDED):
                # untimed ROM/modalities: one after the other; distinct only at another site
                assert de <= ps or pe <= ds
                if v["branch"] in ("b", "c", "a1m", "a1n"):
                    assert (r1 != r2) is v["distinct_documented"], s["seed"]
                for code, region in ((e["paid_code"], r1), (e["denied_code"], r2)):
                    assert region in catalog.SITE_DECIDED.get(code, (region,)), (code, region)
            else:
                assert r1 == r2
                if v["distinct_documented"]:
                    assert de <= ps or pe <= ds
                elif {e["paid_code"], e["denied_code"]} & catalog.EVALUATIONS:
                    # an evaluation overlapped by a timed service that keeps 8+ minutes of
                    # its own: its unit stands, the evaluation had no separate interval
                    overlap = min(pe, de) - max(ps, ds)
                    timed = (ps, pe) if e["denied_code"] in catalog.EVALUATIONS else (ds, de)
                    assert overlap >= 1 and timed[1] - timed[0] - overlap >= 8, s["seed"]
                else:  # the shorter service has fewer than 8 minutes of its own
                    # (outside the longer one's): no unit of its own (8-minute rule)
                    overlap = min(pe, de) - max(ps, ds)
                    assert min(pe - ps, de - ds) - overlap < 8, s["seed"]
                if not {e["paid_code"], e["denied_code"]} & set(gen.UNTIMED_MINUTES):
                    # the one unit of an overlap goes to the longer service: the paid one
                    assert pe - ps >= de - ds, s["seed"]
                assert (ps, pe) != (ds, de), s["seed"]  # never one identical interval
            if v["branch"] == "d":
                assert v["distinct_documented"]


# -- second domain review (billrev-h4): records an expert would sign ----------------------------
@pytest.fixture(scope="module")
def fresh(ref: Any) -> list[dict[str, Any]]:
    """400 scenarios outside every split (branch drawn from the rng), as a reviewer draws."""
    return [compile_scenario(TASK, s, ref) for s in range(900000, 900400)]


def _notes(s: dict[str, Any]) -> dict[str, str]:
    prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
    return {n.split("(")[1].split(")")[0]: n for n in prov["notes"][:2]}


def _em_visits(fresh: list[dict[str, Any]]) -> Any:
    """Each E/M-family scenario with its other service's code, the E/M's note and the
    service's catalog entry."""
    for s in fresh:
        if s["variant"]["family"] != "em":
            continue
        e = s["expected"]
        em = next(c for c in (e["paid_code"], e["denied_code"]) if c.startswith("992"))
        other = e["denied_code"] if em == e["paid_code"] else e["paid_code"]
        yield s, other, _notes(s)[em], cat.SERVICES[other]


def test_routine_services_are_never_told_as_an_evaluation(ref: Any,
                                                          fresh: list[dict[str, Any]]) -> None:
    """The 'decision to perform is included' story is for minor surgery (000/010 global)
    only. A drug administration, vaccine or ordered test (XXX) is told as a scheduled
    service with no new complaints in every branch, so its visit is distinct only by the
    other problem managed today (an evaluation of a new acute problem before an IV push
    would itself be a separately identifiable E/M: review 80013, 80004)."""
    for code, svc in cat.SERVICES.items():
        assert svc.routine == (ref.rvu(code)["global_days"] == "XXX"), code
    pre = [t.split("{")[0] for t in gen.PRE_PROCEDURE]
    seen = collections.Counter()
    for s, _other, note, svc in _em_visits(fresh):
        if svc.routine:
            seen[s["variant"]["distinct_documented"]] += 1
            assert "no new" in note and not any(p in note for p in pre), (s["seed"], note)
            assert any(r.split("{")[0] in note for r in gen.ROUTINE), note
            assert "vomiting" not in note and "not responding" not in note, note
        else:
            assert any(p in note for p in pre), (s["seed"], note)
    assert seen[True] and seen[False], seen  # routine services in both stories


def test_aftercare_fits_the_service(fresh: list[dict[str, Any]]) -> None:
    """A visit's aftercare is the service's own: no four-week 'response' review after one IV
    dose, no ibuprofen after nasal packing, a pathology result after a biopsy."""
    for _s, other, note, svc in _em_visits(fresh):
        if "review the response" in note:
            assert other.startswith("20"), (other, note)  # joint and tendon injections only
        if other == "30901":
            assert "ibuprofen prescribed" not in note
        def said(care: str, note: str = note) -> bool:
            parts = re.split(r"(\{lay\}|\{weeks\})", care)
            text = "".join({"{lay}": ".+?", "{weeks}": r"\d+"}.get(x, re.escape(x))
                           for x in parts)
            return re.search(text, note) is not None
        others = {a for x in cat.SERVICES.values() for a in x.aftercare} - set(svc.aftercare)
        assert not [care for care in others if said(care)], (other, note)


def test_the_practice_name_fits_its_specialty(fresh: list[dict[str, Any]]) -> None:
    """No 'Summit Dermatology' as a family practice giving IV infusions, no 'Northside
    Internal Medicine' doing orthopedic injections."""
    words = {"Dermatology": "dermatology", "Orthop": "orthopedics",
             "Internal Medicine": "internal medicine", "Family": "family medicine",
             "Primary Care": "family medicine", "Physical Therapy": "physical therapy",
             "Podiatry": "podiatry", "Pain": "pain medicine", "Urgent Care": "urgent care",
             "Sports Medicine": "sports medicine"}
    for s in fresh:
        prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        name, specialty = prov["provider"]["name"], prov["provider"]["specialty"]
        if s["variant"]["family"] == "em":  # a place word and a kind of practice
            kinds = gen.URGENT_KINDS if specialty == "urgent care" else gen.FAMILY_KINDS
            assert any(name == f"{p} {k}" for p in gen.PLACES for k in kinds), name
        else:
            assert name in gen.PRACTICE_NAMES[specialty], (name, specialty)
        named = {spec for word, spec in words.items() if word in name}
        assert named <= {specialty}, (name, specialty)


def test_prior_visit_code_fits_the_practice(fresh: list[dict[str, Any]]) -> None:
    """A physical-therapy practice bills evaluations and therapy codes, never an office E/M,
    in the account history and on the distractor EOB."""
    pt = 0
    for s in fresh:
        prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        prior = next(a for a in s["artifacts"] if a["distractor"])["data"]
        code = prior["lines"][0]["hcpcs"]
        history = prov["statement"]["account_history"][0]["description"]
        if prov["provider"]["specialty"] == "physical therapy":
            pt += 1
            assert code.startswith("97") and not code.startswith("992"), code
            assert "Office" not in history, history
        else:
            assert code in ("99212", "99213"), code
    assert pt > 50


def test_this_months_visit_is_listed_at_the_problems_level(ref: Any,
                                                          fresh: list[dict[str, Any]]) -> None:
    """Review round 6, I1: the earlier visit this month (where a carried-forward plan came
    from) is listed at the E/M level of the problem the plan manages, the visit's own code,
    in every branch; it was drawn from 99212/99213 whatever the problem (chest pressure with
    urgent stress testing as 99212)."""
    n = 0
    for s in fresh:
        if s["variant"]["family"] != "em":
            continue
        prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        history = prov["statement"]["account_history"]
        if len(history) < 2:
            continue
        e = s["expected"]
        em = next(c for c in (e["paid_code"], e["denied_code"]) if c.startswith("992"))
        assert history[1]["description"] == describe(ref, em), (s["seed"], em, history[1])
        n += 1
    assert n >= 30, n


def test_lesion_distances_are_alike_in_every_branch(train: list[dict[str, Any]],
                                                    fresh: list[dict[str, Any]]) -> None:
    """Review round 6, I2: two lesions at one site were printed as N cm against N mm, so a
    distance under 2 cm ("posterior aspect, 4 mm from the kneecap") came only in distinct
    stories. Every printed distance is 2-14 cm (20-140 mm), and in both stories the two
    numerals are equal exactly when the units are, in about half of the same-site pairs."""
    equal: dict[bool, list[bool]] = {True: [], False: []}
    for s in train + fresh:
        if s["variant"]["family"] != "proc":
            continue
        notes = [_spelled(n.split(": ", 1)[1].split(". ")[0]) for n in _notes(s).values()]
        got = [WHERE.search(n) for n in notes]
        for m in got:
            if m:
                mm = int(m[1]) * (10 if m[2] == "cm" else 1)
                assert 20 <= mm <= 140 and mm % 10 == 0, (s["seed"], m[0])
        aspects = "|".join(re.escape(w) for w in sorted(ASPECT_OF, key=len, reverse=True))
        a, b = (re.sub(rf"\([^)]*\)|\d+ (cm|mm) from the [a-z ]+|, ({aspects}),", ",", n)
                for n in notes)
        if got[0] and got[1] and _anatomy(a) == _anatomy(b):  # two notes at one site
            same_numeral, same_unit = got[0][1] == got[1][1], got[0][2] == got[1][2]
            assert same_numeral == same_unit, (s["seed"], got[0][0], got[1][0])
            equal[bool(s["variant"]["distinct_documented"])].append(same_numeral)
    for flag, rows in equal.items():
        assert len(rows) >= 30 and 0.3 <= statistics.mean(rows) <= 0.7, (flag, len(rows))


def test_accumulators_follow_the_plans_copay_rule(fresh: list[dict[str, Any]]) -> None:
    """Where the plan says copays count toward the deductible, the prior visit's copay is in
    both EOBs' deductible totals (review 80000, 80007, 80019); where it does not, it is
    not."""
    counted = 0
    for s in fresh:
        arts = {a["type"] if not a["distractor"] else "prior": a["data"] for a in s["artifacts"]}
        plan = arts["plan_document"]
        line = arts["prior"]["lines"][0]
        copay = cents(line["copay"])
        ded = cents(line["deductible"])
        counts = plan["copays_count_toward_deductible"]
        expect = min(cents(plan["deductible"]), ded + (copay if counts else 0))
        assert arts["prior"]["accumulators"]["deductible_met_ytd"] == dollars(expect), s["seed"]
        assert cents(arts["eob"]["accumulators"]["deductible_met_ytd"]) >= expect
        counted += bool(counts and copay)
    assert counted > 20, counted


def test_many_lesions_are_not_measured_at_one_point(fresh: list[dict[str, Any]]) -> None:
    """A note counting several lesions measures one of them from the landmark (19 keratoses
    cannot all lie 6 cm from the elbow crease); a same-distance lesion of the other note is
    then the one among them."""
    several = re.compile(r"(\d+) (?:common warts|common wart\(s\)|actinic keratoses)[^.]*?"
                         r"(, (?:one of them )?\d+ cm from)")
    hits = 0
    site = re.compile(r" on the ([a-z ]+?), (?:one of them )?\d+ cm from")
    for s in fresh:
        if s["variant"]["family"] not in ("proc", "apart"):
            continue
        notes = _notes(s)
        if set(notes) & gen.MULTI_LESION and s["variant"]["distinct_documented"]:
            # a separate lesion beside a multi-lesion code lies at another named site
            found = [site.search(n) for n in notes.values()]
            if all(found):
                assert found[0].group(1) != found[1].group(1), notes
        for note in notes.values():
            for n, where in several.findall(note):
                if "cm from" in where and int(n) > 1:
                    hits += 1
                    assert "one of them" in where, note
    assert hits > 0


def test_the_finding_is_graded_not_only_the_filing(dev: list[dict[str, Any]],
                                                  env: ClarusEnv) -> None:
    """A legitimate denial diagnosed as a missing modifier (or an ignored bypass) and then left
    alone files the right nothing, but its diagnosis is wrong: the outcome check fails it (a
    constant "missing_modifier, provider, no_action" answer passed every legitimate denial)."""
    s = by_branch(dev, "a1n")
    o = oracle(s)
    assert all(passed(play(env, s, o)).values())
    for wrong in ("missing_modifier", "modifier_bypass_ignored", "no_active_edit"):
        result = passed(play(env, s, edit(o, "write_diagnosis", finding=wrong,
                                          responsible_party="provider")))
        assert not result["responsible_party_and_finding"], wrong
        assert result["resolution_type"] and result["appeal_reason"], wrong


# -- billing review round 2 ----------------------------------------------------------------
# the NCCI-associated modifiers (NCCI Policy Manual ch. I), anatomic ones included
NCCI_ASSOCIATED = frozenset({"25", "59", "XE", "XP", "XS", "XU", "FA", "TA", "LT", "RT",
                             "LC", "LD", "RC", "LM", "RI", *(f"E{i}" for i in range(1, 5)),
                             *(f"F{i}" for i in range(1, 10)), *(f"T{i}" for i in range(1, 10))})
NAIL_COUNT = re.compile(r"debridement of (\d+|one) mycotic toenail")


def test_avulsion_beside_debridement_is_one_nail(dev: list[dict[str, Any]],
                                                 test_split: list[dict[str, Any]]) -> None:
    """An avulsion (11730) covers every service to that nail only (CMS article A52998): a
    debridement of other nails beside it is a separate structure and stays payable. So the
    debridement beside an avulsion names one nail — the avulsed one when not distinct, which
    makes the denial right — and no split holds an avulsion with a 6+ nail code, whose
    "same nail" denial could never be right."""
    for s in dev + test_split:
        assert set(s["variant"]["pair"].split("/")) != {"11730", "11721"}, s["seed"]
    for k in range(400):
        distinct = k % 2 == 0
        story = gen._story_proc("11730", "11720", distinct, k % 4 < 2, random.Random(k))
        note = _spelled(story["notes"]["11720"]).lower()
        assert NAIL_COUNT.search(note).group(1) == "one", note
        site = re.search(r"avulsion of the nail plate, ([a-z ]+),",
                         _spelled(story["notes"]["11730"]).lower()).group(1)
        assert (f"the {site} nail" in note) is (not distinct), (note, site)


def _spelled(text: str) -> str:
    """A note with its R/L side initials written out ("R knee" -> "right knee") and its site
    words in their catalog form ("hallux" -> "great toe")."""
    text = re.sub(r"\b([RL]) (?=[a-z])", lambda m: {"R": "right ", "L": "left "}[m[1]], text)
    for name, wordings in gen.SITE_WORDS:
        for w in sorted(wordings, key=len, reverse=True):
            if w != name and w in text:
                # a side before a reworded name stays with the structure ("right median
                # nerve at the wrist" -> "right wrist (median nerve)")
                text = text.replace(w, name)
    return text


def test_plan_lists_the_anatomic_bypass_modifiers(dev: list[dict[str, Any]],
                                                  test_split: list[dict[str, Any]]) -> None:
    """CMS counts anatomic modifiers (RT/LT, TA-T9, FA-F9, ...) as NCCI-associated (NCCI
    Policy Manual ch. I), and the key appeals a claim whose only bypass is anatomic: the
    plan's own claim-editing clause must name every bypass modifier a claim carries, or a
    reader following the plan would ask for a corrected claim instead."""
    seen = set()
    for s in dev + test_split:
        plan = next(a for a in s["artifacts"] if a["type"] == "plan_document"
                    and not a["distractor"])["data"]["claim_editing"]
        listed = set(re.findall(r"\b[A-Z0-9]{2}\b", plan))
        for head, lo, hi in re.findall(r"\b([A-Z])(\d)-[A-Z](\d)\b", plan):  # "T1-T9"
            listed |= {f"{head}{i}" for i in range(int(lo), int(hi) + 1)}
        claim = next(a for a in s["artifacts"] if a["type"] == "claim_record"
                     and not a["distractor"])["data"]
        for line in claim["lines"]:
            for m in set(line["modifiers"]) & NCCI_ASSOCIATED:
                seen.add(m)
                assert m in listed, (s["seed"], m)
    assert seen & set(gen.SIDE_FLIP), seen  # the scan met anatomic-only bypasses


def test_one_joint_is_injected_once(dev: list[dict[str, Any]],
                                    test_split: list[dict[str, Any]]) -> None:
    """No clinician injects one joint twice in a session: beside a guided injection of the
    same kind of joint, the unguided line's note says nothing about guidance in every branch
    (neither "without guidance", the joint injected twice, nor "under ultrasound guidance",
    an unguided code documented as guided: billing review round 3, 20604 + 20600), so at the
    same joint it is the one guided injection billed twice."""
    met = 0
    for s in dev + test_split:
        v = s["variant"]
        codes = v["pair"].split("/")
        if v["family"] != "proc" or not all(cat.PROCS[c].role == "inject" for c in codes):
            continue
        notes = [n.split(": ", 1)[1] for n in _notes(s).values()]
        if not v["distinct_documented"]:
            met += 1
            assert sum("guidance" in n for n in notes) <= 1, (s["seed"], notes)
    for guided, plain in (("20604", "20600"), ("20606", "20605"), ("20611", "20610")):
        for k in range(60):
            story = gen._story_proc(guided, plain, k % 2 == 0, k % 4 < 2, random.Random(k))
            assert "ultrasound guidance" in story["notes"][guided], story["notes"]
            assert "guidance" not in story["notes"][plain], story["notes"]
            assert story["notes"][guided] != story["notes"][plain], story["notes"]
            site = re.search(r"of the (.+?)(?: joint)?(?: under|\.)",
                             _spelled(story["notes"][plain]))
            assert site, story["notes"]
            # where the guided note's injection was (its first sentence; a remark on the
            # other side may follow)
            assert (site[1] in _spelled(story["notes"][guided].split(". ")[0])) is (
                k % 2 == 1), story["notes"]


NUMBER = re.compile(r"\d+(?::\d+|\.\d+|/\d+/\d+)?")


def _shared_numbers(s: dict[str, Any], pattern: re.Pattern[str]) -> int:
    a, b = (n.split(": ", 1)[1] for n in list(_notes(s).values())[:2])
    return min(2, len(set(pattern.findall(a)) & set(pattern.findall(b))))


def test_shared_number_tokens_do_not_tell_the_branch(train: list[dict[str, Any]]) -> None:
    """Round 3's red team: 'the two line notes share no number token -> distinct' passed
    0.752 on test (identical therapy intervals, the same lesion always at the same printed
    distance). Over train, how many number strings (clock times, distances, sizes, dates)
    the two notes share has the same distribution in the four indicator-1 branches, and for
    distinct against not-distinct within each family, up to sampling noise."""
    by: dict[Any, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for s in train:
        v = s["variant"]
        if v["branch"] not in ("b", "c", "a1m", "a1n"):
            continue
        k = _shared_numbers(s, NUMBER)
        by[v["branch"]][k] += 1
        by[(v["family"], v["distinct_documented"])][k] += 1

    def share(key: Any, k: int) -> float:
        return by[key][k] / sum(by[key].values())

    for k in range(3):
        rates = [share(b, k) for b in ("b", "c", "a1m", "a1n")]
        # within three standard errors of a difference between two branches (~280 each;
        # a1m and a1n differ only by the claim's modifier, so their gap is chance alone)
        n = min(sum(by[b].values()) for b in ("b", "c", "a1m", "a1n"))
        p = sum(rates) / 4
        assert max(rates) - min(rates) <= 3 * math.sqrt(2 * p * (1 - p) / n), (k, rates)
        for fam, tol in (("therapy", 0.06), ("proc", 0.12), ("em", 0.06)):
            assert abs(share((fam, True), k) - share((fam, False), k)) <= tol, (fam, k)


STAMP = re.compile(r"(\d\d)/(\d\d)/(\d{4}) by (.+?), ([^,;]+); [a-z' ]+note(?: by ([^)]+))?\)")


def _stamp(s: dict[str, Any]) -> tuple[bool, bool, bool, str, str | None]:
    """The E/M entry read as an expert reads it: (dated the date of service, assessed by
    the rendering clinician, at the billing practice, the assessor as printed, who entered
    it)."""
    provider = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
    em = next(t for c, t in _notes(s).items() if c.startswith("992"))
    m = STAMP.search(em)
    assert m, em
    rendering = provider["provider"]["rendering_clinician"]
    name = m[4].removeprefix("Dr. ")
    last = name.split(", ")[0] if "(" in name else name.split(", ")[0].split(". ")[-1]
    today = f"{m[3]}-{m[1]}-{m[2]}" == provider["date_of_service"]
    first, surname = rendering.split(", ")[0].split(" ", 1)
    # the rendering clinician as far as the print shows: the surname, and the first initial
    # where printed (round 8c: another practice's assessor may be a namesake)
    initial = (None if m[4].startswith("Dr. ") else
               name.split(", ")[1][0] if "(" in name else name[0])
    mine = last == surname and initial in (None, first[0])
    # at one of the billing group's offices (listed in the provider record)
    here = m[5] in {gen.practice_short(o) for o in provider["provider"]["offices"]}
    return today, mine, here, m[4], m[6]


def test_em_date_clinician_and_practice_decide_only_together(
        dev: list[dict[str, Any]], test_split: list[dict[str, Any]]) -> None:
    """The visit managed its other problem (a separately identifiable E/M) exactly when that
    problem's entry is dated the date of service, by the rendering clinician, at the billing
    practice; each relation alone agrees with the answer in 5 to 8 of 10 visits (round 3's
    red team: the date alone decided; round 4's: the date and the assessor's name did)."""
    hits = collections.Counter()
    n = 0
    for s in dev + test_split:
        if s["variant"]["family"] != "em":
            continue
        today, mine, here, _, entered = _stamp(s)
        # entered by a named scribe or MA, or unattributed: never a clinician's name
        assert entered is None or entered.rsplit(", ", 1)[1] in gen.SCRIBES, entered
        assert (today and mine and here) is s["variant"]["distinct_documented"], s["seed"]
        n += 1
        for k, rel in (("date", today), ("name", mine), ("practice", here)):
            hits[k] += rel is s["variant"]["distinct_documented"]
    assert n > 30, n
    for k in ("date", "name", "practice"):
        assert 0.5 <= hits[k] / n <= 0.85, (k, hits[k], n)


def test_same_day_other_assessor_is_another_practice(dev: list[dict[str, Any]],
                                                      test_split: list[dict[str, Any]]
                                                      ) -> None:
    """A not-distinct visit whose other problem was assessed on the date of service names
    another practice (another clinician's), whose
    plan today's note only records (AMA 2021: a notation of another professional's
    management is not a problem addressed). A same-day entry by a colleague of this group
    would be this group's E/M (Pub. 100-04 ch. 12 30.6.5: one physician), and the key would
    be wrong (billing review round 3, 82009)."""
    kinds = collections.Counter()
    for s in dev + test_split:
        if s["variant"]["family"] != "em" or s["variant"]["distinct_documented"]:
            continue
        today, mine, here, m4, _ = _stamp(s)
        if today:
            assert not here, s["seed"]
            # a namesake printed as "Dr. <surname>" reads as the rendering clinician: only
            # the office off the group's list tells (round 8c)
            kinds[mine and not m4.startswith("Dr. ")] += 1
        else:
            assert mine and here, s["seed"]  # carried forward from this practice's visit
    # always another practice's clinician (a namesake at most): the rendering clinician's
    # own shift at another practice that day is no longer drawn (domain review: one
    # clinician at two family practices on one day)
    assert kinds[False] > 5 and not kinds[True], kinds


def _leaves(obj: Any, path: str = "") -> Any:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for v in obj:
            yield from _leaves(v, f"{path}[]")
    elif isinstance(obj, str) and path != ".notes[]":
        yield path, obj.strip().casefold()


def test_no_string_equality_decides_the_em_branch(train: list[dict[str, Any]]) -> None:
    """Round 4's red team decided every E/M visit by two string equalities (the entry's
    date against the date of service, the assessor's name against the enterer's). Over
    train, within the indicator-1 E/M visits, no verbatim equality between a piece of the
    visit note (split at , ; and parentheses) and any printed record string, another piece
    of the same note, or a piece of the other line's note tells distinct from not distinct
    better than the modal share + 0.10."""
    rows = []
    for s in train:
        v = s["variant"]
        if v["family"] != "em" or v["branch"] not in ("b", "c", "a1m", "a1n"):
            continue
        notes = _notes(s)
        em = next(t for c, t in notes.items() if c.startswith("992"))
        other = next(t for c, t in notes.items() if not c.startswith("992"))
        pieces = [p.strip().casefold() for p in re.split(r"[,;()]", em.split(": ", 1)[1])]
        pieces = [p for p in pieces if p]
        feats = {"intra": len(set(pieces)) < len(pieces),
                 "cross": bool(set(pieces) & {p.strip().casefold()
                                              for p in re.split(r"[,;()]", other)})}
        for a in s["artifacts"]:
            if a["distractor"]:
                continue
            for path, val in _leaves(a["data"]):
                key = f"{a['type']}{path}"
                feats[key] = feats.get(key, False) or val in pieces
        rows.append((feats, v["distinct_documented"]))
    n = len(rows)
    modal = max(sum(d for _, d in rows), n - sum(d for _, d in rows)) / n
    keys = {k for f, _ in rows for k in f}
    for k in keys:
        agree = sum(f.get(k, False) is d for f, d in rows) / n
        assert max(agree, 1 - agree) <= modal + 0.10, (k, agree, modal)
    assert n > 150, n


def test_em_practice_and_credential_words_are_alike_in_every_branch(
        train: list[dict[str, Any]]) -> None:
    """Round 4's red team: "Urgent Care" named only the other practice (35 of 35 on train)
    and NP assessors were over-drawn where the E/M was not distinct. The billing and the
    other practice come from one pool and every assessor's credential from one
    distribution, so each such word is about as common in either story."""
    by: dict[bool, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    n: collections.Counter[bool] = collections.Counter()
    for s in train:
        if s["variant"]["family"] != "em":
            continue
        d = s["variant"]["distinct_documented"]
        note = next(t for c, t in _notes(s).items() if c.startswith("992"))
        n[d] += 1
        for word in ("UC", "FM", "PC", "FP", "FHA", "Dr.", "NP", "PA-C", "MD", "DO",
                     "scribe", "MA"):
            by[d][word] += re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", note) is not None
    for word in by[True] | by[False]:
        rates = [by[d][word] / n[d] for d in (True, False)]
        pooled = (by[True][word] + by[False][word]) / (n[True] + n[False])
        # within three standard errors of the difference (a dozen words are compared)
        se = math.sqrt(pooled * (1 - pooled) * (1 / n[True] + 1 / n[False]))
        assert abs(rates[0] - rates[1]) <= max(3 * se, 0.02), (word, rates)


def test_credentials_follow_the_specialty(dev: list[dict[str, Any]],
                                          test_split: list[dict[str, Any]],
                                          train: list[dict[str, Any]]) -> None:
    """Physical therapy (97xxx, incl. the 97164-GP re-evaluation) is rendered by a physical
    therapist and a podiatry practice's nail procedures by a podiatrist (billing review
    round 3); other practices draw MD, DO, NP or PA-C in every branch."""
    seen: dict[str, set[str]] = collections.defaultdict(set)
    for s in dev + test_split + train:
        provider = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        cred = provider["provider"]["rendering_clinician"].rsplit(", ", 1)[1]
        seen[provider["provider"]["specialty"]].add(cred)
    assert seen["physical therapy"] == {"PT", "DPT"}, seen
    assert seen["podiatry"] == {"DPM"}, seen
    for spec, creds in seen.items():
        if spec not in ("physical therapy", "podiatry"):
            assert creds <= {"MD", "DO", "NP", "PA-C"}, (spec, creds)


def test_pre_procedure_names_the_drawn_joint() -> None:
    """A visit before a joint injection names the injected joint, not the code's usual
    one (billing review round 3, 82016: 'the knee injection chosen' before a shoulder
    20610)."""
    from clarus_env.tasks.abductive_conflict import generator as g
    found = 0
    for seed in range(400):
        st = g._story_em("99214", "20610", seed % 2 == 0, False, random.Random(seed))
        note = next(t for c, t in st["notes"].items() if c.startswith("992"))
        if "shoulder" in note or "hip" in note:
            found += 1
            assert "knee injection" not in note, note
    assert found > 20, found


def _proc_sides(s: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The side words each of the two procedure notes prints, verbatim (R/L not read)."""
    a, b = (set(re.findall(r"\b(left|right)\b", t.split(": ", 1)[1]))
            for t in _notes(s).values())
    return a, b


def test_procedure_side_words_do_not_tell_the_branch(train: list[dict[str, Any]]) -> None:
    """Round 4's red team: in the two-procedure family, different left/right words appeared
    only in distinct stories (71 of 112 on train, 0 of 110 same-site). A distinct second
    site is now on the same side about as often as on the other (another joint, toe or
    lesion site of the same limb, an ankle block beside a hand procedure), and every note
    writes its side spelled out or as R/L, so comparing the printed side words tells
    distinct from not distinct no better than the modal share + 0.10."""
    rows = []
    same_side = other_side = 0
    for s in train:
        v = s["variant"]
        if v["family"] != "proc" or v["branch"] not in ("b", "c", "a1m", "a1n"):
            continue
        a, b = _proc_sides(s)
        rows.append((a != b, v["distinct_documented"]))
        if v["distinct_documented"]:
            # the procedure sentence (a remark on the other side may follow it)
            sites = [re.sub(r"\bR\b", "right", re.sub(r"\bL\b", "left",
                                                      t.split(": ", 1)[1].split(". ")[0]))
                     for t in _notes(s).values()]
            sides = [set(re.findall(r"\b(left|right)\b", t)) for t in sites]
            if all(len(x) == 1 for x in sides):
                same_side += sides[0] == sides[1]
                other_side += sides[0] != sides[1]
    n = len(rows)
    modal = max(sum(d for _, d in rows), n - sum(d for _, d in rows)) / n
    agree = sum(f is d for f, d in rows) / n
    assert max(agree, 1 - agree) <= modal + 0.10, (agree, modal, n)
    assert n > 150, n
    # distinct sites on one side at least about as often as on two (the same-side count
    # also holds the second lesions at one named site)
    assert same_side >= 0.6 * other_side > 10, (same_side, other_side)


def test_a_same_side_distinct_pair_never_takes_two_equal_anatomic_modifiers(
        train: list[dict[str, Any]]) -> None:
    """Two distinct procedures on one side bypass the edit with XS/59 (or the digits' own
    T-modifiers), never with a right/left pair that names a side the notes do not."""
    for s in train:
        v = s["variant"]
        if v["family"] != "proc" or not v["distinct_documented"]:
            continue
        mods = [m for ms in v["claim_modifiers"].values() for m in ms]
        anatomic = [m for m in mods if m in gen.SIDE_FLIP]
        if anatomic:
            assert len(set(anatomic)) == 2, (s["seed"], mods)
            notes = " ".join(_notes(s).values())
            if set(anatomic) == {"RT", "LT"}:
                assert re.search(r"\b(right|R) ", notes) and re.search(r"\b(left|L) ", notes)


def test_indicator_0_mostly_documents_a_distinct_service(train: list[dict[str, Any]]) -> None:
    """Round 4's red team: the heuristic lost only 0.056 without the NCCI lookup. An
    indicator-0 edit admits no bypass whatever the notes say, and most of its notes now
    document a distinct service, so an agent that reads the notes but not the indicator
    appeals or corrects them wrongly; no-edit pairs are always distinct (as before)."""
    a0 = [s["variant"]["distinct_documented"] for s in train if s["variant"]["branch"] == "a0"]
    d = [s["variant"]["distinct_documented"] for s in train if s["variant"]["branch"] == "d"]
    assert len(a0) > 25 and 0.7 <= sum(a0) / len(a0) < 1, (sum(a0), len(a0))
    assert all(d), d


def test_site_wordings_are_drawn_alike_in_every_branch(train: list[dict[str, Any]]) -> None:
    """Round 4's red team: which words two procedure notes share told a same-site story from
    a distinct one. A joint, nerve, tendon sheath or nail is named in its catalog form or an
    equivalent wording (``SITE_WORDS``), drawn per note: each wording is about as common in
    distinct as in same-site stories, and a same-site story's two notes word the site
    differently in a good share of visits (the exact reading, ``_sites_distinct``, reads
    every wording back to its site)."""
    used: dict[bool, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    named: dict[bool, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    name_of = {w: name for name, wordings in gen.SITE_WORDS for w in wordings}
    differ = same_site = 0
    for s in train:
        v = s["variant"]
        if v["family"] != "proc":
            continue
        notes = [t.split(": ", 1)[1] for t in _notes(s).values()]
        forms = []
        for note in notes:
            for name, wordings in gen.SITE_WORDS:
                hit = next((w for w in sorted(wordings, key=len, reverse=True) if w in note),
                           None)
                if hit is not None:
                    used[v["distinct_documented"]][hit] += 1
                    named[v["distinct_documented"]][name] += 1
                    forms.append((name, hit))
                    break
        if not v["distinct_documented"] and len(forms) == 2 and forms[0][0] == forms[1][0]:
            same_site += 1
            differ += forms[0][1] != forms[1][1]
    for w in used[True] | used[False]:  # each wording's share of its site's notes
        k = [named[d][name_of[w]] for d in (True, False)]
        if min(k) < 10:
            continue
        rates = [used[d][w] / k[i] for i, d in enumerate((True, False))]
        pooled = (used[True][w] + used[False][w]) / sum(k)
        se = math.sqrt(pooled * (1 - pooled) * (1 / k[0] + 1 / k[1]))
        assert abs(rates[0] - rates[1]) <= max(3 * se, 0.02), (w, rates)
    assert same_site > 10 and differ / same_site >= 0.3, (differ, same_site)


def _therapy_train(train: list[dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                          list[dict[str, Any]]]:
    """Train's indicator-1 therapy scenarios (the clock decides the branch), cut in a fitted
    two-thirds and a held-out third."""
    rows = [s for s in train if s["variant"]["family"] == "therapy"
            and s["variant"]["branch"] in ("b", "c", "a1m", "a1n")]
    return rows[: 2 * len(rows) // 3], rows[2 * len(rows) // 3:]


def test_therapy_minutes_follow_the_8_minute_rule(train: list[dict[str, Any]]) -> None:
    """Each therapy line is billed at one unit: a timed service has 8-22 minutes, two timed
    services 23-37 timed minutes together (CMS Pub. 100-04 ch. 5 §20.2); starts fall on any
    minute and every service's minutes vary (round 5: fixed per code, 5-minute grid)."""
    minutes: dict[str, list[int]] = collections.defaultdict(list)
    starts = set()
    for s in train:
        if s["variant"]["family"] != "therapy":
            continue
        e = s["expected"]
        notes = _notes(s)
        got = {c: _therapy_interval(notes[c]) for c in (e["paid_code"], e["denied_code"])}
        timed = [end - start for c, (start, end, _) in got.items()
                 if c not in gen.UNTIMED_MINUTES]
        assert all(8 <= m <= 22 for m in timed), (s["seed"], got)
        if len(timed) == 2:
            assert 23 <= sum(timed) <= 37, (s["seed"], got)
        for c, (start, end, _) in got.items():
            minutes[c].append(end - start)
            starts.add(start % 60)
    assert len(starts) == 60
    # every code seen 10 times or more: at least 5 different lengths
    assert all(len(set(v)) >= 5 for v in minutes.values() if len(v) >= 10), minutes


def _session_timed_minutes(notes: dict[str, str], codes: tuple[str, str]) -> int:
    """The minutes of the session covered by a timed service, each minute counted once."""
    covered: set[int] = set()
    for c in codes:
        if c not in gen.UNTIMED_MINUTES:
            start, end, _ = _therapy_interval(notes[c])
            covered.update(range(start, end))
    return len(covered)


def test_overlapping_timed_services_make_one_unit(train: list[dict[str, Any]],
                                                  fresh: list[dict[str, Any]]) -> None:
    """Review round 6, C1: two timed services that overlap are keyed as one service's time,
    but CMS counts the session's total timed minutes (Pub. 100-04 ch. 5 §20.2), so 23 or more
    distinct minutes would support the two units billed. Every not-distinct story with two
    timed services stays at 8-22 distinct minutes (one unit); distinct ones reach 23+."""
    seen = {True: 0, False: 0}
    for s in train + fresh:
        v, e = s["variant"], s["expected"]
        codes = (e["paid_code"], e["denied_code"])
        if v["family"] != "therapy" or any(c in gen.UNTIMED_MINUTES for c in codes):
            continue
        total = _session_timed_minutes(_notes(s), codes)
        distinct = bool(v["distinct_documented"])
        seen[distinct] += 1
        assert (total >= 23) if distinct else (8 <= total <= 22), (s["seed"], total, v)
    assert min(seen.values()) >= 20, seen
    # the clock itself, over many draws of every pair of timed minutes
    rng = random.Random(7)
    for _ in range(20000):
        m1, m2 = gen._therapy_minutes("97110", "97530", rng)
        t1, t2 = gen._therapy_clock(m1, m2, False, rng, span_cap=gen.ONE_UNIT_MAX)
        covered = set(range(t1, t1 + m1)) | set(range(t2, t2 + m2))
        assert len(covered) <= 22 and covered == set(range(min(covered), max(covered) + 1))


def test_therapy_clock_tokens_do_not_tell_the_branch(train: list[dict[str, Any]]) -> None:
    """Round 5's red team read the therapy branch from each note's digit runs by position
    (trees: 1.000) and from a table of printed minute tokens (0.771-0.976): the clock was a
    small grid with fixed durations. Fitted on two thirds of train's indicator-1 therapy
    scenarios, a gradient-boosted model over each note's digit runs by position and a
    minute-token lookup stay within 0.10 of the held-out third's modal share."""
    pytest.importorskip("sklearn")
    from sklearn.ensemble import HistGradientBoostingClassifier

    fit, held = _therapy_train(train)

    def digits(s: dict[str, Any]) -> list[float]:
        e = s["expected"]
        notes = _notes(s)
        row: list[float] = []
        for code in (e["paid_code"], e["denied_code"]):
            runs = [float(x) for x in re.findall(r"\d+", notes[code].split(": ", 1)[1])][:8]
            row += runs + [-1.0] * (8 - len(runs))
        return row

    def label(s: dict[str, Any]) -> bool:
        return bool(s["variant"]["distinct_documented"])

    base = max(collections.Counter(map(label, held)).values()) / len(held)
    model = HistGradientBoostingClassifier(max_iter=300, random_state=0)
    model.fit([digits(s) for s in fit], [label(s) for s in fit])
    acc = statistics.mean(bool(p) == label(s) for p, s in
                          zip(model.predict([digits(s) for s in held]), held, strict=True))
    print(f"digit runs by position: {acc:.3f} (held-out modal {base:.3f}, n={len(held)})")
    assert acc <= base + 0.10, (acc, base)

    def minute_key(s: dict[str, Any]) -> tuple[str, ...]:
        notes = _notes(s)
        e = s["expected"]
        # every printed minute-of-hour (the MM of HH:MM) and duration, note by note
        return tuple(tuple(re.findall(r":(\d\d)\b|\b(\d+) min", notes[c]))
                     for c in (e["paid_code"], e["denied_code"]))

    table: dict[Any, collections.Counter[bool]] = collections.defaultdict(collections.Counter)
    for s in fit:
        table[minute_key(s)][label(s)] += 1
    modal = collections.Counter(map(label, fit)).most_common(1)[0][0]
    acc = statistics.mean((table[minute_key(s)].most_common(1)[0][0]
                           if minute_key(s) in table else modal) == label(s) for s in held)
    print(f"minute-token lookup: {acc:.3f}")
    assert acc <= base + 0.10, (acc, base)


def test_both_sides_are_named_alike_in_every_branch(train: list[dict[str, Any]]) -> None:
    """Round 5's red team: a right-word and a left-word somewhere in the two notes occurred
    only in distinct procedure stories (0/114 not distinct, 55/114 distinct on train). Per
    family, that conjunction's rate is now equal between the two documentation branches
    within 3 standard errors, and so is each note's (one note naming both sides). A side word
    is read in any case: a remark opening a sentence ("Right-hand dominant", "Left wrist
    nontender") names a side as much as "right" does (the case-sensitive reading missed them,
    so only remarks made the not-distinct rate vary: 0.968 against 0.889 at 28118e5)."""
    right = re.compile(r"\b(right|R)\b", re.IGNORECASE)
    left = re.compile(r"\b(left|L)\b", re.IGNORECASE)

    def both(text: str) -> bool:
        return bool(right.search(text) and left.search(text))

    for family in ("em", "proc", "apart", "therapy"):
        for what in ("pair", "note"):
            rates = []
            for distinct in (True, False):
                rows = [s for s in train if s["variant"]["family"] == family
                        and s["variant"]["distinct_documented"] is distinct]
                if not rows:
                    continue
                hits = [both(" ".join(_notes(s).values())) if what == "pair"
                        else any(both(n) for n in _notes(s).values()) for s in rows]
                rates.append((statistics.mean(hits), len(rows)))
            if len(rates) < 2:
                continue
            (p1, n1), (p2, n2) = rates
            pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
            se = math.sqrt(max(pooled * (1 - pooled), 1e-9) * (1 / n1 + 1 / n2))
            print(family, what, f"{p1:.3f} (n={n1}) vs {p2:.3f} (n={n2}), se {se:.3f}")
            assert abs(p1 - p2) <= 3 * se, (family, what, p1, p2, se)


def test_the_other_side_remark_never_contradicts_a_note(fresh: list[dict[str, Any]]) -> None:
    """Review round 6, N3: a finding on the other side today ("L hand without numbness"
    beside an L carpal-tunnel injection, "the other foot's nails without thickening" after
    debriding 7 toenails) contradicted the other note or the note itself. The remark is a
    past history item or hand dominance, which fits every story."""
    for forms in gen.CONTRALATERAL.values():
        assert all(f.startswith("History: ") or f == "{S}-hand dominant." for f in forms), forms
    findings = re.compile(r"without (numbness|thickening|lesions|trigger)|nontender|intact\.|"
                          r"examined for comparison|No similar lesions|canal clear|triggers on")
    n = 0
    for s in fresh:
        if s["variant"]["family"] != "proc":
            continue
        for note in _notes(s).values():
            assert not findings.search(note), (s["seed"], note)
            n += "History: " in note or "-hand dominant" in note
    assert n >= 50, n


def test_urgent_cares_do_no_planned_procedures(fresh: list[dict[str, Any]]) -> None:
    """Review round 6, N2: urgent cares billed mycotic-nail debridement and actinic-keratosis
    destruction; such a visit now bills at a family practice."""
    urgent = 0
    for s in fresh:
        if s["variant"]["family"] != "em":
            continue
        prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
        codes = {s["expected"]["paid_code"], s["expected"]["denied_code"]}
        if prov["provider"]["specialty"] == "urgent care":
            urgent += 1
            assert not codes & gen.NOT_URGENT_CARE, (s["seed"], codes)
    assert urgent >= 5, urgent


@pytest.mark.slow
def test_em_practice_tables_and_months_do_not_tell_the_branch(
        ref: Any, train: list[dict[str, Any]], test_split: list[dict[str, Any]],
        dev: list[dict[str, Any]]) -> None:
    """Round 5's red team decided the E/M visits by two learned tables, (billing practice,
    the entry's place word) and (date-of-service month, entry month), fitted on train (7
    practice names; earlier visits 7-42 days back). Practice names are now drawn per
    scenario from 540, and earlier visits lie 2-5 business days back (round 7): the tables
    fit on train's indicator-1 E/M visits stay within 0.10 of the modal share on dev and
    test. The place word alone agrees with "this group"
    about equally in both branches (the group's other office; another group in its town),
    an urgent care manages no chronic problem, and every carried-forward visit is in the
    account history."""
    def rows(split: list[dict[str, Any]]) -> list[tuple[Any, Any, bool]]:
        out = []
        for s in split:
            v = s["variant"]
            if v["family"] != "em" or v["branch"] not in ("b", "c", "a1m", "a1n"):
                continue
            prov = next(a for a in s["artifacts"] if a["type"] == "provider_record")["data"]
            m = STAMP.search(next(t for c, t in _notes(s).items() if c.startswith("992")))
            assert m
            dos = prov["date_of_service"]
            entry = f"{m[3]}-{m[1]}-{m[2]}"  # today, or 2-5 business days back
            back = gen._recent_days(dt.date.fromisoformat(dos))
            assert entry == dos or dt.date.fromisoformat(entry) in back, (s["seed"], m[0], dos)
            place = m[5].rsplit(" ", 1)[0].removesuffix(" Walk-In")
            billing = prov["provider"]["name"]
            out.append(((billing, place), (dos[5:7], m[1]), v["distinct_documented"],
                        place == gen._place_kind(billing)[0]))
            if not v["distinct_documented"] and m[3] + "-" + m[1] + "-" + m[2] != dos:
                history = {h["date_of_service"] for h in prov["statement"]["account_history"]}
                assert f"{m[3]}-{m[1]}-{m[2]}" in history, s["seed"]
            if prov["provider"]["specialty"] == "urgent care":
                assert any(d in gen.URGENT_CARE_DX for d in prov["diagnoses"]), s["seed"]
        return out

    fit = rows(train)
    # the law: 4,000 seeds outside every split (~750 visits); the month table reads ~0.55
    # there against 0.51 (a carried-forward entry crosses a month in 1 of 12 visits that
    # were not distinct). On a split's 28-48 visits a chance reader's accuracy has a
    # standard error of 0.07-0.09, so a split is held to the bar plus one standard error
    # (domain-review round 7's redraw: dev's month table 17/28, test's 0.583)
    fresh = [compile_scenario(TASK, s, ref) for s in range(8_000_000, 8_004_000)]
    for key in (0, 1):
        table: dict[Any, collections.Counter[bool]] = collections.defaultdict(
            collections.Counter)
        for r in fit:
            table[r[key]][r[2]] += 1
        modal_fit = collections.Counter(r[2] for r in fit).most_common(1)[0][0]
        for split, slack in ((fresh, 0.0), (dev, 1.0), (test_split, 1.0)):
            held = rows(split)
            base = max(collections.Counter(r[2] for r in held).values()) / len(held)
            acc = statistics.mean((table[r[key]].most_common(1)[0][0] if r[key] in table
                                   else modal_fit) == r[2] for r in held)
            bar = base + 0.10 + slack * math.sqrt(0.25 / len(held))
            assert acc <= bar, (key, len(held), acc, base)
    same = {d: [r[3] for r in fit if r[2] is d] for d in (True, False)}
    p1, p2 = statistics.mean(same[True]), statistics.mean(same[False])
    se = math.sqrt(0.25 * (1 / len(same[True]) + 1 / len(same[False])))
    assert abs(p1 - p2) <= 3 * se, (p1, p2, se)
