"""adversarial_fabrication: the oracle passes every check on dev and test, every check can
fail in every branch, the answer follows from the records (and from no printed label,
wording or id shape), the diagnosis in force at the first filing is graded, citations need
precision, a right counter must be conceded, amounts are re-derivable from the bundle
(MPFS, OPPS and ASC rates), compiles are deterministic, and the heuristic reads the evidence.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import statistics
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from functools import cache
from typing import Any

import pytest

from clarus_env.actions import (
    DEADLINES,
    MESSAGE_TYPES,
    RESOLUTION_TYPES,
    RESPONSIBLE_PARTIES,
    RULES,
)
from clarus_env.agents import make_agent
from clarus_env.env import ClarusEnv
from clarus_env.reference import open_reference
from clarus_env.scenario import SALT_ENV, canonical_json, compile_scenario, content_hash
from clarus_env.splits import seeds
from clarus_env.tasks import get_task
from clarus_env.tasks.adversarial_fabrication.checks import PHASE_2
from clarus_env.tasks.adversarial_fabrication.generator import (
    DEPOSIT_FLAT,
    FACILITY_MULTIPLES,
    MULTIPLES,
    PACKAGES,
    setting_of,
)
from clarus_env.tasks.adversarial_fabrication.heuristic import HeuristicAgent
from clarus_env.tasks.common import pct_of

TASK_NAME = "adversarial_fabrication"
DEV = list(seeds("dev"))
TEST = list(seeds("test"))
TEST_SAMPLE = TEST[::5]
FACILITY_TYPES = ("ambulatory surgical center", "hospital outpatient department",
                  "independent diagnostic imaging center", "independent sleep diagnostic center")
OUTCOME_CHECKS = {"responsible_party_and_finding", "resolution_type", "reference_amount"}
# 2026 federal holidays as observed, typed in independently of the generator's rules.
HOLIDAYS_2026 = {dt.date(2026, m, d) for m, d in ((1, 1), (1, 19), (2, 16), (5, 25), (6, 19),
                                                   (7, 3), (9, 7), (10, 12), (11, 11),
                                                   (11, 26), (12, 25))}


@cache
def ref() -> Any:
    return open_reference()


@cache
def scenario(seed: int) -> dict[str, Any]:
    return compile_scenario(TASK_NAME, seed, ref())


def task() -> Any:
    return get_task(TASK_NAME)


def play(s: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
    """Run ``actions`` (then pad with audit entries until the episode ends); the grade."""
    env = ClarusEnv(TASK_NAME, reference=ref())
    env.reset(scenario=s)
    result = None
    for a in actions:
        result = env.step(a)
        if result.done:
            break
    while result is None or not result.done:
        result = env.step({"action_type": "write_audit_entry", "parameters": {"summary": "."}})
    return result.info["grade"]


def failed(grade: dict[str, Any]) -> set[str]:
    return {c["id"] for c in grade["checks"] if not c["passed"]}


def first(pred: Any, pool: list[int] = DEV) -> dict[str, Any]:
    return scenario(next(x for x in pool if pred(scenario(x))))


def is_nv(s: dict[str, Any]) -> bool:
    return s["expected"]["resolution_type"] == "no_action"


def run_agent(s: dict[str, Any], agent: Any) -> dict[str, Any]:
    env = ClarusEnv(TASK_NAME, reference=ref())
    obs = env.reset(scenario=s)
    agent.reset(obs)
    for _ in range(env.task.api_call_budget + 5):
        r = env.step(agent.act(obs))
        obs = r.observation
        if r.done:
            return r.info["grade"]
    raise AssertionError("episode did not end")


# -- the contract ------------------------------------------------------------------------------
def test_check_count_ids_and_families() -> None:
    t = task()
    assert t.n_checks == 28 and len(PHASE_2) == 6
    assert t.api_call_budget == 40 and t.cooldowns == {"fetch_payment_processor_log": 2}
    fam = {c.id: c.family for c in t.checks}
    assert {k for k, v in fam.items() if v == "outcome"} == OUTCOME_CHECKS
    assert {k for k, v in fam.items() if v == "hygiene"} == {"no_compliance_violation"}
    assert {k for k, v in fam.items() if v == "evidence"} == {
        "diagnosis_cites_two", "diagnosis_cites_processor_log", "counter_ehr_cites_refuter",
        "counter_emergency_cites_refuter"}
    assert "no_violation" in t.findings


@pytest.mark.parametrize("split_seeds", [DEV, TEST], ids=["dev", "test"])
def test_oracle_passes_every_check(split_seeds: list[int]) -> None:
    for seed in split_seeds:
        s = scenario(seed)
        actions = task().oracle(s)
        assert len(actions) <= task().api_call_budget
        env = ClarusEnv(TASK_NAME, reference=ref())
        env.reset(scenario=s)
        for a in actions:
            r = env.step(a)
            assert r.observation.last_action_error is None, (seed, a, r.observation)
        assert r.done
        assert failed(r.info["grade"]) == set(), (seed, r.info["grade"])
        assert r.info["grade"]["outcome_correct"]


def test_env_reset_by_seed_compiles_on_demand() -> None:
    env = ClarusEnv(TASK_NAME, reference=ref())
    obs = env.reset(seed=DEV[4])
    assert obs.case_id == scenario(DEV[4])["case"]["case_id"]
    for a in task().oracle(env.scenario):
        r = env.step(a)
    assert r.done and r.info["grade"]["passed"] == 28


@pytest.mark.parametrize("pick", ["violation", "no_violation"])
def test_do_nothing_scores_nothing(pick: str) -> None:
    s = first(lambda x: is_nv(x) == (pick == "no_violation"))
    grade = play(s, [{"action_type": "close_case", "parameters": {}}])
    assert grade["passed"] == 0


# -- every check can pass and can fail, in every branch ----------------------------------------
def _drop(actions: list[dict[str, Any]], *names: str, **match: Any) -> list[dict[str, Any]]:
    return [a for a in actions if not (a["action_type"] in names and all(
        a["parameters"].get(k) == v for k, v in match.items()))]


def _edit(actions: list[dict[str, Any]], name: str, **params: Any) -> list[dict[str, Any]]:
    out = []
    for a in actions:
        if a["action_type"] == name:
            a = {"action_type": name, "parameters": {**a["parameters"], **params}}
        out.append(a)
    return out


def _counter_edit(s: dict[str, Any], actions: list[dict[str, Any]], kind: str,
                  **params: Any) -> list[dict[str, Any]]:
    cid = next(c["counter_id"] for c in s["counters"] if c["kind"] == kind)
    out = []
    for a in actions:
        if (a["action_type"] == "reject_counter_argument"
                and a["parameters"]["counter_id"] == cid):
            a = {"action_type": a["action_type"], "parameters": {**a["parameters"], **params}}
        out.append(a)
    return out


def _wrong(exp: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
    return next(c for c in choices if c != exp[key])


def _wrong_finding(exp: dict[str, Any]) -> str:
    """A finding the records do not support (neither the finding nor an accepted one)."""
    return next(f for f in task().findings
                if f != exp["finding"] and f not in exp["finding_alts"])


def _mutations(s: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """For each check, an oracle trajectory edited so that check fails."""
    a = task().oracle(s)
    exp = s["expected"]
    i_auth = next(i for i, x in enumerate(a) if x["action_type"] == "authenticate_patient")
    late_auth = a[:i_auth] + a[i_auth + 1:3] + [a[i_auth]] + a[3:]
    sub = next(i for i, x in enumerate(a) if x["action_type"] == "submit_resolution")
    deadline = next(x for x in a if x["action_type"] == "check_deadline")
    deadline_late = [x for x in a if x is not deadline]
    deadline_late.insert(sub, deadline)  # now right after submit_resolution
    led = exp["ledger_id"]
    muts = {
        "authenticated_first": late_auth,
        "claim_record_fetched": _drop(a, "fetch_claim_record"),
        "statement_fetched": _drop(a, "fetch_payment_ledger"),
        "provider_record_fetched": _drop(a, "fetch_provider_record"),
        "processor_log_fetched": _drop(a, "fetch_payment_processor_log"),
        "facility_record_fetched": _drop(a, "fetch_facility_record"),
        "nsa_rules_checked": _drop(a, "check_regulatory_rule", rule="nsa_good_faith_estimate"),
        "nsa_deadline_checked": _drop(a, "check_deadline"),
        "deadline_before_submission": deadline_late,
        "diagnosis_written": _drop(a, "write_diagnosis"),
        "draft_written": _drop(a, "draft_resolution"),
        "provider_notified": _drop(a, "notify_provider"),
        "patient_told": _drop(a, "send_patient_communication"),
        "audit_written": _drop(a, "write_audit_entry"),
        "case_closed": _drop(a, "close_case"),
        "diagnosis_cites_two": _edit(a, "write_diagnosis",
                                     cited_artifacts=[exp["processor_log_id"]]),
        "diagnosis_cites_processor_log": _edit(
            a, "write_diagnosis", cited_artifacts=[exp["provider_record_id"],
                                                   exp["claim_record_id"]]),
        "responsible_party_and_finding": _edit(
            a, "write_diagnosis", finding=_wrong_finding(exp)),
        "resolution_type": _edit(a, "draft_resolution", resolution_type=_wrong(
            exp, "resolution_type", ("nsa_dispute", "balance_correction", "no_action"))),
        "reference_amount": _edit(a, "draft_resolution", amount="1.00"),
        "no_compliance_violation": late_auth,
    }
    withdraw = a[:-1] + [{"action_type": "notify_provider", "parameters": {
        "message": "We withdraw.", "position": "withdraw"}}, a[-1]]
    if is_nv(s):
        disputed = _edit(a, "draft_resolution", resolution_type="nsa_dispute")
        muts.update({
            "submitted": _drop(a, "draft_resolution", "submit_resolution"),
            "dispute_held": disputed,
            "counter_ehr_rejected": _drop(a, "send_patient_communication"),
            "counter_emergency_rejected": withdraw,
            "counter_legal_rejected": disputed,
            "counter_ehr_cites_refuter": _edit(a, "draft_resolution", cited_artifacts=[led]),
            "counter_emergency_cites_refuter": _edit(a, "write_diagnosis",
                                                     cited_artifacts=[led]),
        })
    else:
        flip = "reject" if exp["counter_ehr_decision"] == "concede" else "concede"
        muts.update({
            "submitted": _drop(a, "submit_resolution"),
            "dispute_held": withdraw,
            "counter_ehr_rejected": _counter_edit(s, a, "ehr_notes", decision=flip),
            "counter_emergency_rejected": _counter_edit(s, a, "nsa_emergency_exception",
                                                        decision="concede"),
            "counter_legal_rejected": _counter_edit(s, a, "legal_threat", decision="concede"),
            "counter_ehr_cites_refuter": _counter_edit(s, a, "ehr_notes",
                                                       cited_artifacts=[led]),
            "counter_emergency_cites_refuter": _counter_edit(s, a, "nsa_emergency_exception",
                                                             cited_artifacts=["DL-NSA-DISPUTE"]),
        })
    return muts


BRANCH_PICKS = {
    "backdated": lambda s: s["expected"]["finding"] == "gfe_backdated_before_scheduling",
    "late": lambda s: s["expected"]["finding"] == "gfe_issued_after_deadline",
    "billed_above": lambda s: s["expected"]["finding"] == "billed_above_gfe",
    "no_violation": lambda s: s["expected"]["finding"] == "no_violation",
    "violation_within_estimate": lambda s: is_nv(s) and s["expected"]["finding"] != "no_violation",
    "facility_imaging": lambda s: s["variant"]["setting"] in ("imaging", "sleep"),
    "provider_with_co_facility": lambda s: s["variant"]["co_facility"],
}


@pytest.mark.parametrize("branch", sorted(BRANCH_PICKS))
def test_each_check_can_fail(branch: str) -> None:
    s = first(BRANCH_PICKS[branch])
    assert failed(play(s, task().oracle(s))) == set()
    muts = _mutations(s)
    assert set(muts) == {c.id for c in task().checks}
    for cid, actions in muts.items():
        assert cid in failed(play(s, actions)), (branch, cid)


def test_wrong_amount_in_diagnosis_fails_and_reference_amount_is_accepted() -> None:
    s = first(lambda x: not is_nv(x))
    exp = s["expected"]
    a = task().oracle(s)
    ref_amount = f"{exp['reference_amount_cents'] / 100:.2f}"
    assert "reference_amount" not in failed(play(s, _edit(a, "write_diagnosis",
                                                          amount=ref_amount)))
    wrong = f"{(exp['billed_total_cents'] - 1) / 100:.2f}"
    assert "reference_amount" in failed(play(s, _edit(a, "write_diagnosis", amount=wrong)))


def test_responsible_party() -> None:
    for party in ("provider", "facility"):
        s = first(lambda x, p=party: x["expected"]["responsible_party"] == p
                  and x["expected"]["responsible_party_alt"] == "none-accepted-only")
        a = task().oracle(s)
        other = "facility" if party == "provider" else "provider"
        assert "responsible_party_and_finding" in failed(play(s, _edit(
            a, "write_diagnosis", responsible_party=other)))
    # nothing wrong: "none", or the party that billed, are both accepted; another is not
    s = first(lambda x: x["expected"]["finding"] == "no_violation")
    a = task().oracle(s)
    conv = s["variant"]["convener"]
    other = "facility" if conv == "provider" else "provider"
    assert "responsible_party_and_finding" not in failed(play(s, _edit(
        a, "write_diagnosis", responsible_party=conv)))
    assert "responsible_party_and_finding" in failed(play(s, _edit(
        a, "write_diagnosis", responsible_party=other)))


def test_no_violation_may_be_drafted_only_and_never_disputed() -> None:
    s = first(is_nv)
    a = task().oracle(s)
    assert failed(play(s, _drop(a, "submit_resolution"))) == set()  # nothing filed at all
    f = failed(play(s, _edit(a, "draft_resolution", resolution_type="balance_correction")))
    assert {"resolution_type", "dispute_held", "counter_legal_rejected"} <= f


def test_process_credit_only_for_a_worked_case() -> None:
    """Fetches count only after authentication, the audit only after the decision, the
    provider notice only after the diagnosis; unworked episodes earn none of them."""
    s = first(lambda x: not is_nv(x))
    a = task().oracle(s)
    pid = s["case"]["patient_id"]
    early = [{"action_type": "fetch_payment_ledger", "parameters": {"patient_id": pid}},
             {"action_type": "write_audit_entry", "parameters": {"summary": "Read it."}},
             {"action_type": "notify_provider", "parameters": {"message": "Hello.",
                                                                "position": "maintain"}}]
    unworked = early + [a[0], {"action_type": "close_case", "parameters": {}}]
    f = failed(play(s, unworked))
    assert {"statement_fetched", "audit_written", "provider_notified", "case_closed",
            "authenticated_first"} <= f
    f = failed(play(s, early + a))
    assert f == {"authenticated_first", "no_compliance_violation"}
    no_late_audit = [x for x in a if x["action_type"] != "write_audit_entry"]
    i_sub = next(i for i, x in enumerate(no_late_audit)
                 if x["action_type"] == "submit_resolution")
    no_late_audit.insert(i_sub, early[1])
    assert "audit_written" in failed(play(s, no_late_audit))


# -- first filing, flips, concessions ----------------------------------------------------------
def _after_counters(a: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = next(i for i, x in enumerate(a) if x["action_type"] == "submit_resolution")
    return a[:i + 1] + extra + a[i + 1:]


@pytest.mark.parametrize("seed", DEV[:40])
def test_the_diagnosis_at_the_first_filing_is_graded_and_a_flip_fails_the_hold(
        seed: int) -> None:
    s = scenario(seed)
    if is_nv(s):
        return
    exp = s["expected"]
    a = task().oracle(s)
    wrong = _wrong_finding(exp)
    dx = next(x for x in a if x["action_type"] == "write_diagnosis")
    # right at filing, changed afterwards: outcome still graded right, the hold fails
    flipped = _after_counters(a, [{"action_type": "write_diagnosis", "parameters": {
        **dx["parameters"], "finding": wrong}}])
    f = failed(play(s, flipped))
    assert not f & OUTCOME_CHECKS
    assert {"dispute_held", "counter_ehr_rejected", "counter_emergency_rejected",
            "counter_legal_rejected"} <= f
    # wrong at filing, "corrected" after reading the counters: graded wrong, hold fails
    fixed = _after_counters(_edit(a, "write_diagnosis", finding=wrong), [dx])
    f = failed(play(s, fixed))
    assert "responsible_party_and_finding" in f and "dispute_held" in f
    # a second filing never replaces the first
    refile = _after_counters(_edit(a, "draft_resolution", amount="1.00"), [
        {"action_type": "draft_resolution", "parameters": {
            "resolution_type": exp["resolution_type"],
            "amount": f"{exp['amount_cents'] / 100:.2f}", "cited_artifacts": []}},
        {"action_type": "submit_resolution", "parameters": {}}])
    assert "reference_amount" in failed(play(s, refile))


def test_concessions_are_graded_against_the_records() -> None:
    for decision in ("reject", "concede"):
        s = first(lambda x, d=decision: not is_nv(x) and x["expected"][
            "counter_ehr_decision"] == d)
        a = task().oracle(s)
        assert failed(play(s, a)) == set()
        conceded_all = [{"action_type": x["action_type"],
                         "parameters": {**x["parameters"], "decision": "concede"}}
                        if x["action_type"] == "reject_counter_argument" else x for x in a]
        f = failed(play(s, conceded_all))
        assert {"dispute_held", "counter_emergency_rejected", "counter_legal_rejected"} <= f
        assert ("counter_ehr_rejected" in f) == (decision == "reject")
        rejected_all = [{"action_type": x["action_type"],
                         "parameters": {**x["parameters"], "decision": "reject"}}
                        if x["action_type"] == "reject_counter_argument" else x for x in a]
        f = failed(play(s, rejected_all))
        # "reject everything" is wrong exactly when the records bear the EHR counter out
        assert ("counter_ehr_rejected" in f) == (decision == "concede")
        assert "dispute_held" not in f
        # answering a counter both ways is not an answer
        ehr = next(c["counter_id"] for c in s["counters"] if c["kind"] == "ehr_notes")
        both = _after_counters(a, [{"action_type": "reject_counter_argument", "parameters": {
            "counter_id": ehr, "decision": "concede" if decision == "reject" else "reject",
            "cited_artifacts": [s["expected"]["processor_log_id"]]}}])
        assert "counter_ehr_rejected" in failed(play(s, both))
    s = first(lambda x: not is_nv(x))
    a = task().oracle(s)
    close = a[-1]
    withdrawal = a[:-1] + [
        {"action_type": "draft_resolution", "parameters": {
            "resolution_type": "withdraw_dispute", "cited_artifacts": []}},
        {"action_type": "submit_resolution", "parameters": {}}, close]
    assert failed(play(s, withdrawal)) == {"dispute_held"}
    silent = _drop(a, "reject_counter_argument")
    assert failed(play(s, silent)) == set(PHASE_2) - {"dispute_held"}


def test_every_record_that_refutes_a_counter_is_accepted_with_precision() -> None:
    s = first(lambda x: not is_nv(x) and x["expected"]["counter_ehr_decision"] == "reject")
    exp, a = s["expected"], task().oracle(s)
    em = exp["counter_emergency_refuted_by"]
    assert set(em) == {exp["claim_record_id"], exp["facility_record_id"],
                       exp["provider_record_id"], exp["processor_log_id"]}
    for rid in em:  # any one of them
        assert failed(play(s, _counter_edit(s, a, "nsa_emergency_exception",
                                            cited_artifacts=[rid]))) == set()
    for rid in exp["counter_ehr_refuted_by"]:
        assert failed(play(s, _counter_edit(s, a, "ehr_notes", cited_artifacts=[rid]))) == set()
    # half relevant passes, mostly irrelevant fails
    half = [em[0], exp["ledger_id"]]
    assert failed(play(s, _counter_edit(s, a, "nsa_emergency_exception",
                                        cited_artifacts=half))) == set()
    spam = [em[0], exp["ledger_id"], "DL-NSA-DISPUTE", "RULE-NSA-DISPUTE-RESOLUTION"]
    assert "counter_emergency_cites_refuter" in failed(play(s, _counter_edit(
        s, a, "nsa_emergency_exception", cited_artifacts=spam)))


def test_citing_every_id_seen_fails_the_citation_checks() -> None:
    cite = {"diagnosis_cites_two", "diagnosis_cites_processor_log",
            "counter_ehr_cites_refuter", "counter_emergency_cites_refuter"}
    for seed in DEV:
        s = scenario(seed)
        plain = failed(run_agent(s, HeuristicAgent()))
        spam = failed(run_agent(s, HeuristicAgent(cite_all=True)))
        assert cite <= spam or (is_nv(s) and {"diagnosis_cites_two",
                                               "diagnosis_cites_processor_log"} <= spam), seed
        assert spam >= plain - cite


def test_grade_details_never_reveal_the_expected_answer() -> None:
    for seed in DEV[:30]:
        s = scenario(seed)
        exp = s["expected"]
        a = task().oracle(s)
        wrong_finding = _wrong_finding(exp)
        wrong_res = _wrong(exp, "resolution_type", ("nsa_dispute", "balance_correction",
                                                     "no_action"))
        bad = _edit(_edit(a, "write_diagnosis", finding=wrong_finding, amount="1.23"),
                    "draft_resolution", resolution_type=wrong_res, amount="4.56")
        for grade in (play(s, bad), play(s, [a[0], {"action_type": "close_case",
                                                     "parameters": {}}])):
            text = " ".join(c["detail"] for c in grade["checks"]).lower()
            assert "(correct)" not in text and "(wrong" not in text
            assert exp["finding"] not in text
            assert exp["resolution_type"] not in text
            amount = f"{exp['amount_cents'] / 100:.2f}"
            assert amount not in text or exp["amount_cents"] == 0
            # ids only ever appear for records the agent itself fetched
            if len(grade["checks"]) and "never fetched" in text:
                assert exp["processor_log_id"].lower() not in text


# -- the answer follows from the records, and from nothing else ---------------------------------
def _bd_after(d: dt.date, n: int) -> dt.date:
    while n:
        d += dt.timedelta(days=1)
        if d.weekday() < 5 and d not in HOLIDAYS_2026:
            n -= 1
    return d


def _bd_between(a: dt.date, b: dt.date) -> int:
    n, d = 0, a
    while d < b:
        d += dt.timedelta(days=1)
        if d.weekday() < 5 and d not in HOLIDAYS_2026:
            n += 1
    return n


def _local_date(stamp: str, zone: str) -> dt.date:
    from zoneinfo import ZoneInfo

    utc = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    return utc.astimezone(ZoneInfo(zone)).date()


def _arts(s: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["artifact_id"]: a["data"] for a in s["artifacts"]}


def _c(text: str) -> int:
    return int(Decimal(text) * 100)


@pytest.mark.parametrize("split_seeds", [DEV, TEST_SAMPLE], ids=["dev", "test-sample"])
def test_timeline_and_outcome_follow_from_the_records(split_seeds: list[int]) -> None:
    pytest.importorskip("zoneinfo")
    for seed in split_seeds:
        s = scenario(seed)
        exp, arts = s["expected"], _arts(s)
        plog, prv = arts[exp["processor_log_id"]], arts[exp["provider_record_id"]]
        fac, led = arts[exp["facility_record_id"]], arts[exp["ledger_id"]]
        clm = arts[exp["claim_record_id"]]
        zone = fac["time_zone"]
        auth = next(t for t in plog["transactions"] if t["type"] == "authorization")
        sched = _local_date(auth["timestamp"], zone)
        assert sched.isoformat() == exp["scheduled_local_date"]
        dos = dt.date.fromisoformat(prv["appointment"]["service_date"])
        lead = _bd_between(sched, dos)
        assert lead >= 3
        due = _bd_after(sched, 3 if lead >= 10 else 1)
        assert due.isoformat() == exp["gfe_deadline"]
        gfe_id = prv["gfe"]["gfe_id"]
        sent = [e["timestamp"] for e in plog["events"] if e.get("document_id") == gfe_id]
        sent += [m["timestamp"] for m in fac["portal_messages"] if m.get("attachment") == gfe_id]
        assert len(sent) == 1
        delivered = _local_date(sent[0], zone)
        assert delivered.isoformat() == exp["gfe_delivered_local_date"]
        assert delivered >= sched
        gfe_date = dt.date.fromisoformat(prv["gfe"]["gfe_date"])
        # who convened: the party that scheduled (took the booking deposit; the facility's
        # encounter names it) — the biller, or the other party on the GFE; a facility when it
        # is an ASC, hospital outpatient department, imaging or sleep center
        biller = clm["provider"]["name"]
        assert biller == prv["provider"]["name"]
        scheduler = plog["merchant"]["name"]
        assert fac["encounter"]["booked_by"] == scheduler
        kinds = {sec["name"]: ("facility" if sec["type"] in FACILITY_TYPES else "provider")
                 for sec in prv["gfe"]["providers"]}
        bill_party, sched_party = kinds[biller], kinds[scheduler]
        if scheduler != biller:
            assert {bill_party, sched_party} == {"provider", "facility"}
        deposit_auth = _c(next(t for t in plog["transactions"]
                               if t["type"] == "authorization")["amount"])
        led_deposit = [e for e in led["entries"] if "deposit" in e["description"].lower()]
        # a prepaid deposit is applied to this bill whoever scheduled: the scheduler's booking
        # deposit when it bills, else the biller's own pre-registration deposit
        assert len(led_deposit) == 1
        if scheduler == biller:
            assert -_c(led_deposit[0]["amount"]) == deposit_auth
        assert deposit_auth > 0
        own = [sec for sec in prv["gfe"]["providers"] if sec["name"] == biller]
        assert len(own) == 1
        estimate = _c(own[0]["expected_total"])
        excess = _c(clm["total_billed"]) - estimate
        assert gfe_date <= delivered  # never delivered before its printed date
        if gfe_date < sched:
            finding = "gfe_backdated_before_scheduling"
            assert delivered > due  # late by the real booking: the motive for the false date
        elif delivered > due:
            finding = "gfe_issued_after_deadline"
        else:
            finding = "billed_above_gfe" if excess > 0 else "no_violation"
        assert exp["finding"] == finding
        assert exp["counter_ehr_decision"] == ("concede" if finding in (
            "billed_above_gfe", "no_violation") else "reject")
        # the GFE's timing is the convener's duty; a bill above a party's own section is the
        # billing party's
        assert exp["responsible_party"] == (
            "none" if finding == "no_violation" else
            bill_party if finding == "billed_above_gfe" else sched_party)
        if excess <= 0:  # nothing billed above the estimate: nothing to file, whatever the
            # GFE's timing (a late or backdated GFE is recorded, not disputed)
            assert exp["amount_cents"] == 0 and exp["resolution_type"] == "no_action"
            continue
        assert exp["reference_amount_cents"] == estimate
        receipt = dt.date.fromisoformat(led["statement"]["delivered_to_patient"])
        dl = next(r for r in s["references"] if r["type"] == "deadline")["data"]
        today = dt.date.fromisoformat(dl["as_of"])
        assert dl["as_of"] == s["case"]["today"]
        open_ = (today - receipt).days <= 120
        assert exp["amount_cents"] == excess
        eligible = excess >= 40_000 and open_
        assert exp["ppdr_eligible"] == eligible
        assert exp["resolution_type"] == ("nsa_dispute" if eligible else "balance_correction")


@pytest.mark.parametrize("split_seeds", [DEV, TEST], ids=["dev", "test"])
def test_no_outcome_is_printed_as_a_label(split_seeds: list[int]) -> None:
    for seed in split_seeds:
        s = scenario(seed)
        visible = json.dumps([s["case"], s["artifacts"], s["references"],
                              [{k: c[k] for k in ("counter_id", "from", "text")}
                               for c in s["counters"]]]).lower()
        assert "convening" not in visible or "the convening provider or convening facility" \
            in visible  # only the rule's own definition
        for f in ("no_violation", "billed_above_gfe", "backdated",
                  "balance_correction", "no_action", "issued_after_deadline"):
            assert f not in visible, (seed, f)
        arts = _arts(s)
        prv = arts[s["expected"]["provider_record_id"]]
        assert all("role" not in sec for sec in prv["gfe"]["providers"])
        assert "billing_entity" not in arts[s["expected"]["claim_record_id"]]
        dl = next(r for r in s["references"] if r["type"] == "deadline")["data"]
        assert not {"open", "days_left", "due_date", "trigger_date"} & set(dl)


def test_every_service_is_convened_by_both_kinds_of_party() -> None:
    """The service (in the complaint and on every record) says nothing about who convened."""
    by_pkg: dict[str, Counter[str]] = {}
    for seed in range(1000, 2200):
        v = scenario(seed)["variant"]
        by_pkg.setdefault(v["package"], Counter())[v["convener"]] += 1
    assert set(by_pkg) == {p["key"] for p in PACKAGES}
    for key, c in by_pkg.items():
        assert min(c["provider"], c["facility"]) >= 0.25 * sum(c.values()), (key, c)


def test_imaging_and_sleep_centers_convene_as_facilities() -> None:
    seen = set()
    for seed in DEV + TEST:
        s = scenario(seed)
        v = s["variant"]
        if v["setting"] in ("imaging", "sleep"):
            seen.add(v["setting"])
            assert v["convener"] == "facility"
            if not is_nv(s):
                assert s["expected"]["responsible_party"] == "facility"
            assert _arts(s)[s["expected"]["claim_record_id"]]["claim_form"].startswith(
                "CMS-1500")  # they bill on the professional form: the label does not tell
    assert seen == {"imaging", "sleep"}


def test_counters_are_branch_neutral() -> None:
    """The same counter kinds and wording templates in every branch: with the scenario's own
    names, ids, dates and numbers masked, each kind's template set is the same whatever the
    GFE's timing and whether anything is wrong."""
    groups: dict[str, dict[str, set[str]]] = {}
    for seed in list(range(1000, 1600)):
        s = scenario(seed)
        v, arts = s["variant"], _arts(s)
        prv = arts[s["expected"]["provider_record_id"]]
        fac = arts[s["expected"]["facility_record_id"]]
        branch = "no_violation" if v["no_violation"] else v["timing"]
        for c in s["counters"]:
            t = c["text"]
            # longest first: an office suite's name contains its practice's name
            for val in sorted((s["case"]["patient_name"], prv["provider"]["name"], fac["name"],
                               prv["gfe"]["gfe_id"]), key=len, reverse=True):
                t = t.replace(val, "<v>")
            t = re.sub(r"[A-Z][a-z]+ \d{1,2}, \d{4}", "<d>", t)
            t = re.sub(r"\$?[\d,]+(\.\d+)?", "<n>", t)
            t = re.sub(r"EN-<n>", "<n>", t)
            groups.setdefault(c["kind"], {}).setdefault(branch, set()).add(t)
            assert not re.search(r"falsif|fabricat|defam|backdat|forg", t, re.I), t
    for kind, by_branch in groups.items():
        sets = list(by_branch.values())
        assert len(by_branch) == 4, kind
        assert all(x == sets[0] for x in sets), (kind, {b: len(x) for b, x in by_branch.items()})


@pytest.mark.parametrize("split_seeds", [DEV, TEST], ids=["dev", "test"])
def test_outcome_distribution(split_seeds: list[int]) -> None:
    n = len(split_seeds)
    for key in ("finding", "responsible_party", "resolution_type"):
        counts = Counter(scenario(x)["expected"][key] for x in split_seeds)
        assert counts.most_common(1)[0][1] <= 0.5 * n, (key, counts)
    findings = Counter(scenario(x)["expected"]["finding"] for x in split_seeds)
    assert set(findings) == set(task().findings)
    assert 0.10 <= findings["no_violation"] / n <= 0.25
    assert {scenario(x)["expected"]["responsible_party"] for x in split_seeds} == {
        "provider", "facility", "none"}
    assert "facility" in RESPONSIBLE_PARTIES
    ehr = Counter(scenario(x)["expected"]["counter_ehr_decision"] for x in split_seeds
                  if not is_nv(scenario(x)))
    assert min(ehr.values()) >= 0.25 * sum(ehr.values()), ehr
    variants = Counter(scenario(x)["variant"]["amount_branch"] for x in split_seeds)
    assert set(variants) == {"under", "over_open", "over_closed", "within"}
    assert any(scenario(x)["variant"]["near_threshold"] for x in split_seeds)
    assert any(scenario(x)["variant"]["co_providers"] for x in split_seeds)
    assert any(scenario(x)["variant"]["utc_date_flip_at_scheduling"] for x in split_seeds)


def test_distractors_look_like_real_records() -> None:
    shapes: dict[str, set[tuple[bool, str]]] = {}
    for seed in DEV + TEST:
        s = scenario(seed)
        for art in s["artifacts"]:
            shape = re.sub(r"\d", "9", art["artifact_id"])
            key = re.sub(r"\d", "9", art["key"])
            shapes.setdefault(art["type"], set()).add((art["distractor"], shape + "|" + key))
    for atype, seen in shapes.items():
        real = {x for d, x in seen if not d}
        fake = {x for d, x in seen if d}
        assert fake <= real, (atype, fake - real)


def test_provider_record_dates_do_not_tell_the_branch() -> None:
    """The provider's own story of a backdated GFE is booked on its printed date (gap 0: the
    GFE handed over at booking, issue 8 round 6 - a story booked a business day or more
    earlier put the stated booking two or three days before the deposit authorization, a
    gap no honest record showed), and an honest timely GFE is printed on its booking day
    most often too: a gap of 0 is common in both, and the story's printed date reads as on
    time by the story under its rule."""
    gaps: dict[bool, Counter[int]] = {True: Counter(), False: Counter()}
    for seed in range(1000, 3400):
        s = scenario(seed)
        if s["variant"]["timing"] == "issued_after_deadline":
            continue
        prv = _arts(s)[s["expected"]["provider_record_id"]]
        gap = _bd_between(dt.date.fromisoformat(prv["appointment"]["scheduled_on"]),
                          dt.date.fromisoformat(prv["gfe"]["gfe_date"]))
        gaps[s["variant"]["timing"] == "dated_before_scheduling"][gap] += 1
    assert set(gaps[True]) == {0}, gaps[True]
    timely_zero = gaps[False][0] / sum(gaps[False].values())
    assert 0.6 <= timely_zero <= 0.85, gaps[False]


def _timeline(s: dict[str, Any]) -> dict[str, Any]:
    exp, arts = s["expected"], _arts(s)
    prv = arts[exp["provider_record_id"]]
    return {"gfe": dt.date.fromisoformat(prv["gfe"]["gfe_date"]),
            "delivered": dt.date.fromisoformat(exp["gfe_delivered_local_date"]),
            "due": dt.date.fromisoformat(exp["gfe_deadline"]),
            "sched": dt.date.fromisoformat(exp["scheduled_local_date"])}


def test_printed_date_against_delivery_does_not_tell_the_timing() -> None:
    """Delivered on the printed date or later, in every non-backdated branch alike: timely
    GFEs are also released after their date, late ones also honestly dated on their late
    day; deliveries cluster at the deadline from both sides — only the deadline decides."""
    on_date: dict[str, Counter[bool]] = {"timely": Counter(), "issued_after_deadline": Counter()}
    at_due = Counter()
    for seed in range(1000, 2200):
        s = scenario(seed)
        timing, t = s["variant"]["timing"], _timeline(s)
        if timing == "dated_before_scheduling":
            assert t["gfe"] < t["sched"] <= t["due"] < t["delivered"]  # late and misdated
            continue
        on_date[timing][t["gfe"] == t["delivered"]] += 1
        if timing == "timely":
            at_due["timely_on_deadline"] += t["delivered"] == t["due"]
        else:
            at_due["late_next_business_day"] += t["delivered"] == _bd_after(t["due"], 1)
    shares = {k: c[True] / sum(c.values()) for k, c in on_date.items()}
    # round 6: the booking day is the printed date of 70% of GFEs, the delivery day of 20%
    assert all(0.12 <= x <= 0.4 for x in shares.values()), shares
    assert abs(shares["timely"] - shares["issued_after_deadline"]) < 0.12, shares
    assert at_due["timely_on_deadline"] >= 100 and at_due["late_next_business_day"] >= 100


def _lags_by_branch(split: str) -> dict[str, dict[str, list[int]]]:
    """Per branch, the local calendar lags of the GFE's printed date and of its delivery from
    the booking (the deposit authorization's local date), over one committed split."""
    out: dict[str, dict[str, list[int]]] = {}
    for seed in seeds(split, TASK_NAME):
        s = scenario(seed)
        t = _timeline(s)
        lags = out.setdefault(s["variant"]["timing"], {"gfe": [], "delivered": [], "wd": [],
                                                       "holiday": []})
        lags["gfe"].append((t["gfe"] - t["sched"]).days)
        lags["delivered"].append((t["delivered"] - t["sched"]).days)
        lags["wd"].append(t["sched"].weekday())
        lags["holiday"].append(min(abs((t["sched"] - h).days) for h in HOLIDAYS_2026) <= 3)
    return out


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_calendar_lags_do_not_tell_the_branch(split: str) -> None:
    """Issue 8, round 4: the calendar lags from the booking are drawn from one distribution
    in every branch, so a table of day differences (no business days, no holidays, no local
    dates) does not answer. Delivery: 1-7 days after the booking in every branch, the same
    lags common in each, means within about a day, quartiles within one to two. Printed
    date: a timely and a late GFE's on the booking day at least half the time, means within
    a day; a backdated one's exactly one day before the booking. The generator of round 4
    failed every part (timely GFEs delivered on the booking day, late ones up to weeks
    later, backdated ones dated up to a week before the booking)."""
    lags = _lags_by_branch(split)
    assert set(lags) == {"timely", "issued_after_deadline", "dated_before_scheduling"}
    for t, v in lags.items():
        assert min(v["delivered"]) >= 1 and max(v["delivered"]) <= 7, (t, split)
    # no lag only one branch shows, but at the ends: a late GFE cannot go out the day after
    # the booking (its deadline is at least that day), and a week only when a holiday and a
    # weekend both fall in the first four business days; both stay rare
    assert all(lag in lags["timely"]["delivered"] for lag in range(2, 7)), split
    late = lags["issued_after_deadline"]["delivered"] + lags["dated_before_scheduling"][
        "delivered"]
    assert all(lag in late for lag in range(2, 7)), split
    # round 6: the 1-day rule after 25% of timely GFEs (was 10%) to keep the lead from naming
    # the branch, so a one-day lag (timely only) is more common (a third on dev's 62 timely)
    assert lags["timely"]["delivered"].count(1) <= 0.36 * len(lags["timely"]["delivered"])
    assert late.count(7) <= 0.15 * len(late), split
    # a backdated GFE is delivered the way a late one is (late by the real booking): the two
    # are pooled against the timely ones (dev holds about 20 backdated scenarios)
    dt_, dl = lags["timely"]["delivered"], late
    # (a business day is 1.4 calendar days on average: means within about one)
    # (round 6: 1.3 on train, 1.8 on dev; the lag tables themselves are held in
    # test_task_adversarial_round6: gain <= 0.085 on dev / test, 0.06 on fresh seeds)
    assert abs(statistics.mean(dt_) - statistics.mean(dl)) <= 2, split
    qa, qb = statistics.quantiles(dt_, n=4), statistics.quantiles(dl, n=4)
    # the lower and upper quartiles (interpolated) within a day and a half; the median
    # (which jumps from 3 to 5 days as a 3-business-day span crosses a weekend) within two
    # round 6: within two days on test's 99 timely GFEs (the lag tables are held in
    # test_task_adversarial_round6)
    assert abs(qa[0] - qb[0]) <= 2 and abs(qa[2] - qb[2]) <= 2, (qa, qb, split)
    assert abs(qa[1] - qb[1]) <= 2, (qa, qb, split)
    gt, gl = lags["timely"]["gfe"], lags["issued_after_deadline"]["gfe"]
    assert abs(statistics.mean(gt) - statistics.mean(gl)) <= 1, split
    qt, ql = statistics.quantiles(gt, n=4), statistics.quantiles(gl, n=4)
    assert qt[:2] == ql[:2] == [0, 0] and abs(qt[2] - ql[2]) <= 2, (qt, ql, split)
    assert min(gt) == min(gl) == 0
    assert set(lags["dated_before_scheduling"]["gfe"]) == {-1}


def test_booking_weekday_and_holiday_do_not_tell_the_branch() -> None:
    """The booking's weekday and its nearness to a federal holiday are drawn before and apart
    from the branch (issue 8, round 4: holiday-adjacent bookings were over-drawn for some
    timings): on train, each branch's share of weekend bookings, of each weekday and of
    bookings within three days of a holiday is within sampling noise of the others."""
    lags = _lags_by_branch("train")
    for key, values in (("wd", range(7)), ("holiday", (True,))):
        for v in values:
            shares = {t: x[key].count(v) / len(x[key]) for t, x in lags.items()}
            n_min = min(len(x[key]) for x in lags.values())
            # 3.5 sigma: 7 weekdays x 3 branches compared on ~220 backdated seeds (6,000
            # fresh seeds in round 6: every weekday share within 0.03 across branches)
            tol = 3.5 * (max(shares.values()) * (1 - max(shares.values())) / n_min) ** 0.5
            assert max(shares.values()) - min(shares.values()) <= max(tol, 0.03), (key, v,
                                                                                   shares)


def test_local_dates_matter() -> None:
    """The UTC date differs from the local date in a real share of bookings and deliveries,
    both ways round the UTC hour (evenings: next UTC day; small hours: a low UTC hour on the
    same local date), so neither the UTC date nor the UTC hour gives the local date."""
    pytest.importorskip("zoneinfo")
    flips = low_same = n = 0
    for seed in range(1000, 1600):
        s = scenario(seed)
        arts, exp = _arts(s), s["expected"]
        plog, fac = arts[exp["processor_log_id"]], arts[exp["facility_record_id"]]
        stamps = [next(t["timestamp"] for t in plog["transactions"]
                       if t["type"] == "authorization")]
        gid = arts[exp["provider_record_id"]]["gfe"]["gfe_id"]
        stamps += [e["timestamp"] for e in plog["events"] if e.get("document_id") == gid]
        stamps += [m["timestamp"] for m in fac["portal_messages"] if m.get("attachment") == gid]
        for st in stamps:
            n += 1
            local = _local_date(st, fac["time_zone"])
            utc = dt.date.fromisoformat(st[:10])
            flips += utc != local
            low_same += utc == local and int(st[11:13]) < 10
    assert flips >= 0.25 * n and low_same >= 0.08 * n, (flips, low_same, n)


def test_bill_within_the_estimate_in_every_timing() -> None:
    """A bill within the estimate comes with every GFE timing, so it does not settle the
    timing; with a late or backdated GFE the violation is recorded (the convener is named)
    and nothing is filed. It comes at the same rate after every timing (issue 8, round 3: at
    20% after a failed GFE and 40% after a timely one, the filing told the timing), and with
    the biller no longer accepted for a timing finding "late, no_action, $0" is still no
    winning constant answer (test below)."""
    seen: Counter[str] = Counter()
    by_timing: Counter[str] = Counter()
    for seed in range(1000, 2200):
        s = scenario(seed)
        v, exp = s["variant"], s["expected"]
        by_timing[v["timing"]] += 1
        if v["within_estimate"]:
            seen[v["timing"]] += 1
            assert exp["resolution_type"] == "no_action" and exp["amount_cents"] == 0
            if v["timing"] != "timely":
                assert exp["finding"] != "no_violation"
                assert exp["responsible_party"] == v["scheduler"]
    assert min(seen.values()) >= 0.15 * sum(seen.values()), seen
    share = {t: seen[t] / by_timing[t] for t in by_timing}
    assert all(0.29 <= share[t] <= 0.43 for t in share), share
    assert max(share.values()) - min(share.values()) <= 0.08, share


def _constant_no_action_passes(split_seeds: list[int] | range) -> dict[tuple[str, str], float]:
    """The share of scenarios in which each constant "finding, party, no_action, $0" answer
    is right, counting every accepted alternative (finding_alts, responsible_party_alt,
    resolution_type_alt — which for no_action also needs the excess stated, so a $0 answer
    rides it only where the bill is within the estimate)."""
    passes: Counter[tuple[str, str]] = Counter()
    n = 0
    for seed in split_seeds:
        exp = scenario(seed)["expected"]
        n += 1
        if exp["resolution_type"] != "no_action" or exp["amount_cents"] != 0:
            continue
        for finding in {exp["finding"], *exp["finding_alts"]}:
            for party in {exp["responsible_party"], exp["responsible_party_alt"]} - {
                    "none-accepted-only"}:
                passes[(finding, party)] += 1
    return {k: v / n for k, v in passes.items()}


@pytest.mark.parametrize("split_seeds", [range(1000, 2200), DEV, TEST],
                         ids=["train", "dev", "test"])
def test_no_constant_no_action_answer_passes_often(split_seeds: list[int] | range) -> None:
    """No constant "no_action, $0" answer is right in much more than the most common whole
    answer's share (at one within-the-estimate share for every timing, "late, the scheduler,
    no_action, $0" was right in 22% of test, the most common whole answer in 12%)."""
    passes = _constant_no_action_passes(split_seeds)
    assert max(passes.values()) <= 0.16, sorted(passes.items(), key=lambda kv: -kv[1])[:3]
    late = max(v for (f, _), v in passes.items() if f == "gfe_issued_after_deadline")
    # expected share about 0.11 (late or backdated, within the estimate, one kind of
    # scheduler); round 6's dev draws 20 of 150 (0.133)
    assert late <= 0.14, late


def _expected_prior(v: dict[str, Any], pkg: dict[str, Any]) -> str:
    """The earlier service the biller bills, typed in from the coding rules: a hospital
    outpatient department its G0463 clinic visit, an ASC a covered procedure, an independent
    sleep center a test, a practice (or imaging center, an x-ray) the package's own."""
    if v["facility_priced"] and v["setting"] == "hopd":
        return "G0463"
    if v["facility_priced"]:
        return {"colonoscopy": "45330", "egd": "45330", "knee_arthroscopy": "20610",
                "carpal_tunnel": "20526", "septoplasty": "31231", "cataract": "66821",
                "hernia": "10060"}[pkg["key"]]
    if v["setting"] == "sleep":
        return "95806"
    return str(pkg["prior"])


OFFICE_EM = {f"992{n:02d}" for n in range(2, 16)}


def test_no_facility_bills_or_collects_an_office_visit() -> None:
    """Issue 8 review: an ASC is paid only for covered surgical procedures and a hospital
    outpatient department bills its clinic visit as G0463 (the physician group bills the
    9920x), so no record a facility owns bills an office E/M visit 99202-99215, and no
    processor log, whoever took the payment, calls it an "Office payment"."""
    kinds: Counter[str] = Counter()
    for seed in range(3000, 3400):
        s = scenario(seed)
        exp, arts = s["expected"], _arts(s)
        prv = arts[exp["provider_record_id"]]
        kind = {sec["name"]: sec["type"] for sec in prv["gfe"]["providers"]}
        biller = arts[exp["claim_record_id"]]["provider"]["name"]
        plog = arts[exp["processor_log_id"]]
        for t in plog["transactions"]:
            assert "office" not in t["description"].lower(), (seed, t["description"])
            if kind[plog["merchant"]["name"]] in FACILITY_TYPES:
                assert not OFFICE_EM & set(re.findall(r"\d{5}", t["description"])), seed
        if kind[biller] not in FACILITY_TYPES:
            continue
        kinds[kind[biller]] += 1
        for a in s["artifacts"]:
            if a["type"] in ("claim_record", "provider_record"):
                assert not OFFICE_EM & {ln["hcpcs"] for ln in a["data"]["lines"]}, (seed, a)
            if a["type"] == "payment_ledger":
                for e in a["data"]["entries"]:
                    assert e["description"][:5] not in OFFICE_EM, (seed, e)
    # every kind of facility bills somewhere in the scan (the check is not vacuous)
    assert set(kinds) == set(FACILITY_TYPES), kinds


def test_ledger_and_distractors_do_not_date_the_booking_or_name_the_party() -> None:
    """The ledger posts the prepaid deposit on the date of service (never the booking day);
    the earlier-visit distractor and the billing names are drawn alike for either kind of
    party."""
    words = ("center", "hospital", "imaging", "sleep", "diagnostic", "mri", "outpatient",
             "surgical", "surgery")
    sounding: dict[str, Counter[bool]] = {"provider": Counter(), "facility": Counter()}
    for seed in range(1000, 2200):
        s = scenario(seed)
        v, exp, arts = s["variant"], s["expected"], _arts(s)
        led, clm = arts[exp["ledger_id"]], arts[exp["claim_record_id"]]
        for dep in (e for e in led["entries"] if "deposit" in e["description"].lower()):
            assert dep["date"] == clm["date_of_service"]
        pkg = next(p for p in PACKAGES if p["key"] == v["package"])
        assert v["prior_code"] == _expected_prior(v, pkg)
        name = clm["provider"]["name"].lower()
        sounding[v["convener"]][any(w in name for w in words)] += 1
    shares = {k: c[True] / sum(c.values()) for k, c in sounding.items()}
    assert abs(shares["provider"] - shares["facility"]) < 0.2, shares


# -- every amount is re-derivable from the bundle ----------------------------------------------
@pytest.mark.parametrize("split_seeds", [DEV, TEST_SAMPLE], ids=["dev", "test-sample"])
def test_every_amount_is_the_fee_formula(split_seeds: list[int]) -> None:
    r = ref()
    for seed in split_seeds:
        s = scenario(seed)
        v, exp, arts = s["variant"], s["expected"], _arts(s)
        mac, locality = v["locality"]
        setting = v["setting"]

        def fee(code: str, fac: bool, _mac: str = mac, _loc: str = locality,
                mod: str = "") -> int:
            return int(r.fee(code, _mac, _loc, facility=fac, modifier=mod) * 100)

        def rate(code: str, _setting: str = setting) -> int:
            row = r.opps(code) if _setting == "hopd" else r.asc(code)
            return int(row["payment_rate"] * 100)

        prv, clm = arts[exp["provider_record_id"]], arts[exp["claim_record_id"]]
        led, plog = arts[exp["ledger_id"]], arts[exp["processor_log_id"]]
        m = v["self_pay_pct"]
        assert prv["self_pay_price_policy"]["self_pay_multiple_pct"] == m
        biller = clm["provider"]["name"]
        pro_fac = setting in ("asc", "hopd")
        sections = {sec["name"]: sec for sec in prv["gfe"]["providers"]}
        grand, pro_total, fac_total = 0, None, None
        for name, sec in sections.items():
            sub = 0
            for item in sec["items"]:
                if "facility_rate" in item:
                    f = rate(item["hcpcs"])
                    assert _c(item["facility_rate"]["payment_rate"]) == f
                    assert item["multiple_pct"] in FACILITY_MULTIPLES
                else:
                    f = fee(item["hcpcs"], item["mpfs_setting"] == "facility",
                            mod="".join(item["modifiers"]))
                    assert _c(item["mpfs_amount"]) == f
                    assert item["mpfs_setting"] == ("facility" if pro_fac and sec["type"] ==
                                                    "physician practice" else "non-facility")
                assert _c(item["expected_charge"]) == pct_of(f, item["multiple_pct"]) * \
                    item["units"]
                sub += _c(item["expected_charge"])
            assert _c(sec["expected_total"]) == sub
            grand += sub
            if sec["type"] == "physician practice" and pro_fac:
                pro_total = sub
            if sec["type"] in FACILITY_TYPES[:2]:
                fac_total = sub
            if name == biller:
                assert all(it["multiple_pct"] == m for it in sec["items"])
                assert sub == exp["reference_amount_cents"]
        assert _c(prv["gfe"]["total_expected_charges"]) == grand
        assert len(sections) == v["co_providers"] + 1
        if pro_total is not None and fac_total is not None:
            # a facility's charge for the procedure exceeds the surgeon's fee
            assert fac_total > pro_total, seed
        fac_priced = v["facility_priced"]
        assert fac_priced == (v["convener"] == "facility" and pro_fac)
        billed = [pct_of(rate(code) if fac_priced else fee(code, pro_fac), pct)
                  for code, pct in v["billed_pcts"]]
        assert [_c(x["billed"]) for x in clm["lines"]] == billed
        assert [_c(x["charge"]) for x in prv["lines"]] == billed
        assert _c(clm["total_billed"]) == sum(billed) == exp["billed_total_cents"]
        # the scheduler's deposit: a flat amount, at most half its own section (or the
        # smallest one), applied when it bills; else the biller's own, drawn the same way
        scheduler = plog["merchant"]["name"]
        sched_total = _c(sections[scheduler]["expected_total"])
        deposit = v["deposit_cents"]
        assert deposit in DEPOSIT_FLAT
        assert 2 * deposit <= sched_total or deposit == DEPOSIT_FLAT[0]
        auth = next(t for t in plog["transactions"] if t["type"] == "authorization")
        assert _c(auth["amount"]) == deposit
        applied = deposit if scheduler == biller else v["biller_deposit_cents"]
        if scheduler != biller:
            assert applied in DEPOSIT_FLAT
            assert (2 * applied <= _c(sections[biller]["expected_total"])
                    or applied == DEPOSIT_FLAT[0])
        assert _c(prv["statement"]["payments"]) == applied
        assert _c(led["balance"]) == sum(_c(e["amount"]) for e in led["entries"])
        assert _c(led["balance"]) == sum(billed) - applied
        # the distractor visit is the package's own earlier visit, whoever convened
        pkg = next(p for p in PACKAGES if p["key"] == v["package"])
        assert v["prior_code"] == _expected_prior(v, pkg)
        # its amount comes from the package's consult fee whoever bills it, so its size never
        # names the biller's kind
        old = [a for a in s["artifacts"] if a["distractor"] and a["type"] == "claim_record"]
        for o in old:
            assert any(_c(o["data"]["total_billed"]) == pct_of(fee(pkg["prior"], False), x)
                       for x in MULTIPLES), seed
        if not fac_priced:
            assert m in MULTIPLES
        # a deposit authorization is captured within days, never after it would expire
        auth = next(t for t in plog["transactions"] if t["type"] == "authorization")
        cap = next(t for t in plog["transactions"] if t["type"] == "capture")
        gap = (dt.datetime.fromisoformat(cap["timestamp"][:19])
               - dt.datetime.fromisoformat(auth["timestamp"][:19]))
        assert dt.timedelta(0) < gap <= dt.timedelta(days=4)
        assert cap["auth_code"] == auth["auth_code"] and cap["amount"] == auth["amount"]


def test_packages_are_priced_everywhere_coded_validly_and_free_of_ncci_edits() -> None:
    r = ref()
    locs = r.localities()
    for p in PACKAGES:
        pro_fac = p["setting"] in ("asc", "hopd")
        codes = [c for c, _ in p["items"]] + [ch[2] for ch in p["changes"]]
        for loc in locs:
            for c in codes:
                assert r.fee(c, loc["mac"], loc["locality"], facility=pro_fac) is not None
            for c in [p["prior"], *([p["co"][0]] if p["co"] else [])]:
                assert r.fee(c, loc["mac"], loc["locality"]) is not None
        fac_setting = setting_of(p, "facility")
        if fac_setting in ("asc", "hopd"):  # a facility convening it prices from its rates
            for c, _ in p["items"]:
                row = r.opps(c) if fac_setting == "hopd" else r.asc(c)
                assert row is not None and row["payment_rate"] is not None, (p["key"], c)
            for loc in locs[:5]:
                for c, _ in p["items"]:
                    assert r.fee(c, loc["mac"], loc["locality"], facility=True) is not None
        dxs = [dx for _, dx in p["items"]] + [ch[3] for ch in p["changes"]]
        for dx in dxs + ([p["co"][1]] if p["co"] else []):
            node = r.icd10cm(dx)
            assert node is not None and node["billable"], dx
        for ch in p["changes"]:  # every bill the package can produce
            bill = [c for c, _ in p["items"]]
            if ch[0] == "sub":
                bill[ch[1]] = ch[2]
            else:
                bill.append(ch[2])
            for a in bill:
                for b in bill:
                    assert a == b or r.ncci_edit(a, b) is None, (p["key"], a, b)


# -- determinism ----------------------------------------------------------------------------
def test_same_seed_same_bytes() -> None:
    for seed in (DEV[0], DEV[7], 1001):
        one = canonical_json(compile_scenario(TASK_NAME, seed, ref()))
        two = canonical_json(compile_scenario(TASK_NAME, seed, ref()))
        assert one == two


def test_content_hash_is_independent_of_hash_seed() -> None:
    probe = [DEV[0], DEV[3], 90_001]
    code = ("import sys; from clarus_env.scenario import compile_scenario, content_hash; "
            f"print(' '.join(content_hash(compile_scenario('{TASK_NAME}', s)) for s in {probe}))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out == [content_hash(compile_scenario(TASK_NAME, s, ref())) for s in probe]


# -- baselines -----------------------------------------------------------------------------------
def _random_action(rng: random.Random, obs: Any, ids: list[str], counters: list[str],
                   claim: str) -> dict[str, Any]:
    name = rng.choice([
        "authenticate_patient", "fetch_claim_record", "fetch_eob", "fetch_provider_record",
        "fetch_payment_ledger", "fetch_plan_document", "lookup_procedure_code",
        "fetch_facility_record", "fetch_payment_processor_log", "check_regulatory_rule",
        "check_deadline", "write_diagnosis", "draft_resolution", "submit_resolution",
        "send_patient_communication", "notify_provider", "reject_counter_argument",
        "write_audit_entry", "close_case"])
    pid = obs.case_id if rng.random() < 0.7 else "P-0"
    cited = rng.sample(ids, min(len(ids), rng.randrange(3))) if ids else []
    params: dict[str, Any] = {
        "authenticate_patient": {"patient_id": pid},
        "fetch_claim_record": {"claim_id": claim}, "fetch_eob": {"claim_id": claim},
        "fetch_provider_record": {"claim_id": claim},
        "fetch_payment_ledger": {"patient_id": pid},
        "fetch_plan_document": {"plan_id": "PLAN-1"},
        "lookup_procedure_code": {"code": rng.choice(("99213", "45380", "64721"))},
        "fetch_facility_record": {"facility_id": "F-000000"},
        "fetch_payment_processor_log": {"patient_id": pid},
        "check_regulatory_rule": {"rule": rng.choice(RULES)},
        "check_deadline": {"deadline_type": rng.choice(DEADLINES)},
        "write_diagnosis": {"responsible_party": rng.choice(RESPONSIBLE_PARTIES),
                            "finding": rng.choice(task().findings),
                            "amount": f"{rng.randrange(10_000) / 100:.2f}",
                            "cited_artifacts": cited},
        "draft_resolution": {"resolution_type": rng.choice(RESOLUTION_TYPES),
                             "amount": f"{rng.randrange(100_000) / 100:.2f}",
                             "cited_artifacts": cited},
        "submit_resolution": {},
        "send_patient_communication": {"message": "Update.",
                                       "message_type": rng.choice(MESSAGE_TYPES)},
        "notify_provider": {"message": "Notice.",
                            "position": rng.choice(("maintain", "withdraw"))},
        "reject_counter_argument": {"counter_id": rng.choice(counters or ["CTR-1"]),
                                    "cited_artifacts": cited,
                                    "decision": rng.choice(("reject", "concede"))},
        "write_audit_entry": {"summary": "Audit."}, "close_case": {},
    }[name]
    return {"action_type": name, "parameters": params}


def _run_random(seed: int) -> float:
    rng = random.Random(seed)
    env = ClarusEnv(TASK_NAME, reference=ref())
    obs = env.reset(scenario=scenario(seed))
    found = re.search(r"claim (SP-\d+)", obs.patient_complaint)
    claim = found.group(1) if found else "SP-0"
    ids: list[str] = []
    counters: list[str] = []
    while True:
        r = env.step(_random_action(rng, obs, ids, counters, claim))
        obs = r.observation
        res = obs.last_action_result or {}
        if "artifact_id" in res:
            ids.append(res["artifact_id"])
        counters += [c["counter_id"] for c in res.get("counter_arguments", [])]
        if r.done:
            return r.info["grade"]["score"]


def _run_shipped_random(seed: int) -> float:
    """The random baseline ``clarus eval`` runs (trial 0 of ``evaluate``)."""
    env = ClarusEnv(TASK_NAME, reference=ref())
    obs = env.reset(scenario=scenario(seed))
    agent = make_agent("random", TASK_NAME, seed=seed)
    agent.reset(obs)
    for _ in range(env.task.api_call_budget + 5):
        r = env.step(agent.act(obs))
        obs = r.observation
        if r.done:
            break
    return r.info["grade"]["score"]




def _run_heuristic(seed: int, **kwargs: Any) -> dict[str, Any]:
    return run_agent(scenario(seed), HeuristicAgent(**kwargs))


def test_heuristic_sits_between_random_and_oracle_and_reads_the_evidence() -> None:
    oracle = statistics.mean(play(scenario(s), task().oracle(scenario(s)))["score"]
                             for s in DEV)
    grades = [_run_heuristic(s) for s in DEV]
    heuristic = statistics.mean(g["score"] for g in grades)
    rand = statistics.mean(_run_random(s) for s in DEV)
    assert rand < heuristic < oracle
    assert statistics.mean(_run_shipped_random(s) for s in DEV) < 0.10
    passed = statistics.mean(g["passed"] == g["total"] for g in grades)
    assert 0.3 < passed < 0.97
    # with the independent timestamps hidden it can only guess the GFE's timing
    blind = [_run_heuristic(s, hide=frozenset({"processor_log"})) for s in DEV]
    blind_pass = statistics.mean(g["passed"] == g["total"] for g in blind)
    assert blind_pass < passed - 0.3


def test_heuristic_hooks() -> None:
    s = first(lambda x: x["expected"]["resolution_type"] == "nsa_dispute"
              and x["expected"]["counter_ehr_decision"] == "concede")
    seen: list[dict[str, Any]] = []

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        seen.append(view)
        return {"finding": "no_violation", "responsible_party": "none",
                "resolution_type": "no_action", "amount_cents": None}

    agent = HeuristicAgent(decide=decide, hide=frozenset({"processor_log"}))
    f = failed(run_agent(s, agent))
    assert "responsible_party_and_finding" in f and "resolution_type" in f
    assert agent.decision["finding"] == "no_violation" and agent.decision["amount_cents"] == 0
    view = seen[0]
    assert set(view) == {"complaint", "case_id", "initial_observation", "records"}
    assert "processor_log" not in view["records"] and "provider_record" in view["records"]
    answers: list[str] = []

    def respond(view: dict[str, Any], counter: dict[str, Any]) -> str:
        answers.append(counter["counter_id"])
        assert set(counter) == {"counter_id", "from", "text"}
        return "reject"

    agent = HeuristicAgent(respond=respond)
    f = failed(run_agent(s, agent))
    assert len(answers) == 3 and "counter_ehr_rejected" in f  # the records bear it out
    assert set(agent.decision) >= {"finding", "responsible_party", "resolution_type",
                                   "amount_cents"}


def test_the_party_that_scheduled_is_not_always_the_one_that_bills() -> None:
    """With a practice and a facility on the GFE, the other one sometimes scheduled (took the
    deposit, booked the encounter): a GFE timing failure is then the scheduler's (the
    convener's duty under 45 CFR 149.610), a bill above a party's own section the biller's —
    so neither who bills nor who scheduled alone names the party."""
    seen = Counter()
    for seed in range(1000, 2200):
        s = scenario(seed)
        v, exp = s["variant"], s["expected"]
        if not v["split_scheduler"]:
            assert v["scheduler"] == v["biller"]
            continue
        assert v["scheduler"] != v["biller"]
        seen[(v["biller"], exp["finding"])] += 1
        if exp["finding"] == "billed_above_gfe":
            assert exp["responsible_party"] == v["biller"]
        elif exp["finding"] != "no_violation":
            assert exp["responsible_party"] == v["scheduler"]
    n_split = sum(seen.values())
    assert n_split >= 0.12 * 1200, n_split
    for biller in ("provider", "facility"):
        for f in ("gfe_backdated_before_scheduling", "gfe_issued_after_deadline",
                  "billed_above_gfe"):
            assert seen[(biller, f)] >= 10, (biller, f, seen)
    # the grader holds a timing failure against the scheduler only (the convener, 45 CFR
    # 149.610(a)(2)); neither the biller that did not schedule nor "none" passes
    s = first(lambda x: x["variant"]["split_scheduler"] and x["expected"]["finding"]
              == "gfe_issued_after_deadline" and not is_nv(x))
    a = task().oracle(s)
    assert failed(play(s, a)) == set()
    assert "responsible_party_and_finding" in failed(play(s, _edit(
        a, "write_diagnosis", responsible_party=s["variant"]["biller"])))
    assert "responsible_party_and_finding" in failed(play(s, _edit(
        a, "write_diagnosis", responsible_party="none")))


# -- issue 8 domain review: accepted alternatives and coherent records -------------------------
def _business_days_after(d: dt.date, n: int) -> dt.date:
    while n:
        d += dt.timedelta(days=1)
        if d.weekday() < 5 and d not in HOLIDAYS_2026:
            n -= 1
    return d


def _business_days_to(a: dt.date, b: dt.date) -> int:
    n, d = 0, a
    while d < b:
        d += dt.timedelta(days=1)
        n += d.weekday() < 5 and d not in HOLIDAYS_2026
    return n


def test_split_timing_violation_names_the_scheduler_only() -> None:
    """A GFE timing violation convened by the other party: only the scheduler (the convener,
    45 CFR 149.610(a)(2)). Accepting the biller too made "facility" right in every two-party
    timing case (issue 8, round 3: a constant "late, facility, balance correction" passed the
    party wherever either party was a facility)."""
    n = 0
    for seed in DEV + TEST:
        s = scenario(seed)
        exp = s["expected"]
        if s["variant"]["split_scheduler"] and exp["finding"].startswith("gfe_"):
            n += 1
            assert exp["responsible_party"] == s["variant"]["scheduler"]
            assert exp["responsible_party_alt"] == "none-accepted-only"
    assert n >= 50, n
    s = first(lambda x: x["variant"]["split_scheduler"]
              and x["expected"]["finding"].startswith("gfe_"), DEV + TEST)
    a = task().oracle(s)
    assert failed(play(s, a)) == set()
    for wrong in (s["variant"]["biller"], "none"):
        assert "responsible_party_and_finding" in failed(play(s, _edit(
            a, "write_diagnosis", responsible_party=wrong)))
    # not split: only the convener
    s = first(lambda x: not x["variant"]["split_scheduler"]
              and x["expected"]["finding"].startswith("gfe_"))
    assert s["expected"]["responsible_party_alt"] == "none-accepted-only"


def _no_action_instead(s: dict[str, Any]) -> list[dict[str, Any]]:
    """The oracle's episode as if the expected decision were no_action (explain, draft and
    submit no_action, file nothing)."""
    alt = json.loads(json.dumps(s))
    alt["expected"]["resolution_type"] = "no_action"
    return task().oracle(alt)


def test_no_action_accepted_where_no_federal_remedy_applies() -> None:
    """An excess under $400 or a closed window (balance_correction) leaves no PPDR: a
    no_action decision with the bill explained passes every check; where PPDR is open it
    does not."""
    s = first(lambda x: x["expected"]["resolution_type"] == "balance_correction")
    assert s["expected"]["resolution_type_alt"] == "no_action"
    assert failed(play(s, task().oracle(s))) == set()
    assert failed(play(s, _no_action_instead(s))) == set()
    # the no_action decision must still state no amount above 0 and name the finding
    f = failed(play(s, _edit(_no_action_instead(s), "write_diagnosis",
                             finding="no_violation", responsible_party="none")))
    assert "responsible_party_and_finding" in f
    # ... and explain the excess: a constant "no_action, $0" answer must not ride the alternative
    for amount in (None, "0.00", "1.00"):
        f = failed(play(s, _edit(_no_action_instead(s), "write_diagnosis", amount=amount)))
        assert f == {"reference_amount"}, (amount, f)
    s = first(lambda x: x["expected"]["resolution_type"] == "nsa_dispute")
    assert s["expected"]["resolution_type_alt"] == "nsa_dispute"
    assert {"resolution_type", "dispute_held"} <= failed(play(s, _no_action_instead(s)))


def _assert_backdated_story(s: dict[str, Any]) -> bool:
    """Check one backdated scenario's story; False when the scenario is not backdated."""
    exp = s["expected"]
    if exp["finding"] != "gfe_backdated_before_scheduling":
        return False
    seed = s["case"]["case_id"]
    arts = _arts(s)
    prv, fac = arts[exp["provider_record_id"]], arts[exp["facility_record_id"]]
    plog = arts[exp["processor_log_id"]]
    zone = fac["time_zone"]
    # the real booking: the deposit authorization read in the facility's local time
    auth = next(t for t in plog["transactions"] if t["type"] == "authorization")
    sched = _local_date(auth["timestamp"], zone)
    gfe_id = prv["gfe"]["gfe_id"]
    sent = [e["timestamp"] for e in plog["events"] if e.get("document_id") == gfe_id]
    sent += [m["timestamp"] for m in fac["portal_messages"] if m.get("attachment") == gfe_id]
    delivered = _local_date(sent[0], zone)
    claimed = dt.date.fromisoformat(prv["appointment"]["scheduled_on"])
    dos = dt.date.fromisoformat(prv["appointment"]["service_date"])
    gfe_date = dt.date.fromisoformat(prv["gfe"]["gfe_date"])
    lead = _business_days_to(sched, dos)
    real_due = _business_days_after(sched, 3 if lead >= 10 else 1)
    claimed_lead = _business_days_to(claimed, dos)
    claimed_due = _business_days_after(claimed, 3 if claimed_lead >= 10 else 1)
    assert claimed <= gfe_date < sched, seed
    assert gfe_date <= claimed_due, seed  # the printed date alone reads as on time
    assert real_due < delivered < dos, seed  # late by the real booking: never on time
    assert lead >= 4 and lead != 10, (seed, lead)
    assert "gfe_issued_after_deadline" in exp["finding_alts"], seed
    return True


def test_backdated_story_has_a_motive_and_one_honest_reading(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """A backdated GFE went out late by the real booking (the deposit authorization in the
    facility's local time) and reads as on time only by its false printed date (and the
    provider's false booking date): it was late and misdated, so the late finding is accepted
    too. The real booking came after the GFE's date, and the service stays 4+ business days
    ahead of it and never exactly 10 — over dev, test and 500 salted seeds."""
    n = sum(_assert_backdated_story(scenario(seed)) for seed in DEV + TEST)
    assert n >= 20
    monkeypatch.setenv(SALT_ENV, "backdated-story")
    n = sum(_assert_backdated_story(compile_scenario(TASK_NAME, seed, ref()))
            for seed in range(70000, 70500))
    assert n >= 100


def test_late_or_backdated_with_a_ppdr_excess_also_accepts_billed_above_gfe() -> None:
    """A late or backdated GFE and a bill $400+ above the biller's own section within the
    window: the PPDR rests on the excess (45 CFR 149.620), so billed_above_gfe naming the
    biller passes too; without PPDR eligibility it does not (a log-blind agent must not win
    every timing violation with an excess)."""
    s = first(lambda x: x["expected"]["finding"].startswith("gfe_")
              and x["expected"]["ppdr_eligible"] and x["variant"]["split_scheduler"],
              DEV + TEST)
    exp = s["expected"]
    assert "billed_above_gfe" in exp["finding_alts"]
    a = task().oracle(s)
    assert failed(play(s, _edit(a, "write_diagnosis", finding="billed_above_gfe",
                                responsible_party=exp["biller"]))) == set()
    # billed_above_gfe names the biller, never the party that only scheduled
    assert "responsible_party_and_finding" in failed(play(s, _edit(
        a, "write_diagnosis", finding="billed_above_gfe",
        responsible_party=exp["responsible_party"])))
    s = first(lambda x: x["expected"]["finding"].startswith("gfe_")
              and not x["expected"]["ppdr_eligible"]
              and x["expected"]["resolution_type"] != "no_action", DEV + TEST)
    assert "billed_above_gfe" not in s["expected"]["finding_alts"]
    assert "responsible_party_and_finding" in failed(play(s, _edit(
        task().oracle(s), "write_diagnosis", finding="billed_above_gfe",
        responsible_party=s["expected"]["biller"])))
    # a backdated GFE: the late finding passes, and no_violation never does
    s = first(lambda x: x["expected"]["finding"] == "gfe_backdated_before_scheduling")
    assert failed(play(s, _edit(task().oracle(s), "write_diagnosis",
                                finding="gfe_issued_after_deadline"))) == set()
    assert "responsible_party_and_finding" in failed(play(s, _edit(
        task().oracle(s), "write_diagnosis", finding="no_violation")))


@pytest.mark.parametrize("split_seeds", [range(1000, 2200), DEV, TEST],
                         ids=["train", "dev", "test"])
def test_a_timing_blind_reading_rarely_passes(split_seeds: list[int] | range) -> None:
    """An agent that cannot date the booking (no processor log) answers from the bill minus
    the biller's section alone: billed_above_gfe naming the biller when the bill is above it,
    no_violation when within. After a late or backdated GFE that is accepted only with a
    PPDR-eligible excess (and the biller never stands in for the scheduler of a late GFE):
    with every excess window drawn at one rate for every timing, the $400+ open window is
    kept to about a fifth of the bills so that this alternative stays near a tenth."""
    n = alt = blind = 0
    for seed in split_seeds:
        exp = scenario(seed)["expected"]
        n += 1
        alt += "billed_above_gfe" in exp["finding_alts"]
        above = exp["resolution_type"] != "no_action"  # no_action: within the estimate
        finding = "billed_above_gfe" if above else "no_violation"
        party = exp["biller"] if above else "none"
        blind += (finding in {exp["finding"], *exp["finding_alts"]}
                  and party in {exp["responsible_party"], exp["responsible_party_alt"]})
    assert 0.05 <= alt / n <= 0.13, alt / n
    assert blind / n <= 0.50, blind / n


def test_the_filing_does_not_tell_the_timing() -> None:
    """Issue 8, round 3: every excess window is drawn at one rate for every GFE timing, so an
    agent that works out the filing without the processor log learns nothing about the
    timing from it (a balance correction followed a late or backdated GFE 86-90% of the time,
    and "the finding most common for the filing" beat the modal finding by +0.18)."""
    by_res: dict[str, Counter[str]] = {}
    overall: Counter[str] = Counter()
    for seed in range(1000, 2200):
        s = scenario(seed)
        timing = s["variant"]["timing"]
        by_res.setdefault(s["expected"]["resolution_type"], Counter())[timing] += 1
        overall[timing] += 1
    n = sum(overall.values())
    for res, c in by_res.items():
        m = sum(c.values())
        for timing in overall:
            assert abs(c[timing] / m - overall[timing] / n) <= 0.07, (res, c, overall)


def test_ppdr_window_boundary_is_not_over_sampled() -> None:
    """The bill's age: the window's last open day (120) and first closed day (121) are no
    likelier than their neighbours (a boundary case is a test, not a habit). Measured on
    1,200 train seeds: on the 400 dev and test scenarios a week holds about 100, too few to
    tell a habit from chance at one day."""
    ages = Counter(scenario(seed)["variant"]["days_since_bill"] for seed in range(1000, 2200))
    near = [ages[d] for d in range(114, 128)]
    for day, neighbours in ((121, range(122, 128)), (120, range(114, 120))):
        mean = statistics.mean(ages[d] for d in neighbours)
        assert ages[day] <= mean + 3 * mean ** 0.5, (day, near)  # within chance of them


def test_record_realism() -> None:
    """LEEP patients are women and vasectomy patients men; a practice's echocardiogram in a
    hospital outpatient department is its -26 interpretation; a UB-04 states a type of bill
    and revenue codes, not a place of service; the facility record states its licence (none
    for a practice's own office suite, even with an MRI or a sleep lab); an
    honestly dated late GFE's provider record refutes the EHR counter."""
    women = {"Ana", "Priya", "Grace", "Keisha", "Fatima", "Lena", "Sofia", "Hannah", "Mei",
             "Olivia", "Nadia", "Carmen", "Aisha", "Rosa", "Yuki", "Diane"}
    seen = Counter()
    for seed in DEV + TEST:
        s = scenario(seed)
        v, exp, arts = s["variant"], s["expected"], _arts(s)
        first_name = s["case"]["patient_name"].split()[0]
        if v["package"] == "leep":
            assert first_name in women, seed
            seen["leep"] += 1
        if v["package"] == "vasectomy":
            assert first_name not in women, seed
        claim = arts[exp["claim_record_id"]]
        if claim["claim_form"].startswith("UB-04"):
            seen["ub04"] += 1
            assert "place_of_service" not in claim and claim["type_of_bill"] == "0131"
            assert all(re.fullmatch(r"\d{4}", ln["revenue_code"]) for ln in claim["lines"])
        else:
            assert "type_of_bill" not in claim and claim["place_of_service"]
        fac = arts[exp["facility_record_id"]]
        assert fac["facility_license"] == ("none" if fac["type"] == "physician office" else
                                           "hospital license" if v["setting"] == "hopd" else
                                           "state facility license"), seed
        if v["package"] == "echo" and v["setting"] == "hopd":
            seen["echo_hopd"] += 1
            sections = arts[exp["provider_record_id"]]["gfe"]["providers"]
            pro = [it for sec in sections if sec["type"] == "physician practice"
                   for it in sec["items"] if it["hcpcs"] == "93306"]
            assert pro and all(it["modifiers"] == ["26"] for it in pro), seed
        if v["timing"] == "issued_after_deadline":
            prv = arts[exp["provider_record_id"]]
            booked = dt.date.fromisoformat(prv["appointment"]["scheduled_on"])
            gfe_date = dt.date.fromisoformat(prv["gfe"]["gfe_date"])
            if gfe_date > dt.date.fromisoformat(exp["gfe_deadline"]):
                assert exp["provider_record_id"] in exp["counter_ehr_refuted_by"], seed
                seen["prv_refutes"] += 1
            assert booked == dt.date.fromisoformat(exp["scheduled_local_date"])
    assert all(seen[k] > 0 for k in ("leep", "ub04", "echo_hopd", "prv_refutes")), seen


def test_surface_cues_of_round_2_say_nothing() -> None:
    """The red team's round-2 cues stay closed (train seeds, independent of the splits): the
    EHR counter's stated day agrees with the printed GFE date about as often whether it is
    to be rejected or conceded; a weekend delivery day is about as common for a late GFE as
    for a timely one; the merchant's name carries no word only one kind of party uses; the
    scheduler is the other kind of party about two times in three where both are on the GFE."""
    agree: Counter[tuple[str, bool]] = Counter()
    weekend: Counter[tuple[bool, bool]] = Counter()
    words: dict[str, Counter[str]] = {"provider": Counter(), "facility": Counter()}
    both = flipped = 0
    for seed in range(1000, 1600):
        s = scenario(seed)
        exp, v, arts = s["expected"], s["variant"], _arts(s)
        printed = dt.date.fromisoformat(arts[exp["provider_record_id"]]["gfe"]["gfe_date"])
        if exp["resolution_type"] != "no_action":
            ehr = next(c for c in s["counters"] if c["kind"] == "ehr_notes")
            stated = f"{printed:%B} {printed.day}, {printed.year}" in ehr["text"]
            agree[(exp["counter_ehr_decision"], stated)] += 1
        day = dt.date.fromisoformat(exp["gfe_delivered_local_date"])
        weekend[(v["timing"] == "timely", day.weekday() >= 5)] += 1
        merchant = arts[exp["processor_log_id"]]["merchant"]["name"]
        words[v["scheduler"]].update(set(merchant.split()[-1:]))
        if v["co_providers"] and (v["facility_priced"] or v["co_facility"]):
            both += 1
            flipped += v["split_scheduler"]

    def share(c: Counter[Any], key: Any, other: Any) -> float:
        return c[key] / max(1, c[key] + c[other])

    assert abs(share(agree, ("reject", True), ("concede", True))
               - share(agree, ("reject", False), ("concede", False))) < 0.15, agree
    assert abs(share(weekend, (True, True), (True, False))
               - share(weekend, (False, True), (False, False))) < 0.08, weekend
    assert set(words["provider"]) == set(words["facility"]), words
    assert 0.55 <= flipped / both <= 0.8, (flipped, both)


def _tv(a: Counter[Any], b: Counter[Any]) -> float:
    """Total-variation distance between two empirical distributions."""
    na, nb = sum(a.values()), sum(b.values())
    return 0.5 * sum(abs(a[k] / na - b[k] / nb) for k in set(a) | set(b))


def test_no_single_amount_code_or_note_tells_the_resolution() -> None:
    """Issue 8, round 3: the self-pay multiple, the service, the billed codes, the number of
    billed lines, the operative note and the estimate's size are distributed alike whether the
    bill is within the estimate or above it (train seeds): a pricing draw is kept only when
    every excess window is reachable from it, and a change goes either way. (Before, a forest
    read the resolution off the multiple: 150% in 3% of bills within the estimate, 26% of bills
    $400+ above it.) Each feature's distance between the two groups is measured against the
    distance the same feature shows between random groups of the same sizes (the mean over
    label shuffles): with fewer bills within the estimate (issue 8, round 6) a 17-package
    distribution differs by chance alone by about 0.10 (0.04 on 6,000 seeds), while the
    multiple leak above stood 0.2 over chance."""
    rows: list[tuple[bool, dict[str, Any]]] = []
    for seed in range(1000, 2200):
        s = scenario(seed)
        exp, v, arts = s["expected"], s["variant"], _arts(s)
        claim, prv = arts[exp["claim_record_id"]], arts[exp["provider_record_id"]]
        above = exp["resolution_type"] != "no_action"
        size = exp["reference_amount_cents"]
        row = {"multiple": v["self_pay_pct"], "package": v["package"],
               "codes": tuple(sorted(ln["hcpcs"] for ln in claim["lines"])),
               "lines": len(claim["lines"]),
               "note": next(n for n in prv["notes"] if n.startswith("Operative")),
               "estimate_band": min(size.bit_length(), 20)}
        rows.append((above, row))

    def distance(labels: list[bool], k: str) -> float:
        by: dict[bool, Counter[Any]] = {True: Counter(), False: Counter()}
        for lab, (_, row) in zip(labels, rows, strict=True):
            by[lab][row[k]] += 1
        return _tv(by[True], by[False])

    labels = [above for above, _ in rows]
    rng = random.Random(0)
    shuffles = [rng.sample(labels, len(labels)) for _ in range(40)]
    for k in rows[0][1]:
        chance = statistics.mean(distance(sh, k) for sh in shuffles)
        observed = distance(labels, k)
        assert observed - chance < 0.06, (k, observed, chance)


def test_changes_go_either_way_in_every_branch() -> None:
    """A changed service is billed within the estimate and above it, in both directions
    (needed unplanned, planned and not needed), with a note saying which."""
    seen: Counter[tuple[str, str]] = Counter()
    for seed in range(1000, 1800):
        s = scenario(seed)
        v = s["variant"]
        if v["change"] is None:
            continue
        direction = v["change"][3]
        window = "within" if v["within_estimate"] else "above"
        seen[(direction, window)] += 1
        note = next(n for n in _arts(s)[s["expected"]["provider_record_id"]]["notes"]
                    if n.startswith("Operative"))
        pkg = next(p for p in PACKAGES if p["key"] == v["package"])
        ch = next(c for c in pkg["changes"] if c[2] == v["change"][2])
        assert (ch[5] if direction == "down" else ch[4]) in note, (seed, note)
    assert min(seen[(d, w)] for d in ("up", "down") for w in ("within", "above")) >= 10, seen


def test_no_line_of_a_bill_within_the_estimate_is_priced_above_the_billers_own_price() -> None:
    """Domain review round 4 (84012, 84015, 84004): a bill within the estimate whose one line
    is priced above that code's line on the biller's own GFE section, or (a substituted
    code) above the biller's documented self-pay price, gives the patient a line correction
    to ask for while the key says no_action. No such bill is drawn; above the estimate the
    key asks for a correction anyway, so a gross-chargemaster line stays possible there."""
    within = above_priced = 0
    for seed in range(3000, 4200):
        s = scenario(seed)
        v, exp = s["variant"], s["expected"]
        arts = _arts(s)
        clm, prv = arts[exp["claim_record_id"]], arts[exp["provider_record_id"]]
        sec = next(p for p in prv["gfe"]["providers"] if p["name"] == clm["provider"]["name"])
        m = prv["self_pay_price_policy"]["self_pay_multiple_pct"]
        gfe_line = {(it["hcpcs"], tuple(it["modifiers"])): _c(it["expected_charge"])
                    for it in sec["items"]}
        if _c(clm["total_billed"]) > _c(sec["expected_total"]):
            above_priced += any(pct > m for _, pct in v["billed_pcts"])
            continue
        within += 1
        assert exp["resolution_type"] == "no_action", seed
        for line in clm["lines"]:
            own = gfe_line.get((line["hcpcs"], tuple(line["modifiers"])))
            assert own is None or _c(line["billed"]) <= own * line["units"], (seed, line)
        # the billed % of each line against the documented policy multiple (the fee formula
        # behind billed_pcts is checked against the records in
        # test_every_amount_is_the_fee_formula)
        assert all(pct <= m for _, pct in v["billed_pcts"]), (seed, v["billed_pcts"], m)
    assert 0.29 * 1200 <= within <= 0.43 * 1200, within
    assert above_priced >= 20, above_priced


def test_stamps_keep_the_local_date_across_a_dst_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """Domain review round 4 (88695): the small hours of a DST-change day come before the
    02:00 change (15 U.S.C. 260a), so a stamp takes the offset of its own instant, not of its
    date; read back in the facility's zone (IANA, independent of the generator) every local
    time of the change days and the days around them keeps its date and, where it exists
    (not 02:00-02:59 on March 8), its wall-clock time. The five salted seeds the review found
    shifted keep the booking and delivery on their local dates."""
    from zoneinfo import ZoneInfo

    from clarus_env.tasks.adversarial_fabrication.generator import TZ_BY_STATE, utc_stamp

    for state, (zone, _, _) in TZ_BY_STATE.items():
        for day in (dt.date(2026, 3, 7), dt.date(2026, 3, 8), dt.date(2026, 3, 9),
                    dt.date(2026, 10, 31), dt.date(2026, 11, 1)):
            for minute in range(0, 24 * 60, 7):
                stamp = utc_stamp(state, day, minute, 30)
                utc = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
                local = utc.astimezone(ZoneInfo(zone))
                assert local.date() == day, (state, day, minute, stamp)
                skipped = (day == dt.date(2026, 3, 8) and 120 <= minute < 180
                           and TZ_BY_STATE[state][2])
                if not skipped:
                    assert local.hour * 60 + local.minute == minute, (state, day, minute)
    monkeypatch.setenv(SALT_ENV, "billrev4-h6-d40b95")
    for seed in (87281, 87506, 88695, 107582, 107589):
        s = compile_scenario(TASK_NAME, seed, ref())
        exp, arts = s["expected"], _arts(s)
        plog, fac = arts[exp["processor_log_id"]], arts[exp["facility_record_id"]]
        auth = next(t for t in plog["transactions"] if t["type"] == "authorization")
        assert _local_date(auth["timestamp"], fac["time_zone"]).isoformat() == \
            exp["scheduled_local_date"], seed
        gfe_id = arts[exp["provider_record_id"]]["gfe"]["gfe_id"]
        sent = [e["timestamp"] for e in plog["events"] if e.get("document_id") == gfe_id]
        sent += [m["timestamp"] for m in fac["portal_messages"] if m.get("attachment") == gfe_id]
        assert _local_date(sent[0], fac["time_zone"]).isoformat() == \
            exp["gfe_delivered_local_date"], seed


def test_task_text_tells_the_convener_from_the_biller() -> None:
    """Domain review round 4 (C): the system prompt and the responsible-party note are the
    same text in every scenario, and in about a third of them the party that scheduled (the
    convener of 45 CFR 149.610(a)(2)) is not the one that bills, so the text must not make
    them one party: the convener is whoever scheduled, and the excess is the biller's total
    against the biller's own GFE section (what the key uses)."""
    t = task()
    outcome = next(c for c in t.checks if c.id == "responsible_party_and_finding")
    for text in (t.description, t.meta["responsible_party_note"], outcome.description):
        flat = " ".join(text.split()).lower()
        assert "and bills it" not in flat and "that party's" not in flat, text
        assert "scheduled the service" in flat and "may or may not" in flat, text
    assert "billing party's total charges with its own section" in t.description
    assert sum(scenario(seed)["variant"]["split_scheduler"] for seed in DEV) >= 0.25 * len(DEV)


def test_mailed_bill_window_counts_from_receipt() -> None:
    """Some mailed bills are read more than 120 days after the statement's date but within
    120 days of their receipt: the window is open (45 CFR 149.620 counts from receipt), and
    with a $400+ excess the answer is a dispute — the heuristic, counting from the statement's
    date, gets these wrong."""
    found = 0
    for seed in DEV + TEST:
        s = scenario(seed)
        exp, arts = s["expected"], _arts(s)
        stmt = arts[exp["ledger_id"]]["statement"]
        sent = dt.date.fromisoformat(stmt["statement_date"])
        received = dt.date.fromisoformat(stmt["delivered_to_patient"])
        today = dt.date.fromisoformat(
            next(r for r in s["references"] if r["type"] == "deadline")["data"]["as_of"])
        if (today - sent).days > 120 >= (today - received).days:
            assert s["variant"]["window_open"]
            if exp["amount_cents"] >= 40_000:
                found += 1
                assert exp["resolution_type"] == "nsa_dispute", seed
                grade = _run_heuristic(seed)
                assert grade["passed"] < grade["total"], seed
    assert found >= 3
