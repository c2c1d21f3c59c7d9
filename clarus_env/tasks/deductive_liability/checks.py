"""The 17 SQL checks of ``deductive_liability`` (DESIGN.md check families).

process (11): authenticated before any PHI; the case's EOB, ledger and plan fetched after
authentication; diagnosis written; draft written; submitted; a filing deadline checked before
submitting; patient told (after the diagnosis); audit entry after the filing; case closed
after a filing.  Where nothing is wrong (finding ``no_error``) the filing is the ``no_action``
closure — the advocate records that the bill stands and files nothing with any party — so
"draft written", "submitted", "deadline checked before submitting", "audit after the filing"
and "closed after a filing" verify that closure instead of a refund or correction.

evidence (1): the diagnosis the first filing rests on cites ≥ 2 fetched case records, cites
every record in ``decisive_ids`` (the record(s) without which this scenario's finding cannot be
seen: the processor log for a duplicate card capture, the ledger for a doubled posting, the
plan and the EOB for an insurer's cost-sharing error, ...), and at least half of everything it
cites is in ``relevant_ids`` (the records that show this finding) — so one fixed citation
cannot pass in every branch, and citing every id seen fails.

outcome (3), all graded on the answer in force at the first filing (later re-diagnoses or
re-filings after feedback do not count): ``responsible_party`` — that diagnosis names the
expected party *and* an accepted finding (``accepted_findings``: the finding, plus
``balance_billing`` where a provider statement took coinsurance on the billed charge, and
``duplicate_charge`` for a charge line posted twice);
``resolution_type`` — the first filing's type is an accepted one (``accepted_resolutions``:
``claim_reprocessing`` or ``appeal`` for an insurer's error; ``no_action`` where nothing is
wrong, so a refund or correction filed on a correct bill fails); ``amount_exact`` — the first
filing's amount equals ``amount_cents`` to the cent (the
overcharge; where nothing is wrong, the patient's correct share of the visit), or the first
filing's (type, amount) is one of ``amount_alternatives`` (a duplicate payment the practice's
policy splits between the open balance and a refund: the part each filing covers).

hygiene (2): no compliance violation and no excess duplicate fetches — both only for an
episode that reached a filing, so doing nothing never scores them.

Every query returns one row ``(passed, detail)``; details say what the agent did, never the
expected answer.
"""

from __future__ import annotations

from ...grader import Check
from ..check_sql import (
    DX_AT_FILING,
    DX_STEP_AT_FILING,
    FIRST_SUBMISSION,
    exp,
    is_listed,
    one_of,
    precise,
    precision_detail,
)

PHI = ("'fetch_claim_record','fetch_eob','fetch_provider_record','fetch_payment_ledger',"
       "'fetch_plan_document','fetch_payment_processor_log','send_patient_communication'")
FIRST_SUBMISSION_STEP = "(SELECT MIN(step) FROM submissions)"
SUBMITTED = "EXISTS(SELECT 1 FROM submissions)"
# a filing as 'type:cents'; NULL without an amount, where ``is_listed`` gives 0 and the IN it
# replaced gave NULL: ``amount_exact`` reads either through COALESCE(..., 0) as a fail
FILED_PAIR = "(s.resolution_type || ':' || s.amount_cents)"
# a patient message that tells what was found
TELLS = one_of("message_type", "'explanation','resolution_notice','status_update'")


def _fetched(check_id: str, what: str, key: str) -> Check:
    """The case's own artifact of one type (not a distractor of the same type) was read once
    the patient was verified (reading it before is a violation, not process credit)."""
    # the id read as ``exp(key)`` (the same rows as a join on the keyed ``expected`` table):
    # when every check reads ``expected`` that way, grading writes only the keys they name
    ok = (f"SELECT 1 FROM fetched f WHERE f.artifact_id = {exp(key)} "
          f"AND f.step > COALESCE((SELECT MIN(step) FROM auth), 1e9)")
    return Check(
        check_id, f"the case's {what} was fetched after authentication",
        f"SELECT EXISTS({ok}), "
        f"CASE WHEN EXISTS({ok}) THEN '{what} fetched' "
        f"WHEN EXISTS(SELECT 1 FROM fetched f WHERE f.artifact_id = {exp(key)}) "
        f"THEN '{what} fetched only before authentication' "
        f"ELSE '{what} never fetched' END")


# ``diagnosis_cites_two`` reads the step of the diagnosis in force at filing (``dx.s``) and the
# count below (``dx.n``) from one FROM row, computed once (as text in place they ran 7 and 2
# times a grade)
DX_ROW = f"(SELECT s, {{cited}} AS n FROM (SELECT {DX_STEP_AT_FILING} AS s) dx) dx"
# distinct fetched case records (not distractors) the diagnosis in force at the filing cites:
# the runtime stores each id once per action, and ``artifact_id`` is the artifacts' key, so
# plain COUNT(*) counts distinct ids (COUNT(DISTINCT) built a temporary b-tree every grade)
CASE_CITED = ("(SELECT COUNT(*) FROM citations c JOIN artifacts a "
              "ON a.artifact_id=c.artifact_id WHERE c.kind='diagnosis' AND c.fetched=1 "
              "AND a.distractor=0 AND c.step=dx.s)")


# every decisive record of the finding is cited (fetched) by the diagnosis in force at filing
DECISIVE_CITED = (f"NOT EXISTS(SELECT 1 FROM json_each({exp('decisive_ids')}) j WHERE NOT "
                  "EXISTS(SELECT 1 FROM citations c WHERE c.artifact_id = j.value AND "
                  "c.kind='diagnosis' AND c.fetched=1 AND c.step=dx.s))")

CHECKS: list[Check] = [
    Check("authenticated_before_phi",
          "the patient was authenticated before any PHI was read or disclosed",
          f"SELECT EXISTS(SELECT 1 FROM auth) AND NOT EXISTS(SELECT 1 FROM steps WHERE ok=1 "
          f"AND {one_of('action_type', PHI)} AND step < (SELECT MIN(step) FROM auth)), "
          f"CASE WHEN NOT EXISTS(SELECT 1 FROM auth) THEN 'never authenticated' "
          f"WHEN EXISTS(SELECT 1 FROM steps WHERE ok=1 AND {one_of('action_type', PHI)} "
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
          f"NULL AND step < {FIRST_SUBMISSION_STEP}), "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing submitted' "
          f"WHEN EXISTS(SELECT 1 FROM lookups WHERE kind='deadline' AND artifact_id IS NOT NULL "
          f"AND step < {FIRST_SUBMISSION_STEP}) THEN 'deadline checked before submitting' "
          f"ELSE 'no applicable deadline checked before submitting' END"),
    Check("patient_told", "the patient was told what was found (after the diagnosis)",
          f"SELECT EXISTS(SELECT 1 FROM messages WHERE recipient='patient' AND {TELLS} AND "
          "step > (SELECT MIN(step) FROM diagnoses)), "
          f"(SELECT COUNT(*) FROM messages WHERE recipient='patient' AND {TELLS} AND step > "
          "(SELECT MIN(step) FROM diagnoses)) || ' patient message(s) after the diagnosis'"),
    Check("audit_written", "an audit entry recording the PHI accessed and disclosed was "
          "written after the filing",
          f"SELECT EXISTS(SELECT 1 FROM audit WHERE step > {FIRST_SUBMISSION_STEP}), "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing filed' "
          f"WHEN EXISTS(SELECT 1 FROM audit WHERE step > {FIRST_SUBMISSION_STEP}) "
          f"THEN 'audit entry written after the filing' "
          f"ELSE 'no audit entry after the filing' END"),
    Check("case_closed", "the case was closed after a resolution was filed",
          f"SELECT EXISTS(SELECT 1 FROM state WHERE key='ended_by' AND value='close_case') "
          f"AND {SUBMITTED}, "
          f"CASE WHEN NOT {SUBMITTED} THEN 'closed or ended with nothing filed' "
          f"ELSE COALESCE('ended by ' || (SELECT value FROM state WHERE key='ended_by'), "
          f"'still open') END"),
    Check("diagnosis_cites_two",
          "the diagnosis the first filing rests on cites at least two fetched case records, "
          "including the record(s) that decide the finding, and at least half of what it "
          "cites supports the finding",
          f"SELECT dx.n >= 2 AND {DECISIVE_CITED} AND {precise('diagnosis', 'dx.s')}, "
          "CASE WHEN dx.s IS NULL THEN 'no diagnosis written' "
          "ELSE dx.n || ' fetched case record(s) cited; ' || "
          f"{precision_detail('diagnosis', 'dx.s')} END "
          f"FROM {DX_ROW.format(cited=CASE_CITED)}",
          family="evidence"),
    Check("responsible_party",
          "the diagnosis the first filing rests on names the responsible party and the error "
          "found",
          f"SELECT COALESCE((SELECT d.responsible_party = {exp('responsible_party')} AND "
          f"{is_listed('d.finding', 'accepted_findings')} FROM {DX_AT_FILING} d), 0), "
          f"COALESCE((SELECT 'finding recorded: ' || d.finding || '; responsible party: ' || "
          f"d.responsible_party FROM {DX_AT_FILING} d), 'no diagnosis on record')",
          family="outcome"),
    Check("resolution_type", "the first filing is the right type of resolution",
          f"SELECT COALESCE((SELECT {is_listed('s.resolution_type', 'accepted_resolutions')} "
          f"FROM {FIRST_SUBMISSION} s), 0), "
          f"COALESCE((SELECT 'resolution filed: ' || s.resolution_type "
          f"FROM {FIRST_SUBMISSION} s), 'nothing submitted')",
          family="outcome"),
    Check("amount_exact",
          "the first filing's amount is the overcharge (or, where the bill is right, the "
          "patient's correct share) to the cent",
          f"SELECT COALESCE((SELECT s.amount_cents = CAST({exp('amount_cents')} AS INTEGER) "
          f"OR {is_listed(FILED_PAIR, 'amount_alternatives')} "
          f"FROM {FIRST_SUBMISSION} s), 0), "
          f"COALESCE((SELECT 'amount filed: ' || COALESCE(printf('%.2f', "
          f"s.amount_cents / 100.0), 'none') FROM {FIRST_SUBMISSION} s), 'nothing submitted')",
          family="outcome"),
    Check("no_compliance_violation",
          "no compliance violation in an episode that reached a filing",
          f"SELECT {SUBMITTED} AND NOT EXISTS(SELECT 1 FROM violations), "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing submitted' "
          f"WHEN EXISTS(SELECT 1 FROM violations) THEN (SELECT COUNT(*) FROM violations) "
          f"|| ' violation(s): ' || (SELECT kind FROM violations ORDER BY step LIMIT 1) "
          f"ELSE 'no violations' END",
          family="hygiene"),
    Check("no_excess_duplicates",
          "at most one duplicate fetch in an episode that reached a filing",
          f"SELECT {SUBMITTED} AND (SELECT COUNT(*) FROM fetched WHERE duplicate=1) <= 1, "
          f"CASE WHEN NOT {SUBMITTED} THEN 'nothing submitted' "
          f"ELSE (SELECT COUNT(*) FROM fetched WHERE duplicate=1) || ' duplicate fetch(es)' END",
          family="hygiene"),
]
