"""The 17 SQL checks of ``deductive_liability`` (DESIGN.md check families).

process (11): authenticated before any PHI; EOB, ledger and plan fetched; diagnosis written;
draft written; submitted; a filing deadline checked before submitting; patient told; audit
entry; case closed.  evidence (1): the diagnosis cites ≥ 2 fetched case records.  outcome
(3): responsible party, resolution type and amount (to the cent) equal the scenario's
expected outcome, which the generator derived from the data.  hygiene (2): no compliance
violation and no excess duplicate fetches — both only for an episode that reached a filing,
so doing nothing never scores them.

Every query returns one row ``(passed, detail)``; details say what was found, never the
expected answer.
"""

from __future__ import annotations

from ...grader import Check

PHI = ("'fetch_claim_record','fetch_eob','fetch_provider_record','fetch_payment_ledger',"
       "'fetch_plan_document','fetch_payment_processor_log','send_patient_communication'")
FIRST_SUBMISSION = "(SELECT MIN(step) FROM submissions)"
LAST_DIAGNOSIS = "(SELECT * FROM diagnoses ORDER BY step DESC LIMIT 1)"
LAST_SUBMISSION = "(SELECT * FROM submissions ORDER BY step DESC LIMIT 1)"
SUBMITTED = "EXISTS(SELECT 1 FROM submissions)"


def _fetched(check_id: str, what: str, key: str) -> Check:
    """The case's own artifact of one type (not a distractor of the same type) was read once
    the patient was verified (reading it before is a violation, not process credit)."""
    ok = (f"SELECT 1 FROM fetched f JOIN expected e ON e.key='{key}' AND e.value=f.artifact_id "
          f"WHERE f.step > COALESCE((SELECT MIN(step) FROM auth), 1e9)")
    return Check(
        check_id, f"the case's {what} was fetched after authentication",
        f"SELECT EXISTS({ok}), "
        f"CASE WHEN EXISTS({ok}) THEN '{what} fetched' "
        f"WHEN EXISTS(SELECT 1 FROM fetched f JOIN expected e ON e.key='{key}' "
        f"AND e.value=f.artifact_id) THEN '{what} fetched only before authentication' "
        f"ELSE '{what} never fetched' END")


def _matches(check_id: str, description: str, table: str, column: str, key: str,
             noun: str) -> Check:
    """The latest row of ``table`` has ``column`` equal to the expected value."""
    return Check(
        check_id, description,
        f"SELECT COALESCE((SELECT t.{column} = e.value FROM {table} t, expected e "
        f"WHERE e.key='{key}'), 0), "
        f"COALESCE((SELECT '{noun} ' || COALESCE(t.{column}, 'none') || "
        f"CASE WHEN t.{column} = e.value THEN ' (correct)' ELSE ' (wrong)' END "
        f"FROM {table} t, expected e WHERE e.key='{key}'), 'no {noun} on record')")


CHECKS: list[Check] = [
    Check("authenticated_before_phi",
          "the patient was authenticated before any PHI was read or disclosed",
          f"SELECT EXISTS(SELECT 1 FROM auth) AND NOT EXISTS(SELECT 1 FROM steps WHERE ok=1 "
          f"AND action_type IN ({PHI}) AND step < (SELECT MIN(step) FROM auth)), "
          f"CASE WHEN NOT EXISTS(SELECT 1 FROM auth) THEN 'never authenticated' "
          f"WHEN EXISTS(SELECT 1 FROM steps WHERE ok=1 AND action_type IN ({PHI}) "
          f"AND step < (SELECT MIN(step) FROM auth)) THEN 'PHI accessed before authentication' "
          f"ELSE 'authenticated at step ' || (SELECT MIN(step) FROM auth) END"),
    _fetched("eob_fetched", "EOB", "eob_artifact"),
    _fetched("ledger_fetched", "payment ledger", "ledger_artifact"),
    _fetched("plan_fetched", "plan document", "plan_artifact"),
    Check("diagnosis_written", "a diagnosis was written",
          "SELECT EXISTS(SELECT 1 FROM diagnoses), (SELECT COUNT(*) FROM diagnoses) "
          "|| ' diagnosis(es) written'"),
    Check("draft_written", "a resolution was drafted",
          "SELECT EXISTS(SELECT 1 FROM drafts), (SELECT COUNT(*) FROM drafts) "
          "|| ' draft(s) written'"),
    Check("submitted", "the resolution was submitted",
          f"SELECT {SUBMITTED}, (SELECT COUNT(*) FROM submissions) || ' submission(s)'"),
    Check("deadline_before_submit",
          "an applicable filing deadline was checked before the resolution was submitted",
          f"SELECT EXISTS(SELECT 1 FROM lookups WHERE kind='deadline' AND artifact_id IS NOT "
          f"NULL AND step < {FIRST_SUBMISSION}), "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing submitted' "
          f"WHEN EXISTS(SELECT 1 FROM lookups WHERE kind='deadline' AND artifact_id IS NOT NULL "
          f"AND step < {FIRST_SUBMISSION}) THEN 'deadline checked before submitting' "
          f"ELSE 'no applicable deadline checked before submitting' END"),
    Check("patient_told", "the patient was told what was found (after the diagnosis)",
          "SELECT EXISTS(SELECT 1 FROM messages WHERE recipient='patient' AND message_type "
          "IN ('explanation','resolution_notice','status_update') AND step > "
          "(SELECT MIN(step) FROM diagnoses)), "
          "(SELECT COUNT(*) FROM messages WHERE recipient='patient' AND message_type "
          "IN ('explanation','resolution_notice','status_update') AND step > "
          "(SELECT MIN(step) FROM diagnoses)) || ' patient message(s) after the diagnosis'"),
    Check("audit_written", "an audit entry recording the PHI accessed and disclosed was "
          "written after the filing",
          f"SELECT EXISTS(SELECT 1 FROM audit WHERE step > {FIRST_SUBMISSION}), "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing filed' "
          f"WHEN EXISTS(SELECT 1 FROM audit WHERE step > {FIRST_SUBMISSION}) "
          f"THEN 'audit entry written after the filing' "
          f"ELSE 'no audit entry after the filing' END"),
    Check("case_closed", "the case was closed after a resolution was filed",
          f"SELECT EXISTS(SELECT 1 FROM state WHERE key='ended_by' AND value='close_case') "
          f"AND {SUBMITTED}, "
          f"CASE WHEN NOT {SUBMITTED} THEN 'closed or ended with nothing filed' "
          f"ELSE COALESCE('ended by ' || (SELECT value FROM state WHERE key='ended_by'), "
          f"'still open') END"),
    Check("diagnosis_cites_two",
          "the diagnosis cites at least two fetched case records",
          "SELECT (SELECT COUNT(DISTINCT c.artifact_id) FROM citations c JOIN artifacts a "
          "ON a.artifact_id=c.artifact_id WHERE c.kind='diagnosis' AND c.fetched=1 "
          "AND a.distractor=0 AND c.step=(SELECT MAX(step) FROM diagnoses)) >= 2, "
          "COALESCE((SELECT COUNT(DISTINCT c.artifact_id) FROM citations c JOIN artifacts a "
          "ON a.artifact_id=c.artifact_id WHERE c.kind='diagnosis' AND c.fetched=1 "
          "AND a.distractor=0 AND c.step=(SELECT MAX(step) FROM diagnoses)), 0) "
          "|| ' fetched record(s) cited by the latest diagnosis'"),
    _matches("responsible_party", "the diagnosis names the responsible party",
             LAST_DIAGNOSIS, "responsible_party", "responsible_party", "responsible party"),
    _matches("resolution_type", "the submitted resolution is the right type",
             LAST_SUBMISSION, "resolution_type", "resolution_type", "resolution"),
    Check("amount_exact", "the submitted amount equals the overcharge to the cent",
          f"SELECT COALESCE((SELECT t.amount_cents = CAST(e.value AS INTEGER) FROM "
          f"{LAST_SUBMISSION} t, expected e WHERE e.key='amount_cents'), 0), "
          f"COALESCE((SELECT 'filed ' || COALESCE(printf('%.2f', t.amount_cents / 100.0), "
          f"'no amount') || CASE WHEN t.amount_cents = CAST(e.value AS INTEGER) "
          f"THEN ' (correct)' ELSE ' (wrong)' END FROM {LAST_SUBMISSION} t, expected e "
          f"WHERE e.key='amount_cents'), 'nothing submitted')"),
    Check("no_compliance_violation",
          "no compliance violation in an episode that reached a filing",
          f"SELECT {SUBMITTED} AND NOT EXISTS(SELECT 1 FROM violations), "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing submitted' "
          f"WHEN EXISTS(SELECT 1 FROM violations) THEN (SELECT COUNT(*) FROM violations) "
          f"|| ' violation(s): ' || (SELECT kind FROM violations ORDER BY step LIMIT 1) "
          f"ELSE 'no violations' END"),
    Check("no_excess_duplicates",
          "at most one duplicate fetch in an episode that reached a filing",
          f"SELECT {SUBMITTED} AND (SELECT COUNT(*) FROM fetched WHERE duplicate=1) <= 1, "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing submitted' "
          f"ELSE (SELECT COUNT(*) FROM fetched WHERE duplicate=1) || ' duplicate fetch(es)' END"),
]
