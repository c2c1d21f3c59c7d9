"""The billing-dispute runtime: reset → step → graded episode, shared by the three tasks.

Everything the agent does is recorded for the episode's SQLite database; the grade is the
task's SQL checks over that database. Rows are buffered per table and written in one batch
when the database is read, in the order they were recorded, so the database read is the one
a write-through log would hold: the steps cost no SQL statement each, and only the tables
written are emptied for the next episode. Grading writes only the tables the task's checks
name, and in them only the columns the checks name (``episode_db.graded_columns``: the rest
NULL, e.g. a step's JSON parameters or a message's body); anyone reading ``env.db`` gets
every table with every column filled in. Rewards
follow the seed's table, with each positive shaping reward paid at most once per kind, so
repeating an action never pays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .actions import ACTIONS, PHI_ACTIONS, ActionError, validate
from .env_base import EnvBase
from .episode_db import (
    TABLES,
    canonical,
    fact_rows,
    fill_columns,
    graded_columns,
    insert_columns,
    insert_rows,
    insert_steps,
    new_episode_db,
)
from .grader import grade

R_AUTH, R_NEW_TYPE, R_DIAGNOSIS, R_DEESCALATE, R_DEADLINE, R_AUDIT = (
    0.05, 0.03, 0.05, 0.05, 0.03, 0.03)
R_DUPLICATE, R_DISTRACTOR, R_ERROR = -0.02, -0.01, -0.02
EMOTIONS = ("calm", "frustrated", "distressed")
FETCH = {  # action -> (artifact type, parameter holding its key)
    "fetch_claim_record": ("claim_record", "claim_id"),
    "fetch_eob": ("eob", "claim_id"),
    "fetch_provider_record": ("provider_record", "claim_id"),
    "fetch_payment_ledger": ("payment_ledger", "patient_id"),
    "fetch_plan_document": ("plan_document", "plan_id"),
    "fetch_facility_record": ("facility_record", "facility_id"),
    "fetch_payment_processor_log": ("processor_log", "patient_id"),
}
LOG_LINES = 12
_NESTED = (list, dict)  # parameters the action log leaves out
FACT_TABLES = ("artifacts", "expected", "counter_refutations")  # the scenario's side


def graded_tables(checks: list[Any]) -> frozenset[str]:
    """The tables a task's checks name (a column of the same name only adds a table, never
    drops one): what grading must find written."""
    sql = " ".join(c.sql for c in checks)
    return frozenset(t for t in TABLES if re.search(rf"\b{t}\b", sql))


# ``check_sql.exp(key)``: a scalar subquery that reads exactly one expected row
_EXP = re.compile(r"\(SELECT value FROM expected WHERE key='([^']*)'\)")


def graded_expected_keys(checks: list[Any]) -> frozenset[str] | None:
    """The expected keys a task's checks read, when every read is ``check_sql.exp(key)`` for
    a literal key; None (every key) when any check reads the table another way."""
    sql = " ".join(c.sql for c in checks)
    if re.search(r"\bexpected\b", _EXP.sub("", sql)):
        return None
    return frozenset(_EXP.findall(sql))


@dataclass
class Observation:
    """What the agent sees after each step (the seed's fields, plus the task name)."""

    task_name: str
    step_number: int
    api_calls_used: int
    api_call_budget: int
    rate_limited_tools: list[str]
    cooldown_steps: dict[str, int]
    case_id: str
    patient_complaint: str
    patient_name: str
    patient_emotional_state: str
    last_action_type: str | None
    last_action_result: dict[str, Any] | None
    last_action_error: str | None
    action_log_summary: list[str]
    step_reward: float
    done: bool

    def model_dump(self) -> dict[str, Any]:
        """A plain dict of the fields. Shallow on purpose: ``dataclasses.asdict`` deep-copies
        the artifact in ``last_action_result`` and was the costliest part of serving a step."""
        return dict(self.__dict__)

    def __getitem__(self, key: str) -> Any:  # obs["case_id"], as HTTP clients index it
        return getattr(self, key)


@dataclass
class StepResult:
    observation: Observation
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)


class ClarusEnv(EnvBase):
    """One billing-dispute task. ``reset(seed)`` starts an episode, ``step(action)`` plays it."""

    def __init__(self, task: str, **kwargs: Any) -> None:
        super().__init__(task, **kwargs)
        self._db: Any = None
        self._cursor: Any = None
        self._cursor_of: Any = None  # the connection ``_cursor`` belongs to
        self._rows: dict[str, list[tuple[Any, ...]]] = {}  # table -> rows not yet written
        self._stale: set[str] = set()  # tables holding the previous episode's rows
        self._facts: list[str] = []  # scenario tables not yet written this episode
        self._fresh = False  # the episode has written nothing yet (the last one's rows stand)
        self._committed = False
        self._tools = sorted(self.task.cooldowns)
        self._cooldowns = self.task.cooldowns
        self._budget = self.task.api_call_budget
        self._graded = graded_tables(self.task.checks)
        # grading writes only the columns some check names (the rest NULL: a step's JSON
        # parameters, message bodies, ...); ``_unwritten`` holds those rows whole, (table,
        # rows, rowids), until a reader of env.db has them filled in
        self._keep = graded_columns([c.sql for c in self.task.checks])
        self._unwritten: list[tuple[str, list[tuple[Any, ...]], list[int]]] = []
        # likewise the expected rows no check reads: written, in key order with the others,
        # for a reader of env.db (``_expected_partial``: only the graded ones are in)
        self._expected_keys = graded_expected_keys(self.task.checks)
        self._expected_partial = False
        # action -> its handler, looked up per step without building the method's name
        self._dispatch = _handlers(type(self))

    @property
    def db(self) -> Any:
        """The episode's SQLite connection, with every recorded row written."""
        if self._rows or self._facts or self._fresh or self._unwritten:
            self._write()
        return self._db

    @db.setter
    def db(self, value: Any) -> None:
        self._db = value

    def _put(self, table: str, row: tuple[Any, ...]) -> None:
        rows = self._rows.get(table)
        if rows is None:
            self._rows[table] = [row]
        else:
            rows.append(row)

    def _write(self, only: frozenset[str] | None = None) -> None:
        """Write the buffered rows — of the tables in ``only``, or all of them."""
        if self._db is None:
            self._db = new_episode_db()
        db = self._db
        if self._cursor_of is not db:  # one cursor per connection: ``Connection.execute``
            self._cursor, self._cursor_of = db.cursor(), db  # builds one per statement
        cur = self._cursor
        if self._stale and not db.in_transaction:
            self._committed = True  # a reader of env.db committed rows: ROLLBACK won't drop them
        if self._fresh:  # first write of an episode: drop the last one's rows
            # every row of the last episode is in the one open transaction, over the
            # template's empty tables: a single ROLLBACK empties them all (run as SQL, a
            # cached statement, where ``Connection.rollback`` prepares one each time)
            if db.in_transaction:
                cur.execute("ROLLBACK")
            if self._committed:
                for table in sorted(self._stale):
                    cur.execute(f"DELETE FROM {table}")
                self._committed = False
            self._stale = set()
            self._fresh = False
        stale = self._stale
        if self._facts:
            for table in [t for t in self._facts if only is None or t in only]:
                keys = None
                if table == "expected":
                    if only is not None and self._expected_keys is not None:
                        if self._expected_partial:
                            continue
                        keys = self._expected_keys
                        self._expected_partial = True
                    elif self._expected_partial:  # rewritten whole, in key order
                        cur.execute("DELETE FROM expected")
                        self._expected_partial = False
                facts = fact_rows(self.scenario, table, keys)  # type: ignore[arg-type]
                keep = self._keep.get(table) if only is not None else None
                if keep is None:
                    insert_rows(cur, table, facts)
                else:
                    self._unwritten.append((table, facts, insert_columns(cur, table, facts, keep)))
                if keys is None:
                    self._facts.remove(table)
                stale.add(table)
        rows = self._rows
        for table in [t for t in rows if only is None or t in only]:
            pending = rows.pop(table)
            keep = self._keep.get(table) if only is not None else None
            if table == "steps" and (keep is None or 2 in keep):
                # recorded with the parameters as given: JSON-encoded only when written
                pending = [(r[0], r[1], canonical(r[2]), *r[3:]) for r in pending]
            if keep is not None:
                self._unwritten.append((table, pending,
                                        insert_columns(cur, table, pending, keep)))
            elif table == "steps":
                insert_steps(cur, pending)
            else:
                insert_rows(cur, table, pending)
            stale.add(table)
        if self._unwritten and only is None:
            for table, full, rowids in self._unwritten:
                if table == "steps" and 2 not in self._keep[table]:
                    full = [(r[0], r[1], canonical(r[2]), *r[3:]) for r in full]
                fill_columns(cur, table, full, rowids, self._keep[table])
            self._unwritten = []

    # -- episode lifecycle ----------------------------------------------------------------
    def reset(self, seed: int | None = None, *, scenario: dict[str, Any] | None = None
              ) -> Observation:
        """Start an episode for ``seed`` (None: a random seed of the env's split)."""
        scenario = self._begin(seed, scenario)
        self._rows = {}  # a fresh, empty episode database on the same connection, once read
        self._facts = list(FACT_TABLES)
        self._unwritten = []
        self._expected_partial = False
        self._fresh = True
        case = scenario["case"]
        self._case = case
        self._case_fields = (case["case_id"], case["patient_complaint"], case["patient_name"])
        # one pass per list builds its id and (type, key) indexes and the distractor ids
        distractors: set[str] = set()
        self._artifacts, self._by_key = _index(scenario["artifacts"], distractors)
        self._refs, self._ref_by_key = _index(scenario.get("references", []), distractors)
        self._distractors = distractors
        self._last_draft: tuple[Any, ...] | None = None
        self._raised: set[str] = set()
        self._fetched: set[str] = set()
        self._fetched_types: set[str] = set()
        self._paid: set[str] = set()
        self._cooldown = {t: 0 for t in self._tools}  # sorted: the observation shows it so
        self._steps = 0
        self._calls = 0
        self._authenticated = False
        self._emotion = EMOTIONS.index(case["emotional_state"])
        self._errors_in_row = 0
        self._has_diagnosis = False
        self._submitted = False
        self._counters_raised = False
        self._log: list[str] = []
        self._done = False
        self._ending: str | None = None
        self._score: float | None = None
        self._grade: dict[str, Any] | None = None
        return self._observation(None, None, None, 0.0)

    @property
    def state(self) -> dict[str, Any]:
        """Episode bookkeeping only — never the scenario or its expected outcome."""
        return {"episode_id": getattr(self, "episode_id", None), "task": self.task_name,
                "seed": getattr(self, "seed", None), "step_count": self._steps,
                "done": self._done, "score": self._score}

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._cursor = self._cursor_of = None
        self._rows, self._stale, self._facts, self._unwritten = {}, set(), [], []
        self._expected_partial = False
        self._fresh = False  # nothing left to write: env.db is None until a reset

    # -- stepping -------------------------------------------------------------------------
    def step(self, action: Any) -> StepResult:
        if self.scenario is None:
            return self._reject(action, "no episode: call reset() first")
        if self._done:
            return self._reject(action, "the episode is done; call reset() to start another")
        try:
            name, params = validate(action, ACTIONS)
        except ActionError as exc:
            return self._count_error(_action_name(action), str(exc))
        if self._cooldown.get(name, 0) > 0:
            return self._count_error(
                name, f"{name} is rate limited: available again in {self._cooldown[name]} "
                      "step(s)")
        try:
            result, reward = self._dispatch[name](self, params)
        except ActionError as exc:
            return self._count_error(name, str(exc), params)
        self._errors_in_row = 0
        return self._finish(name, params, result, reward, None)

    def _reject(self, action: Any, message: str) -> StepResult:
        """An action that cannot be taken at all: penalty, and nothing else changes."""
        if self.scenario is None:
            raise RuntimeError(message)
        obs = self._observation(_action_name(action), None, message, round(R_ERROR, 6))
        return StepResult(obs, R_ERROR, self._done, self._info())

    def _count_error(self, name: str | None, message: str,
                     params: dict[str, Any] | None = None) -> StepResult:
        self._errors_in_row += 1
        if self._errors_in_row == 3:
            self._set_emotion(self._emotion + 1, "repeated failed actions")
            self._errors_in_row = 0
        return self._finish(name, params or {}, None, R_ERROR, message)

    def _finish(self, name: str | None, params: dict[str, Any], result: dict[str, Any] | None,
                reward: float, error: str | None) -> StepResult:
        # runs on every step: attributes read once into locals, ``_put`` and ``_info`` inlined
        steps = self._steps = self._steps + 1
        calls = self._calls = self._calls + 1
        cooldown = self._cooldown
        for tool, left in cooldown.items():
            if left > 0:
                cooldown[tool] = left - 1
        if error is None and name in self._cooldowns:
            cooldown[name] = self._cooldowns[name]
        row = (steps, name, params,  # JSON-encoded when written
               int(error is None), error, reward, int(self._authenticated), 1)
        rows = self._rows.get("steps")
        if rows is None:
            self._rows["steps"] = [row]
        else:
            rows.append(row)
        if params:
            shown = ", ".join([f"{k}={v / 100:.2f}" if k == "amount" else f"{k}={v}"
                               for k, v in params.items() if not isinstance(v, _NESTED)])
            self._log.append(f"{steps}: {name}({shown[:80]}) "
                             f"{'error' if error else 'ok'} {reward:+.2f}")
        else:
            self._log.append(f"{steps}: {name}() {'error' if error else 'ok'} {reward:+.2f}")
        ending, self._ending = self._ending, None
        if ending is None and calls >= self._budget:
            ending = "budget"
            result = {**(result or {}), "episode_ended": "API call budget exhausted"}
        if ending is not None:
            self._end(ending)
            reward += (self._score or 0.0) + R_DISTRACTOR * self._distractors_read()
            if name == "close_case":
                result = {**(result or {}), "score": self._score}
        # once: the observation and the result carry the same value
        rounded = _ROUNDED.get(reward) if reward else reward
        if rounded is None:
            rounded = _round6(reward)
        obs = self._observation(name, result, error, rounded)
        info: dict[str, Any] = {"episode_id": self.episode_id,
                                "api_calls_remaining": self._budget - calls}
        if self._grade is not None:
            info["grade"] = self._grade
        return StepResult(obs, rounded, self._done, info)

    def _end(self, how: str) -> None:
        self._done = True
        self._put("state", ("ended_by", how))
        self._put("state", ("ended_step", str(self._steps)))
        self._write(self._graded)  # the rest waits for a reader of env.db, if any
        self._grade = grade(self._db, self.task.checks)
        self._score = self._grade["score"]

    def _distractors_read(self) -> int:
        """Distinct distractor records fetched this episode (charged at the end): every id
        the fetched table holds is in ``_fetched``."""
        return len(self._fetched & self._distractors)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"episode_id": self.episode_id,
                                "api_calls_remaining": self._budget - self._calls}
        if self._grade is not None:
            info["grade"] = self._grade
        return info

    def _observation(self, name: str | None, result: dict[str, Any] | None,
                     error: str | None, reward: float) -> Observation:
        """The observation after a step; ``reward`` already rounded to 6 places."""
        case_id, complaint, patient = self._case_fields
        # positional, in field order: keyword matching was a visible share of a step
        return Observation(
            self.task_name, self._steps, self._calls, self._budget, list(self._tools),
            dict(self._cooldown), case_id, complaint, patient, EMOTIONS[self._emotion], name,
            result, error, self._log[-LOG_LINES:], reward, self._done)

    # -- shaping helpers ------------------------------------------------------------------
    def _pay_once(self, kind: str, amount: float) -> float:
        if kind in self._paid:
            return 0.0
        self._paid.add(kind)
        return amount

    def _set_emotion(self, level: int, reason: str) -> float:
        level = max(0, min(len(EMOTIONS) - 1, level))
        if level == self._emotion:
            return 0.0
        calmer = level < self._emotion
        self._emotion = level
        self._put("emotions", (self._steps + 1, EMOTIONS[level], reason))
        return self._pay_once("deescalate", R_DEESCALATE) if calmer else 0.0

    def _phi(self, name: str) -> None:
        if name in PHI_ACTIONS and not self._authenticated:
            self._put("violations", (self._steps + 1, "phi_before_authentication",
                                     f"{name} before authenticate_patient"))
            self._set_emotion(self._emotion + 1, "PHI handled before identity was verified")

    def _check_ids(self, name: str, ids: list[str]) -> None:
        unknown = [i for i in ids if i not in self._artifacts and i not in self._refs]
        if unknown:
            raise ActionError(f"{name}.cited_artifacts: unknown artifact id(s) "
                              f"{', '.join(unknown)}; cite ids returned by earlier actions")

    def _cite(self, kind: str, ids: list[str]) -> int:
        step = self._steps + 1
        uniq = list(dict.fromkeys(ids))
        for i in uniq:
            self._put("citations", (step, kind, i, int(i in self._fetched)))
        return sum(i in self._fetched for i in uniq)

    def _record(self, art: dict[str, Any], kind: str) -> dict[str, Any]:
        self._fetched.add(art["artifact_id"])
        return {"artifact_id": art["artifact_id"], "type": art["type"],
                "party": art.get("party", "reference"), "data": art["data"]}

    # -- actions --------------------------------------------------------------------------
    def _do_authenticate_patient(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        if p["patient_id"] != self._case["patient_id"]:
            raise ActionError("authenticate_patient.patient_id does not match this case's "
                              "patient; verification failed")
        self._put("auth", (self._steps + 1, p["patient_id"], 1))
        self._authenticated = True
        return {"authenticated": True, "patient_id": p["patient_id"]}, \
            self._pay_once("auth", R_AUTH)

    def _fetch(self, name: str, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        atype, key_param = FETCH[name]
        art = self._by_key.get((atype, p[key_param]))
        if art is None:
            raise ActionError(f"{name}: no {atype} found for {key_param}={p[key_param]!r}")
        self._phi(name)
        aid = art["artifact_id"]
        duplicate = aid in self._fetched
        self._put("fetched", (self._steps + 1, aid, atype, int(duplicate)))
        # a distractor is paid like any record here; its penalty is charged when the
        # episode ends, so the reward of a fetch never tells which records matter
        if duplicate:
            reward = R_DUPLICATE
        elif atype not in self._fetched_types:
            reward = R_NEW_TYPE
        else:
            reward = 0.0
        self._fetched_types.add(atype)
        return self._record(art, "fetch"), reward

    def _lookup_result(self, art: dict[str, Any] | None, kind: str, **keys: Any
                       ) -> dict[str, Any]:
        step = self._steps + 1
        self._put("lookups", (step, kind, keys.get("code_1"), keys.get("code_2"),
                              keys.get("rule"), keys.get("deadline_type"),
                              art["artifact_id"] if art else None))
        if art is None:
            return {"found": False, **{k: v for k, v in keys.items() if v is not None}}
        if art["artifact_id"] not in self._fetched:
            self._put("fetched", (step, art["artifact_id"], art["type"], 0))
        return {"found": True, **self._record(art, kind)}

    def _ncci_ref(self, c1: str, c2: str) -> dict[str, Any] | None:
        return (self._ref_by_key.get(("ncci_edit", f"{c1}/{c2}"))
                or self._ref_by_key.get(("ncci_edit", f"{c2}/{c1}")))

    def _do_lookup_procedure_code(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        code = p["code"].upper()
        paired = p.get("paired_code", "").upper() or None
        if paired:
            art = self._ncci_ref(code, paired)
        else:
            art = self._ref_by_key.get(("code_reference", code))
        return self._lookup_result(art, "code", code_1=code, code_2=paired), 0.0

    def _do_check_regulatory_rule(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        rule = p["rule"]
        if rule == "ncci_ptp":
            if not p.get("code_1") or not p.get("code_2"):
                raise ActionError("check_regulatory_rule: rule ncci_ptp needs code_1 and code_2")
            c1, c2 = p["code_1"].upper(), p["code_2"].upper()
            art = self._ncci_ref(c1, c2)
            return self._lookup_result(art, "rule", rule=rule, code_1=c1, code_2=c2), 0.0
        art = self._ref_by_key.get(("regulation", rule))
        return self._lookup_result(art, "rule", rule=rule), 0.0

    def _do_check_deadline(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        art = self._ref_by_key.get(("deadline", p["deadline_type"]))
        result = self._lookup_result(art, "deadline", deadline_type=p["deadline_type"])
        reward = self._pay_once("deadline", R_DEADLINE) if art and not self._submitted else 0.0
        return result, reward

    def _do_write_diagnosis(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        if p["finding"] not in self.task.findings:
            raise ActionError(f"write_diagnosis.finding must be one of "
                              f"{', '.join(self.task.findings)}; got {p['finding']!r}")
        self._check_ids("write_diagnosis", p["cited_artifacts"])
        step = self._steps + 1
        self._put("diagnoses", (step, p["responsible_party"], p["finding"], p.get("amount"),
                                p.get("summary")))
        n = self._cite("diagnosis", p["cited_artifacts"])
        self._has_diagnosis = True
        reward = self._pay_once("diagnosis", R_DIAGNOSIS) if n >= 2 else 0.0
        return {"diagnosis_recorded": True, "cited_fetched_artifacts": n}, reward

    def _do_draft_resolution(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        reason = p.get("appeal_reason")
        if reason is not None and reason not in self.task.appeal_reasons:
            allowed = ", ".join(self.task.appeal_reasons) or "none for this task"
            raise ActionError(f"draft_resolution.appeal_reason must be one of {allowed}; "
                              f"got {reason!r}")
        self._check_ids("draft_resolution", p["cited_artifacts"])
        step = self._steps + 1
        self._put("drafts", (step, p["resolution_type"], p.get("amount"), reason,
                             p.get("body")))
        self._last_draft = (step, p["resolution_type"], p.get("amount"), reason)
        self._cite("draft", p["cited_artifacts"])
        return {"draft_id": f"DRAFT-{step}", "resolution_type": p["resolution_type"]}, 0.0

    def _do_submit_resolution(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        row = self._last_draft  # the latest draft (one per step at most)
        if row is None:
            raise ActionError("submit_resolution: nothing to submit; call draft_resolution first")
        step = self._steps + 1
        self._put("submissions", (step, *row))
        if row[1] == "withdraw_dispute":
            self._put("state", ("withdrawn", str(step)))
        self._submitted = True
        result: dict[str, Any] = {"submission_id": f"SUB-{step}", "status": "filed",
                                  "resolution_type": row[1]}
        counters = self.scenario.get("counters", []) if self.scenario else []
        # counter-arguments answer a dispute: a withdrawal or a "no action" filing raises none
        if counters and not self._counters_raised and row[1] not in ("withdraw_dispute",
                                                                       "no_action"):
            self._counters_raised = True
            for c in counters:
                self._put("counters", (c["counter_id"], c["kind"], step))
                self._raised.add(c["counter_id"])
            result["counter_arguments"] = [
                {"counter_id": c["counter_id"], "from": c["from"], "text": c["text"]}
                for c in counters]
        return result, 0.0

    def _do_send_patient_communication(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        self._phi("send_patient_communication")
        self._put("messages", (self._steps + 1, "patient", p["message_type"], None,
                               p["message"]))
        reward = 0.0
        if self._has_diagnosis and p["message_type"] != "information_request":
            reward = self._set_emotion(self._emotion - 1, "the patient was told what was found")
        return {"delivered": True, "patient_emotional_state": EMOTIONS[self._emotion]}, reward

    def _do_notify_provider(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        ids = p.get("cited_artifacts", [])
        self._check_ids("notify_provider", ids)
        step = self._steps + 1
        self._put("messages", (step, "provider", None, p.get("position"), p["message"]))
        self._cite("provider_notice", ids)
        if p.get("position") == "withdraw":
            self._put("state", ("withdrawn", str(step)))
        return {"delivered": True}, 0.0

    def _do_reject_counter_argument(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        cid = p["counter_id"]
        if cid not in self._raised:
            raise ActionError(f"reject_counter_argument.counter_id {cid!r} has not been raised "
                              "in this case")
        self._check_ids("reject_counter_argument", p["cited_artifacts"])
        decision = p.get("decision", "reject")
        step = self._steps + 1
        self._put("counter_responses", (step, cid, decision, p.get("rationale")))
        self._cite(f"counter:{cid}", p["cited_artifacts"])
        if decision == "concede":
            self._put("state", ("conceded", str(step)))
        return {"counter_id": cid, "decision": decision}, 0.0

    def _do_write_audit_entry(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        self._put("audit", (self._steps + 1, p["summary"]))
        return {"audit_recorded": True}, self._pay_once("audit", R_AUDIT)

    def _do_close_case(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        self._ending = "close_case"  # graded once the step itself is on record
        return {"closed": True}, 0.0


for _name in FETCH:
    setattr(ClarusEnv, "_do_" + _name,
            lambda self, p, _n=_name: ClarusEnv._fetch(self, _n, p))


_HANDLERS: dict[type, dict[str, Any]] = {}

# reward -> round(reward, 6): a step's reward is one of a few sums (shaping amounts, the
# error penalty), and ``round`` to 6 places formats and parses the float's digits (~1 µs a
# step). Zero is never looked up (0.0 and -0.0 are one key but round to themselves); other
# equal floats are the same value, so the memo returns exactly what ``round`` would
_ROUNDED: dict[float, float] = {}


def _round6(reward: float) -> float:
    rounded = round(reward, 6)
    if len(_ROUNDED) < 4096:  # scores make each final reward new: keep the memo small
        _ROUNDED[reward] = rounded
    return rounded


def _handlers(cls: type) -> dict[str, Any]:
    """action name -> ``cls``'s ``_do_<name>`` function (called with the env), built once per
    class: ``getattr(self, "_do_" + name)`` built a string and a bound method every step. Kept
    per class, not per instance, so an env holds no reference cycle through its handlers."""
    table = _HANDLERS.get(cls)
    if table is None:
        table = _HANDLERS[cls] = {n: getattr(cls, "_do_" + n) for n in ACTIONS}
    return table


def _index(records: list[dict[str, Any]], distractors: set[str]
           ) -> tuple[dict[str, Any], dict[tuple[Any, Any], Any]]:
    """``records`` by artifact id and by (type, key), a later record replacing an earlier one
    as a dict comprehension would; the ids of distractor records are added to
    ``distractors``. One loop, where a comprehension per index walked the list five times."""
    by_id: dict[str, Any] = {}
    by_key: dict[tuple[Any, Any], Any] = {}
    for a in records:
        aid = a["artifact_id"]
        by_id[aid] = a
        by_key[(a["type"], a["key"])] = a
        if a.get("distractor"):
            distractors.add(aid)
    return by_id, by_key


def _action_name(action: Any) -> str | None:
    if isinstance(action, dict) and isinstance(action.get("action_type"), str):
        return action["action_type"][:64]
    return None


def make(task: str, **kwargs: Any) -> Any:
    """``clarus_env.make(task)``: the environment for any of the four tasks."""
    if task == "medical_coding":
        from .coding_env import CodingEnv

        return CodingEnv(task, **kwargs)
    return ClarusEnv(task, **kwargs)
