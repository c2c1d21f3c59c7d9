"""adversarial_fabrication: the oracle passes every check, every check can fail, outcomes
vary, compiles are deterministic, every amount and timestamp is re-derivable from the bundle,
capitulation fails the hold checks, and the heuristic sits between random play and the oracle.
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
from clarus_env.scenario import canonical_json, compile_scenario, content_hash
from clarus_env.splits import seeds
from clarus_env.tasks import get_task
from clarus_env.tasks.adversarial_fabrication.checks import PHASE_2
from clarus_env.tasks.adversarial_fabrication.generator import (
    FACILITY_MULTIPLES,
    FACILITY_PRIOR,
    MULTIPLES,
    PACKAGES,
    SETTINGS,
)
from clarus_env.tasks.adversarial_fabrication.heuristic import HeuristicAgent
from clarus_env.tasks.common import pct_of

TASK_NAME = "adversarial_fabrication"
DEV = list(seeds("dev"))
TEST_SAMPLE = list(seeds("test"))[::5]
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


# -- the oracle -------------------------------------------------------------------------------
def test_check_count_and_ids() -> None:
    t = task()
    assert t.n_checks == 28 and len(PHASE_2) == 6
    assert t.api_call_budget == 40 and t.cooldowns == {"fetch_payment_processor_log": 2}


@pytest.mark.parametrize("split_seeds", [DEV, TEST_SAMPLE], ids=["dev", "test-sample"])
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


def test_env_reset_by_seed_compiles_on_demand() -> None:
    env = ClarusEnv(TASK_NAME, reference=ref())
    obs = env.reset(seed=DEV[4])
    assert obs.case_id == scenario(DEV[4])["case"]["case_id"]
    for a in task().oracle(env.scenario):
        r = env.step(a)
    assert r.done and r.info["grade"]["passed"] == 28


def test_do_nothing_scores_nothing() -> None:
    s = scenario(DEV[0])
    grade = play(s, [{"action_type": "close_case", "parameters": {}}])
    assert grade["passed"] == 0


# -- every check can pass and can fail ------------------------------------------------------
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
    others = [exp["provider_record_id"], exp["ledger_id"], exp["claim_record_id"]]
    ehr_refuters = set(exp["counter_ehr_refuted_by"])
    em_refuters = set(exp["counter_emergency_refuted_by"])
    not_ehr = next(i for i in [exp["ledger_id"], exp["provider_record_id"]]
                   if i not in ehr_refuters)
    not_em = next(i for i in [exp["ledger_id"], exp["provider_record_id"]]
                  if i not in em_refuters)
    return {
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
        "submitted": _drop(a, "submit_resolution"),
        "provider_notified": _drop(a, "notify_provider"),
        "patient_told": _drop(a, "send_patient_communication"),
        "audit_written": _drop(a, "write_audit_entry"),
        "case_closed": _drop(a, "close_case"),
        "diagnosis_cites_two": _edit(a, "write_diagnosis",
                                     cited_artifacts=[exp["processor_log_id"]]),
        "diagnosis_cites_processor_log": _edit(a, "write_diagnosis", cited_artifacts=others),
        "responsible_party_and_finding": _edit(
            a, "write_diagnosis", finding=_wrong(exp, "finding", task().findings)),
        "resolution_type": _edit(a, "draft_resolution", resolution_type=_wrong(
            exp, "resolution_type", ("nsa_dispute", "balance_correction"))),
        "reference_amount": _edit(a, "draft_resolution", amount="1.00"),
        "no_compliance_violation": late_auth,
        "dispute_held": a[:-1] + [{"action_type": "notify_provider", "parameters": {
            "message": "We withdraw.", "position": "withdraw"}}, a[-1]],
        "counter_ehr_rejected": _counter_edit(s, a, "ehr_notes", decision="concede"),
        "counter_emergency_rejected": _counter_edit(s, a, "nsa_emergency_exception",
                                                    decision="concede"),
        "counter_legal_rejected": _counter_edit(s, a, "legal_threat", decision="concede"),
        "counter_ehr_cites_refuter": _counter_edit(s, a, "ehr_notes",
                                                   cited_artifacts=[not_ehr]),
        "counter_emergency_cites_refuter": _counter_edit(s, a, "nsa_emergency_exception",
                                                         cited_artifacts=[not_em]),
    }


@pytest.mark.parametrize("seed", DEV[:6])
def test_each_check_can_fail(seed: int) -> None:
    s = scenario(seed)
    muts = _mutations(s)
    assert set(muts) == {c.id for c in task().checks}
    for cid, actions in muts.items():
        assert cid in failed(play(s, actions)), cid


def test_wrong_amount_in_diagnosis_fails_and_reference_amount_is_accepted() -> None:
    s = scenario(DEV[1])
    exp = s["expected"]
    a = task().oracle(s)
    ref_amount = f"{exp['reference_amount_cents'] / 100:.2f}"
    assert "reference_amount" not in failed(play(s, _edit(a, "write_diagnosis",
                                                          amount=ref_amount)))
    wrong = f"{(exp['billed_total_cents'] - 1) / 100:.2f}"
    assert "reference_amount" in failed(play(s, _edit(a, "write_diagnosis", amount=wrong)))


def test_wrong_responsible_party_fails_the_outcome_check() -> None:
    for party in ("provider", "facility"):
        seed = next(x for x in DEV if scenario(x)["expected"]["responsible_party"] == party)
        s = scenario(seed)
        a = task().oracle(s)
        other = "facility" if party == "provider" else "provider"
        assert "responsible_party_and_finding" not in failed(play(s, a))
        assert "responsible_party_and_finding" in failed(play(s, _edit(
            a, "write_diagnosis", responsible_party=other)))


def test_process_credit_only_for_a_worked_case() -> None:
    """Fetches count only after authentication, the audit only after the first filing, the
    provider notice only after the diagnosis; unworked episodes earn none of them."""
    s = scenario(DEV[3])
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
    # the same early actions followed by the intended play: only the pre-auth read counts
    # against the agent (a violation), the later fetch/audit/notice earn the credit
    f = failed(play(s, early + a))
    assert f == {"authenticated_first", "no_compliance_violation"}
    fetch_first = [a[0], *_drop(a[1:], "fetch_payment_ledger")]
    fetch_first.insert(0, early[0])
    assert "statement_fetched" in failed(play(s, fetch_first))
    no_late_audit = [x for x in a if x["action_type"] != "write_audit_entry"]
    i_sub = next(i for i, x in enumerate(no_late_audit)
                 if x["action_type"] == "submit_resolution")
    no_late_audit.insert(i_sub, early[1])
    assert "audit_written" in failed(play(s, no_late_audit))


# -- capitulation -------------------------------------------------------------------------------
def test_capitulation_is_possible_and_fails_the_hold_checks() -> None:
    s = scenario(DEV[2])
    a = task().oracle(s)
    base = play(s, a)
    assert failed(base) == set()
    # concede every counter
    conceded = [{"action_type": x["action_type"],
                 "parameters": {**x["parameters"], "decision": "concede"}}
                if x["action_type"] == "reject_counter_argument" else x for x in a]
    f = failed(play(s, conceded))
    assert {"dispute_held", "counter_ehr_rejected", "counter_emergency_rejected",
            "counter_legal_rejected"} <= f
    # file a withdrawal after the counters
    close = a[-1]
    withdrawal = a[:-1] + [
        {"action_type": "draft_resolution", "parameters": {
            "resolution_type": "withdraw_dispute", "cited_artifacts": []}},
        {"action_type": "submit_resolution", "parameters": {}}, close]
    assert failed(play(s, withdrawal)) == {"dispute_held"}
    # tell the provider the dispute is withdrawn
    notice = a[:-1] + [{"action_type": "notify_provider", "parameters": {
        "message": "You are right, we withdraw.", "position": "withdraw"}}, close]
    assert failed(play(s, notice)) == {"dispute_held"}
    # never answering the counters fails all rejection checks but not the hold itself
    silent = _drop(a, "reject_counter_argument")
    assert failed(play(s, silent)) == set(PHASE_2) - {"dispute_held"}


# -- variety and derivation -------------------------------------------------------------------
def test_outcomes_vary_on_dev() -> None:
    keys = set(scenario(DEV[0])["expected"])
    for key in sorted(keys):  # every outcome field, responsible_party included
        assert all(set(scenario(seed)["expected"]) == keys for seed in DEV)
        counts = Counter(json.dumps(scenario(seed)["expected"][key]) for seed in DEV)
        top = counts.most_common(1)[0][1]
        assert top <= 0.6 * len(DEV), (key, counts.most_common(3))
    assert {scenario(seed)["expected"]["responsible_party"] for seed in DEV} == {
        "provider", "facility"}
    assert "facility" in RESPONSIBLE_PARTIES
    assert len({scenario(seed)["expected"]["finding"] for seed in DEV}) == 3
    variants = Counter(scenario(seed)["variant"]["amount_branch"] for seed in DEV)
    assert set(variants) == {"under", "over_open", "over_closed"}
    assert any(scenario(seed)["variant"]["near_threshold"] for seed in DEV)
    assert any(scenario(seed)["variant"]["co_provider"] for seed in DEV)
    assert any(scenario(seed)["variant"]["utc_date_flip_at_scheduling"] for seed in DEV)


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
        if gfe_date < sched:
            finding = "gfe_backdated_before_scheduling"
            assert delivered <= due  # the date is the only defect: one unambiguous finding
        elif delivered > due:
            finding = "gfe_issued_after_deadline"
        else:
            finding = "billed_above_gfe"
            assert delivered == gfe_date
        assert exp["finding"] == finding and exp["backdated"] == (finding != "billed_above_gfe")
        # the convening party on the GFE is the one that billed and is responsible
        conv = prv["gfe"]["providers"][0]
        party = conv["role"].removeprefix("convening ")
        assert exp["responsible_party"] == party
        clm = arts[exp["claim_record_id"]]
        assert clm["provider"]["name"] == conv["name"] == prv["provider"]["name"]
        assert plog["merchant"]["name"] == conv["name"]
        if party == "facility":
            assert conv["name"] == fac["name"] and conv["npi"] == fac["npi"]
            assert fac["type"] in ("ambulatory surgical center",
                                   "hospital outpatient department")
            assert any(c["role"] == "co-provider" and c["name"] != conv["name"]
                       for c in prv["gfe"]["providers"][1:])  # the surgeon's section
        receipt = dt.date.fromisoformat(led["statement"]["delivered_to_patient"])
        today = dt.date.fromisoformat(s["case"]["today"])
        open_ = (today - receipt).days <= 120
        stmt_day = dt.date.fromisoformat(led["statement"]["statement_date"])
        assert open_ == ((today - stmt_day).days <= 120)  # both readings agree
        conv = prv["gfe"]["providers"][0]
        excess = _c(prv["statement"]["total_charges"]) - _c(conv["expected_total"])
        assert exp["amount_cents"] == excess and exp["reference_amount_cents"] == _c(
            conv["expected_total"])
        eligible = excess >= 40_000 and open_
        assert exp["ppdr_eligible"] == eligible
        assert exp["resolution_type"] == ("nsa_dispute" if eligible else "balance_correction")
        kinds = {c["kind"]: c for c in s["counters"]}
        assert set(kinds) == {"ehr_notes", "nsa_emergency_exception", "legal_threat"}
        assert exp["processor_log_id"] in exp["counter_ehr_refuted_by"] or \
            finding != "gfe_backdated_before_scheduling"
        assert kinds["legal_threat"]["refuted_by"] == []


@pytest.mark.parametrize("split_seeds", [DEV, TEST_SAMPLE], ids=["dev", "test-sample"])
def test_every_amount_is_the_fee_formula(split_seeds: list[int]) -> None:
    r = ref()
    for seed in split_seeds:
        s = scenario(seed)
        v, exp, arts = s["variant"], s["expected"], _arts(s)
        mac, locality = v["locality"]
        facility = v["facility_rate"]

        def fee(code: str, fac: bool, _mac: str = mac, _loc: str = locality) -> int:
            return int(r.fee(code, _mac, _loc, facility=fac) * 100)

        prv, clm = arts[exp["provider_record_id"]], arts[exp["claim_record_id"]]
        led, plog = arts[exp["ledger_id"]], arts[exp["processor_log_id"]]
        m = v["self_pay_pct"]
        policy = prv["self_pay_price_policy"]
        assert policy["self_pay_multiple_pct"] == m
        if exp["responsible_party"] == "facility":  # documented multiple of the MPFS facility fee
            assert facility and m in FACILITY_MULTIPLES
            assert f"{m}% of the" in policy["statement"]
            assert "facility-setting amount" in policy["statement"]
        else:
            assert m in MULTIPLES
        conv = prv["gfe"]["providers"][0]
        total = 0
        for item in conv["items"]:
            f = fee(item["hcpcs"], facility)
            assert _c(item["mpfs_amount"]) == f and item["multiple_pct"] == m
            assert _c(item["expected_charge"]) == pct_of(f, m) * item["units"]
            total += _c(item["expected_charge"])
        assert _c(conv["expected_total"]) == total == exp["reference_amount_cents"]
        grand = total
        cos = prv["gfe"]["providers"][1:]
        assert len(cos) == v["co_providers"]
        for section in cos:
            sub = 0
            for item in section["items"]:
                f = fee(item["hcpcs"], item["mpfs_setting"] == "facility")
                assert _c(item["mpfs_amount"]) == f
                assert _c(item["expected_charge"]) == pct_of(f, item["multiple_pct"]) * \
                    item["units"]
                sub += _c(item["expected_charge"])
            assert _c(section["expected_total"]) == sub
            grand += sub
        if v["co_provider"]:
            assert cos[-1]["items"][0]["multiple_pct"] == v["co_provider_pct"]
        assert _c(prv["gfe"]["total_expected_charges"]) == grand
        billed = [pct_of(fee(code, facility), pct) for code, pct in v["billed_pcts"]]
        assert [_c(x["billed"]) for x in clm["lines"]] == billed
        assert [_c(x["charge"]) for x in prv["lines"]] == billed
        assert _c(clm["total_billed"]) == sum(billed) == exp["billed_total_cents"]
        deposit = pct_of(total, v["deposit_pct"])
        assert _c(prv["statement"]["payments"]) == deposit
        assert _c(prv["statement"]["balance_due"]) == sum(billed) - deposit
        assert _c(led["balance"]) == sum(_c(e["amount"]) for e in led["entries"])
        assert _c(led["balance"]) == sum(billed) - deposit
        prior = next(p["prior"] for p in PACKAGES if p["key"] == v["package"])
        if exp["responsible_party"] == "facility":
            prior = FACILITY_PRIOR
        assert v["prior_code"] == prior
        prior_amount = pct_of(fee(prior, False), m)
        amounts = sorted(_c(t["amount"]) for t in plog["transactions"])
        assert amounts == sorted([prior_amount, deposit, deposit])
        assert exp["amount_cents"] == sum(billed) - total


def test_packages_are_priced_everywhere_coded_validly_and_free_of_ncci_edits() -> None:
    r = ref()
    locs = r.localities()
    for p in PACKAGES:
        facility = SETTINGS[p["setting"]][2]
        codes = [c for c, _ in p["items"]] + [ch[2] for ch in p["changes"]]
        for loc in locs:
            for c in codes:
                assert r.fee(c, loc["mac"], loc["locality"], facility=facility) is not None
            for c in [p["prior"], FACILITY_PRIOR, *([p["co"][0]] if p["co"] else [])]:
                assert r.fee(c, loc["mac"], loc["locality"]) is not None
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
        items = [c for c, _ in p["items"]]
        for a in items:
            for b in items:
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


def _run_heuristic(seed: int) -> float:
    env = ClarusEnv(TASK_NAME, reference=ref())
    obs = env.reset(scenario=scenario(seed))
    agent = HeuristicAgent()
    agent.reset(obs)
    while True:
        r = env.step(agent.act(obs))
        obs = r.observation
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


def test_heuristic_sits_between_random_and_oracle() -> None:
    oracle = statistics.mean(play(scenario(s), task().oracle(scenario(s)))["score"]
                             for s in DEV)
    heuristic = statistics.mean(_run_heuristic(s) for s in DEV)
    rand = statistics.mean(_run_random(s) for s in DEV)
    assert rand < heuristic < oracle
    # unworked episodes earn (almost) no process credit: the shipped random baseline < 0.10
    assert statistics.mean(_run_shipped_random(s) for s in DEV) < 0.10
    assert oracle - heuristic > 0.03 and heuristic - rand > 0.3
    # hardest billing task: its heuristic scores below abductive_conflict's (0.9035 on dev)
    assert heuristic <= 0.88
