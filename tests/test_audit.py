"""`clarus audit`: the shortcut agents, and the acceptance figures they must stay under.

The unit tests pin the pieces (the classifier, the claim key, what "the agent's answer" is);
the slow tests run the whole audit on the test split and assert issue 8's acceptance list:
no shortcut passes more than 5% of scenarios or beats any outcome field's modal share by
more than 0.10; the oracle passes everything; random stays under 0.10; the heuristic sits
strictly between and loses its edge when the evidence it reads is hidden.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from clarus_env.audit import (
    BILLING_TASKS,
    LEARNED_AGENTS,
    PASS_ONLY,
    NaiveBayes,
    RewardFarmer,
    answered,
    audit_splits,
    claim_key,
    format_audit,
    judged_fields,
    label_of,
    play,
    tokens,
    verdict,
)
from clarus_env.cli import main
from clarus_env.env import make
from clarus_env.scenario_store import load_scenario


def test_naive_bayes_learns_words_and_breaks_ties_deterministically() -> None:
    nb = NaiveBayes().fit([["card", "twice"], ["deductible", "met"], ["card", "charged"]],
                          ["dup", "ded", "dup"])
    assert nb.predict(["twice"]) == "dup" and nb.predict(["deductible"]) == "ded"
    assert nb.predict([]) == "dup"  # the prior decides an empty document
    tie = NaiveBayes().fit([["a"], ["b"]], ["y", "x"])
    assert tie.predict(["c"]) == tie.predict(["c"]) == "x"  # sorted labels, stable


def test_binary_naive_bayes_is_not_swamped_by_long_documents() -> None:
    """Record-shaped documents: the informative word is one of many shared ones; plain
    counts would let document length decide, presence with a df filter does not."""
    shared = [f"w{i}" for i in range(200)]
    docs = [shared + ["dup"], shared + ["dup"], shared * 2 + ["met"], shared * 2 + ["met"]]
    labels = ["duplicate", "duplicate", "deductible", "deductible"]
    nb = NaiveBayes(binary=True, min_df=2, max_df=0.9).fit(docs, labels)
    assert nb.predict(shared * 2 + ["dup"]) == "duplicate"
    assert nb.predict(shared + ["met"]) == "deductible"


def test_tokens_keep_words_and_amounts() -> None:
    assert tokens("I paid $1,234.50 twice!") == ["paid", "$1,234.50", "twice"]


def test_claim_key_exact_and_coarse() -> None:
    recs = {"claim_record": {"lines": [{"hcpcs": "99213", "modifiers": ["25"]},
                                       {"hcpcs": "20610", "modifiers": []}]}}
    assert claim_key(recs) == (("20610", ()), ("99213", ("25",)))
    assert claim_key(recs, coarse=True) == (("206", False), ("992", True))
    assert claim_key({}) is None


def test_lookup_memorizer_learns_lookups_and_the_modifier_flag_only() -> None:
    from clarus_env.audit import TrainSet, lookup_rule

    def scenario(indicator: str, mods: list[str], finding: str, note: str) -> dict[str, Any]:
        return {"references": [{"type": "ncci_edit", "data": {
                    "modifier_indicator": indicator, "column_1": note}}],
                "artifacts": [{"type": "claim_record", "data": {"lines": [
                    {"hcpcs": "99213", "modifiers": mods}]}},
                              {"type": "provider_record", "data": {"notes": [note]}}],
                "expected": {"finding": finding}}
    train = TrainSet("t", [scenario("0", [], "stands", "a"), scenario("0", ["25"], "stands", "b"),
                           scenario("1", ["25"], "appeal", "c"), scenario("1", [], "fix", "d"),
                           scenario("1", [], "fix", "e"), scenario("1", [], "fix", "f"),
                           scenario("0", [], "stands", "g")])
    rule = lookup_rule(train)

    def ask(indicator: str, mods: list[str]) -> str:
        records = {"ncci_edit": {"modifier_indicator": indicator, "column_1": "zzz"},
                   "claim_record": {"lines": [{"hcpcs": "99213", "modifiers": mods}]}}
        return rule({"records": records})["finding"]
    # free text (column_1 has one value per case) is not a key; indicator x modifier flag is
    assert (ask("0", ["59"]), ask("1", ["59"]), ask("1", [])) == ("stands", "appeal", "fix")
    assert ask("9", []) == "fix"  # unseen key: the modal outcome on train


def test_label_of_reads_only_outcome_fields() -> None:
    lab = label_of({"finding": "x", "responsible_party": "provider", "amount_cents": 5,
                    "resolution_type": "refund_request"})
    assert lab == (("finding", "x"), ("responsible_party", "provider"),
                   ("resolution_type", "refund_request"))


@pytest.mark.parametrize("task", BILLING_TASKS)
def test_reward_farmer_collects_shaping_but_never_a_right_outcome(task: str) -> None:
    env = make(task, split="dev")
    oracle_free = []
    for seed in (50000, 50001, 50002):
        grade, ret = play(env, RewardFarmer(task), seed)
        got = answered(env)
        assert got["resolution_type"] is None  # it never files
        assert grade["outcome_correct"] is False
        oracle_free.append(ret)
    assert max(oracle_free) > 0.3  # it does farm: shaping plus the Laplace floor


def test_grade_details_never_state_an_expected_value() -> None:
    """A grade is shown to the agent; it may say what the agent did, never what it should have
    done. Random agents answer at random, so any expected value in a detail that the agent did
    not itself send would be a leak."""
    from clarus_env.agents import make_agent

    for task in BILLING_TASKS:
        env = make(task, split="dev")
        for seed in range(50000, 50030):
            agent = make_agent("random", task, seed=seed)
            obs = env.reset(seed=seed)
            agent.reset(obs)
            sent = []
            res = None
            while res is None or not res.done:
                action = agent.act(obs)
                sent.append(json.dumps(action))
                res = env.step(action)
                obs = res.observation
            exp = load_scenario(task, seed)["expected"]
            # the party is left out: provider/facility/insurer also name record types
            secret = {str(exp[f]) for f in ("finding", "resolution_type", "appeal_reason")
                      if f in exp} - {"none"}
            said = " ".join(sent)
            for c in res.info["grade"]["checks"]:
                for value in secret:
                    if value in said:
                        continue
                    assert not re.search(rf"\b{re.escape(value)}\b", c["detail"]), \
                        (task, seed, c["id"], c["detail"])


# -- the audit itself (slow: every agent over a whole split) ---------------------------------
@pytest.fixture(scope="module")
def audits() -> dict[str, dict[str, dict[str, Any]]]:
    """Every billing task audited on test and dev, the shortcuts fitted once per task."""
    return {task: dict(zip(("test", "dev"), audit_splits(task, ["test", "dev"]), strict=True))
            for task in BILLING_TASKS}


@pytest.fixture(scope="module")
def reports(audits: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return {task: both["test"] for task, both in audits.items()}


# The partial reasoner (`partial_<record>`: the heuristic without the task's key record doing the
# part it still can — in adversarial_fabrication the bill against the estimate and the window —
# then answering the finding and party most common on train for that filing) wins
# adversarial_fabrication without dating the booking: a balance correction follows a late or
# backdated GFE in ~88% of scenarios, a dispute a timely one in ~60% (the price of keeping the
# constant no_action answer, the PPDR-eligible alternative and the resolution shares in bounds;
# issue 8). Round 8 measured the floor: within each filing one (finding, party) answer is
# accepted in at least half of the dispute-eligible bills, a quarter of balance corrections and a
# third of no-action cases (alternatives experts accept), 0.343-0.367 over every allowed filing
# mix (tests/test_task_adversarial_round8.py); the agent passes 0.264 test / 0.313 dev against a
# bar of 0.166 / 0.183. Strict xfail: it flips to a failure the day a generator change closes it.
PARTIAL_LEAKS = {"adversarial_fabrication"}


def _known(leaks: set[str]) -> list[Any]:
    return [pytest.param(t, marks=pytest.mark.xfail(strict=True, reason="known leak, issue 8"))
            if t in leaks else t for t in BILLING_TASKS]


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(PARTIAL_LEAKS))
def test_no_shortcut_passes_more_than_its_class(reports: dict[str, dict[str, Any]], task: str
                                                ) -> None:
    rep = reports[task]
    text = format_audit(rep)
    # a constant answer with the process done passes exactly where the whole answer (finding,
    # party, resolution, reason) is its own: no shortcut may pass more than the most common
    # whole answer's share plus 0.05 (the boosted and overlap shortcuts are held to it, on dev
    # and test, by their own tests below)
    best = max(r["pass_rate"] for r in rep["agents"]
               if r["kind"] in ("shortcut", "exploit") and r["agent"] not in LEARNED_AGENTS
               and r["agent"] not in PASS_ONLY)
    assert best <= round(rep["modal_outcome"]["share"] + 0.05, 9), text


# Every hand-written shortcut now stays within the modal share + 0.10 in every billing task (the
# adversarial_fabrication party leak through the billing entity's kind closed in issue 8's third
# round). A task listed here is a strict xfail.
NB_LEAKS: set[str] = set()


# The partial reasoner's finding is within its field's bar since 7618e3b (adversarial test:
# 0.380 vs 0.496; it still passes 0.264 > 0.166, PARTIAL_LEAKS in the pass test above).
@pytest.mark.slow
@pytest.mark.parametrize("task", _known(NB_LEAKS))
def test_no_hand_written_shortcut_beats_the_modal_share(reports: dict[str, dict[str, Any]],
                                                        task: str) -> None:
    rep = reports[task]
    text = format_audit(rep)
    rows = [r for r in rep["agents"] if r["kind"] == "shortcut"
            and r["agent"] != "rf_records" and r["agent"] not in LEARNED_AGENTS
            and r["agent"] not in PASS_ONLY]
    for f in rep["fields"]:
        top = max(r["field_accuracy"][f] for r in rows if f in judged_fields(r["agent"], [f]))
        assert top <= round(rep["modal_share"][f]["share"] + 0.10, 9), (f, text)


# The generic random forests over every record value (rf_records: per outcome field, one
# forest per feature kind, the best by out-of-bag accuracy). Every task holds: deductive_liability
# since issue 8's seventh round (test finding 0.284, resolution 0.372; it read the raw amounts
# above the bar until the balance-billing statement itemized the remittance's shares and the
# desk copay was collected at one rate), adversarial_fabrication since the fourth,
# abductive_conflict since the third. A task listed here is a strict xfail. (On the round-10b
# deductive splits, 0a8179e, rf_records read the test filing at 0.432 against 0.420; on the
# final round-10 splits, f5b9dab, 0.392 / 0.407 test / dev: chance at the bar.)
FOREST_LEAKS: set[str] = set()


@pytest.mark.slow
@pytest.mark.parametrize("task", [
    pytest.param(t, marks=pytest.mark.xfail(strict=True, reason="known surface leak, issue 8"))
    if t in FOREST_LEAKS else t for t in BILLING_TASKS])
def test_forest_shortcut_stays_near_the_modal_share(reports: dict[str, dict[str, Any]],
                                                    task: str) -> None:
    rep = reports[task]
    rf = next(r for r in rep["agents"] if r["agent"] == "rf_records")
    for f in rep["fields"]:
        assert rf["field_accuracy"][f] <= round(rep["modal_share"][f]["share"] + 0.10, 9), (f, rf)


def _learned_breaks(both: dict[str, dict[str, Any]], agents: list[str]) -> list[str]:
    """Every bar one of ``agents`` breaks on dev or test: a pass rate above the most common
    whole answer's share + 0.05, a field above its modal share + 0.10."""
    out = []
    for split, rep in both.items():
        cap = round(rep["modal_outcome"]["share"] + 0.05, 9)  # 0.34 vs 0.24 + 0.10 holds
        for r in rep["agents"]:
            if r["agent"] not in agents:
                continue
            if r["pass_rate"] > cap:
                out.append(f"{split} {r['agent']} pass {r['pass_rate']:.3f} > {cap:.3f}")
            for f in rep["fields"]:
                bar = round(rep["modal_share"][f]["share"] + 0.10, 9)
                if r["field_accuracy"][f] > bar:
                    out.append(f"{split} {r['agent']} {f} {r['field_accuracy'][f]:.3f} > {bar:.3f}")
    return out


# The boosted trees over the leaves an agent is shown (gb_numbers, gb_dates, gb_labels,
# gb_records; red team round 3 found them +0.23 to +0.32 above the modal share where the
# random forests found +0.10), and since round 7 the per-family router over them (router_gb,
# the round-6 red team's). Measured at the final splits of issue 8's ninth round (deductive
# a07be95, abductive ae31429, adversarial c0377d8; the audit at d656c52), test / dev (round 8:
# deductive gb_numbers finding 0.348 / 0.387, gb_records 0.388 / 0.393):
# - abductive_conflict: gb_numbers and gb_labels 0.548 on test (cap 0.546; dev holds; round 8
#   gb_records 0.564, now 0.524); refitted on a replicate's train and scored on 1,645 fresh
#   test-pool indicator-1 scenarios they read 0.488-0.504 (chance 0.50), and which learner
#   crosses the bar changes with every regeneration and salt (round 9)
# - deductive_liability (round 9): gb_numbers finding 0.360 on dev (bar 0.340; 0.312 on test);
#   gb_records and router_gb hold (finding 0.324 / 0.327)
# - adversarial_fabrication holds since round 6 (gb_records resolution 0.576 at round 5)
# Strict xfail: it flips to a failure the day a generator change closes it (issue 8).
GB_LEAKS: set[str] = {"deductive_liability", "abductive_conflict"}


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(GB_LEAKS))
def test_boosted_shortcuts_stay_near_the_modal_share(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    gb = ["gb_numbers", "gb_dates", "gb_labels", "gb_records", "router_gb"]
    assert not _learned_breaks(audits[task], gb), _learned_breaks(audits[task], gb)


# The note-overlap shortcut (overlap_records: shared tokens, shared number tokens and Jaccard
# between side-by-side free texts, with the categorical leaves; red team round 3 read the
# abductive line notes at 0.54 of test and 0.87 of dev). Every task holds at the round-6
# splits (test / dev: deductive finding 0.288 / 0.260; abductive pass 0.544 / 0.520 (caps
# 0.546 / 0.543); adversarial party 0.464 / 0.433 after 143b986 moved the physician group out of the
# encounter). Round 8: abductive_conflict passes 0.556 on test and 0.567 on dev (caps 0.546 /
# 0.543; 0.528 on the indicator-1 cases of 2,000 fresh scenarios, a constant answer 0.537).
# Round 9: every task holds (abductive 0.524 / 0.533). A task listed here is a strict xfail.
OVERLAP_LEAKS: set[str] = set()


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(OVERLAP_LEAKS))
def test_overlap_shortcut_stays_near_the_modal_share(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    assert not _learned_breaks(audits[task], ["overlap_records"]), _learned_breaks(
        audits[task], ["overlap_records"])


# The word forest (rf_words: one-hot categorical leaves and the presence of every word of every
# free text; red team round 4 read abductive's line notes at 0.612 test / 0.567 dev with five
# hand-picked claim features and the two notes' words). Every task holds at the round-8 splits:
# abductive_conflict 0.536 test / 0.527 dev (0.568 on test at round 7), deductive finding at
# most 0.200, adversarial. Round 9: abductive_conflict's rf_words passes 0.553 on dev (cap
# 0.543; 0.540 on test) - chance: which learner crosses moves with every salt (README,
# "Replicates under a private salt"; `clarus audit --replicates`). A task listed here is a
# strict xfail.
WORDS_LEAKS: set[str] = {"abductive_conflict"}


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(WORDS_LEAKS))
def test_word_forest_stays_near_the_modal_share(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    assert not _learned_breaks(audits[task], ["rf_words"]), _learned_breaks(
        audits[task], ["rf_words"])


# Round 6 (red team round 5). The per-record word counts (gb_wordcounts, and with the numeric
# leaves gb_wordcounts_numbers; the red team's count of "Copay at check-in" captures read
# duplicate_charge at AUC 0.96), and since round 7 the counts split by the year of their item
# (gb_wordcounts_years; red team round 6 counted this year's captures). Measured at the round-8
# splits (see GB_LEAKS), test / dev:
# - deductive_liability (round 9): gb_wordcounts_numbers finding 0.392 / 0.413 (bar 0.340),
#   resolution 0.472 / 0.433 (0.420); gb_wordcounts_years finding 0.356 / 0.427, resolution
#   0.440 / 0.493
# - abductive_conflict (round 9): gb_wordcounts_years pass 0.548 on test (cap 0.546; dev 0.480)
#   - chance, as for GB_LEAKS (0.520 / 0.528 at round 8)
# - adversarial_fabrication holds
# Strict xfail: it flips to a failure the day a generator change closes it (issue 8).
WORDCOUNT_LEAKS: set[str] = {"deductive_liability", "abductive_conflict"}


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(WORDCOUNT_LEAKS))
def test_word_count_shortcuts_stay_near_the_modal_share(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    agents = ["gb_wordcounts", "gb_wordcounts_numbers", "gb_wordcounts_years"]
    assert not _learned_breaks(audits[task], agents), _learned_breaks(audits[task], agents)


# The structural counts (gb_counts, round 8: list lengths and items per categorical value, also
# on/before/after the view's anchor day; gb_counts_numbers with the numeric leaves; an
# independent red team read deductive 0.567 / 0.588 from such counts). Measured at the round-8
# splits (see GB_LEAKS), test / dev:
# - deductive_liability (round 9): gb_counts_numbers finding 0.496 / 0.580 (bar 0.340),
#   resolution 0.516 / 0.573 (0.420), party 0.572 / 0.627 (0.580); gb_counts finding 0.392 /
#   0.407; pass at most 0.224 (cap 0.250) - copay_not_credited's visit-day capture the ledger
#   never cites is its evidence and a prior (red team round 9; round 8 0.516 / 0.540)
# - abductive_conflict: gb_counts_numbers pass 0.552 on test (cap 0.546; 0.508 on fresh
#   indicator-1 cases, a constant answer 0.537); dev holds
# - adversarial_fabrication holds (finding 0.316 / 0.313)
# Strict xfail: it flips to a failure the day a generator change closes it (issue 8).
COUNT_LEAKS: set[str] = {"deductive_liability", "abductive_conflict"}


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(COUNT_LEAKS))
def test_structural_counts_stay_near_the_modal_share(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    agents = ["gb_counts", "gb_counts_numbers"]
    assert not _learned_breaks(audits[task], agents), _learned_breaks(audits[task], agents)


# The digit runs of every free text by position with the categorical leaves (note_numbers; the
# red team's numtok_gb read abductive therapy from the notes' clock minutes, 0.748 / 0.787).
# Measured at the round-8 splits, test / dev:
# - abductive_conflict: pass 0.584 on test (cap 0.546; round 8 0.560); refitted on a
#   replicate's train it reads 1,175 fresh test-pool indicator-1 cases at 0.515 (0.486-0.543);
#   dev holds (0.507)
# - deductive_liability and adversarial_fabrication hold.
NOTE_NUMBER_LEAKS: set[str] = {"abductive_conflict"}


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(NOTE_NUMBER_LEAKS))
def test_note_numbers_stay_near_the_modal_share(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    assert not _learned_breaks(audits[task], ["note_numbers"]), _learned_breaks(
        audits[task], ["note_numbers"])


# The pass maximiser (whole answers over the strongest leaf families, each filed with its train
# pointer's amount, argmax P(answer) x P(pointer right); red team round 5 passed deductive
# 0.344 / 0.320 against 0.25), held to the pass bar only. Every task holds at the round-8
# splits, test / dev: deductive_liability 0.204 / 0.213 (cap 0.250), abductive_conflict 0.544 /
# 0.487 (0.560 / 0.553 at round 6; cap 0.546 / 0.543), adversarial_fabrication 0.104 / 0.120.
# Round 9: abductive_conflict 0.568 on test (dev 0.440; on 1,645 fresh test-pool indicator-1
# scenarios, fitted on a replicate's train, 0.474); deductive_liability 0.188 / 0.193.
# Round 11: deductive_liability 0.228 / 0.247 on the final splits (c7c7094); it crossed on the
# intermediate 98ad489 dev split (0.260 against 0.250, 39 of 150; Wilson [0.196, 0.336]).
# Round 12 (4b6a3c2 splits): deductive_liability 0.232 on test, 0.260 on dev against 0.250
# (39 of 150, two scenarios over; Wilson [0.196, 0.336]; 0.253 on the intermediate 0b47c7f).
# Round 13 (38a5e8c splits): 0.240 on test, 0.253 on dev (38 of 150, one scenario over; 0.213 on
# the intermediate cc5ac66; 0.213-0.252 on two salted replicates of each tree).
# A task listed here is a strict xfail.
PASSMAX_LEAKS: set[str] = {"deductive_liability", "abductive_conflict"}


@pytest.mark.slow
@pytest.mark.parametrize("task", _known(PASSMAX_LEAKS))
def test_pass_maximiser_passes_no_more_than_the_most_common_answer(
        audits: dict[str, dict[str, dict[str, Any]]], task: str) -> None:
    out = []
    for split, rep in audits[task].items():
        row = next(r for r in rep["agents"] if r["agent"] == "pass_maximiser")
        cap = round(rep["modal_outcome"]["share"] + 0.05, 9)
        if row["pass_rate"] > cap:
            out.append(f"{split} pass {row['pass_rate']:.3f} > {cap:.3f}")
        assert "pass_maximiser " + next(iter(rep["fields"])) not in verdict(rep)  # pass only
    assert not out, out


@pytest.mark.slow
@pytest.mark.parametrize("task", BILLING_TASKS)
def test_relation_learner_is_reported_apart(audits: dict[str, dict[str, dict[str, Any]]],
                                            task: str) -> None:
    """pairwise_numbers and pairwise_dates learn the task's own relations: they are reported
    (kind ``relation``) but count toward no best-shortcut figure and no verdict."""
    for rep in audits[task].values():
        for name in ("pairwise_numbers", "pairwise_dates"):
            row = next(r for r in rep["agents"] if r["agent"] == name)
            assert row["kind"] == "relation"
            assert name not in verdict(rep)


@pytest.mark.slow
@pytest.mark.parametrize("task", BILLING_TASKS)
def test_reference_agents_bracket_the_task(reports: dict[str, dict[str, Any]], task: str
                                           ) -> None:
    rows = {r["agent"]: r for r in reports[task]["agents"]}
    text = format_audit(reports[task])
    assert rows["oracle"]["pass_rate"] == 1.0 and rows["oracle"]["outcome_accuracy"] == 1.0
    assert rows["random"]["mean_score"] < 0.10, text
    h = rows["heuristic"]
    assert rows["random"]["pass_rate"] < h["pass_rate"] < 1.0, text
    best_short = reports[task]["best_shortcut"]["outcome_accuracy"]
    assert best_short + 0.10 < h["outcome_accuracy"], text
    # the heuristic reads the evidence: hiding the records leaves it at the shortcut level,
    # and hiding just the record the task is about costs it a large part of its accuracy
    assert rows["heuristic-no-records"]["outcome_accuracy"] <= best_short + 0.10, text
    key = [r for name, r in rows.items()
           if name.startswith("heuristic-no-") and name != "heuristic-no-records"]
    assert key and min(a["outcome_accuracy"] for a in key) <= h["outcome_accuracy"] - 0.25, text


@pytest.mark.slow
def test_outcome_variety_on_dev_and_test() -> None:
    for task in BILLING_TASKS:
        for split, seeds_ in (("dev", range(50000, 50150)), ("test", range(90000, 90250))):
            labels = [dict(label_of(load_scenario(task, s)["expected"])) for s in seeds_]
            for f in labels[0]:
                counts: dict[str, int] = {}
                for lab in labels:
                    counts[lab[f]] = counts.get(lab[f], 0) + 1
                assert max(counts.values()) / len(labels) <= 0.5, (task, split, f, counts)
            nothing = sum(lab["finding"] in ("no_error", "no_violation") for lab in labels)
            if task != "abductive_conflict":
                assert 0.10 <= nothing / len(labels) <= 0.25, (task, split, nothing)


def test_cli_audit_runs_a_small_audit(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    out = tmp_path / "audit.json"
    rc = main(["audit", "--task", "deductive_liability", "--split", "dev", "--limit", "4",
               "--train-limit", "60", "--agents", "oracle,modal,nb_complaint,reward_farmer",
               "--quiet", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "best shortcut" in text and "nb_complaint" in text
    saved = json.loads(out.read_text())
    assert saved["format"] == "clarus-audit"
    assert [r["agent"] for r in saved["reports"][0]["agents"]] == [
        "oracle", "modal", "nb_complaint", "reward_farmer"]
    assert main(["audit", "--task", "deductive_liability", "--agents", "nope", "--limit",
                 "1", "--train-limit", "5", "--quiet"]) == 2
    assert "unknown audit agent" in capsys.readouterr().err


def test_the_verdict_names_every_shortcut_that_breaks_the_bar() -> None:
    from clarus_env.audit import verdict

    row = {"kind": "shortcut", "pass_rate": 0.0, "outcome_accuracy": 0.0,
           "field_accuracy": {"finding": 0.50, "responsible_party": 0.40}}
    report = {"fields": ["finding", "responsible_party"],
              "modal_share": {"finding": {"share": 0.30}, "responsible_party": {"share": 0.40}},
              "modal_outcome": {"share": 0.20},
              "agents": [{**row, "agent": "leaky"},
                         {**row, "agent": "constant", "pass_rate": 0.26,
                          "field_accuracy": {"finding": 0.30, "responsible_party": 0.40}},
                         {**row, "agent": "fine", "field_accuracy": {
                             "finding": 0.35, "responsible_party": 0.45}},
                         {"kind": "reference", "agent": "oracle", "pass_rate": 1.0,
                          "field_accuracy": {"finding": 1.0, "responsible_party": 1.0}}]}
    text = verdict(report)
    assert text.startswith("shortcut bar BROKEN") and "leaky finding 0.500" in text
    # passing more than the most common whole answer's share + 0.05 breaks the bar too
    assert "constant pass 0.260 > 0.250" in text
    assert "fine" not in text and "oracle" not in text
    report["agents"] = report["agents"][2:]
    assert verdict(report).startswith("shortcut bar held")


def test_partial_reasoner_keeps_its_filing_and_takes_the_finding_from_the_table() -> None:
    from clarus_env.audit import PartialReasoner, heuristic_class

    task = "adversarial_fabrication"
    H = heuristic_class(task)  # noqa: N806 - a class
    table = {r: (("finding", "no_violation"), ("responsible_party", "patient"),
                 ("resolution_type", r)) for r in ("no_action", "nsa_dispute",
                                                   "balance_correction")}
    env = make(task, split="dev")
    seed = 50000
    play(env, PartialReasoner(H, frozenset({"processor_log"}), table), seed)
    got = answered(env)
    alone = H(hide=frozenset({"processor_log"}))
    play(env, alone, seed)
    assert got["finding"] == "no_violation" and got["responsible_party"] == "patient"
    assert got["resolution_type"] == answered(env)["resolution_type"]  # its own filing
    assert judged_fields("partial_processor_log", ["finding", "resolution_type"]) == ["finding"]
