"""deductive_liability: scenarios are derived from real fees, every check is passable and
failable, outcomes vary (including "nothing is wrong"), nothing but the evidence predicts the
answer (complaint, deadlines, id shapes), answers are graded at the first filing with precise
citations, compiles are deterministic, and the baselines are ordered."""

from __future__ import annotations

import collections
import copy
import datetime as dt
import json
import math
import os
import re
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
from clarus_env.tasks.common import dollars
from clarus_env.tasks.deductive_liability import generator as G
from clarus_env.tasks.deductive_liability.heuristic import HeuristicAgent

TASK = "deductive_liability"
DEV = list(seeds("dev"))
TEST = list(seeds("test"))
TEST_SAMPLE = TEST[::5]
CHECK_IDS = [
    "authenticated_before_phi", "eob_fetched", "ledger_fetched", "plan_fetched",
    "diagnosis_written", "draft_written", "submitted", "deadline_before_submit",
    "patient_told", "audit_written", "case_closed", "diagnosis_cites_two",
    "responsible_party", "resolution_type", "amount_exact", "no_compliance_violation",
    "no_excess_duplicates",
]
OUTCOME_FIELDS = ("finding", "responsible_party", "resolution_type")
FINDINGS = sorted({k.split(":")[0] for k, _ in G.KINDS})


@pytest.fixture(scope="module")
def ref() -> Any:
    return open_reference()


@pytest.fixture(scope="module")
def dev(ref: Any) -> dict[int, dict[str, Any]]:
    return {s: compile_scenario(TASK, s, ref) for s in DEV}


@pytest.fixture(scope="module")
def held_out(ref: Any) -> dict[int, dict[str, Any]]:
    return {s: compile_scenario(TASK, s, ref) for s in TEST}


@pytest.fixture(scope="module")
def train(ref: Any) -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, ref) for s in seeds("train")]


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
    assert set(t.findings) == set(FINDINGS)
    assert {"oop_max_exceeded", "no_error"} <= set(t.findings)
    families = collections.Counter(ch.family for ch in t.checks)
    assert families == {"process": 11, "evidence": 1, "outcome": 3, "hygiene": 2}
    assert [ch.id for ch in t.checks if ch.family == "outcome"] == [
        "responsible_party", "resolution_type", "amount_exact"]


# -- the oracle passes everything ---------------------------------------------------------
def test_oracle_passes_every_check_on_dev_and_test(dev: dict, held_out: dict,
                                                    env: ClarusEnv) -> None:
    task = get_task(TASK)
    for seed, sc in [*dev.items(), *held_out.items()]:
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
        assert grade["score"] == pytest.approx(17.5 / 18) and grade["outcome_correct"]


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


def _other(value: str, options: tuple[str, ...]) -> str:
    return next(o for o in options if o != value)


def _failing(sc: dict[str, Any], plan: list[dict]) -> dict[str, list[dict]]:
    exp = sc["expected"]
    other_party = _other(exp["responsible_party"], ("insurer", "provider", "none"))
    other_res = next(r for r in ("refund_request", "balance_correction", "claim_reprocessing",
                                 "no_action") if r not in exp["accepted_resolutions"])
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


def _seed_of(dev: dict, finding: str, **variant: Any) -> int:
    return next(s for s, sc in dev.items() if sc["expected"]["finding"] == finding
                and all(sc["variant"][k] == v for k, v in variant.items()))


@pytest.mark.parametrize("finding", FINDINGS)
def test_each_check_can_pass_and_fail(finding: str, dev: dict, env: ClarusEnv) -> None:
    sc = dev[_seed_of(dev, finding)]
    plan = get_task(TASK).oracle(sc)
    assert all(passed(play(env, sc, plan)).values())
    cases = _failing(sc, plan)
    assert sorted(cases) == sorted(CHECK_IDS)
    for check_id, actions in cases.items():
        result = passed(play(env, sc, actions))
        assert not result[check_id], (finding, check_id)


def test_do_nothing_and_submission_free_episodes_score_no_hygiene(dev: dict,
                                                                  env: ClarusEnv) -> None:
    sc = dev[DEV[0]]
    result = passed(play(env, sc, [{"action_type": "close_case", "parameters": {}}]))
    assert [k for k, v in result.items() if v] == []  # closing an unworked case earns nothing
    plan = _without(get_task(TASK).oracle(sc), "draft_resolution", "submit_resolution")
    result = passed(play(env, sc, plan))
    assert not result["no_compliance_violation"] and not result["no_excess_duplicates"]
    assert not result["deadline_before_submit"]


# -- no_error: the bill stands, and filing anything else fails -----------------------------
def test_no_error_needs_the_no_action_closure_and_the_confirmed_share(dev: dict,
                                                                     env: ClarusEnv) -> None:
    sc = dev[_seed_of(dev, "no_error")]
    exp = sc["expected"]
    assert exp["responsible_party"] == "none" and exp["resolution_type"] == "no_action"
    assert exp["overcharge_cents"] == 0 and exp["amount_cents"] == exp["patient_share_cents"] > 0
    plan = get_task(TASK).oracle(sc)
    for res in ("refund_request", "balance_correction", "claim_reprocessing"):
        result = passed(play(env, sc, _edit(plan, "draft_resolution", resolution_type=res)))
        assert not result["resolution_type"], res
    for party in ("provider", "insurer", "payment_processor"):
        result = passed(play(env, sc, _edit(plan, "write_diagnosis", responsible_party=party)))
        assert not result["responsible_party"], party
    # "nothing is wrong, $0.00" is not the confirmed share: the amount must come from the chain
    result = passed(play(env, sc, _edit(plan, "draft_resolution", amount="0.00")))
    assert not result["amount_exact"]
    # an error scenario answered with no_error fails
    err = dev[_seed_of(dev, "deductible_already_met")]
    plan = _edit(_edit(get_task(TASK).oracle(err), "write_diagnosis", finding="no_error",
                       responsible_party="none"),
                 "draft_resolution", resolution_type="no_action")
    result = passed(play(env, err, plan))
    assert not result["responsible_party"] and not result["resolution_type"]


def test_accepted_alternatives_are_accepted(dev: dict, env: ClarusEnv) -> None:
    """Provider-side coinsurance on billed may be called balance billing (experts differ)."""
    seed = _seed_of(dev, "coinsurance_on_billed", error_side="provider")
    sc = dev[seed]
    assert sc["expected"]["accepted_findings"] == ["coinsurance_on_billed", "balance_billing"]
    plan = _edit(get_task(TASK).oracle(sc), "write_diagnosis", finding="balance_billing")
    assert all(passed(play(env, sc, plan)).values())
    plan = _edit(get_task(TASK).oracle(sc), "write_diagnosis", finding="duplicate_posting")
    assert not passed(play(env, sc, plan))["responsible_party"]
    # a charge line entered twice is, in revenue-cycle usage, also a "duplicate charge"
    sc = dev[_seed_of(dev, "duplicate_posting")]
    assert sc["expected"]["accepted_findings"] == ["duplicate_posting", "duplicate_charge"]
    plan = _edit(get_task(TASK).oracle(sc), "write_diagnosis", finding="duplicate_charge")
    assert all(passed(play(env, sc, plan)).values())


def test_split_duplicate_credit_accepts_the_part_each_filing_covers(ref: Any,
                                                                    env: ClarusEnv) -> None:
    """Policy "apply" with an open balance smaller than the duplicate: the balance correction
    for the applied part, or the refund of the rest, or either filing for the whole."""
    sc = next(sc for sc in (compile_scenario(TASK, s, ref) for s in seeds("train"))
              if len(sc["expected"]["amount_alternatives"]) == 2)
    exp = sc["expected"]
    whole, alts = exp["amount_cents"], dict(a.split(":") for a in exp["amount_alternatives"])
    ledger = next(a for a in sc["artifacts"] if a["type"] == "payment_ledger")["data"]
    assert int(alts["balance_correction"]) == _open(ledger) > 0
    assert int(alts["balance_correction"]) + int(alts["refund_request"]) == whole
    plan = get_task(TASK).oracle(sc)
    for res, cents, ok in (("balance_correction", int(alts["balance_correction"]), True),
                           ("refund_request", int(alts["refund_request"]), True),
                           ("refund_request", whole, True), ("balance_correction", whole, True),
                           ("refund_request", int(alts["balance_correction"]), False)):
        result = passed(play(env, sc, _edit(plan, "draft_resolution", resolution_type=res,
                                            amount=dollars(cents))))
        assert result["amount_exact"] is ok, (res, cents)


def test_duplicate_capture_credited_to_a_balance_may_also_be_refunded(
        dev: dict, held_out: dict, env: ClarusEnv) -> None:
    """A duplicate card capture the practice's policy credits to an open balance that covers
    it: a refund of the whole duplicate to the card is as defensible (issue 8 D1); a claim
    reprocessing is not."""
    sc = next(sc for sc in [*dev.values(), *held_out.values()]
              if sc["variant"]["kind"] == "duplicate_charge"
              and sc["expected"]["resolution_type"] == "balance_correction")
    assert sc["expected"]["accepted_resolutions"] == ["balance_correction", "refund_request"]
    plan = get_task(TASK).oracle(sc)
    assert all(passed(play(env, sc, _edit(plan, "draft_resolution",
                                          resolution_type="refund_request"))).values())
    assert not passed(play(env, sc, _edit(plan, "draft_resolution",
                                          resolution_type="claim_reprocessing"))
                      )["resolution_type"]


def test_eob_accumulator_is_the_plan_of_record_plus_the_claim(dev: dict,
                                                               held_out: dict) -> None:
    """The insurer's EOB prints its OOP total as of processing: the plan of record before the
    visit plus this claim's patient share, less a harmless lag (round 10b: a claim processed
    elsewhere posting later, which leaves this claim's cost sharing as it is), except where the
    insurer's stale total is the error
    (oop_max_exceeded: at or under the maximum although the plan of record's room was short of
    the share; deductible_already_met: the stale deductible total and the OOP total lag the
    plan of record by the same dollars, since deductible dollars count toward the OOP maximum).

    The plan of record's snapshot is dated (issue 8, round 8). Dated before processing it is
    the state before the visit; dated on or after processing it already counts this claim as
    processed (what the EOB applied, stopping at the limits: round 8b, F1, a total past the
    deductible or the maximum was the two insurer errors' alone) and its history holds the
    reading before processing. Both readings occur in every finding."""
    n = collections.Counter()
    dated = collections.defaultdict(set)
    for sc in [*dev.values(), *held_out.values()]:
        v = sc["variant"]
        plan = next(a for a in sc["artifacts"] if a["type"] == "plan_document")["data"]
        eob = next(a for a in sc["artifacts"] if a["type"] == "eob" and not a["distractor"])
        acc, totals = eob["data"]["accumulators"], eob["data"]["totals"]
        snap = plan["member_accumulators"]
        after = _after_processing(plan, eob["data"])
        assert after == v["snapshot_after_processing"]
        assert snap["as_of"] <= sc["case"]["today"]
        assert ("history" in snap) == after
        dated[v["kind"]].add(after)
        prior = snap["history"][-1] if after else snap
        assert prior["as_of"] < eob["data"]["processed_date"]
        share = c(totals["patient_responsibility"])
        before = c(prior["oop_met_ytd"])
        before_ded = c(prior["deductible_met_ytd"])
        oop_max = c(acc["out_of_pocket_max"])
        deductible = c(acc["deductible"])
        counted = sum(c(ln["deductible"]) + (c(ln["copay"]) if plan[
            "copays_count_toward_deductible"] else 0) for ln in eob["data"]["lines"])
        # every printed total stops at its limit, in every branch (F1)
        for a in (snap, *snap.get("history", [])):
            assert c(a["deductible_met_ytd"]) <= deductible, sc["seed"]
            assert c(a["oop_met_ytd"]) <= oop_max, sc["seed"]
        if after:  # the claim as the insurer processed it, capped at the limits
            # (round 10b) and a claim processed since, where the reading counts one more (OOP
            # dollars outside the deductible, by the law of a claim processed elsewhere)
            since = snap["claims_counted_ytd"] - snap["history"][-1]["claims_counted_ytd"] - 1
            assert since in (0, 1), sc["seed"]
            later = c(snap["oop_met_ytd"]) - min(oop_max, before + share)
            if since:
                assert 0 <= later <= 100 * G.STALE_LAG_MAX, sc["seed"]
                assert later >= 100 or c(snap["oop_met_ytd"]) == oop_max, sc["seed"]
            else:
                assert later == 0, sc["seed"]
        if v["kind"] == "oop_max_exceeded":
            assert c(acc["oop_met_ytd"]) <= oop_max < before + share
        elif v["oop_binds"]:
            assert c(acc["oop_met_ytd"]) == oop_max == before + share
        else:
            oop_lag = before + share - c(acc["oop_met_ytd"])
            if v["kind"] == "deductible_already_met":
                # the EOB's deductible total before the visit: its printed total less what
                # it counted toward the deductible on this claim
                ded_lag = before_ded - (c(acc["deductible_met_ytd"]) - counted)
                # (round 11) at least: where the plan of record has the deductible met (round
                # 11e: close to the cap or not) and copays could not have filled the maximum,
                # the claim the insurer's totals missed met the deductible and carried
                # coinsurance past it, so the OOP total lags more; (round 12b) with deductible
                # left it may have carried one claim's copay outside the deductible
                assert oop_lag >= ded_lag > 0, (sc["seed"], oop_lag, ded_lag)
                if oop_lag > ded_lag and before_ded < deductible:
                    assert oop_lag <= max(c(plan["copays"]["emergency"]), G.RX_COPAY_MAX), \
                        (sc["seed"], oop_lag)
                # the claim's deductible, added to a total already (nearly) met, stops at it
                assert before_ded + counted > deductible, sc["seed"]
                if after:
                    assert c(snap["deductible_met_ytd"]) == deductible
            else:
                # (round 10b) elsewhere the EOB's totals may lag the plan of record too (a
                # claim processed elsewhere posts later), by the same law, and only where the
                # lag leaves this claim's cost sharing as it is: OOP dollars outside the
                # deductible (its printed deductible total then does not lag), or a deductible
                # lag where the claim, lagged or not, does not reach the deductible
                # (round 12) OOP dollars outside the deductible by the missed-claim law; a
                # deductible lag by the stale deductible law
                assert 0 <= oop_lag <= 100 * G.MISSED_CLAIM_MAX, (sc["seed"], oop_lag)
                eob_ded = c(acc["deductible_met_ytd"])
                if eob_ded != min(deductible, before_ded + counted):
                    assert oop_lag <= 100 * G.STALE_LAG_MAX, (sc["seed"], oop_lag)
                    assert oop_lag > 0 and eob_ded == before_ded - oop_lag + counted, sc["seed"]
                    assert before_ded + counted <= deductible, sc["seed"]
                if after:
                    assert c(snap["deductible_met_ytd"]) == min(deductible,
                                                               before_ded + counted)
        n[v["kind"]] += 1
    assert n["oop_max_exceeded"] and len(n) >= 6
    assert all(d == {True, False} for d in dated.values()), dated


def test_a_deductible_the_snapshot_already_counts_is_no_stale_deductible(
        train: list, dev: dict, env: ClarusEnv) -> None:
    """Issue 8, round 8: "the EOB applies more deductible than the plan's room (deductible less
    met)" was the stale-deductible error's alone (125/125 on train). A snapshot taken after the
    claim was processed already counts the claim's own deductible, so the same disagreement now
    occurs in every other finding too, where the EOB is right; the snapshot's date against the
    EOB's processed date decides which it is, and the heuristic reads it."""
    hits = collections.Counter()
    n = collections.Counter()
    for sc in train:
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        plan, eob = arts["plan_document"], arts["eob"]
        applied = sum(c(ln["deductible"]) for ln in eob["lines"])
        naive = c(plan["deductible"]) - c(plan["member_accumulators"]["deductible_met_ytd"])
        kind = sc["expected"]["finding"]
        n[kind] += 1
        if applied > 0 and naive < applied:
            hits[kind] += 1
            if kind != "deductible_already_met":  # the dated reading clears it
                assert _after_processing(plan, eob) and _ded_left(plan, eob) >= applied
    assert hits["deductible_already_met"] == n["deductible_already_met"]
    others = [k for k in n if k not in ("deductible_already_met", "oop_max_exceeded")]
    # at least a fifth of every other finding, and a quarter of them together (round 8's aim: 30%
    # of the rate in deductible_already_met, which is 100%)
    assert all(hits[k] / n[k] >= 0.2 for k in others), {k: hits[k] / n[k] for k in others}
    assert sum(hits[k] for k in others) / sum(n[k] for k in others) >= 0.25, hits
    # the heuristic, reading the dated snapshot, never takes such a claim for a stale one
    wrong = 0
    cases = [sc for sc in dev.values() if sc["variant"]["snapshot_after_processing"]
             and sc["expected"]["finding"] != "deductible_already_met"]
    for sc in cases[:30]:
        agent = HeuristicAgent()
        _grade_of(env, sc, agent)
        wrong += agent.decision["finding"] == "deductible_already_met"
    assert cases and wrong == 0


def test_repair_diagnosis_is_the_repairs_site(dev: dict, held_out: dict) -> None:
    """12001/12002 repair the scalp, neck, trunk or extremities: their laceration is of the
    scalp (S01.01XA), never a face wound (12011/12013's)."""
    n = 0
    for sc in [*dev.values(), *held_out.values()]:
        for a in sc["artifacts"]:
            if a["type"] != "claim_record" or a["distractor"]:
                continue
            codes = json.dumps(a["data"])
            if '"12001"' in codes or '"12002"' in codes:
                n += 1
                assert "S01.01XA" in codes and "S01.81XA" not in codes
    assert n > 0


# -- the answer in force at the first filing is graded -------------------------------------
def test_first_filing_is_what_counts(dev: dict, env: ClarusEnv) -> None:
    sc = dev[_seed_of(dev, "copay_not_credited")]
    plan = get_task(TASK).oracle(sc)
    exp = sc["expected"]
    i = next(i for i, a in enumerate(plan) if a["action_type"] == "write_diagnosis")
    j = next(i for i, a in enumerate(plan) if a["action_type"] == "submit_resolution")
    wrong_dx = copy.deepcopy(plan[i])
    wrong_dx["parameters"].update(responsible_party="insurer", finding="no_error")
    wrong_draft = {"action_type": "draft_resolution",
                   "parameters": {"resolution_type": "no_action", "amount": "1.00",
                                  "cited_artifacts": [exp["eob_artifact"]]}}
    submit = {"action_type": "submit_resolution", "parameters": {}}
    # a wrong diagnosis revised before the filing: the revision counts
    assert all(passed(play(env, sc, [*plan[:i], wrong_dx, *plan[i:]])).values())
    # a wrong re-diagnosis and re-filing after the first filing change nothing
    result = passed(play(env, sc, [*plan[:j + 1], wrong_dx, wrong_draft, submit,
                                   *plan[j + 1:]]))
    assert all(result.values()), result
    # a wrong first filing is not repaired by a right one after it (feedback re-answering)
    right_draft = next(a for a in plan if a["action_type"] == "draft_resolution")
    bad_first = [*plan[:i], wrong_dx, wrong_draft, submit, plan[i], right_draft, submit,
                 *plan[j + 1:]]
    result = passed(play(env, sc, bad_first))
    assert not result["responsible_party"] and not result["resolution_type"]
    assert not result["amount_exact"]


# -- citations are graded for precision ------------------------------------------------------
def test_citing_everything_fails_precision(dev: dict, env: ClarusEnv) -> None:
    for sc in list(dev.values())[:60]:
        exp = sc["expected"]
        relevant = set(exp["relevant_ids"])
        assert relevant <= {a["artifact_id"] for a in sc["artifacts"] if not a["distractor"]}
        assert len(relevant) >= 2
        plan = get_task(TASK).oracle(sc)
        everything = [a["artifact_id"] for a in sc["artifacts"]] + [
            r["artifact_id"] for r in sc["references"]]
        fetch_all = [*plan[:8], *[{"action_type": "check_deadline",
                                   "parameters": {"deadline_type": "refund_request"}}]]
        spam = _edit(plan, "write_diagnosis", cited_artifacts=everything)
        result = passed(play(env, sc, [*fetch_all, *spam[8:]]))
        assert not result["diagnosis_cites_two"], sc["case"]["case_id"]
    # the heuristic's own citation spammer fails it everywhere (below)


def test_diagnosis_must_cite_the_records_that_decide_the_finding(dev: dict, held_out: dict,
                                                                env: ClarusEnv) -> None:
    """relevant_ids are finding-specific and the decisive record(s) must be cited: one fixed
    citation (the EOB and the ledger, say) cannot pass in every branch."""
    decisive_types = collections.defaultdict(set)
    for sc in [*dev.values(), *held_out.values()]:
        exp = sc["expected"]
        by_id = {a["artifact_id"]: a["type"] for a in sc["artifacts"]}
        assert set(exp["decisive_ids"]) <= set(exp["relevant_ids"])
        fkey = exp["finding"] + (":" + sc["variant"]["error_side"]
                                 if exp["finding"] == "coinsurance_on_billed" else "")
        decisive_types[fkey].add(tuple(sorted(by_id[i] for i in exp["decisive_ids"])))
    assert all(len(v) == 1 for v in decisive_types.values()), decisive_types
    assert decisive_types["duplicate_charge"] == {("processor_log",)}
    assert decisive_types["duplicate_posting"] == {("payment_ledger",)}
    assert decisive_types["deductible_already_met"] == {("eob", "plan_document")}
    assert decisive_types["copay_not_credited"] == {("payment_ledger", "processor_log")}
    fixed_ok = 0
    for seed in DEV[:75]:
        sc = dev[seed]
        exp = sc["expected"]
        plan = get_task(TASK).oracle(sc)
        fixed = _edit(plan, "write_diagnosis",
                      cited_artifacts=[exp["eob_artifact"], exp["ledger_artifact"]])
        fixed_ok += passed(play(env, sc, fixed))["diagnosis_cites_two"]
        # the relevant records without a decisive one fail
        rest = [i for i in exp["relevant_ids"] if i != exp["decisive_ids"][0]]
        if len(rest) >= 2:
            result = passed(play(env, sc, _edit(plan, "write_diagnosis", cited_artifacts=rest)))
            assert not result["diagnosis_cites_two"], seed
    assert fixed_ok / 75 <= 0.25, fixed_ok


def test_heuristic_cite_all_fails_precision(dev: dict, env: ClarusEnv) -> None:
    for sc in list(dev.values())[:40]:
        grade = _grade_of(env, sc, HeuristicAgent(cite_all=True))
        assert not passed(grade)["diagnosis_cites_two"]


# -- grade details never reveal the expected answer ---------------------------------------
def test_details_never_reveal_the_expected_answer(dev: dict, env: ClarusEnv) -> None:
    for sc in list(dev.values())[:40]:
        exp = sc["expected"]
        wrong = {"finding": _other(exp["finding"], ("balance_billing", "duplicate_posting")),
                 "responsible_party": _other(exp["responsible_party"],
                                             ("payment_processor", "insurer")),
                 "resolution_type": "appeal", "amount_cents": exp["amount_cents"] + 777}
        grade = _grade_of(env, sc, HeuristicAgent(decide=lambda view, w=wrong: w))
        text = " ".join(ch["detail"] for ch in grade["checks"])
        assert dollars(exp["amount_cents"]) not in text
        assert exp["resolution_type"] not in text and exp["finding"] not in text
        assert f"party: {exp['responsible_party']}" not in text
        assert not re.search(r"\((in)?correct\)|\(wrong\)", text)
        assert not any(i in text for i in exp["relevant_ids"])


def test_plan_copays_are_tiered(ref: Any, dev: dict, held_out: dict) -> None:
    """Plans tier copays by the setting's cost: office <= urgent care <= emergency (domain
    review round 3 found ER copays below urgent care); checked on the drawn plan law itself
    and on the plans the splits print."""
    import random

    for tpl in G._cache(ref)["plans"]:
        for i in range(400):
            p = G._draw_plan(random.Random(i), tpl)
            if p["copay_primary_care"]:
                assert (p["copay_primary_care"] <= p["copay_urgent_care"]
                        <= p["copay_emergency"]), (tpl["plan_id"], i)
    for sc in [*dev.values(), *held_out.values()]:
        cp = next(a for a in sc["artifacts"] if a["type"] == "plan_document")["data"]["copays"]
        assert c(cp["primary_care"]) <= c(cp["urgent_care"]) <= c(cp["emergency"]), sc["seed"]


# -- outcomes vary -------------------------------------------------------------------------
def test_outcome_distribution_on_dev_and_test(dev: dict, held_out: dict) -> None:
    for split in (dev, held_out):
        for field in (*OUTCOME_FIELDS, "amount_cents", "correct_balance_cents"):
            counts = collections.Counter(sc["expected"][field] for sc in split.values())
            value, n = counts.most_common(1)[0]
            assert n / len(split) <= 0.50, (field, value, n)
        share = sum(sc["expected"]["finding"] == "no_error" for sc in split.values()) / len(split)
        assert 0.10 <= share <= 0.25, share
        assert {sc["expected"]["finding"] for sc in split.values()} == set(get_task(TASK).findings)
    combos = collections.Counter((sc["variant"]["kind"], sc["expected"]["responsible_party"],
                                  sc["expected"]["resolution_type"])
                                 for sc in [*dev.values(), *held_out.values()])
    assert set(combos) == {
        ("copay_not_credited", "provider", "balance_correction"),
        ("copay_not_credited", "provider", "refund_request"),
        ("duplicate_charge", "provider", "refund_request"),
        ("duplicate_charge", "provider", "balance_correction"),
        ("duplicate_posting", "provider", "balance_correction"),
        ("duplicate_posting", "provider", "refund_request"),
        ("coinsurance_on_billed", "insurer", "claim_reprocessing"),
        ("coinsurance_on_billed", "provider", "balance_correction"),
        ("coinsurance_on_billed", "provider", "refund_request"),
        ("deductible_already_met", "insurer", "claim_reprocessing"),
        ("balance_billing", "provider", "balance_correction"),
        ("balance_billing", "provider", "refund_request"),
        ("oop_max_exceeded", "insurer", "claim_reprocessing"),
        ("no_error", "none", "no_action"),
    }
    assert len({sc["variant"]["locality"]["mac"] + sc["variant"]["locality"]["locality"]
                for sc in dev.values()}) > 50
    assert len({sc["variant"]["plan_template"] for sc in dev.values()}) == 5
    # each plan has its own cost-sharing amounts, not one of five templates' (issue 8, round 6)
    plans = [next(a["data"] for a in sc["artifacts"] if a["type"] == "plan_document")
             for sc in dev.values()]
    for key in ("deductible", "out_of_pocket_max", "coinsurance_pct"):
        assert len({p[key] for p in plans}) > 30, key
    assert any(sc["variant"]["oop_binds"] for sc in dev.values()
               if sc["expected"]["finding"] == "no_error")


# -- nothing but the evidence predicts the answer ----------------------------------------
def _nb_accuracy(train: list[dict], test: list[dict], field: str) -> float:
    """Bernoulli naive Bayes over the complaint's words, trained on train."""
    def words(sc: dict) -> set[str]:
        return set(re.findall(r"[a-z']+", sc["case"]["patient_complaint"].lower()))
    prior = collections.Counter(str(sc["expected"][field]) for sc in train)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    vocab: set[str] = set()
    for sc in train:
        w = words(sc)
        counts[str(sc["expected"][field])].update(w)
        vocab |= w
    ok = 0
    for sc in test:
        w = words(sc) & vocab
        best = max(sorted(prior), key=lambda y: math.log(prior[y]) + sum(
            math.log((counts[y][t] + 1) / (prior[y] + 2)) for t in w))
        ok += best == str(sc["expected"][field])
    return ok / len(test)


def test_complaint_predicts_no_outcome(train: list, dev: dict, held_out: dict) -> None:
    for sc in [*dev.values(), *held_out.values()]:
        text = sc["case"]["patient_complaint"]
        assert sc["case"]["claim_id"] in text
        assert any(text.endswith(ask) for ask in G.ASKS)
        assert "$" not in text  # no amount: what the patient was asked to pay is evidence
    for split in (dev, held_out):
        for field in OUTCOME_FIELDS:
            modal = collections.Counter(
                str(sc["expected"][field]) for sc in split.values()).most_common(1)[0][1]
            acc = _nb_accuracy(train, list(split.values()), field)
            assert acc <= modal / len(split) + 0.05, (field, acc, modal / len(split))


def test_deadlines_are_the_same_everywhere_and_open(dev: dict, held_out: dict) -> None:
    texts = set()
    for sc in [*dev.values(), *held_out.values()]:
        dls = sorted((r for r in sc["references"] if r["type"] == "deadline"),
                     key=lambda r: r["key"])
        assert [d["key"] for d in dls] == ["internal_appeal", "refund_request"]
        assert all(d["data"]["open"] for d in dls)
        texts.add(tuple((d["artifact_id"], d["data"]["basis"], d["data"]["days"]) for d in dls))
        log = next(a for a in sc["artifacts"] if a["type"] == "processor_log")
        texts.add(("log", log["data"]["dispute_policy"]))
    assert len(texts) == 2


def test_distractors_have_the_case_records_id_shape(dev: dict, held_out: dict) -> None:
    shape = re.compile(r"^(CLMREC|EOB|PRV|LED|PLAN|PLOG)-\d{6}$")
    for sc in [*dev.values(), *held_out.values()]:
        arts = sc["artifacts"]
        assert any(a["distractor"] for a in arts)
        assert all(shape.match(a["artifact_id"]) for a in arts), sc["case"]["case_id"]
        suffixes = [a["artifact_id"].split("-")[1] for a in arts if not a["distractor"]]
        assert len(set(suffixes)) == len(suffixes)  # no shared number marks the case's records
        for d in (a for a in arts if a["distractor"]):
            same = [a for a in arts if a["type"] == d["type"] and not a["distractor"]]
            assert same and all(a["artifact_id"].split("-")[0] == d["artifact_id"].split("-")[0]
                                for a in same)
            assert set(d["data"]) == set(same[0]["data"])  # same fields as the real one


def test_visit_level_fits_the_diagnosis(dev: dict, held_out: dict) -> None:
    for sc in [*dev.values(), *held_out.values()]:
        for a in sc["artifacts"]:
            if a["type"] != "claim_record":
                continue
            dx = a["data"]["diagnoses"][0]["code"]
            em = a["data"]["lines"][0]["hcpcs"]
            allowed = set(G.DX_EM_LEVELS[dx]) | {G.NEW_FOR_EST[c] for c in G.DX_EM_LEVELS[dx]}
            assert em in allowed, (sc["case"]["case_id"], dx, em)
            assert em not in ("99215", "99205")
            # a -25 visit is for a problem the procedure does not treat
            codes = [d["code"] for d in a["data"]["diagnoses"]]
            if len(a["data"]["lines"]) > 1:
                assert a["data"]["lines"][1]["diagnosis_pointers"] != ["A"]
                assert not ({"M25.561", "M17.11"} <= set(codes))
        assert sc["variant"]["lines"][0]["hcpcs"] in G.DX_EM_LEVELS[
            next(a for a in sc["artifacts"] if a["type"] == "claim_record"
                 and not a["distractor"])["data"]["diagnoses"][0]["code"]]


def test_duplicate_capture_is_the_practices_and_follows_its_credit_policy(
        dev: dict, held_out: dict) -> None:
    seen = collections.Counter()
    for sc in [*dev.values(), *held_out.values()]:
        v, exp = sc["variant"], sc["expected"]
        prov = next(a for a in sc["artifacts"] if a["type"] == "provider_record")["data"]
        assert prov["financial_policy"] == G.FINANCIAL_POLICY[v["credit_policy"]]
        if v["kind"] != "duplicate_charge":
            continue
        assert exp["responsible_party"] == "provider"
        ledger = next(a for a in sc["artifacts"] if a["type"] == "payment_ledger")["data"]
        open_balance = _open(ledger)
        if v["credit_policy"] == "apply" and open_balance >= exp["amount_cents"]:
            want = "balance_correction"
        else:
            want = "refund_request"
        assert exp["resolution_type"] == want, sc["case"]["case_id"]
        seen[want] += 1
    assert seen["balance_correction"] and seen["refund_request"]


def _open(ledger: dict) -> int:
    """What is open on the account: the ledger's balance plus any balance it moved to a
    payment plan (still owed, off the ledger)."""
    return c(ledger["balance"]) + sum(
        c(e["amount"]) for e in ledger["entries"] if e["type"] == "adjustment"
        and e["description"].startswith("Balance transferred to payment plan"))


def _after_processing(plan_doc: dict, eob: dict | None) -> bool:
    """Is the plan of record's snapshot dated on or after the EOB's processing (so that it
    already counts this claim as processed)?"""
    return eob is not None and plan_doc["member_accumulators"]["as_of"] >= eob["processed_date"]


def _prior_reading(plan_doc: dict, eob: dict | None) -> dict:
    """The plan of record's reading before this claim: the snapshot itself where it predates
    the EOB's processing, else its history's reading before processing (round 8b: the totals
    stop at the limits, so subtracting the claim back off a capped total is not the room)."""
    acc = plan_doc["member_accumulators"]
    if not _after_processing(plan_doc, eob):
        return acc
    assert eob is not None
    return max((h for h in acc["history"] if h["as_of"] < eob["processed_date"]),
               key=lambda h: h["as_of"])


def _ded_left(plan_doc: dict, eob: dict | None = None) -> int:
    """Deductible room before the claim: the plan prints what was met before it, the agent
    subtracts."""
    met = c(_prior_reading(plan_doc, eob)["deductible_met_ytd"])
    return max(0, c(plan_doc["deductible"]) - met)


def _oop_left(plan_doc: dict, eob: dict | None = None) -> int:
    return c(plan_doc["out_of_pocket_max"]) - c(_prior_reading(plan_doc, eob)["oop_met_ytd"])


def test_oop_cap_branches(dev: dict, held_out: dict) -> None:
    n = collections.Counter()
    for sc in [*dev.values(), *held_out.values()]:
        v, exp = sc["variant"], sc["expected"]
        if not v["oop_binds"]:
            continue
        plan = next(a for a in sc["artifacts"] if a["type"] == "plan_document")["data"]
        eob = next(a for a in sc["artifacts"] if a["type"] == "eob" and not a["distractor"])
        left = _oop_left(plan, eob["data"])
        assert exp["patient_share_cents"] == left  # the cap binds: the share is what was left
        pr_eob = c(eob["data"]["totals"]["patient_responsibility"])
        if v["kind"] == "oop_max_exceeded":
            assert pr_eob > left and exp["overcharge_cents"] == pr_eob - left
        else:  # the cap was applied right; any error is elsewhere (the practice's)
            assert exp["responsible_party"] in ("none", "provider") and pr_eob == left
        n[v["kind"]] += 1
    assert n["oop_max_exceeded"] and n["no_error"] and len(n) >= 4


def test_no_record_field_marks_the_planted_error(train: list) -> None:
    """The red team's fingerprints occur across findings: the EOB's OOP total at or just under
    the maximum, cents in chargemaster prices, item 29 of the claim, the deductible state."""
    by = collections.defaultdict(collections.Counter)
    for sc in train:
        kind = sc["expected"]["finding"]
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        acc = arts["eob"]["accumulators"]
        gap = c(acc["out_of_pocket_max"]) - c(acc["oop_met_ytd"])
        by["gap0"][kind] += gap == 0
        by["gap_lt200"][kind] += 0 < gap <= 20_000
        by["paid0"][kind] += c(arts["claim_record"]["patient_amount_paid"]) == 0
        by["cents_price"][kind] += any(c(ln["billed"]) % 100 for ln in arts["eob"]["lines"])
        by["ded_left"][kind] += _ded_left(arts["plan_document"], arts["eob"]) > 0
        by["n"][kind] += 1
    n = by["n"]
    # a stale OOP total near the cap, or exactly at it, is no label
    assert sum(1 for k in n if by["gap_lt200"][k] and k != "oop_max_exceeded") >= 3
    assert sum(1 for k in n if by["gap0"][k]) >= 4
    share = by["gap_lt200"]["oop_max_exceeded"] / sum(by["gap_lt200"].values())
    assert share < 0.5, share
    # item 29 is blank as often where the copay was not credited as elsewhere
    rate = {k: by["paid0"][k] / n[k] for k in n}
    assert abs(rate["copay_not_credited"] - statistics.mean(rate.values())) < 0.25, rate
    assert all(by["cents_price"][k] / n[k] > 0.9 for k in n)
    # a remaining deductible rules out neither coinsurance on billed nor a deductible error
    assert by["ded_left"]["coinsurance_on_billed"] and by["ded_left"]["deductible_already_met"]


def test_noise_rows_share_the_errors_count_signatures(train: list) -> None:
    """A third card capture, two extra ledger charge rows, a single adjustment row or two
    statement payments also occur where they are not the error."""
    sig = collections.defaultdict(collections.Counter)
    for sc in train:
        kind = sc["expected"]["finding"]
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        txns = arts["processor_log"]["transactions"]
        ents = arts["payment_ledger"]["entries"]
        n_lines = len(arts["eob"]["lines"])
        sig["3_captures"][kind] += sum(t["type"] == "capture" for t in txns) >= 3
        sig["charges+2"][kind] += sum(e["type"] == "charge" for e in ents) >= n_lines + 2
        sig["1_adjustment"][kind] += sum(e["type"] == "adjustment" for e in ents) <= 1
        sig["2_online"][kind] += sum(t["type"] == "sale" and t["status"] == "settled"
                                     and t["description"].startswith("Online statement")
                                     and t["timestamp"][:10] > arts["eob"]["date_of_service"]
                                     for t in txns) >= 2
    for name, owner in (("3_captures", "duplicate_charge"), ("charges+2", "duplicate_posting"),
                        ("1_adjustment", "balance_billing"), ("2_online", "duplicate_charge")):
        others = sum(v for k, v in sig[name].items() if k != owner)
        assert others >= sig[name][owner] // 2 and others > 10, (name, dict(sig[name]))


def test_member_states_are_drawn_alike_across_findings(train: list) -> None:
    """Issue 8, round 4: closeness to the OOP maximum and how much of the statement was paid
    occur at the same rates whatever the finding, save where the finding is the state itself
    (an ignored cap is close to it by definition). A stale deductible total is close to it as
    often as any member (the plan of record then has the deductible met). Closeness is the
    variant's own flag: with each plan's own maximum a far member may have little room too."""
    close = collections.defaultdict(list)
    carried = collections.defaultdict(list)
    pay = collections.defaultdict(collections.Counter)
    for sc in train:
        v = sc["variant"]
        close[v["kind"]].append(v["close_to_cap"])
        carried[v["kind"]].append(v["previous_balance_cents"] > 0)
        pay[v["kind"]][v["payment_state"]] += 1
    rate = {k: sum(x) / len(x) for k, x in close.items()}
    assert rate["oop_max_exceeded"] == 1
    others = [r for k, r in rate.items() if k != "oop_max_exceeded"]
    assert max(others) - min(others) < 0.15, rate
    assert abs(statistics.mean(others) - G.CLOSE_SHARE) < 0.05, rate
    for state in ("none", "part", "full"):
        shares = [pay[k][state] / sum(pay[k].values()) for k in pay]
        assert max(shares) - min(shares) < 0.15, (state, dict(pay))
    # a balance brought forward from an earlier statement, as often whatever the finding
    fwd = [sum(x) / len(x) for x in carried.values()]
    assert max(fwd) - min(fwd) < 0.15, fwd
    assert abs(statistics.mean(fwd) - (1 - G.PRIOR_NONE)) < 0.05, fwd


def test_a_practices_overstatement_is_filed_against_the_open_balance(
        dev: dict, held_out: dict, env: ClarusEnv) -> None:
    """Unpaid, paid in part or paid in full: the open balance against the overcharge picks
    the filing — a correction where it covers the overcharge, a refund where nothing is open,
    and where a part payment left less open than the overcharge either filing, for the whole
    or for the part each covers."""
    seen: collections.Counter[str] = collections.Counter()
    split = None
    for sc in [*dev.values(), *held_out.values()]:
        v, exp = sc["variant"], sc["expected"]
        if v["error_side"] != "provider" or v["kind"] == "duplicate_charge":
            continue
        ledger = next(a for a in sc["artifacts"] if a["type"] == "payment_ledger")["data"]
        open_, over = _open(ledger), exp["amount_cents"]
        assert open_ == exp["statement_balance_cents"] - v["statement_paid_cents"]
        want = "balance_correction" if open_ >= over else "refund_request"
        assert exp["resolution_type"] == want, sc["case"]["case_id"]
        if 0 < open_ < over:
            assert sorted(exp["accepted_resolutions"]) == ["balance_correction",
                                                           "refund_request"]
            assert sorted(exp["amount_alternatives"]) == [
                f"balance_correction:{open_}", f"refund_request:{over - open_}"]
            seen["split"] += 1
            split = split or sc
        else:
            assert exp["accepted_resolutions"] == [want] and not exp["amount_alternatives"]
        seen[want] += 1
        seen[v["payment_state"]] += 1
    assert all(seen[k] for k in ("split", "balance_correction", "refund_request",
                                 "none", "part", "full")), seen
    plan = get_task(TASK).oracle(split)
    whole = split["expected"]["amount_cents"]
    for res in ("balance_correction", "refund_request"):
        assert all(passed(play(env, split, _edit(plan, "draft_resolution", resolution_type=res,
                                                 amount=dollars(whole)))).values())
    assert not passed(play(env, split, _edit(plan, "draft_resolution",
                                             resolution_type="claim_reprocessing"))
                      )["resolution_type"]


def test_a_repeated_charge_amount_is_no_duplicate_posting_by_itself(train: list) -> None:
    """Issue 8, round 8: a charge amount printed twice on the ledger was the duplicate
    posting's mark. Two visits at the same level (the same fee, under two claims), a line
    entered twice and reversed, or voided and rebilled on a corrected claim, now repeat a
    charge amount in most scenarios of every finding; only whether it stands unreversed under
    one claim line says duplicate posting. (Since round 8 a duplicate posting is one row keyed at
    two units, so a repeated amount occurs on it as on every finding, from the same noise.)"""
    rep = collections.Counter()
    n = collections.Counter()
    for sc in train:
        ents = next(a for a in sc["artifacts"] if a["type"] == "payment_ledger")["data"]["entries"]
        amounts = collections.Counter(e["amount"] for e in ents if e["type"] == "charge")
        kind = sc["expected"]["finding"]
        n[kind] += 1
        rep[kind] += max(amounts.values()) >= 2
    rates = {k: rep[k] / n[k] for k in n}
    # (a duplicate posting's own line keyed at two units repeats no fee with an older visit at
    # this visit's level, so its rate runs a little below the others', never above them)
    assert min(rates.values()) >= 0.45, rates
    assert rates["duplicate_posting"] <= max(v for k, v in rates.items()
                                             if k != "duplicate_posting") + 0.05, rates


def test_a_zero_ledger_balance_occurs_with_every_resolution(train: list) -> None:
    """Issue 8, round 8: a zero ledger balance never went with a balance correction (0/226 on
    train), so the ledger alone ruled it out. A balance moved to a payment plan after the
    statement leaves the ledger at zero while the statement still shows the amount due and the
    balance is still owed: a correction then goes against the plan balance. Zero ledger
    balances now occur at close rates whatever the resolution; where a correction is filed
    at zero the ledger shows the transfer and the statement the amount due."""
    zero = collections.Counter()
    n = collections.Counter()
    for sc in train:
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        ledger, exp = arts["payment_ledger"], sc["expected"]
        res = exp["resolution_type"]
        n[res] += 1
        if c(ledger["balance"]) == 0:
            zero[res] += 1
            if res == "balance_correction":
                assert sc["variant"]["payment_plan"] and _open(ledger) >= exp["amount_cents"]
                stmt = arts["provider_record"]["statement"]
                assert c(stmt["balance_due"]) >= _open(ledger)
    rates = {k: zero[k] / n[k] for k in n}
    assert min(rates.values()) >= 0.25 and max(rates.values()) - min(rates.values()) < 0.15, rates


def test_a_duplicate_posting_written_down_bills_the_allowed_amount_again(
        dev: dict, held_out: dict, env: ClarusEnv) -> None:
    """A charge posted twice (keyed at two units in one row, issue 8 round 8) and written down
    with both units' CO-45: the patient is overcharged the line's allowed amount, not its
    charge, and the heuristic still names it from the ledger."""
    kinds = collections.Counter()
    for sc in [*dev.values(), *held_out.values()]:
        v = sc["variant"]
        if v["kind"] != "duplicate_posting" or v["duplicate_posted_item"]:
            continue  # (a self-pay item keyed twice: tests/test_task_deductive_round13.py)
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        ln = arts["eob"]["lines"][v["duplicate_posted_line"] - 1]
        ref_ = f"{arts['eob']['claim_id']} line {ln['line']}"
        charges = [e for e in arts["payment_ledger"]["entries"]
                   if e["type"] == "charge" and e["reference"] == ref_]
        reversals = [e for e in arts["payment_ledger"]["entries"]
                     if e["type"] == "adjustment" and e["reference"] == ref_
                     and "reversal" in e["description"].lower()]
        # net of a reversal (a line entered twice and reversed, or voided and rebilled, occurs
        # in every branch) the line stands posted twice: one charge row at two units
        assert len(charges) - len(reversals) == 1
        assert sum(c(e["amount"]) for e in charges) - sum(c(e["amount"]) for e in reversals) \
            == 2 * c(ln["billed"])
        # a re-entry (reversed) copies the two-unit entry it repeats
        assert all(c(e["amount"]) == 2 * c(ln["billed"]) for e in reversals)
        # written down, the practice's CO-45 covers both units: twice the EOB's for that line
        co45 = sum(c(a["amount"]) for a in ln["adjustments"] if str(a["carc"]) == "45")
        posted = sum(c(e["amount"]) for e in arts["payment_ledger"]["entries"]
                     if e["type"] == "adjustment" and e["reference"].startswith(
                         arts["eob"]["claim_id"]) and "CO-45" in e["description"])
        eob_co45 = sum(c(a["amount"]) for x in arts["eob"]["lines"] for a in x["adjustments"]
                       if str(a["carc"]) == "45")
        assert posted - eob_co45 == (co45 if v["duplicate_written_down"] else 0)
        extra = c(ln["allowed"]) if v["duplicate_written_down"] else c(ln["billed"])
        stmt = arts["provider_record"]["statement"]
        assert c(stmt["balance_due"]) == sc["expected"]["statement_balance_cents"]
        assert sc["expected"]["overcharge_cents"] == extra, sc["case"]["case_id"]
        kinds[v["duplicate_written_down"]] += 1
        grade = _grade_of(env, sc, HeuristicAgent())
        assert grade["passed"] == grade["total"], sc["case"]["case_id"]
    assert kinds[True] and kinds[False], kinds


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
        # the plan's own terms, within the 2026 self-only limits (45 CFR 156.130(a); an
        # HSA-qualified HDHP $8,500): an OOP maximum above the deductible, copays only on a
        # copay plan, specialist above primary care
        hdhp = "hdhp" in v["plan_template"]
        assert 0 <= c(plan_doc["deductible"]) < c(plan_doc["out_of_pocket_max"]) \
            <= (850_000 if hdhp else 1_060_000)
        assert 5 <= plan_doc["coinsurance_pct"] <= 50
        pc, sp = (c(plan_doc["copays"][k]) for k in ("primary_care", "specialist"))
        assert (pc == sp == 0) if hdhp else (0 < pc < sp)
        # the distractor's (older claim's) amounts are real fees too
        for e, metas in ((eob, v["lines"]), (arts["eob*"], [v["older_claim"]])):
            for ln, meta in zip(e["lines"], metas, strict=True):
                allowed = _fee(ref, ln["hcpcs"], mac, loc)
                assert c(ln["allowed"]) == allowed, (seed, ln)
                # one chargemaster per practice: the same markup on every code, to the cent
                assert meta["markup_pct"] == v["markup_pct"]
                assert c(ln["billed"]) == (allowed * meta["markup_pct"] + 50) // 100
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
        shares = _shares(lines, plan_doc, benefit_copay,
                         _ded_left(plan_doc, eob),
                         plan_doc["copays_count_toward_deductible"])
        pr_correct = min(sum(sum(s) for s in shares),
                         _oop_left(plan_doc, eob))  # the OOP cap
        pr_eob = c(eob["totals"]["patient_responsibility"])
        if v["error_side"] == "insurer":
            assert pr_eob > pr_correct
        elif v["oop_binds"]:
            assert pr_eob == pr_correct
        else:
            assert [(c(ln["copay"]), c(ln["deductible"]), c(ln["coinsurance"]))
                    for ln in eob["lines"]] == shares
        # the overcharge: everything asked of the patient since the visit minus what is owed
        txns = arts["processor_log"]["transactions"]
        undone = {t.get("original_transaction_id") for t in txns
                  if t["type"] in ("refund", "void")}
        card = sum(c(t["amount"]) for t in txns if t["type"] in ("capture", "sale")
                   and t["status"] == "settled" and t["transaction_id"] not in undone
                   and t["timestamp"][:10] >= eob["date_of_service"])
        # a self-pay item bought at the visit is sold and paid outside the claim, paid in full
        # when sold (the practice's policy): its sale is what the card paid for it (round 13:
        # a charge above that is an item keyed twice, asked of the patient wrongly)
        card -= sum(c(t["amount"]) for t in txns if t["type"] in ("capture", "sale")
                    and t["status"] == "settled" and t["transaction_id"] not in undone
                    and t["timestamp"][:10] >= eob["date_of_service"]
                    and t["description"].endswith(" at check-in")
                    and not t["description"].startswith("Copay"))
        # a balance brought forward from before the visit is owed for something else
        before = [e for e in ledger["entries"] if e["date"] < eob["date_of_service"]]
        carried = c(before[-1]["balance_after"]) if before else 0
        assert carried == c(arts["provider_record"]["statement"]["previous_balance"])
        over = card + _open(ledger) - carried - pr_correct
        exp = sc["expected"]
        assert over == exp["overcharge_cents"], (seed, v["kind"])
        if v["kind"] == "no_error":
            assert over == 0 and exp["amount_cents"] == pr_correct == exp["patient_share_cents"]
        else:
            assert over == exp["amount_cents"] > 0, (seed, v["kind"])
        assert exp["correct_balance_cents"] == carried + pr_correct - card


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
def _grade_of(env: ClarusEnv, sc: dict[str, Any], agent: Any) -> dict[str, Any]:
    obs = env.reset(scenario=sc)
    agent.reset(obs)
    while True:
        r = env.step(agent.act(obs))
        obs = r.observation
        assert obs.last_action_error is None, (obs.last_action_type, obs.last_action_error)
        if r.done:
            return r.info["grade"]


def _run_agent(env: ClarusEnv, sc: dict[str, Any], agent: Any) -> float:
    obs = env.reset(scenario=sc)
    agent.reset(obs)
    while True:
        r = env.step(agent.act(obs))
        obs = r.observation
        if r.done:
            return r.info["grade"]["score"]


def _full_pass(grade: dict[str, Any]) -> bool:
    return grade["passed"] == grade["total"]


def test_heuristic_between_random_and_oracle_on_dev(dev: dict, env: ClarusEnv) -> None:
    task = get_task(TASK)
    oracle, heuristic, rand = [], [], []
    h_pass = 0
    for seed, sc in dev.items():
        oracle.append(play(env, sc, task.oracle(sc))["score"])
        grade = _grade_of(env, sc, HeuristicAgent())
        heuristic.append(grade["score"])
        h_pass += _full_pass(grade)
        rand.append(_run_agent(env, sc, RandomAgent(TASK, seed=seed)))
    o, h, r = (statistics.mean(x) for x in (oracle, heuristic, rand))
    assert r < 0.10 and r + 0.3 < h < o - 0.01, (r, h, o)
    assert 0.5 < h_pass / len(dev) < 0.97, h_pass


def test_heuristic_reads_the_evidence(dev: dict, env: ClarusEnv) -> None:
    """It misses the out-of-pocket cap (an EOB that ignored it looks right to it); with the
    records hidden from its reasoning it falls back to a guess and passes nothing."""
    key = frozenset({"eob", "plan_document", "processor_log", "payment_ledger",
                     "provider_record"})
    n = blind = 0
    for sc in list(dev.values())[:80]:
        agent = HeuristicAgent()
        grade = _grade_of(env, sc, agent)
        assert set(agent.decision) >= {"finding", "responsible_party", "resolution_type",
                                       "amount_cents"}
        if sc["expected"]["finding"] == "oop_max_exceeded":
            assert not grade["outcome_correct"] and agent.decision["finding"] == "no_error"
        n += 1
        hidden = HeuristicAgent(hide=key)
        g = _grade_of(env, sc, hidden)
        blind += _full_pass(g)
        assert passed(g)["eob_fetched"] and passed(g)["plan_fetched"]  # still fetched
    assert blind / n <= 0.05


def test_heuristic_decide_hook_replaces_its_decision(dev: dict, env: ClarusEnv) -> None:
    views = []

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        views.append(view)
        return {"finding": "no_error", "responsible_party": "none",
                "resolution_type": "no_action", "amount_cents": None}

    sc = dev[_seed_of(dev, "deductible_already_met")]
    agent = HeuristicAgent(decide=decide, hide=frozenset({"eob"}))
    grade = _grade_of(env, sc, agent)
    assert agent.decision == {"finding": "no_error", "responsible_party": "none",
                              "resolution_type": "no_action", "amount_cents": 0}
    (view,) = views
    assert set(view) == {"complaint", "case_id", "initial_observation", "records"}
    assert "eob" not in view["records"] and "plan_document" in view["records"]
    assert view["complaint"] == sc["case"]["patient_complaint"]
    assert json.dumps(view, sort_keys=True)  # plain data
    assert not grade["outcome_correct"]
    # a partial decision keeps the heuristic's own values for the rest
    agent = HeuristicAgent(decide=lambda view: {"resolution_type": "appeal"})
    _grade_of(env, sc, agent)
    assert agent.decision["resolution_type"] == "appeal"
    assert agent.decision["responsible_party"] == "insurer"


def test_every_payment_before_the_visit_is_on_the_ledger_or_before_its_opening(
        train: list) -> None:
    """Domain review round 4: an export of recent activity opened with a balance brought
    forward dated before the older visit's online payment, which the ledger then left out, so
    the payment read as never posted (a provider error the key did not hold). Every settled,
    unrefunded payment before this visit is either posted (its transaction id a ledger
    reference) or dated before the ledger's first row."""
    bad = []
    for sc in train:
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        ents = arts["payment_ledger"]["entries"]
        dos = arts["eob"]["date_of_service"]
        # (round 6: a front-desk line may cite several card transactions, "TXN-a; TXN-b")
        refs = {r.strip() for e in ents for r in e["reference"].split(";")}
        # (round 9: a practice posting deposit batches cites the batch; a day's batch lines
        # credit that day's uncited desk payments up to their total)
        batch = collections.Counter()
        for e in ents:
            if e["description"].startswith("Front desk deposit batch"):
                batch[e["date"]] += c(e["amount"])
        txns = arts["processor_log"]["transactions"]
        undone = {t.get("original_transaction_id") for t in txns}
        opening = min(e["date"] for e in ents)
        for t in txns:
            day = t["timestamp"][:10]
            if (t["type"] in ("sale", "capture") and t["status"] == "settled"
                    and t["transaction_id"] not in undone and day < dos
                    and t["transaction_id"] not in refs and day >= opening):
                if t["type"] == "capture" and batch[day] >= c(t["amount"]):
                    batch[day] -= c(t["amount"])
                    continue
                bad.append((sc["case"]["case_id"], t["transaction_id"], day, opening))
    assert not bad, bad


def test_no_contractual_adjustment_is_negative(train: list) -> None:
    """Domain review round 4: where the plan's OOP cap cut the patient share, a practice that
    billed coinsurance on its charge posted a negative CO-45 (charge less plan payment less
    its own share). A write-off only writes a charge down; the practice's extra coinsurance
    is a patient charge instead, and the ledger still ends at what the statement asks."""
    bad = []
    for sc in train:
        ents = next(a for a in sc["artifacts"] if a["type"] == "payment_ledger")["data"]["entries"]
        bad += [(sc["case"]["case_id"], e["amount"]) for e in ents
                if e["type"] == "adjustment" and c(e["amount"]) < 0]
    assert not bad, bad


def test_an_hdhp_shares_no_cost_before_the_deductible(train: list) -> None:
    """Domain review round 4: on an HSA-qualified HDHP nothing but preventive care is paid
    before the deductible is met (26 U.S.C. 223(c)(2)), so while the deductible is unmet all
    cost sharing is deductible: every accumulator the records show (the plan of record's and
    each EOB's) has OOP met equal to deductible met."""
    bad, hdhp = [], 0
    for sc in train:
        if "hdhp" not in sc["variant"]["plan_template"]:
            continue
        hdhp += 1
        arts = [a for a in sc["artifacts"] if a["type"] in ("plan_document", "eob")]
        for a in arts:
            d = a["data"]
            acc = d["member_accumulators"] if a["type"] == "plan_document" else d["accumulators"]
            met, oop = c(acc["deductible_met_ytd"]), c(acc["oop_met_ytd"])
            if met < c(d.get("deductible") or acc["deductible"]) and oop != met:
                bad.append((sc["case"]["case_id"], a["type"], acc))
    assert hdhp > 20 and not bad, bad[:5]  # HDHPs are ~2.5% of train since round 6


def test_desk_payments_fall_in_the_practices_business_hours(train: list, ref: Any) -> None:
    """Domain review round 4: check-in card payments were drawn at 14:00-23:00 UTC whatever
    the practice's zone (05:32 in Hawaii). Every authorization and capture made at the desk
    is at 08:00-17:00 in the practice's state (a capture minutes after) on the visit's own
    date, UTC date included."""
    from zoneinfo import ZoneInfo

    from clarus_env.tasks.adversarial_fabrication.generator import TZ_BY_STATE
    bad, states = [], set()
    for sc in train:
        state = ref.locality(**sc["variant"]["locality"])["state"]
        zone = ZoneInfo(TZ_BY_STATE[state][0])
        states.add(state)
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        days = {a["data"]["date_of_service"] for a in sc["artifacts"] if a["type"] == "eob"}
        for t in arts["processor_log"]["transactions"]:
            if "at check-in" not in t["description"] or t["type"] not in ("authorization",
                                                                          "capture"):
                continue
            utc = dt.datetime.fromisoformat(t["timestamp"].replace("Z", "+00:00"))
            local = utc.astimezone(zone)
            # (a capture, or the terminal's second run, follows within two minutes; round 6:
            # visits of the previous plan year have no EOB here, only their desk payments;
            # round 7: nor have this year's visits before the older one)
            if not (dt.time(8) <= local.time() < dt.time(17, 5)
                    and (local.date().isoformat() in days
                         or local.date().isoformat() < min(days))
                    and t["timestamp"][:10] == local.date().isoformat()):
                bad.append((sc["case"]["case_id"], state, t["timestamp"], local.isoformat()))
    assert {"HI", "AK"} <= states and not bad, bad[:5]


def _branch_means_agree(rows: list[tuple[str, float]]) -> list[tuple[str, float, float]]:
    """Each finding's mean against the mean of every other finding: the branches whose gap
    exceeds three standard errors (Welch)."""
    from statistics import mean, pvariance
    out = []
    for f in sorted({k for k, _ in rows}):
        a = [v for k, v in rows if k == f]
        b = [v for k, v in rows if k != f]
        se = (pvariance(a) / len(a) + pvariance(b) / len(b)) ** 0.5
        if abs(mean(a) - mean(b)) > 3 * max(se, 1e-9):
            out.append((f, round(mean(a), 3), round(mean(b), 3)))
    return out


def test_card_log_counts_say_nothing_about_the_branch(train: list) -> None:
    """Issue 8, round 6 (red team round 5: the number of "Copay at check-in" transactions
    read duplicate_charge at AUC 0.96, the log's length at 0.82): per finding, the mean
    number of check-in copay transactions, of captures and of log rows are within three
    standard errors of the other findings' mean; only the double capture's timing and
    authorizations tell it."""
    counts: dict[str, list[tuple[str, float]]] = {"copay": [], "capture": [], "rows": []}
    for sc in train:
        f = sc["expected"]["finding"]
        arts = {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}
        txns = arts["processor_log"]["transactions"]
        counts["copay"].append((f, sum("Copay at check-in" in t["description"] for t in txns)))
        counts["capture"].append((f, sum(t["type"] == "capture" for t in txns)))
        counts["rows"].append((f, len(txns)))
    bad = {k: _branch_means_agree(v) for k, v in counts.items()}
    assert not any(bad.values()), bad


def test_visits_fall_on_business_days_and_returning_patients_are_established(
        train: list, ref: Any) -> None:
    """Domain review round 6: desk check-ins fell on Labor Day and July 4 (visit dates skipped
    weekends only), and an older 2026 visit was billed as a new patient (99202-99205) while
    the card log showed the same patient's check-in copays at the practice in 2025 (a patient
    seen within three years is established: CPT E/M guidelines, Pub. 100-04 ch. 12 30.6.7).
    Every visit date and desk payment is on a business day in the practice's zone, and no
    new-patient code appears where last year's check-ins do."""
    from zoneinfo import ZoneInfo

    from clarus_env.tasks.adversarial_fabrication.generator import TZ_BY_STATE
    from clarus_env.tasks.us_calendar import is_business_day
    holidays, new_patient, returning = [], [], 0
    for sc in train:
        zone = ZoneInfo(TZ_BY_STATE[ref.locality(**sc["variant"]["locality"])["state"]][0])
        arts = [a for a in sc["artifacts"] if not a["distractor"]]
        days = {dt.date.fromisoformat(a["data"]["date_of_service"])
                for a in arts if a["type"] == "eob"}
        log = next(a["data"] for a in arts if a["type"] == "processor_log")
        for t in log["transactions"]:
            if "at check-in" in t["description"]:
                utc = dt.datetime.fromisoformat(t["timestamp"].replace("Z", "+00:00"))
                days.add(utc.astimezone(zone).date())
        holidays += [(sc["case"]["case_id"], d) for d in days if not is_business_day(d)]
        if any(d.year == 2025 for d in days):
            returning += 1
            if re.search(r'"9920[2-5]"', json.dumps(arts)):
                new_patient.append(sc["case"]["case_id"])
    assert returning > 500 and not holidays and not new_patient, (holidays[:5], new_patient[:5])
