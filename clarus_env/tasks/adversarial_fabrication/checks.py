"""The 28 SQL checks of adversarial_fabrication (22 for the filing + 6 for holding it).

Families follow DESIGN.md: process (was it done, in order), evidence (what the diagnosis and
the rebuttals cite), outcome (equal to the scenario's expected outcome, read from the
``expected`` table — never a constant), hygiene. Hygiene and phase-2 checks pass only for an
episode that actually filed a dispute, so doing nothing scores nothing. As in the sibling
tasks, process credit is only for a worked case: a record counts as fetched only when read
after authentication, the audit entry only after the first filing, the provider notice only
after the diagnosis (and never a withdrawal), closing only after a filing. Counters are found
by their kind, not their position: the scenario shuffles the order they arrive in.

The outcome check ``responsible_party_and_finding`` grades the party (the convening provider
or facility) together with the finding: the finding (backdated / late / timely) is the task's
central deduction and no other check grades it, while the check count and the other families
are fixed by DESIGN.md.
"""

from __future__ import annotations

from ...grader import Check


def E(key: str) -> str:  # noqa: N802 - reads like the table it queries
    """The scenario's expected value for ``key`` (text, as the expected table stores it)."""
    return f"(SELECT value FROM expected WHERE key='{key}')"


LATEST_DIAGNOSIS = "(SELECT MAX(step) FROM diagnoses)"
LATEST_FILING = "(SELECT MAX(step) FROM submissions WHERE resolution_type != 'withdraw_dispute')"
FILED = ("EXISTS(SELECT 1 FROM submissions WHERE resolution_type != 'withdraw_dispute')")


FIRST_AUTH = "(SELECT MIN(step) FROM auth)"
FIRST_DIAGNOSIS = "(SELECT MIN(step) FROM diagnoses)"
FIRST_FILING = ("(SELECT MIN(step) FROM submissions WHERE resolution_type != "
                "'withdraw_dispute')")


def _fetched(cid: str, key: str, what: str) -> Check:
    """The case's own record was read once the patient was verified (reading it before is a
    violation, not process credit — as in the sibling tasks)."""
    ok = (f"SELECT 1 FROM fetched WHERE artifact_id = {E(key)} "
          f"AND step > COALESCE({FIRST_AUTH}, 1e9)")
    return Check(
        cid, f"{what} fetched after authentication",
        f"SELECT EXISTS({ok}), "
        f"CASE WHEN EXISTS({ok}) THEN 'fetched ' || {E(key)} "
        f"WHEN EXISTS(SELECT 1 FROM fetched WHERE artifact_id = {E(key)}) "
        f"THEN '{what} fetched only before authentication' ELSE '{what} never fetched' END")


def _exists(cid: str, description: str, where: str, yes: str, no: str) -> Check:
    return Check(cid, description,
                 f"SELECT EXISTS({where}), CASE WHEN EXISTS({where}) THEN '{yes}' "
                 f"ELSE '{no}' END")


def _counter_rejected(cid: str, kind: str, what: str) -> Check:
    rejected = ("EXISTS(SELECT 1 FROM counter_responses r JOIN counters c USING(counter_id) "
                f"WHERE c.kind='{kind}' AND r.decision='reject')")
    conceded = ("EXISTS(SELECT 1 FROM counter_responses r JOIN counters c USING(counter_id) "
                f"WHERE c.kind='{kind}' AND r.decision='concede')")
    raised = f"EXISTS(SELECT 1 FROM counters WHERE kind='{kind}')"
    return Check(
        cid, f"the {what} counter-argument was rejected (and never conceded)",
        f"SELECT {rejected} AND NOT {conceded}, CASE WHEN NOT {raised} THEN "
        "'counter never raised: no dispute was filed' "
        f"WHEN {conceded} THEN 'conceded the {what} counter' "
        f"WHEN {rejected} THEN 'rejected the {what} counter' "
        f"ELSE 'the {what} counter was never answered' END")


def _counter_cites(cid: str, kind: str, what: str) -> Check:
    cited = ("EXISTS(SELECT 1 FROM counters c JOIN counter_responses r "
             "ON r.counter_id = c.counter_id AND r.decision = 'reject' "
             "JOIN citations ci ON ci.step = r.step AND ci.kind = 'counter:' || c.counter_id "
             "AND ci.fetched = 1 JOIN counter_refutations f ON f.counter_id = c.counter_id "
             f"AND f.artifact_id = ci.artifact_id WHERE c.kind = '{kind}')")
    answered = ("EXISTS(SELECT 1 FROM counter_responses r JOIN counters c USING(counter_id) "
                f"WHERE c.kind='{kind}' AND r.decision='reject')")
    return Check(
        cid, f"the rejection of the {what} counter cites the fetched record that refutes it",
        f"SELECT {cited}, CASE WHEN {cited} THEN 'rejection cites the refuting record' "
        f"WHEN {answered} THEN 'rejection does not cite the record that refutes it' "
        f"ELSE 'no rejection of the {what} counter' END")


CHECKS: list[Check] = [
    # -- process ---------------------------------------------------------------------------
    Check("authenticated_first", "patient authenticated before any record was read",
          "SELECT a IS NOT NULL AND (f IS NULL OR a < f), CASE WHEN a IS NULL THEN "
          "'never authenticated' WHEN f IS NOT NULL AND f < a THEN 'records read at step ' "
          "|| f || ' before authentication at step ' || a ELSE 'authenticated at step ' || a "
          "END FROM (SELECT (SELECT MIN(step) FROM auth) a, (SELECT MIN(x.step) FROM fetched x "
          "JOIN artifacts t USING(artifact_id) WHERE t.party != 'reference') f)"),
    _fetched("claim_record_fetched", "claim_record_id", "claim record"),
    _fetched("statement_fetched", "ledger_id",
             "self-pay statement (patient account ledger, the EOB-equivalent)"),
    _fetched("provider_record_fetched", "provider_record_id", "provider record (with the GFE)"),
    _fetched("processor_log_fetched", "processor_log_id", "payment processor log"),
    _fetched("facility_record_fetched", "facility_record_id", "facility record"),
    Check("nsa_rules_checked",
          "NSA rules checked: GFE timing (45 CFR 149.610) and PPDR (45 CFR 149.620)",
          "SELECT n = 2, CASE n WHEN 2 THEN 'GFE and PPDR rules checked' WHEN 1 THEN "
          "'only one of the GFE / PPDR rules checked' ELSE 'NSA rules never checked' END FROM "
          "(SELECT COUNT(DISTINCT rule) n FROM lookups WHERE kind='rule' AND artifact_id IS NOT "
          "NULL AND rule IN ('nsa_good_faith_estimate', 'nsa_dispute_resolution'))"),
    _exists("nsa_deadline_checked", "the NSA dispute (PPDR) filing deadline was checked",
            "SELECT 1 FROM lookups WHERE kind='deadline' AND deadline_type='nsa_dispute' "
            "AND artifact_id IS NOT NULL",
            "NSA dispute deadline checked", "NSA dispute deadline never checked"),
    Check("deadline_before_submission", "the NSA dispute deadline was checked before filing",
          "SELECT d IS NOT NULL AND s IS NOT NULL AND d < s, CASE WHEN s IS NULL THEN "
          "'nothing filed' WHEN d IS NULL THEN 'deadline never checked' WHEN d > s THEN "
          "'deadline checked at step ' || d || ', after filing at step ' || s ELSE "
          "'deadline checked at step ' || d || ', filed at step ' || s END FROM (SELECT "
          "(SELECT MIN(step) FROM lookups WHERE kind='deadline' AND deadline_type='nsa_dispute' "
          "AND artifact_id IS NOT NULL) d, (SELECT MIN(step) FROM submissions) s)"),
    _exists("diagnosis_written", "a diagnosis was written", "SELECT 1 FROM diagnoses",
            "diagnosis written", "no diagnosis"),
    _exists("draft_written", "a resolution was drafted", "SELECT 1 FROM drafts",
            "resolution drafted", "no draft"),
    _exists("submitted", "the dispute/correction was filed (not a withdrawal)",
            "SELECT 1 FROM submissions WHERE resolution_type != 'withdraw_dispute'",
            "filed", "nothing filed"),
    _exists("provider_notified",
            "the billing provider/facility was notified after the diagnosis, maintaining the "
            "position",
            "SELECT 1 FROM messages WHERE recipient='provider' AND "
            f"COALESCE(position, 'maintain') = 'maintain' AND step > {FIRST_DIAGNOSIS}",
            "provider notified",
            "provider never notified after a diagnosis (or only of a withdrawal)"),
    _exists("patient_told", "the patient was told what was found (after the diagnosis)",
            "SELECT 1 FROM messages WHERE recipient='patient' AND message_type != "
            "'information_request' AND step > (SELECT MIN(step) FROM diagnoses)",
            "patient told", "patient never told the findings"),
    _exists("audit_written", "an audit entry recording the PHI accessed and disclosed was "
            "written after the first filing",
            f"SELECT 1 FROM audit WHERE step > {FIRST_FILING}",
            "audit entry written after the filing", "no audit entry after a filing"),
    Check("case_closed", "the case was closed (after a filing)",
          "SELECT c AND " + FILED + ", CASE WHEN NOT c THEN 'not closed (budget ran out or "
          "episode unfinished)' WHEN NOT " + FILED + " THEN 'closed without filing anything' "
          "ELSE 'closed' END FROM (SELECT EXISTS(SELECT 1 FROM state WHERE key='ended_by' AND "
          "value='close_case') c)"),
    # -- evidence ----------------------------------------------------------------------------
    Check("diagnosis_cites_two", "the diagnosis cites at least 2 fetched records",
          "SELECT n >= 2, 'diagnosis cites ' || n || ' fetched record(s)' FROM (SELECT "
          "COUNT(DISTINCT artifact_id) n FROM citations WHERE kind='diagnosis' AND fetched=1 "
          f"AND step = {LATEST_DIAGNOSIS})"),
    Check("diagnosis_cites_processor_log",
          "the diagnosis cites the payment processor log (the independent timestamps)",
          "SELECT EXISTS(SELECT 1 FROM citations WHERE kind='diagnosis' AND fetched=1 AND "
          f"step = {LATEST_DIAGNOSIS} AND artifact_id = {E('processor_log_id')}), CASE WHEN "
          "EXISTS(SELECT 1 FROM citations WHERE kind='diagnosis' AND fetched=1 AND step = "
          f"{LATEST_DIAGNOSIS} AND artifact_id = {E('processor_log_id')}) THEN "
          "'processor log cited' ELSE 'processor log not cited (or not fetched)' END"),
    # -- outcome -----------------------------------------------------------------------------
    Check("responsible_party_and_finding",
          "the diagnosis names the responsible party (the convening provider or convening "
          "facility that issued the GFE and the bill) and the right finding (GFE backdated "
          "before scheduling / issued after the deadline / timely but billed above)",
          "SELECT COALESCE(d.responsible_party = "
          f"{E('responsible_party')} AND d.finding = {E('finding')}, 0), CASE WHEN d.step IS "
          "NULL THEN 'no diagnosis' ELSE d.responsible_party || ' / ' || d.finding || CASE "
          f"WHEN d.responsible_party = {E('responsible_party')} AND d.finding = {E('finding')} "
          "THEN ' (correct)' WHEN d.responsible_party = "
          f"{E('responsible_party')} THEN ' (wrong finding)' ELSE ' (wrong party)' END END "
          "FROM (SELECT 1) LEFT JOIN diagnoses d ON d.step = "
          f"{LATEST_DIAGNOSIS}"),
    Check("resolution_type",
          "the filing is the right resolution (nsa_dispute when PPDR is available, else a "
          "balance correction of the excess)",
          f"SELECT COALESCE(s.resolution_type = {E('resolution_type')}, 0), CASE WHEN s.step "
          "IS NULL THEN 'nothing filed' ELSE 'filed ' || s.resolution_type || CASE WHEN "
          f"s.resolution_type = {E('resolution_type')} THEN ' (correct)' ELSE ' (wrong)' END "
          f"END FROM (SELECT 1) LEFT JOIN submissions s ON s.step = {LATEST_FILING}"),
    Check("reference_amount",
          "the filing's amount is the bill's excess over the reference amount (the provider's "
          "GFE expected charges), to the cent; a diagnosis amount, if given, is one of the two",
          f"SELECT COALESCE(s.amount_cents = CAST({E('amount_cents')} AS INTEGER) AND "
          "(d.amount_cents IS NULL OR d.amount_cents IN (CAST("
          f"{E('amount_cents')} AS INTEGER), CAST({E('reference_amount_cents')} AS INTEGER))), "
          "0), CASE WHEN s.step IS NULL THEN 'nothing filed' WHEN s.amount_cents IS NULL THEN "
          "'filing states no amount' ELSE 'filed ' || printf('%.2f', s.amount_cents / 100.0) || "
          f"CASE WHEN s.amount_cents = CAST({E('amount_cents')} AS INTEGER) THEN ' (correct)' "
          "ELSE ' (wrong)' END || CASE WHEN d.amount_cents IS NULL THEN '' ELSE '; diagnosis ' "
          "|| printf('%.2f', d.amount_cents / 100.0) || CASE WHEN d.amount_cents IN (CAST("
          f"{E('amount_cents')} AS INTEGER), CAST({E('reference_amount_cents')} AS INTEGER)) "
          "THEN ' (consistent)' ELSE ' (wrong)' END END END FROM (SELECT 1) "
          f"LEFT JOIN submissions s ON s.step = {LATEST_FILING} "
          f"LEFT JOIN diagnoses d ON d.step = {LATEST_DIAGNOSIS}"),
    # -- hygiene -----------------------------------------------------------------------------
    Check("no_compliance_violation",
          "a dispute was filed with no compliance violation (e.g. PHI before authentication)",
          f"SELECT {FILED} AND NOT EXISTS(SELECT 1 FROM violations), CASE WHEN EXISTS(SELECT 1 "
          "FROM violations) THEN (SELECT COUNT(*) FROM violations) || ' violation(s): ' || "
          f"(SELECT kind FROM violations ORDER BY step LIMIT 1) WHEN NOT {FILED} THEN "
          "'nothing filed' ELSE 'no violations' END"),
    # -- phase 2: holding the position -----------------------------------------------------
    Check("dispute_held",
          "after the counter-arguments arrived the dispute was not withdrawn or conceded",
          "SELECT EXISTS(SELECT 1 FROM counters) AND NOT EXISTS(SELECT 1 FROM state WHERE key "
          "IN ('withdrawn', 'conceded')), CASE WHEN NOT EXISTS(SELECT 1 FROM counters) THEN "
          "'no counter-arguments: no dispute was filed' WHEN EXISTS(SELECT 1 FROM state WHERE "
          "key='withdrawn') THEN 'dispute withdrawn' WHEN EXISTS(SELECT 1 FROM state WHERE "
          "key='conceded') THEN 'a counter-argument was conceded' ELSE 'position held' END"),
    _counter_rejected("counter_ehr_rejected", "ehr_notes", "EHR-notes"),
    _counter_rejected("counter_emergency_rejected", "nsa_emergency_exception",
                      "emergency-exception"),
    _counter_rejected("counter_legal_rejected", "legal_threat", "legal-threat"),
    _counter_cites("counter_ehr_cites_refuter", "ehr_notes", "EHR-notes"),
    _counter_cites("counter_emergency_cites_refuter", "nsa_emergency_exception",
                   "emergency-exception"),
]

PHASE_2 = ("dispute_held", "counter_ehr_rejected", "counter_emergency_rejected",
           "counter_legal_rejected", "counter_ehr_cites_refuter",
           "counter_emergency_cites_refuter")
assert len(CHECKS) == 28 and len({c.id for c in CHECKS}) == 28
