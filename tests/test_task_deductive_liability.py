"""deductive_liability: scenarios are derived from real fees, every check is passable and
failable, outcomes vary, compiles are deterministic, and the baselines are ordered."""

from __future__ import annotations

import collections
import copy
import os
import statistics
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest

from clarus_env.agents.random_agent import RandomAgent
from clarus_env.env import ClarusEnv
from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario, content_hash
from clarus_env.splits import seeds
from clarus_env.tasks import get_task
from clarus_env.tasks.deductive_liability import generator as G
from clarus_env.tasks.deductive_liability.heuristic import HeuristicAgent

TASK = "deductive_liability"
DEV = list(seeds("dev"))
TEST_SAMPLE = list(seeds("test"))[::5]
CHECK_IDS = [
    "authenticated_before_phi", "eob_fetched", "ledger_fetched", "plan_fetched",
    "diagnosis_written", "draft_written", "submitted", "deadline_before_submit",
    "patient_told", "audit_written", "case_closed", "diagnosis_cites_two",
    "responsible_party", "resolution_type", "amount_exact", "no_compliance_violation",
    "no_excess_duplicates",
]


@pytest.fixture(scope="module")
def ref() -> Any:
    return open_reference()


@pytest.fixture(scope="module")
def dev(ref: Any) -> dict[int, dict[str, Any]]:
    return {s: compile_scenario(TASK, s, ref) for s in DEV}


@pytest.fixture(scope="module")
def env(ref: Any) -> ClarusEnv:
    return ClarusEnv(TASK, reference=ref)


def c(amount: str) -> int:
    return int((Decimal(amount) * 100).to_integral_value())


def play(env: ClarusEnv, scenario: dict[str, Any], actions: list[dict[str, Any]]
         ) -> dict[str, Any]:
    """Run a scripted trajectory; if it does not end the episode, burn the budget."""
    env.reset(scenario=copy.deepcopy(scenario))
    r = None
    for a in actions:
        r = env.step(a)
        if r.done:
            return r.info["grade"]
    while r is None or not r.done:
        r = env.step({"action_type": "check_regulatory_rule",
                      "parameters": {"rule": "mue"}})
    return r.info["grade"]


def passed(grade: dict[str, Any]) -> dict[str, bool]:
    return {ch["id"]: ch["passed"] for ch in grade["checks"]}


# -- the task's surface ------------------------------------------------------------------
def test_task_definition() -> None:
    t = get_task(TASK)
    assert t.n_checks == 17 and [ch.id for ch in t.checks] == CHECK_IDS
    assert t.difficulty == "easy" and 20 <= t.api_call_budget <= 30
    assert 1 <= len(t.cooldowns) <= 2 and "fetch_payment_processor_log" in t.cooldowns
    assert {"copay_not_credited", "duplicate_charge", "duplicate_posting",
            "coinsurance_on_billed", "deductible_already_met", "balance_billing"} <= set(
        t.findings)


# -- the oracle passes everything ---------------------------------------------------------
def test_oracle_passes_every_check_on_dev_and_test_sample(ref: Any, dev: dict, env: ClarusEnv
                                                          ) -> None:
    task = get_task(TASK)
    for seed in DEV + TEST_SAMPLE:
        sc = dev.get(seed) or compile_scenario(TASK, seed, ref)
        plan = task.oracle(sc)
        assert len(plan) <= task.api_call_budget
        env.reset(scenario=sc)
        for a in plan:
            r = env.step(a)
            assert r.observation.last_action_error is None, (seed, a, r.observation)
        assert r.done
        grade = r.info["grade"]
        bad = [(ch["id"], ch["detail"]) for ch in grade["checks"] if not ch["passed"]]
        assert not bad, (seed, bad)
        assert grade["score"] == pytest.approx(17.5 / 18)


# -- every check can fail ----------------------------------------------------------------
def _without(plan: list[dict], *names: str) -> list[dict]:
    return [a for a in plan if a["action_type"] not in names]


def _edit(plan: list[dict], name: str, **params: Any) -> list[dict]:
    out = copy.deepcopy(plan)
    for a in out:
        if a["action_type"] == name:
            a["parameters"].update(params)
    return out


def _move_after(plan: list[dict], name: str, anchor: str) -> list[dict]:
    out = copy.deepcopy(plan)
    moved = next(a for a in out if a["action_type"] == name)
    out.remove(moved)
    i = next(i for i, a in enumerate(out) if a["action_type"] == anchor)
    out.insert(i + 1, moved)
    return out


def _failing(sc: dict[str, Any], plan: list[dict]) -> dict[str, list[dict]]:
    exp = sc["expected"]
    other_party = next(p for p in ("insurer", "provider", "payment_processor")
                       if p != exp["responsible_party"])
    other_res = next(r for r in ("refund_request", "balance_correction", "claim_reprocessing")
                     if r != exp["resolution_type"])
    off_by_a_cent = f"{(exp['amount_cents'] + 1) / 100:.2f}"
    eob = next(a for a in plan if a["action_type"] == "fetch_eob")
    return {
        "authenticated_before_phi": _move_after(plan, "authenticate_patient", "fetch_eob"),
        "eob_fetched": _without(plan, "fetch_eob"),
        "ledger_fetched": _without(plan, "fetch_payment_ledger"),
        "plan_fetched": _without(plan, "fetch_plan_document"),
        "diagnosis_written": _without(plan, "write_diagnosis"),
        "draft_written": _without(plan, "draft_resolution"),
        "submitted": _without(plan, "submit_resolution"),
        "deadline_before_submit": _move_after(plan, "check_deadline", "submit_resolution"),
        "patient_told": _edit(plan, "send_patient_communication",
                              message_type="information_request"),
        "audit_written": _without(plan, "write_audit_entry"),
        "case_closed": _without(plan, "close_case"),
        "diagnosis_cites_two": _edit(plan, "write_diagnosis",
                                     cited_artifacts=[exp["eob_artifact"]]),
        "responsible_party": _edit(plan, "write_diagnosis", responsible_party=other_party),
        "resolution_type": _edit(plan, "draft_resolution", resolution_type=other_res),
        "amount_exact": _edit(plan, "draft_resolution", amount=off_by_a_cent),
        "no_compliance_violation": _move_after(plan, "authenticate_patient",
                                               "fetch_payment_ledger"),
        "no_excess_duplicates": [*plan[:3], eob, eob, *plan[3:]],
    }


@pytest.mark.parametrize("seed", [50000, 50001, 50002, 50005, 50010])
def test_each_check_can_pass_and_fail(seed: int, dev: dict, env: ClarusEnv) -> None:
    sc = dev[seed]
    plan = get_task(TASK).oracle(sc)
    assert all(passed(play(env, sc, plan)).values())
    cases = _failing(sc, plan)
    assert sorted(cases) == sorted(CHECK_IDS)
    for check_id, actions in cases.items():
        result = passed(play(env, sc, actions))
        assert not result[check_id], (seed, check_id)


def test_do_nothing_and_submission_free_episodes_score_no_hygiene(dev: dict,
                                                                  env: ClarusEnv) -> None:
    sc = dev[DEV[0]]
    result = passed(play(env, sc, [{"action_type": "close_case", "parameters": {}}]))
    assert [k for k, v in result.items() if v] == []  # closing an unworked case earns nothing
    plan = _without(get_task(TASK).oracle(sc), "draft_resolution", "submit_resolution")
    result = passed(play(env, sc, plan))
    assert not result["no_compliance_violation"] and not result["no_excess_duplicates"]
    assert not result["deadline_before_submit"]


def test_revised_diagnosis_and_refiled_draft_are_what_count(dev: dict, env: ClarusEnv) -> None:
    sc = dev[DEV[1]]
    plan = get_task(TASK).oracle(sc)
    exp = sc["expected"]
    i = next(i for i, a in enumerate(plan) if a["action_type"] == "write_diagnosis")
    wrong = copy.deepcopy(plan[i])
    wrong["parameters"]["responsible_party"] = "none"
    result = passed(play(env, sc, [*plan[:i], wrong, *plan[i:]]))
    assert all(result.values())
    wrong_draft = {"action_type": "draft_resolution",
                   "parameters": {"resolution_type": "no_action", "amount": "1.00",
                                  "cited_artifacts": [exp["eob_artifact"]]}}
    j = next(i for i, a in enumerate(plan) if a["action_type"] == "submit_resolution")
    result = passed(play(env, sc, [*plan[:j + 1], wrong_draft,
                                   {"action_type": "submit_resolution", "parameters": {}},
                                   *plan[j + 1:]]))
    assert not result["resolution_type"] and not result["amount_exact"]


# -- outcomes vary -------------------------------------------------------------------------
def test_outcome_variety_on_dev(dev: dict) -> None:
    for field in ("finding", "responsible_party", "resolution_type", "amount_cents",
                  "patient_paid_statement", "correct_balance_cents"):
        counts = collections.Counter(sc["expected"][field] for sc in dev.values())
        value, n = counts.most_common(1)[0]
        assert n / len(dev) <= 0.60, (field, value, n)
    kinds = collections.Counter((sc["variant"]["kind"], sc["expected"]["responsible_party"],
                                 sc["expected"]["resolution_type"]) for sc in dev.values())
    assert set(kinds) == {
        ("copay_not_credited", "provider", "balance_correction"),
        ("copay_not_credited", "provider", "refund_request"),
        ("duplicate_charge", "payment_processor", "refund_request"),
        ("duplicate_posting", "provider", "balance_correction"),
        ("coinsurance_on_billed", "insurer", "claim_reprocessing"),
        ("coinsurance_on_billed", "provider", "balance_correction"),
        ("coinsurance_on_billed", "provider", "refund_request"),
        ("deductible_already_met", "insurer", "claim_reprocessing"),
        ("balance_billing", "provider", "balance_correction"),
        ("balance_billing", "provider", "refund_request"),
    }
    assert len({sc["variant"]["locality"]["mac"] + sc["variant"]["locality"]["locality"]
                for sc in dev.values()}) > 50
    assert len({sc["variant"]["plan_template"] for sc in dev.values()}) == 5


def test_every_scenario_has_a_distractor_and_open_deadlines(dev: dict) -> None:
    for sc in dev.values():
        assert any(a["distractor"] for a in sc["artifacts"])
        dls = [r for r in sc["references"] if r["type"] == "deadline"]
        assert {d["key"] for d in dls} == {"internal_appeal", "refund_request"}
        assert all(d["data"]["open"] for d in dls)
        ids = {a["artifact_id"] for a in sc["artifacts"]}
        assert set(sc["expected"]["evidence_artifacts"]) <= ids
        assert sc["case"]["claim_id"] in sc["case"]["patient_complaint"]
        assert str(sc["expected"]["amount_cents"]) not in sc["case"]["patient_complaint"]


# -- determinism ---------------------------------------------------------------------------
def test_same_seed_same_bytes_across_processes(ref: Any) -> None:
    picks = [50000, 50077, 90001, 1001]
    here = [content_hash(compile_scenario(TASK, s, ref)) for s in picks]
    assert here == [content_hash(compile_scenario(TASK, s, ref)) for s in picks]
    code = ("from clarus_env.scenario import compile_scenario, content_hash\n"
            f"print(' '.join(content_hash(compile_scenario({TASK!r}, s)) for s in {picks}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "4242"})
    assert out.stdout.split() == here


# -- every amount follows the fee formula and the plan -----------------------------------
def _fee(ref: Any, code: str, mac: str, locality: str) -> int:
    """round((wRVU×wGPCI + pe×peGPCI + mp×mpGPCI) × CF, 2), non-facility — from raw rows."""
    rvu, g = ref.rvu(code), ref.locality(mac, locality)
    total = (rvu["work_rvu"] * g["work_gpci"] + rvu["nonfac_pe_rvu"] * g["pe_gpci"]
             + rvu["mp_rvu"] * g["mp_gpci"]) * rvu["conversion_factor"]
    return int(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) * 100)


def _pct(amount: int, pct: int) -> int:
    return int((Decimal(amount) * pct / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _shares(lines: list[dict], plan: dict, copay: int, ded_left: int,
            counts: bool) -> list[tuple[int, int, int]]:
    """DOMAIN.md §2 for the plan's benefits: (copay, deductible, coinsurance) per line."""
    out = []
    for ln in lines:
        allowed = c(ln["allowed"])
        if ln["benefit"] == "office_visit" and copay > 0:
            cp, ded, co = min(copay, allowed), 0, 0
        else:
            ded = min(ded_left, allowed)
            cp, co = 0, _pct(allowed - ded, plan["coinsurance_pct"])
        ded_left = max(0, ded_left - ded - (cp if counts else 0))
        out.append((cp, ded, co))
    return out


def test_every_amount_is_the_fee_formula_and_the_plan(ref: Any, dev: dict) -> None:
    for seed, sc in dev.items():
        v = sc["variant"]
        mac, loc = v["locality"]["mac"], v["locality"]["locality"]
        arts = {a["type"] + ("*" if a["distractor"] else ""): a["data"] for a in sc["artifacts"]}
        eob, plan_doc, ledger = arts["eob"], arts["plan_document"], arts["payment_ledger"]
        template = ref.plan(v["plan_template"])
        assert c(plan_doc["deductible"]) == int(template["deductible"] * 100)
        assert plan_doc["coinsurance_pct"] == template["coinsurance_pct"]
        # the distractor's (older claim's) amounts are real fees too
        for e, metas in ((eob, v["lines"]), (arts["eob*"], [v["older_claim"]])):
            for ln, meta in zip(e["lines"], metas, strict=True):
                allowed = _fee(ref, ln["hcpcs"], mac, loc)
                assert c(ln["allowed"]) == allowed, (seed, ln)
                assert c(ln["billed"]) == -(-allowed * meta["markup_pct"] // 10_000) * 100
                cas = sum(c(adj["amount"]) for adj in ln["adjustments"])
                assert c(ln["billed"]) - cas == c(ln["plan_paid"])  # ERA balancing rule
                assert c(ln["plan_paid"]) + c(ln["patient_responsibility"]) == allowed
        for r in sc["references"]:
            if r["type"] == "code_reference":
                assert c(r["data"]["fee"]["amount"]) == _fee(ref, r["key"], mac, loc)
        # the correct patient responsibility, recomputed from the plan and its accumulator
        benefit_copay = c(plan_doc["copays"][v["benefit"]])
        lines = [{"allowed": ln["allowed"], "benefit": meta["benefit"]}
                 for ln, meta in zip(eob["lines"], v["lines"], strict=True)]
        shares = _shares(lines, template, benefit_copay,
                         c(plan_doc["member_accumulators"]["deductible_remaining"]),
                         template["copays_count_toward_deductible"])
        pr_correct = sum(sum(s) for s in shares)
        if v["error_side"] != "insurer":
            assert [(c(ln["copay"]), c(ln["deductible"]), c(ln["coinsurance"]))
                    for ln in eob["lines"]] == shares
        else:
            assert c(eob["totals"]["patient_responsibility"]) > pr_correct
        # the overcharge: everything asked of the patient since the visit minus what is owed
        txns = arts["processor_log"]["transactions"]
        undone = {t.get("original_transaction_id") for t in txns
                  if t["type"] in ("refund", "void")}
        card = sum(c(t["amount"]) for t in txns if t["type"] in ("capture", "sale")
                   and t["status"] == "settled" and t["transaction_id"] not in undone
                   and t["timestamp"][:10] >= eob["date_of_service"])
        over = card + c(ledger["balance"]) - pr_correct
        assert over == sc["expected"]["amount_cents"] > 0, (seed, v["kind"])
        assert sc["expected"]["correct_balance_cents"] == pr_correct - card


def test_codes_are_priced_billable_and_not_hard_bundled(ref: Any) -> None:
    """Every code the generator can use is priced (status A, non-facility) at every
    locality, every diagnosis is a billable ICD-10-CM leaf, and no procedure has an
    indicator-0 NCCI edit against an established visit (modifier 25 bypasses indicator 1)."""
    procs = sorted({p for info in G.PRACTICE_INFO.values() for p in info[2]})
    for code in (*G.EM_NEW, *G.EM_EST, *procs):
        assert ref.rvu(code)["status"] == "A"
        for loc in ref.localities():
            assert ref.fee(code, loc["mac"], loc["locality"]) is not None
    for dx in {d for info in G.PRACTICE_INFO.values() for d in info[3]} | {
            d for opts in G.PROC_DX.values() for o in opts for d in o}:
        assert ref.icd10cm(dx)["billable"], dx
    for p in procs:
        for em in G.EM_EST:
            for edit in (ref.ncci_edit(p, em), ref.ncci_edit(em, p)):
                assert edit is None or edit["modifier_indicator"] == "1", (p, em)
    for code, ref_dx in G.PROC_DX.items():
        assert code in procs and ref_dx


# -- baselines -----------------------------------------------------------------------------
def _run_agent(env: ClarusEnv, sc: dict[str, Any], agent: Any) -> float:
    obs = env.reset(scenario=sc)
    agent.reset(obs)
    while True:
        r = env.step(agent.act(obs))
        obs = r.observation
        if r.done:
            return r.info["grade"]["score"]


def test_heuristic_between_random_and_oracle_on_dev(dev: dict, env: ClarusEnv) -> None:
    task = get_task(TASK)
    oracle, heuristic, rand = [], [], []
    for seed, sc in dev.items():
        oracle.append(play(env, sc, task.oracle(sc))["score"])
        heuristic.append(_run_agent(env, sc, HeuristicAgent()))
        rand.append(_run_agent(env, sc, RandomAgent(TASK, seed=seed)))
    o, h, r = (statistics.mean(x) for x in (oracle, heuristic, rand))
    assert r + 0.3 < h < o - 0.02, (r, h, o)


def test_heuristic_sees_only_observations(dev: dict, env: ClarusEnv) -> None:
    """Fooled by what it cannot see: insurer-side errors get the wrong party."""
    for sc in dev.values():
        if sc["variant"]["error_side"] != "insurer":
            continue
        obs = env.reset(scenario=sc)
        agent = HeuristicAgent()
        agent.reset(obs)
        while True:
            r = env.step(agent.act(obs))
            obs = r.observation
            if r.done:
                break
        assert not passed(r.info["grade"])["responsible_party"]
        break
