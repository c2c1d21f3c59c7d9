"""abductive_conflict: the oracle passes everything, every check can fail, the TRAP fires
exactly when it should, outcomes vary and follow from the data, amounts equal the MPFS
formula and the plan terms, compiling is deterministic, and the baselines order as they
should (random < heuristic < oracle)."""

from __future__ import annotations

import collections
import copy
import json
import os
import random
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
from clarus_env.tasks.abductive_conflict import generator as gen
from clarus_env.tasks.abductive_conflict.heuristic import HeuristicAgent
from clarus_env.tasks.common import cents, cost_share, dollars, pct_of, plan_terms

TASK = "abductive_conflict"
DEV = list(seeds("dev"))
TEST_SAMPLE = list(seeds("test"))[::5]
OUTCOME_FIELDS = ("finding", "responsible_party", "resolution_type", "appeal_reason")


@pytest.fixture(scope="module")
def ref() -> Any:
    return open_reference()


@pytest.fixture(scope="module")
def dev(ref: Any) -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, ref) for s in DEV]


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


@pytest.mark.parametrize("split_seeds", [DEV, TEST_SAMPLE], ids=["dev", "test-sample"])
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
        "responsible_party": (edit(o, "write_diagnosis", responsible_party=wrong_party), False),
        "resolution_type": (edit(o, "draft_resolution", resolution_type=wrong_type), False),
        "appeal_reason": ((edit(o, "draft_resolution", appeal_reason="medical_necessity")
                           if e["appeal_reason"] != "none" else
                           edit(o, "draft_resolution", resolution_type="appeal",
                                appeal_reason="modifier_bypass_documented")), False),
        "no_compliance_violation": (unauth, False),
    }


@pytest.mark.parametrize("branch", ["a", "b", "c", "d"])
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
    """Where no appeal is due, the check wants no appeal filed AND the patient told why."""
    for branch in ("a", "c"):
        scenario = by_branch(dev, branch)
        o = oracle(scenario)
        assert passed(play(env, scenario, o))["appeal_reason"]
        silent = drop(o, "send_patient_communication")
        assert not passed(play(env, scenario, silent))["appeal_reason"]
        nothing_filed = drop(o, "submit_resolution")
        assert not passed(play(env, scenario, nothing_filed))["appeal_reason"]


def test_do_nothing_scores_almost_nothing(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    for branch in "abcd":
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


@pytest.mark.parametrize("branch", ["a", "b", "c", "d"])
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
    assert not result["responsible_party"] and not result["resolution_type"]
    assert not result["appeal_reason"]


# -- outcomes vary and follow from the data ------------------------------------------------
def test_outcome_variety_on_dev(dev: list[dict[str, Any]]) -> None:
    for field in (*OUTCOME_FIELDS, "modifier_indicator"):
        counts = collections.Counter(s["expected"][field] for s in dev)
        assert len(counts) >= 2, field
        assert counts.most_common(1)[0][1] / len(dev) <= 0.60, (field, counts)
    assert set(collections.Counter(s["variant"]["branch"] for s in dev)) == set("abcd")


def _derive(scenario: dict[str, Any]) -> tuple[str, str, str, str]:
    """The outcome re-derived from what the agent can read: NCCI lookup + claim modifiers."""
    ncci = next(r for r in scenario["references"] if r["type"] == "ncci_edit")["data"]
    claim = next(a for a in scenario["artifacts"] if a["type"] == "claim_record")["data"]
    mods = {m for line in claim["lines"] for m in line["modifiers"]} - {"GP"}
    if not ncci["edit_exists"]:
        return "no_active_edit", "insurer", "appeal", "no_active_edit"
    if ncci["modifier_indicator"] == "0":
        return "legitimate_denial", "none", "no_action", "none"
    if mods:
        return "modifier_bypass_ignored", "insurer", "appeal", "modifier_bypass_documented"
    return "missing_modifier", "provider", "corrected_claim_request", "none"


def test_expected_follows_from_the_bundle(ref: Any, dev: list[dict[str, Any]]) -> None:
    for s in dev:
        e = s["expected"]
        assert _derive(s) == tuple(e[f] for f in OUTCOME_FIELDS), s["seed"]
        edit_row = ref.ncci_edit(e["paid_code"], e["denied_code"])
        if e["modifier_indicator"] == "none":
            assert edit_row is None and ref.ncci_edit(e["denied_code"], e["paid_code"]) is None
        else:
            assert edit_row["modifier_indicator"] == e["modifier_indicator"]
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
            met, oop = pshare["deductible"], pshare["patient"]
        extra = pct_of(deductible - met, v["deductible_met_extra_pct"])
        met, oop = met + extra, oop + extra
        share = _share(e["paid_code"], fee_paid, plan, deductible - met, oop_max - oop)
        for k in ("deductible", "coinsurance", "copay", "plan_paid"):
            assert paid[k] == dollars(share[k]), (s["seed"], k)
        assert paid["patient_responsibility"] == dollars(share["patient"])
        total_adj = sum(cents(a["amount"]) for a in paid["adjustments"])
        assert billed_paid - total_adj == share["plan_paid"]  # the 835 balancing rule
        acc = arts["eob"]["accumulators"]
        assert acc["deductible_met_ytd"] == dollars(met + share["deductible"])
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


def test_heuristic_between_random_and_oracle(dev: list[dict[str, Any]], env: ClarusEnv) -> None:
    oracle_mean = statistics.mean(play(env, s, oracle(s))["score"] for s in dev)
    heuristic = [_run(env, HeuristicAgent(), s) for s in dev]
    random_mean = statistics.mean(_run(env, RandomAgent(TASK, seed=s["seed"]), s) for s in dev)
    assert random_mean < statistics.mean(heuristic) < oracle_mean
    # it appeals every bundling denial: right where an appeal is due (b, d), wrong where the
    # denial stands (a) or the provider must correct the claim (c)
    branch = {s["seed"]: s["variant"]["branch"] for s in dev}
    per = collections.defaultdict(list)
    for s, score in zip(dev, heuristic, strict=True):
        per[branch[s["seed"]]].append(score)
    assert statistics.mean(per["b"]) > statistics.mean(per["a"])
    assert statistics.mean(per["d"]) > statistics.mean(per["c"])
