"""The shared billing runtime on a tiny hand-built task: validation, rewards paid once,
budget and cooldowns enforced, PHI before authentication, counters, grading."""

from __future__ import annotations

import copy
import sys

import pytest

from clarus_env.env import ClarusEnv
from clarus_env.grader import Check
from clarus_env.tasks import _LOADED
from clarus_env.tasks.base import BillingTask

SCENARIO = {
    "schema_version": 1, "task": "toy_task", "seed": 7, "scenario_id": "toy_task-7",
    "reference_release": "test",
    "case": {"case_id": "CLR-7-TOY", "patient_id": "CLR-7-TOY", "patient_name": "Ana Diaz",
             "patient_complaint": "I was billed twice for the same visit, please help.",
             "emotional_state": "distressed", "today": "2026-05-01"},
    "artifacts": [
        {"artifact_id": "CLM-1", "type": "claim_record", "party": "insurer", "key": "C1",
         "distractor": False, "data": {"claim_id": "C1"}},
        {"artifact_id": "EOB-1", "type": "eob", "party": "insurer", "key": "C1",
         "distractor": False, "data": {"claim_id": "C1"}},
        {"artifact_id": "EOB-9", "type": "eob", "party": "insurer", "key": "C9",
         "distractor": True, "data": {"claim_id": "C9"}},
        {"artifact_id": "PLOG-1", "type": "processor_log", "party": "payment_processor",
         "key": "CLR-7-TOY", "distractor": False, "data": {"transactions": []}},
    ],
    "references": [
        {"artifact_id": "DL-APPEAL", "type": "deadline", "party": "reference",
         "key": "internal_appeal", "data": {"due_date": "2026-10-28"}},
        {"artifact_id": "NCCI-96372-99211", "type": "ncci_edit", "party": "reference",
         "key": "96372/99211", "data": {"modifier_indicator": "0"}},
    ],
    "counters": [{"counter_id": "CTR-1", "kind": "legal_threat", "from": "Provider counsel",
                  "text": "We will sue you if you do not withdraw.", "refuted_by": ["PLOG-1"]}],
    "expected": {"responsible_party": "payment_processor", "amount_cents": 3000},
    "variant": {},
}
CHECKS = [
    Check("authenticated", "patient authenticated", "SELECT COUNT(*) > 0, 'auth' FROM auth"),
    Check("party", "responsible party right",
          "SELECT EXISTS(SELECT 1 FROM diagnoses d JOIN expected e ON e.key='responsible_party' "
          "AND e.value = d.responsible_party), 'party'"),
    Check("amount", "amount to the cent",
          "SELECT EXISTS(SELECT 1 FROM diagnoses d JOIN expected e ON e.key='amount_cents' "
          "AND CAST(e.value AS INTEGER) = d.amount_cents), 'amount'"),
    Check("closed", "case closed",
          "SELECT EXISTS(SELECT 1 FROM state WHERE key='ended_by' AND value='close_case'), ''"),
]
TOY = BillingTask(name="toy_task", difficulty="easy", api_call_budget=12,
                  cooldowns={"fetch_payment_processor_log": 2},
                  generate=lambda seed, rng, ref: {}, checks=CHECKS, oracle=lambda s: [],
                  findings=("duplicate_charge", "no_error"))


@pytest.fixture()
def env(monkeypatch) -> ClarusEnv:  # noqa: ANN001
    monkeypatch.setitem(_LOADED, "toy_task", TOY)
    monkeypatch.setattr("clarus_env.tasks.TASKS", ("toy_task",))
    e = ClarusEnv.__new__(ClarusEnv)
    ClarusEnv.__init__(e, "toy_task")
    e.reset(scenario=copy.deepcopy(SCENARIO))
    return e


def act(name: str, **params: object) -> dict:
    return {"action_type": name, "parameters": params}


def test_seed_client_example_and_reward_once(env: ClarusEnv) -> None:
    r = env.step(act("authenticate_patient", patient_id="CLR-7-TOY"))
    assert r.reward == pytest.approx(0.05) and r.observation.last_action_error is None
    r = env.step(act("authenticate_patient", patient_id="CLR-7-TOY"))
    assert r.reward == 0.0  # paid once
    r = env.step(act("fetch_eob", claim_id="C1"))
    assert r.reward == pytest.approx(0.03) and r.observation.last_action_result["data"]
    assert env.step(act("fetch_eob", claim_id="C1")).reward == pytest.approx(-0.02)  # duplicate
    # a distractor's fetch looks like any other (no type reward left to pay for an EOB) ...
    assert env.step(act("fetch_eob", claim_id="C9")).reward == 0.0
    assert env.step(act("fetch_claim_record", claim_id="C1")).reward == pytest.approx(0.03)
    # ... and costs -0.01 at the end, on top of the score
    end = env.step(act("close_case"))
    assert end.done and end.reward == pytest.approx(end.info["grade"]["score"] - 0.01)


def test_distractor_penalty_is_charged_once_per_record_at_the_end(env: ClarusEnv) -> None:
    env.step(act("authenticate_patient", patient_id="CLR-7-TOY"))
    first = env.step(act("fetch_eob", claim_id="C9"))
    assert first.reward == pytest.approx(0.03)  # the first EOB read, whichever it is
    env.step(act("fetch_eob", claim_id="C9"))  # a duplicate: -0.02 now, no second penalty
    end = env.step(act("close_case"))
    assert end.reward == pytest.approx(end.info["grade"]["score"] - 0.01)


@pytest.mark.parametrize("bad, words", [
    ("not an action", "must be an object"),
    ({"action_type": "hack_the_planet"}, "unknown action_type"),
    (act("fetch_eob"), "fetch_eob.claim_id is required"),
    (act("fetch_eob", claim_id=5), "fetch_eob.claim_id must be a non-empty string"),
    (act("fetch_eob", claim_id="C1", extra=1), "unknown parameter(s) extra"),
    (act("fetch_eob", claim_id="NOPE"), "no eob found for claim_id='NOPE'"),
    (act("write_diagnosis", responsible_party="insurer", finding="duplicate_charge",
         cited_artifacts=["EOB-404"]), "unknown artifact id(s) EOB-404"),
    (act("write_diagnosis", responsible_party="insurer", finding="duplicate_charge",
         amount="12.345", cited_artifacts=[]), "at most 2 decimals"),
    (act("write_diagnosis", responsible_party="alien", finding="duplicate_charge",
         cited_artifacts=[]), "must be one of"),
    (act("reject_counter_argument", counter_id="CTR-1", cited_artifacts=[]), "has not been raised"),
    (act("submit_resolution"), "call draft_resolution first"),
    ({"action_type": "close_case", "parameters": [1, 2]}, "parameters must be an object"),
])
def test_invalid_actions_penalize_and_change_nothing(env: ClarusEnv, bad: object,
                                                     words: str) -> None:
    before = {t: env.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("auth", "fetched", "diagnoses", "drafts", "submissions",
                        "counter_responses", "citations")}
    r = env.step(bad)
    assert r.reward == pytest.approx(-0.02)
    assert words in r.observation.last_action_error
    assert not r.done
    after = {t: env.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in before}
    assert after == before


def test_phi_before_authentication_is_a_violation(env: ClarusEnv) -> None:
    r = env.step(act("fetch_eob", claim_id="C1"))
    assert r.observation.last_action_error is None
    assert env.db.execute("SELECT kind FROM violations").fetchall() == [
        ("phi_before_authentication",)]


def test_cooldown_is_enforced(env: ClarusEnv) -> None:
    env.step(act("authenticate_patient", patient_id="CLR-7-TOY"))
    assert env.step(act("fetch_payment_processor_log", patient_id="CLR-7-TOY")).reward > 0
    r = env.step(act("fetch_payment_processor_log", patient_id="CLR-7-TOY"))
    assert "rate limited" in r.observation.last_action_error and r.reward == pytest.approx(-0.02)
    assert r.observation.cooldown_steps["fetch_payment_processor_log"] == 1
    env.step(act("write_audit_entry", summary="x"))
    r = env.step(act("fetch_payment_processor_log", patient_id="CLR-7-TOY"))
    assert r.observation.last_action_error is None and r.reward == pytest.approx(-0.02)  # dup


def test_budget_ends_and_grades_the_episode(env: ClarusEnv) -> None:
    r = None
    for _ in range(12):
        r = env.step(act("write_audit_entry", summary="looping"))
    assert r is not None and r.done and "grade" in r.info
    assert r.info["grade"]["total"] == 4 and r.info["grade"]["passed"] == 0
    assert r.reward == pytest.approx(0.5 / 5)
    after = env.step(act("close_case"))
    assert "episode is done" in after.observation.last_action_error
    assert env.state["step_count"] == 12


def test_full_play_grades_and_never_leaks_expected(env: ClarusEnv) -> None:
    env.step(act("authenticate_patient", patient_id="CLR-7-TOY"))
    env.step(act("fetch_eob", claim_id="C1"))
    env.step(act("fetch_payment_processor_log", patient_id="CLR-7-TOY"))
    r = env.step(act("write_diagnosis", responsible_party="payment_processor",
                     finding="duplicate_charge", amount=30, cited_artifacts=["EOB-1", "PLOG-1"]))
    assert r.reward == pytest.approx(0.05)
    r = env.step(act("send_patient_communication", message="We found a duplicate charge.",
                     message_type="explanation"))
    assert r.reward == pytest.approx(0.05) and r.observation.patient_emotional_state == "frustrated"
    assert env.step(act("check_deadline", deadline_type="internal_appeal")).reward == \
        pytest.approx(0.03)
    env.step(act("draft_resolution", resolution_type="refund_request", amount="30.00",
                 cited_artifacts=["PLOG-1"]))
    r = env.step(act("submit_resolution"))
    assert [c["counter_id"] for c in r.observation.last_action_result["counter_arguments"]] == \
        ["CTR-1"]
    r = env.step(act("reject_counter_argument", counter_id="CTR-1", cited_artifacts=["PLOG-1"]))
    assert r.observation.last_action_error is None
    r = env.step(act("close_case"))
    assert r.done and r.info["grade"]["passed"] == 4
    assert r.reward == pytest.approx(4.5 / 5)
    assert env.state["score"] == pytest.approx(0.9)
    assert "expected" not in str(env.state) and "3000" not in str(r.observation.model_dump())


def test_lone_surrogates_are_refused_not_raised(env: ClarusEnv) -> None:
    r = env.step(act("write_audit_entry", summary="bad \ud800 text"))
    assert "not valid Unicode" in r.observation.last_action_error
    r = env.step(act("write_diagnosis", responsible_party="insurer", finding="duplicate_charge",
                     cited_artifacts=["EOB-1\udfff"]))
    assert "not valid Unicode" in r.observation.last_action_error


# -- the episode database: rows are buffered and written when read ---------------------------
def _tables(env: ClarusEnv) -> dict[str, list[tuple]]:
    from clarus_env.episode_db import TABLES

    # written order (``expected`` and ``counters`` have no rowid: they are keyed)
    keyed = {"expected": "key", "counters": "counter_id"}
    return {t: env.db.execute(f"SELECT * FROM {t} ORDER BY {keyed.get(t, 'rowid')}").fetchall()
            for t in TABLES}


def _play(env: ClarusEnv, seed_scenario: dict, last_step: int | None = None) -> None:
    env.reset(scenario=seed_scenario)
    plan = [act("authenticate_patient", patient_id="CLR-7-TOY"),
            act("fetch_claim_record", claim_id="C1"), act("fetch_eob", claim_id="C9"),
            act("fetch_eob", claim_id="C9"),
            act("write_diagnosis", responsible_party="payment_processor",
                finding="duplicate_charge", amount="30.00", cited_artifacts=["CLM-1", "EOB-9"]),
            act("draft_resolution", resolution_type="refund_request", amount="30.00",
                cited_artifacts=["CLM-1"]),
            act("submit_resolution"),
            act("reject_counter_argument", counter_id="CTR-1", cited_artifacts=["CLM-1"]),
            act("write_audit_entry", summary="done"), act("close_case")]
    for a in plan[:last_step]:
        env.step(a)


@pytest.mark.parametrize("commit_between", [False, True])
def test_database_after_an_episode_holds_that_episode_only(
        env: ClarusEnv, monkeypatch, commit_between: bool) -> None:  # noqa: ANN001
    """Back-to-back episodes on one env leave exactly the rows a fresh env writes, also when
    a reader of ``env.db`` committed the last episode's rows (ROLLBACK cannot drop those)."""
    other = copy.deepcopy(SCENARIO)
    other["artifacts"][0]["artifact_id"] = "CLM-2"
    other["expected"]["amount_cents"] = 999
    _play(env, SCENARIO)
    if commit_between:
        env.db.commit()
    _play(env, other, last_step=3)
    if commit_between:
        env.db.commit()
    _play(env, SCENARIO)
    fresh = ClarusEnv("toy_task")
    _play(fresh, SCENARIO)
    assert _tables(env) == _tables(fresh)
    assert _tables(env)["steps"][-1][1] == "close_case"
    assert env.state["score"] == fresh.state["score"]


def test_database_read_mid_episode_shows_every_step_so_far(env: ClarusEnv) -> None:
    _play(env, SCENARIO, last_step=4)
    assert [r[1] for r in env.db.execute("SELECT step, artifact_id FROM fetched")] == [
        "CLM-1", "EOB-9", "EOB-9"]
    assert env.db.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 4
    env.step(act("write_audit_entry", summary="more"))
    assert env.db.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 5
    env.reset(scenario=SCENARIO)
    assert env.db.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 0
    assert env.db.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0] == 6


def test_grading_writes_the_tables_its_checks_read_and_a_reader_gets_the_rest(
        env: ClarusEnv) -> None:
    """The toy checks read auth, diagnoses, expected and state: grading writes those (and the
    grade sees them); every other table, the steps' JSON parameters too, is written the
    moment anyone reads ``env.db``, exactly as recorded."""
    from clarus_env.env import graded_tables

    assert graded_tables(CHECKS) == {"auth", "diagnoses", "expected", "state"}
    _play(env, SCENARIO)
    assert env.state["done"] and env.state["score"] == pytest.approx((4 + 0.5) / 5)
    assert "steps" in env._rows and "fetched" in env._rows  # not built for the grade
    rows = _tables(env)
    assert rows["steps"][1][:3] == (2, "fetch_claim_record", '{"claim_id": "C1"}')
    assert [r[1] for r in rows["fetched"]] == ["CLM-1", "EOB-9", "EOB-9"]
    assert len(rows["artifacts"]) == 6 and rows["counter_refutations"] == [("CTR-1", "PLOG-1")]


def test_split_scenarios_decode_exactly_as_the_stdlib_decodes_them() -> None:
    """Every dev and test scenario (what ``clarus eval`` and the benchmarks play): orjson's
    value is json.loads' value, type for type (an int stays an int: the re-encoded texts are
    equal)."""
    import json

    from clarus_env.scenario_store import SCENARIO_BUNDLES, _split_index, decode

    paths = sorted(p for p in SCENARIO_BUNDLES.glob("*/*.arrow") if p.stem in ("dev", "test"))
    assert len(paths) >= 8
    for path in paths:
        for seed, (text, fast) in _split_index(str(path)).items():
            assert json.dumps(decode(text, fast)) == json.dumps(json.loads(text)), (path, seed)


def test_texts_orjson_would_read_differently_go_to_the_stdlib(tmp_path) -> None:  # noqa: ANN001
    import math

    import pyarrow as pa
    import pyarrow.ipc as ipc

    from clarus_env.scenario_store import _split_index, decode

    texts = ['{"a": 1}', '{"a": 123456789012345678901234}', '{"a": NaN}',
             '{"a": "\\ud800"}', '{"a": 1e400}']
    path = tmp_path / "dev.arrow"
    table = pa.table({"seed": list(range(5)), "scenario_json": texts})
    with ipc.new_file(str(path), table.schema) as writer:
        writer.write_table(table)
    index = _split_index(str(path))
    assert [index[i][1] for i in range(5)] == [True, False, True, True, True]
    got = [decode(*index[i])["a"] for i in range(5)]
    assert got[0] == 1 and got[1] == 123456789012345678901234 and isinstance(got[1], int)
    assert math.isnan(got[2]) and got[3] == "\ud800" and got[4] == math.inf


def test_steps_graded_without_their_json_get_it_before_anyone_reads_them(
        monkeypatch) -> None:  # noqa: ANN001
    """A check reads ``steps`` but none reads ``params``: grading writes the steps with the
    JSON left out, and a reader of ``env.db`` finds every step's JSON in place — the rows a
    task whose checks read ``params`` writes at grading."""
    import dataclasses

    steps_check = Check("stepped", "some step succeeded",
                        "SELECT EXISTS(SELECT 1 FROM steps WHERE ok = 1), 'stepped'")
    params_check = Check("params", "a step named its claim",
                         "SELECT EXISTS(SELECT 1 FROM steps WHERE params LIKE '%C1%'), 'params'")
    envs = []
    for name, extra in (("toy_steps", steps_check), ("toy_params", params_check)):
        monkeypatch.setitem(_LOADED, name, dataclasses.replace(TOY, name=name,
                                                               checks=[*CHECKS, extra]))
        monkeypatch.setattr("clarus_env.tasks.TASKS", (name,))
        e = ClarusEnv.__new__(ClarusEnv)
        ClarusEnv.__init__(e, name)
        _play(e, copy.deepcopy(SCENARIO))
        envs.append(e)
    lazy, eager = envs
    assert 2 not in lazy._keep["steps"] and 2 in eager._keep["steps"]  # 2: params
    assert lazy.state["score"] == eager.state["score"] == pytest.approx((5 + 0.5) / 6)
    assert "steps" not in lazy._rows  # written for the grade, the JSON pending
    assert lazy._db.execute("SELECT COUNT(*) FROM steps WHERE params IS NULL").fetchone()[0] > 0
    assert _tables(lazy) == _tables(eager)
    assert _tables(lazy)["steps"][1][2] == '{"claim_id": "C1"}' and not lazy._unwritten


def test_grading_writes_named_columns_and_a_reader_gets_whole_rows(env: ClarusEnv) -> None:
    """The toy checks count ``auth`` rows but name none of its columns, so grading writes
    the step alone (NULL patient id and ok); a reader of ``env.db`` then finds the rows a
    mid-episode reader (whose writes are always whole) finds."""
    assert env._keep["auth"] == (0,)
    _play(env, SCENARIO)
    assert env._db.execute("SELECT * FROM auth").fetchall() == [(1, None, None)]
    whole = ClarusEnv("toy_task")
    _play(whole, SCENARIO, last_step=1)
    whole.db  # noqa: B018 - a read mid-episode writes every column
    for a in [act("fetch_claim_record", claim_id="C1"), act("fetch_eob", claim_id="C9"),
              act("fetch_eob", claim_id="C9"),
              act("write_diagnosis", responsible_party="payment_processor",
                  finding="duplicate_charge", amount="30.00",
                  cited_artifacts=["CLM-1", "EOB-9"]),
              act("draft_resolution", resolution_type="refund_request", amount="30.00",
                  cited_artifacts=["CLM-1"]),
              act("submit_resolution"),
              act("reject_counter_argument", counter_id="CTR-1", cited_artifacts=["CLM-1"]),
              act("write_audit_entry", summary="done")]:
        whole.step(a)
        whole.db  # noqa: B018
    whole.step(act("close_case"))
    assert _tables(env) == _tables(whole)
    assert _tables(env)["auth"] == [(1, "CLR-7-TOY", 1)] and not env._unwritten


def test_graded_columns_keep_every_column_a_check_could_reach_unnamed() -> None:
    from clarus_env.episode_db import COLUMN_NAMES, graded_columns

    plan = graded_columns(["SELECT EXISTS(SELECT 1 FROM messages WHERE recipient='patient')"])
    assert [COLUMN_NAMES["messages"][i] for i in plan["messages"]] == ["step", "recipient"]
    assert "expected" not in plan and "state" not in plan and "counters" not in plan
    assert "messages" not in graded_columns(["SELECT (SELECT * FROM messages LIMIT 1)"])
    assert graded_columns(["SELECT m.* FROM messages m"]) == {}
    assert graded_columns(["SELECT (SELECT * FROM audit, messages WHERE 1)"]) == {}
    assert graded_columns(["SELECT step FROM audit UNION SELECT step FROM messages"]) == {}
    assert graded_columns(["SELECT step FROM audit ORDER BY 1"]) == {}


def test_expected_rows_no_check_reads_are_written_only_for_a_reader(monkeypatch) -> None:  # noqa: ANN001
    """Checks that read the expected outcome only through ``check_sql.exp(key)`` get those
    keys' rows at grading; a reader of ``env.db`` finds the whole table, in key order, as a
    task whose checks read the table another way has it from the start."""
    import dataclasses

    from clarus_env.env import graded_expected_keys
    from clarus_env.tasks.check_sql import exp

    by_key = Check("party_exp", "responsible party right (by key)",
                   f"SELECT COALESCE({exp('responsible_party')} = 'payment_processor', 0), 'p'")
    assert graded_expected_keys([by_key]) == {"responsible_party"}
    assert graded_expected_keys(CHECKS) is None  # the toy checks JOIN the table
    envs = []
    for name, checks in (("toy_exp", [CHECKS[0], by_key]), ("toy_all", [*CHECKS, by_key])):
        monkeypatch.setitem(_LOADED, name, dataclasses.replace(TOY, name=name, checks=checks))
        monkeypatch.setattr("clarus_env.tasks.TASKS", (name,))
        e = ClarusEnv.__new__(ClarusEnv)
        ClarusEnv.__init__(e, name)
        _play(e, copy.deepcopy(SCENARIO))
        envs.append(e)
    partial, whole = envs
    assert partial.state["score"] == pytest.approx((2 + 0.5) / 3)
    assert partial._expected_partial and not whole._expected_partial
    assert partial._db.execute("SELECT key FROM expected").fetchall() == [("responsible_party",)]
    assert _tables(partial) == _tables(whole)
    assert _tables(partial)["expected"] == [("amount_cents", "3000"),
                                            ("responsible_party", "payment_processor")]
    other = copy.deepcopy(SCENARIO)
    other["expected"]["responsible_party"] = "provider"
    _play(partial, other)  # graded, never read: its partial table must not leak
    _play(partial, copy.deepcopy(SCENARIO))
    assert _tables(partial) == _tables(whole)


@pytest.mark.parametrize("sql, named", [
    ("SELECT a, b FROM t", "SELECT a AS _c0, b AS _c1 FROM t"),
    ("SELECT 2 * x, 'a, b' || (SELECT 1, 2) FROM t WHERE 1",
     "SELECT 2 * x AS _c0, 'a, b' || (SELECT 1, 2) AS _c1 FROM t WHERE 1"),
    ("WITH v(n) AS (SELECT 1) SELECT n >= 1,\n  'x' FROM v",
     "WITH v(n) AS (SELECT 1) SELECT n >= 1 AS _c0,\n  'x' AS _c1 FROM v"),
    ("SELECT CAST(x AS INTEGER), 1", "SELECT CAST(x AS INTEGER) AS _c0, 1 AS _c1"),
])
def test_grader_names_the_result_columns_of_plain_checks(sql: str, named: str) -> None:
    from clarus_env.grader import _named_columns

    assert _named_columns(sql) == named


@pytest.mark.parametrize("sql", [
    "SELECT *, 1 FROM t", "SELECT t.*, 1 FROM t", "SELECT DISTINCT a, b FROM t",
    "SELECT 1, 2 UNION SELECT 3, 4", "SELECT a AS p, b FROM t", "SELECT 1 -- c\n, 2",
    "VALUES (1, 2)", "SELECT 1, 2; SELECT 3",
])
def test_grader_leaves_checks_it_cannot_name_for_sure_as_written(sql: str) -> None:
    from clarus_env.grader import _named_columns

    assert _named_columns(sql) == sql


def test_a_check_named_without_as_is_graded_as_written(env: ClarusEnv) -> None:
    """``SELECT x y`` named again is a syntax error: the grade runs the check as written,
    and a check that is broken as written still reports its own error."""
    import sqlite3

    from clarus_env.grader import grade, run_sql

    db = sqlite3.connect(":memory:")
    named = Check("named", "named column", "SELECT 1 ok, 'fine' why")
    broken = Check("broken", "broken column", "SELECT nosuchcol, 'x' FROM sqlite_master")
    assert run_sql(named.sql) != named.sql
    report = grade(db, [named, broken])
    assert [(c["passed"], c["detail"]) for c in report["checks"]] == [
        (True, "fine"), (False, "check query failed: no such column: nosuchcol")]


@pytest.mark.skipif(sys.platform != "linux", reason="the shared libsqlite3 soname is Linux's")
def test_sqlite_memory_statistics_are_off_when_the_runtime_loads_sqlite_first() -> None:
    """A fresh process that imports the runtime before ``sqlite3`` has SQLite's memory
    statistics (a global mutex per allocation) turned off; one that imported ``sqlite3``
    first keeps them, and both grade alike."""
    import subprocess

    code = ("import {first}clarus_env.env, clarus_env.episode_db as e; print(e.MEMSTATUS_OFF, "
            "clarus_env.env.make('deductive_liability', split='dev').reset(seed=None) is not "
            "None)")
    out = [subprocess.run([sys.executable, "-c", code.format(first=first)], check=True,
                          capture_output=True, text=True).stdout.split()
           for first in ("", "sqlite3, ")]
    assert out == [["True", "True"], ["False", "True"]]


def test_first_resets_from_many_threads_all_get_the_schema() -> None:
    """A fresh server worker takes its first resets from a thread pool at once: every copy must
    carry the schema (built lazily without a lock, 105 of 320 copies came out empty)."""
    import importlib.util
    import threading

    import clarus_env.episode_db as edb

    empty: list[int] = []
    for trial in range(20):
        spec = importlib.util.spec_from_file_location(f"_edb_copy{trial}", edb.__file__)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # a fresh module: no template built yet
        barrier = threading.Barrier(8)

        def first_reset(mod: object = mod, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            db = mod.new_episode_db()  # type: ignore[attr-defined]
            n = db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
            empty.append(n == 0)

        threads = [threading.Thread(target=first_reset) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(empty) == 160 and not any(empty)
