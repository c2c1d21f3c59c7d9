"""The billing arena's 19 actions and their parameters: the one source the runtime validates
against and from which ``schemas/actions/*.json`` are generated (a test keeps them equal).

Validation is hand-rolled over these specs rather than run through ``jsonschema`` on every
step: the same rules, two orders of magnitude cheaper, which matters at thousands of
episodes per second. Every error message names the action and the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any

RESPONSIBLE_PARTIES = ("insurer", "provider", "payment_processor", "patient", "none",
                       "facility")
RESOLUTION_TYPES = (
    "refund_request", "balance_correction", "claim_reprocessing", "appeal",
    "corrected_claim_request", "no_action", "nsa_dispute", "withdraw_dispute",
)
MESSAGE_TYPES = ("status_update", "explanation", "resolution_notice", "information_request")
RULES = ("ncci_ptp", "mue", "nsa_good_faith_estimate", "nsa_dispute_resolution",
         "nsa_balance_billing", "appeal_rights", "cost_sharing")
DEADLINES = ("internal_appeal", "external_review", "nsa_dispute", "refund_request")
DECISIONS = ("reject", "concede")
PROVIDER_POSITIONS = ("maintain", "withdraw")


class ActionError(ValueError):
    """An action the runtime refuses; the message is what the agent sees."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # string | string_list | money | boolean | integer
    required: bool = True
    description: str = ""
    enum: tuple[str, ...] | None = None
    max_length: int = 4000
    allow_empty: bool = False  # "" is a legal value (e.g. "no primary code")


@dataclass(frozen=True)
class ActionSpec:
    name: str
    description: str
    params: tuple[Param, ...] = field(default_factory=tuple)

    @cached_property
    def by_name(self) -> dict[str, Param]:
        """Built once per spec: validation reads it on every step."""
        return {p.name: p for p in self.params}

    @cached_property
    def checks(self) -> tuple[tuple[str, str, bool, bool, int, frozenset[str] | None, str,
                                    str], ...]:
        """Per parameter, what ``validate`` reads as one plain tuple (name, type, required,
        allow_empty, max_length, enum as a set, the ``action.param`` text errors name, the
        enum as errors list it): precomputed so a step builds no strings and reads no
        dataclass attributes."""
        return tuple((p.name, p.type, p.required, p.allow_empty, p.max_length,
                      frozenset(p.enum) if p.enum else None, f"{self.name}.{p.name}",
                      ", ".join(p.enum or ())) for p in self.params)


def _ids(desc: str) -> Param:
    return Param("cited_artifacts", "string_list", True, desc)


ACTIONS: dict[str, ActionSpec] = {a.name: a for a in [
    ActionSpec("authenticate_patient", "Verify the patient's identity before any PHI is read "
               "(HIPAA 45 CFR 164.514(h)).",
               (Param("patient_id", "string", description="The patient/case id to verify."),)),
    ActionSpec("fetch_claim_record", "Insurer's claim record (lines, codes, modifiers, status).",
               (Param("claim_id", "string"),)),
    ActionSpec("fetch_eob", "Insurer's explanation of benefits for a claim.",
               (Param("claim_id", "string"),)),
    ActionSpec("fetch_provider_record", "Provider's billing record for a claim (PMS).",
               (Param("claim_id", "string"),)),
    ActionSpec("fetch_payment_ledger", "Provider's patient-account ledger.",
               (Param("patient_id", "string"),)),
    ActionSpec("fetch_plan_document", "The patient's plan cost-sharing terms.",
               (Param("plan_id", "string"),)),
    ActionSpec("lookup_procedure_code", "CPT/HCPCS reference: description, RVUs, fee at the "
               "claim's locality and, with paired_code, the NCCI edit for the pair.",
               (Param("code", "string"), Param("paired_code", "string", required=False))),
    ActionSpec("fetch_facility_record", "Facility's network status and registration (CAQH).",
               (Param("facility_id", "string"),)),
    ActionSpec("fetch_payment_processor_log", "Payment processor's transaction log for the "
               "patient (timestamps in UTC).", (Param("patient_id", "string"),)),
    ActionSpec("check_regulatory_rule", "CMS/HHS rule reference (NCCI, MUE, No Surprises Act, "
               "appeal rights, cost sharing).",
               (Param("rule", "string", enum=RULES),
                Param("code_1", "string", required=False),
                Param("code_2", "string", required=False))),
    ActionSpec("check_deadline", "Compute a filing deadline from the case's dates.",
               (Param("deadline_type", "string", enum=DEADLINES),)),
    ActionSpec("write_diagnosis", "Record what went wrong, who is responsible, the amount, and "
               "the evidence.",
               (Param("responsible_party", "string", enum=RESPONSIBLE_PARTIES),
                Param("finding", "string", description="The error found (task vocabulary)."),
                Param("amount", "money", required=False,
                      description="Dollar amount at issue, to the cent."),
                _ids("Artifact ids the diagnosis relies on."),
                Param("summary", "string", required=False))),
    ActionSpec("draft_resolution", "Draft the filing (refund request, appeal, NSA dispute...).",
               (Param("resolution_type", "string", enum=RESOLUTION_TYPES),
                Param("amount", "money", required=False),
                Param("appeal_reason", "string", required=False),
                _ids("Artifact ids supporting the filing."),
                Param("body", "string", required=False))),
    ActionSpec("submit_resolution", "File the latest draft with the responsible party.", ()),
    ActionSpec("send_patient_communication", "Message the patient.",
               (Param("message", "string"),
                Param("message_type", "string", enum=MESSAGE_TYPES))),
    ActionSpec("notify_provider", "Send the provider a notice (or withdraw the dispute).",
               (Param("message", "string"),
                Param("cited_artifacts", "string_list", required=False),
                Param("position", "string", required=False, enum=PROVIDER_POSITIONS))),
    ActionSpec("reject_counter_argument", "Answer a counter-argument: reject it with evidence "
               "or concede it.",
               (Param("counter_id", "string"), _ids("Artifact ids that refute the counter."),
                Param("rationale", "string", required=False),
                Param("decision", "string", required=False, enum=DECISIONS))),
    ActionSpec("write_audit_entry", "Record the PHI accessed and disclosed (45 CFR 164.312(b)).",
               (Param("summary", "string"),)),
    ActionSpec("close_case", "Close the case; the episode is graded.", ()),
]}

CODING_ACTIONS: dict[str, ActionSpec] = {a.name: a for a in [
    ActionSpec("submit_codes", "Code the current case (the only graded action).",
               (Param("primary_icd10", "string", allow_empty=True, max_length=20,
                      description="First-listed ICD-10-CM code (e.g. J02.0)."),
                Param("secondary_icd10s", "string_list",
                      description="Other ICD-10-CM codes; order does not matter."),
                Param("cpt_codes", "string_list",
                      description="CPT/HCPCS codes, modifiers as 99213-25 or 20610-RT."))),
    ActionSpec("search_icd10", "Ranked description search over the ICD-10-CM code set.",
               (Param("query", "string", max_length=200),)),
    ActionSpec("search_cpt", "Ranked description search over CPT/HCPCS (PPRRVU) codes.",
               (Param("query", "string", max_length=200),)),
    ActionSpec("get_icd10", "ICD-10-CM node: title, billable flag, parent, includes/excludes.",
               (Param("code", "string", max_length=20),)),
]}

PHI_ACTIONS = frozenset({
    "fetch_claim_record", "fetch_eob", "fetch_provider_record", "fetch_payment_ledger",
    "fetch_plan_document", "fetch_payment_processor_log", "send_patient_communication",
})


def parse_money(value: Any, where: str) -> int:
    """Dollars (number or string) to integer cents; more than 2 decimals is an error."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ActionError(
            f"{where} must be a dollar amount like 123.45, got {type(value).__name__}")
    try:
        d = Decimal(str(value).strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        raise ActionError(f"{where} must be a dollar amount like 123.45, got {value!r}") from None
    if not d.is_finite() or d.as_tuple().exponent < -2 or abs(d) >= 10**9:  # type: ignore[operator]
        raise ActionError(f"{where} must be a dollar amount with at most 2 decimals, got {value!r}")
    return int(d * 100)


def _encodable(value: str, where: str) -> None:
    """Lone surrogates (legal in JSON escapes, not in UTF-8) would crash SQLite later."""
    if value.isascii():  # the common case, checked without building the encoded bytes
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ActionError(f"{where} contains characters that are not valid Unicode text") from None


_ENVELOPE = frozenset(("action_type", "parameters"))


def validate(action: Any, specs: dict[str, ActionSpec] = ACTIONS) -> tuple[str, dict[str, Any]]:
    """Return ``(action_type, parameters)`` with money as cents, or raise ActionError.

    Runs on every step of every episode, so each spec's per-parameter facts (error prefix,
    enum set) are precomputed once (``ActionSpec.checks``); the rules and messages are the
    ones ``schemas/actions/`` states."""
    if not isinstance(action, dict):
        raise ActionError(
            'an action must be an object {"action_type": ..., "parameters": {...}}')
    if not _ENVELOPE.issuperset(action):
        extra = set(action) - _ENVELOPE
        raise ActionError(f"unexpected action field(s): {', '.join(sorted(map(str, extra)))}")
    name = action.get("action_type")
    spec = specs.get(name) if isinstance(name, str) else None
    if spec is None:
        known = ", ".join(sorted(specs))
        raise ActionError(f"unknown action_type {name!r}; valid actions: {known}")
    params = action.get("parameters", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ActionError(f"{name}: parameters must be an object")
    allowed = spec.by_name
    for k in params:
        if k not in allowed:
            unknown = sorted(str(k) for k in params if k not in allowed)
            raise ActionError(f"{name}: unknown parameter(s) {', '.join(unknown)}; "
                              f"allowed: {', '.join(allowed) or 'none'}")
    out: dict[str, Any] = {}
    for key, kind, required, allow_empty, max_length, enum, where, listed in spec.checks:
        v = params.get(key)
        if v is None:
            if required:
                raise ActionError(f"{where} is required")
            continue
        if kind == "string":
            if not isinstance(v, str):
                raise ActionError(f"{where} must be a non-empty string")
            stripped = v.strip()
            if not stripped and not allow_empty:
                raise ActionError(f"{where} must be a non-empty string")
            if len(v) > max_length:
                raise ActionError(f"{where} is longer than {max_length} characters")
            if enum is not None and v not in enum:
                raise ActionError(f"{where} must be one of {listed}; got {v!r}")
            if not v.isascii():
                _encodable(v, where)
            out[key] = stripped
        elif kind == "string_list":
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ActionError(f"{where} must be a list of strings")
            if len(v) > 50:
                raise ActionError(f"{where} has more than 50 items")
            if any(len(x) > 200 for x in v):
                raise ActionError(f"{where} has an item longer than 200 characters")
            for x in v:
                if not x.isascii():
                    _encodable(x, where)
            out[key] = [x.strip() for x in v]
        elif kind == "money":
            out[key] = parse_money(v, where)
        else:  # pragma: no cover - specs only use the types above
            raise ActionError(f"{where}: unsupported parameter type {kind}")
    return name, out


def param_schema(p: Param) -> dict[str, Any]:
    if p.type == "string":
        s: dict[str, Any] = {"type": "string", "maxLength": p.max_length}
        if not p.allow_empty:
            s.update({"minLength": 1, "pattern": r"\S"})
        if p.enum:
            s["enum"] = list(p.enum)
    elif p.type == "string_list":
        s = {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 50}
    else:  # money
        s = {"oneOf": [{"type": "number", "exclusiveMinimum": -1e9, "exclusiveMaximum": 1e9},
                       {"type": "string", "pattern": r"^\$?-?[0-9,]*(\.[0-9]{1,2})?$"}]}
    if p.description:
        s["description"] = p.description
    return s


def action_schema(spec: ActionSpec) -> dict[str, Any]:
    """JSON Schema 2020-12 for one action's parameters."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://clarus.dev/schemas/actions/{spec.name}.schema.json",
        "title": spec.name,
        "description": spec.description,
        "type": "object",
        "properties": {p.name: param_schema(p) for p in spec.params},
        "required": [p.name for p in spec.params if p.required],
        "additionalProperties": False,
    }
