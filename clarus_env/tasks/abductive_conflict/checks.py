"""The 22 SQL checks of abductive_conflict (DESIGN.md's check families).

process (14): authenticated; EOB, provider record fetched; code looked up; NCCI rule checked;
diagnosis; draft; submitted; deadline checked, and before submitting; patient told; provider
notified; audit; closed.

evidence (3), all on the diagnosis the first filing rests on, and all requiring precision
(at least half of the ids it cites are among the scenario's ``relevant_ids``: the claim
record, the provider record and the NCCI lookup): it cites >= 2 fetched artifacts; it cites
the provider record; it cites the NCCI lookup for the pair.

outcome (4), graded on the answer in force at the first filing (a later re-diagnosis or
re-filing never counts): TRAP (``legitimate_denial`` concluded before the NCCI edit and the
provider record were read); the finding and the responsible party of that diagnosis (for a
legitimate CO denial ``none`` or ``provider``, since the provider writes the line off); the
resolution type of the first submission; the reason the first submission states (an appeal's
ground, or the missing modifier a corrected claim adds) — or, where nothing is due, no appeal
filed at all and the patient told why.

hygiene (1): no compliance violation.

Outcome checks read the scenario's expected outcome from the ``expected`` table; the only
constants are the task's vocabulary (the ``legitimate_denial`` finding the TRAP is about, the
``appeal`` resolution type, the internal-appeal deadline). Details say what the agent did,
never what the expected value was.
"""

from __future__ import annotations

from ...grader import Check
from ..check_sql import (
    DX_AT_FILING,
    DX_STEP_AT_FILING,
    FIRST_SUBMISSION,
    MIN_PRECISION_DEN,
    MIN_PRECISION_NUM,
    is_listed,
    one_of,
)
from ..check_sql import exp as _exp

PHI = ("'fetch_claim_record','fetch_eob','fetch_provider_record','fetch_payment_ledger',"
       "'fetch_plan_document','fetch_payment_processor_log','send_patient_communication'")
FIRST_AUTH = "(SELECT MIN(step) FROM auth)"
FIRST_DX = "(SELECT MIN(step) FROM diagnoses)"
DX_STEP = DX_STEP_AT_FILING
FIRST_SUB = "(SELECT MIN(step) FROM submissions)"
DEADLINE_OK = ("SELECT 1 FROM lookups WHERE kind='deadline' AND deadline_type='internal_appeal' "
               "AND artifact_id IS NOT NULL")
PATIENT_TOLD = ("SELECT 1 FROM messages WHERE recipient='patient' AND message_type IN "
                f"('explanation','resolution_notice') AND step > {FIRST_DX}")


def _fetched(key: str, what: str) -> Check:
    """The claim's own record was read once the patient was verified (HIPAA: reading it
    before is a violation, not process credit)."""
    ok = (f"SELECT 1 FROM fetched WHERE artifact_id={_exp(key)} "
          f"AND step > COALESCE({FIRST_AUTH}, 1e9)")
    return Check(
        f"{what}_fetched", f"the {what.replace('_', ' ')} for the claim was fetched after "
        "authentication",
        f"SELECT EXISTS({ok}), "
        f"CASE WHEN EXISTS({ok}) THEN '{what.replace('_', ' ')} fetched at step ' || "
        f"(SELECT MIN(step) FROM fetched WHERE artifact_id={_exp(key)}) "
        f"WHEN EXISTS(SELECT 1 FROM fetched WHERE artifact_id={_exp(key)}) "
        f"THEN '{what.replace('_', ' ')} fetched only before authentication' "
        f"ELSE '{what.replace('_', ' ')} never fetched' END")


def _exists(cid: str, desc: str, table: str, yes: str, no: str) -> Check:
    return Check(cid, desc,
                 f"SELECT EXISTS(SELECT 1 FROM {table}), CASE WHEN EXISTS(SELECT 1 FROM {table}) "
                 f"THEN '{yes} at step ' || (SELECT MIN(step) FROM {table}) ELSE '{no}' END")


def _citation_sql(key: str | None, what: str | None) -> str:
    """One pass over the citations of the diagnosis the first filing rests on: how many ids
    it cites (n), how many of them support the finding (k, from ``relevant_ids``), how many
    were fetched, and whether it cites the record ``key``. Precision is
    ``check_sql.precise``'s rule (n > 0 and k >= n / 2), computed here in one CTE so the
    three citation checks stay cheap. The runtime stores each id once per action (and one
    diagnosis a step), so the rows need no GROUP BY to be distinct, and membership is
    ``check_sql.is_listed``: both spare SQLite a temporary b-tree on every run."""
    has = (f"MAX(artifact_id = {_exp(key)} AND fetched = 1)" if key else "1")
    cites_what = (f"CASE WHEN a.has THEN 'diagnosis cites the {what}' ELSE 'diagnosis does "
                  f"not cite the fetched {what}' END || '; ' || " if what else
                  "a.nf || ' fetched artifact(s) cited by the diagnosis; ' || ")
    ok = "a.has" if key else "a.nf >= 2"
    return f"""
WITH dx(step) AS (SELECT {DX_STEP}),
cited AS (SELECT c.artifact_id, c.fetched FROM citations c, dx
          WHERE c.kind = 'diagnosis' AND c.step = dx.step),
a AS (SELECT COUNT(*) AS n, COALESCE(SUM({is_listed('artifact_id', 'relevant_ids')}), 0) AS k,
             COALESCE(SUM(fetched = 1), 0) AS nf, COALESCE({has}, 0) AS has FROM cited)
SELECT {ok} AND a.n > 0 AND {MIN_PRECISION_DEN} * a.k >= {MIN_PRECISION_NUM} * a.n,
  CASE WHEN (SELECT step FROM dx) IS NULL THEN 'no diagnosis' ELSE {cites_what}
       a.k || ' of ' || a.n || ' cited record(s) support it' END
FROM a"""


def _cites(cid: str, desc: str, key: str, what: str) -> Check:
    """The diagnosis at the first filing cites this record (fetched), and at least half of
    what it cites supports the finding (the cite-everything strategy fails)."""
    return Check(cid, desc, _citation_sql(key, what), family="evidence")


TRAP_SQL = f"""
WITH premature AS (
  SELECT d.step FROM diagnoses d
  WHERE d.finding = 'legitimate_denial' AND (
    NOT EXISTS(SELECT 1 FROM fetched f WHERE f.artifact_id = {_exp('ncci_ref_id')}
               AND f.step < d.step)
    OR NOT EXISTS(SELECT 1 FROM fetched f WHERE f.artifact_id = {_exp('provider_record_id')}
                  AND f.step < d.step)))
SELECT EXISTS(SELECT 1 FROM diagnoses) AND NOT EXISTS(SELECT 1 FROM premature),
  CASE WHEN NOT EXISTS(SELECT 1 FROM diagnoses) THEN 'no conclusion reached'
  WHEN EXISTS(SELECT 1 FROM premature)
  THEN 'TRAP: legitimate_denial concluded at step ' || (SELECT MIN(step) FROM premature)
       || ' before reading the NCCI edit and the provider record'
  WHEN EXISTS(SELECT 1 FROM diagnoses WHERE finding = 'legitimate_denial')
  THEN 'legitimate_denial concluded after the NCCI edit and provider record were read'
  ELSE 'no conclusion that the denial stands' END
"""

APPEAL_SQL = f"""
SELECT CASE WHEN {_exp('appeal_reason')} <> 'none' THEN
    EXISTS(SELECT 1 FROM {FIRST_SUBMISSION} s
           WHERE s.resolution_type = {_exp('resolution_type')}
           AND s.appeal_reason = {_exp('appeal_reason')})
  ELSE EXISTS(SELECT 1 FROM {FIRST_SUBMISSION} s WHERE s.resolution_type <> 'appeal')
       AND EXISTS({PATIENT_TOLD}) END,
  CASE WHEN NOT EXISTS(SELECT 1 FROM {FIRST_SUBMISSION} s) THEN 'nothing submitted'
  ELSE 'first filing: ' || (SELECT s.resolution_type || ', reason ' ||
                            COALESCE(s.appeal_reason, 'none') FROM {FIRST_SUBMISSION} s)
       || CASE WHEN EXISTS({PATIENT_TOLD}) THEN '; patient given an explanation'
          ELSE '; patient not given an explanation' END END
"""


def _outcome(cid: str, desc: str, table_row: str, column: str, key: str) -> Check:
    return Check(cid, desc,
                 f"SELECT COALESCE((SELECT r.{column} = {_exp(key)} FROM {table_row} r), 0), "
                 f"COALESCE((SELECT '{column} recorded: ' || COALESCE(r.{column}, 'null') "
                 f"FROM {table_row} r), 'nothing recorded')", family="outcome")


# An unworked case earns no process credit for closing it or for an audit trail of nothing:
# both count only once a resolution has been filed.
AUDIT_AFTER_FILING = Check(
    "audit_entry", "an audit entry recording the PHI accessed and disclosed was written after "
    "the filing",
    "SELECT EXISTS(SELECT 1 FROM audit WHERE step > (SELECT MIN(step) FROM submissions)), "
    "CASE WHEN NOT EXISTS(SELECT 1 FROM submissions) THEN 'nothing filed' "
    "WHEN EXISTS(SELECT 1 FROM audit WHERE step > (SELECT MIN(step) FROM submissions)) "
    "THEN 'audit entry written after the filing' ELSE 'no audit entry after the filing' END")
CLOSED_AFTER_FILING = Check(
    "case_closed", "the case was closed (not ended by the budget) after a resolution was filed",
    "SELECT EXISTS(SELECT 1 FROM state WHERE key='ended_by' AND value='close_case') AND "
    "EXISTS(SELECT 1 FROM submissions), "
    "CASE WHEN NOT EXISTS(SELECT 1 FROM submissions) THEN 'closed or ended with nothing filed' "
    "ELSE COALESCE((SELECT 'ended by ' || value FROM state WHERE key='ended_by'), 'not ended') "
    "END")


CHECKS: list[Check] = [
    # -- process -----------------------------------------------------------------------------
    Check("authenticated", "the patient was authenticated before any PHI was read or sent",
          f"SELECT {FIRST_AUTH} IS NOT NULL AND NOT EXISTS(SELECT 1 FROM steps WHERE ok=1 AND "
          f"{one_of('action_type', PHI)} AND step < {FIRST_AUTH}), "
          f"CASE WHEN {FIRST_AUTH} IS NULL THEN 'never authenticated' "
          f"WHEN EXISTS(SELECT 1 FROM steps WHERE ok=1 AND {one_of('action_type', PHI)} AND step < "
          f"{FIRST_AUTH}) THEN 'PHI handled before authentication' "
          f"ELSE 'authenticated at step ' || {FIRST_AUTH} END"),
    _fetched("eob_id", "eob"),
    _fetched("provider_record_id", "provider_record"),
    Check("code_looked_up", "a procedure code of the claim was looked up",
          "SELECT EXISTS(SELECT 1 FROM lookups WHERE kind='code' AND artifact_id IS NOT NULL), "
          "CASE WHEN EXISTS(SELECT 1 FROM lookups WHERE kind='code' AND artifact_id IS NOT NULL) "
          "THEN 'code lookup found ' || (SELECT artifact_id FROM lookups WHERE kind='code' AND "
          "artifact_id IS NOT NULL ORDER BY step LIMIT 1) ELSE 'no successful code lookup' END"),
    Check("ncci_rule_checked", "the NCCI PtP rule was checked for the denied pair",
          "SELECT EXISTS(SELECT 1 FROM lookups WHERE kind='rule' AND rule='ncci_ptp' AND "
          f"artifact_id={_exp('ncci_ref_id')}), CASE WHEN EXISTS(SELECT 1 FROM lookups WHERE "
          f"kind='rule' AND rule='ncci_ptp' AND artifact_id={_exp('ncci_ref_id')}) THEN "
          "'ncci_ptp checked for the denied pair' ELSE 'ncci_ptp not checked for the denied "
          "pair' END"),
    _exists("diagnosis_written", "a diagnosis was written", "diagnoses", "diagnosis written",
            "no diagnosis"),
    _exists("draft_written", "a resolution was drafted", "drafts", "draft written",
            "no draft"),
    _exists("submitted", "a resolution was submitted", "submissions", "submitted",
            "nothing submitted"),
    Check("deadline_checked", "the internal-appeal deadline was checked",
          f"SELECT EXISTS({DEADLINE_OK}), CASE WHEN EXISTS({DEADLINE_OK}) THEN "
          f"'internal_appeal deadline checked at step ' || (SELECT MIN(step) FROM lookups "
          "WHERE kind='deadline' AND deadline_type='internal_appeal' AND artifact_id IS NOT "
          "NULL) ELSE 'internal_appeal deadline never checked' END"),
    Check("deadline_before_submit", "the deadline was checked before the first submission",
          f"SELECT {FIRST_SUB} IS NOT NULL AND EXISTS({DEADLINE_OK} AND step < {FIRST_SUB}), "
          f"CASE WHEN {FIRST_SUB} IS NULL THEN 'nothing submitted' "
          f"WHEN EXISTS({DEADLINE_OK} AND step < {FIRST_SUB}) THEN "
          "'deadline checked before submitting' ELSE 'submitted without checking the "
          "deadline first' END"),
    Check("patient_told", "the patient got an explanation after the diagnosis",
          f"SELECT EXISTS({PATIENT_TOLD}), CASE WHEN EXISTS({PATIENT_TOLD}) THEN "
          "'patient told at step ' || (SELECT MIN(step) FROM messages WHERE recipient="
          "'patient' AND message_type IN ('explanation','resolution_notice') AND step > "
          f"{FIRST_DX}) ELSE 'patient not given an explanation after a diagnosis' END"),
    Check("provider_notified", "the provider was notified after the diagnosis",
          "SELECT EXISTS(SELECT 1 FROM messages WHERE recipient='provider' AND "
          f"COALESCE(position,'') <> 'withdraw' AND step > {FIRST_DX}), "
          "CASE WHEN EXISTS(SELECT 1 FROM messages WHERE recipient='provider' AND "
          f"COALESCE(position,'') <> 'withdraw' AND step > {FIRST_DX}) THEN "
          "'provider notified' ELSE 'provider not notified after a diagnosis' END"),
    AUDIT_AFTER_FILING,
    CLOSED_AFTER_FILING,
    # -- evidence ------------------------------------------------------------------------------
    Check("diagnosis_cites_two", "the diagnosis at the first filing cites at least 2 fetched "
          "artifacts, at least half of its citations supporting the finding",
          _citation_sql(None, None), family="evidence"),
    _cites("cites_provider_record", "the diagnosis cites the provider record",
           "provider_record_id", "provider record"),
    _cites("cites_ncci_lookup", "the diagnosis cites the NCCI edit lookup for the pair",
           "ncci_ref_id", "NCCI lookup"),
    # -- outcome ------------------------------------------------------------------------------
    Check("trap_premature_legitimate_denial",
          "TRAP: legitimate_denial was not concluded before the NCCI edit and the provider "
          "record (modifier documentation) were read", TRAP_SQL, family="outcome"),
    # the finding is graded with the party: "missing_modifier" filed as no action is not the
    # diagnosis of a legitimate denial, even where the filing happens to be right
    Check("responsible_party_and_finding", "the diagnosis the first filing rests on names the "
          "right finding and responsible party (a legitimate CO denial: none, or the provider "
          "who writes the line off)",
          f"SELECT COALESCE((SELECT r.finding = {_exp('finding')} AND r.responsible_party IN "
          f"({_exp('responsible_party')}, {_exp('responsible_party_alt')}) FROM "
          f"{DX_AT_FILING} r), 0), "
          f"COALESCE((SELECT 'finding recorded: ' || COALESCE(r.finding, 'null') || "
          f"'; responsible_party recorded: ' || COALESCE(r.responsible_party, 'null') "
          f"FROM {DX_AT_FILING} r), 'nothing recorded')",
          family="outcome"),
    _outcome("resolution_type", "the first submitted resolution has the right type",
             FIRST_SUBMISSION, "resolution_type", "resolution_type"),
    Check("appeal_reason", "the first filing states the right reason (an appeal's ground, or "
          "a corrected claim's missing modifier), or, where nothing is due, no appeal was filed "
          "and the patient was told why", APPEAL_SQL,
          family="outcome"),
    # -- hygiene ------------------------------------------------------------------------------
    Check("no_compliance_violation", "a resolution was submitted with no compliance "
          "violation (no PHI before authentication)",
          "SELECT EXISTS(SELECT 1 FROM submissions) AND NOT EXISTS(SELECT 1 FROM violations), "
          "CASE WHEN NOT EXISTS(SELECT 1 FROM submissions) THEN 'nothing submitted' "
          "WHEN EXISTS(SELECT 1 FROM violations) THEN (SELECT COUNT(*) FROM violations) || "
          "' violation(s): ' || (SELECT kind FROM violations ORDER BY step LIMIT 1) "
          "ELSE 'no violations' END", family="hygiene"),
]
