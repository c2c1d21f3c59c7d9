"""A rule-following advocate for abductive_conflict that sees only observations.

It plays the whole process (authenticate, read every record the claim and the provider's
statement point to, look both codes and the pair up, check the appeal window, diagnose, file,
tell the patient and the provider, audit, close) and decides with generic rules:

- the NCCI lookup: no active edit -> ``no_active_edit``; indicator 0 -> ``legitimate_denial``;
- indicator 1: was a distinct service documented, and is a bypass modifier on the claim?
  distinct + modifier -> ``modifier_bypass_ignored``; distinct, no modifier ->
  ``missing_modifier``; not distinct -> ``legitimate_denial``.

"Distinct" is read generically from the provider's line notes, by rules of thumb: services
one of which ended before the other began (read from the notes' clock times and durations in
any of their print forms); for two procedures, different anatomic
words in the two notes (it misses a second lesion at the same named site, takes one lesion
described in two wordings for two, and misses a nerve block on the same hand); for an office
visit with a service, the other problem's entry dated the date of service and made at an
office on the billing group's list (read in its short form: a tail of the name as
initials). So it is good, not perfect.

Hooks for ``clarus audit``: ``hide`` (artifact types whose data it must treat as unseen; it
still fetches them), ``decide(view)`` (replaces its decision), ``respond`` (unused: this task
has no counter-arguments), ``cite_all`` (cite every id seen: the citation spammer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

CLAIM_RE = re.compile(r"\bCLM-\d+\b")
BUNDLING_CARCS = {"97", "236", "234"}
NCCI_MODIFIERS = {"25", "57", "58", "59", "78", "79", "91", "XE", "XS", "XP", "XU", "RT", "LT",
                  "E1", "E2", "E3", "E4", "FA", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8",
                  "F9", "TA", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "LC", "LD",
                  "LM", "RC", "RI", "24", "27"}
LINE_NOTE = re.compile(r"^Line (\d+) \(([0-9A-Z]{5})\): (.*)$")
# a service's interval, however the therapist wrote it: two clock times ("08:10–08:25",
# "from 08:10 to 08:25"), or one clock time and a duration, the clock time being the end
# when a word such as "ending" or "finished" comes just before it ("08:10 for 15 min",
# "15 min starting 08:10", "15 min ending 08:25")
INTERVAL = re.compile(r"\b(\d{1,2}):(\d{2})\b\D{1,30}?\b(\d{1,2}):(\d{2})\b")
# the word before a clock time, taken only from its first letter: the same matches as
# ``(\w+)?\W*\b…``, whose word also started inside every word and re-read it to its end
# at each letter (quadratic in the word: ~85% of this function on the dev notes)
CLOCK = re.compile(r"(?:(?<!\w)(\w++))?\W*\b(\d{1,2}):(\d{2})\b")
DURATION = re.compile(r"\b(\d+) min\b")
END_WORDS = frozenset(("ending", "ended", "finished", "until", "to", "till"))
ANATOMY = frozenset((
    "left", "right", "upper", "lower", "mid", "back", "shoulder", "arm", "forearm", "thigh",
    "leg", "knee", "hip", "ankle", "foot", "toe", "finger", "hand", "wrist", "thumb", "elbow",
    "epicondyle", "ear", "cheek", "forehead", "eyebrow", "chin", "face", "scalp", "neck",
    "trapezius", "levator", "rhomboid", "infraspinatus", "occipital", "median", "carpal",
    "tunnel", "abdomen", "chest", "great", "spine", "lumbar", "cervical", "gluteus"))
OUTCOMES = {  # finding -> (responsible_party, resolution_type, appeal_reason)
    "legitimate_denial": ("none", "no_action", "none"),
    "modifier_bypass_ignored": ("insurer", "appeal", "modifier_bypass_documented"),
    "missing_modifier": ("provider", "corrected_claim_request", "missing_modifier"),
    "no_active_edit": ("insurer", "appeal", "no_active_edit"),
}
CITE_TYPES = ("claim_record", "eob", "provider_record", "ncci_edit")


def _a(name: str, **params: Any) -> dict[str, Any]:
    return {"action_type": name, "parameters": params}


def _dump(observation: Any) -> dict[str, Any]:
    if hasattr(observation, "model_dump"):
        return observation.model_dump()
    return dict(observation) if isinstance(observation, dict) else dict(vars(observation))


def _get(observation: Any, name: str, default: Any = None) -> Any:
    if isinstance(observation, dict):
        return observation.get(name, default)
    return getattr(observation, name, default)




def _intervals(text: str) -> list[tuple[int, int]]:
    both = [(int(a) * 60 + int(b), int(c) * 60 + int(d))
            for a, b, c, d in INTERVAL.findall(text)]
    if both:  # the clock-and-duration form is read only without two clock times
        return both
    # cheapest test first: CLOCK's optional word backtracks over every word of the note
    minutes = DURATION.findall(text)
    clocks = CLOCK.findall(text) if minutes else []
    if len(clocks) != 1 or not minutes:
        return both
    word, hh, mm = clocks[0]
    at, length = int(hh) * 60 + int(mm), int(minutes[0])
    return [(at - length, at)] if word.lower() in END_WORDS else [(at, at + length)]


# a side written as a clinician's initial ("R knee")
SIDES = {"r": "right", "l": "left"}


def _anatomy(text: str) -> frozenset[str]:
    words = (SIDES.get(w, w) for w in re.findall(r"[a-z]+", text.lower()))
    return frozenset(w for w in words if w in ANATOMY)


# the other problem's entry: its date, the assessor and the office it was made at
STAMP = re.compile(r"\b(\d\d)/(\d\d)/(\d{4}) by .+?, ([^,;]+);")


def _short_forms(office: str) -> set[str]:
    """An office's name and its short forms: any tail of its words written as initials
    ("Cedar Grove Family Medicine" -> "Cedar Grove FM", "Cedar Grove Walk-In UC")."""
    words = office.split()
    return {office} | {" ".join([*words[:k], "".join(w[0] for w in words[k:])])
                       for k in range(1, len(words))}


def documented_distinct(provider: dict[str, Any]) -> bool | None:
    """Whether the provider's notes document two distinct services (None: cannot tell)."""
    notes: dict[str, str] = {}
    for note in provider.get("notes", []):
        m = LINE_NOTE.match(note)
        if m:
            notes[m.group(2)] = m.group(3)
    lines = {ln.get("hcpcs"): ln for ln in provider.get("lines", [])}
    codes = [c for c in lines if c in notes]
    if len(codes) != 2:
        return None
    a, b = codes
    ia, ib = _intervals(notes[a]), _intervals(notes[b])
    if ia and ib:
        # separate when one ended before the other began (the notes' own clock times)
        (s1, e1), (s2, e2) = ia[0], ib[0]
        return e1 <= s2 or e2 <= s1
    em = [c for c in codes if c.startswith("992")]
    if em:  # a separate problem managed today: its entry is dated the date of service and
        # made at one of the billing group's listed offices (whoever's surname it carries)
        stamp = STAMP.search(notes[em[0]])
        if not stamp:
            return None
        m, d, y, where = stamp.groups()
        offices = (provider.get("provider") or {}).get("offices") or []
        dos = str(provider.get("date_of_service", ""))
        return f"{y}-{m}-{d}" == dos and any(where in _short_forms(o) for o in offices)
    # where the service was done: the note's first sentence (what follows may remark on
    # the other side: a comparison exam, a history item, hand dominance)
    return _anatomy(notes[a].split(". ")[0]) != _anatomy(notes[b].split(". ")[0])


class HeuristicAgent:
    """Observation-only baseline: generic evidence gathering plus the NCCI/documentation
    rule above."""

    privileged = False

    def __init__(self, decide: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 respond: Callable[[dict[str, Any], dict[str, Any]], str] | None = None,
                 hide: frozenset[str] | set[str] = frozenset(), cite_all: bool = False) -> None:
        self.decide_hook = decide
        self.respond_hook = respond
        self.hide = frozenset(hide)
        self.cite_all = cite_all

    def reset(self, observation: Any, **_: Any) -> None:
        """Start a case from its header; any privileged keyword (scenario=...) is ignored."""
        self.case_id: str = _get(observation, "case_id")
        self.complaint: str = _get(observation, "patient_complaint") or ""
        self.initial = _dump(observation)
        m = CLAIM_RE.search(self.complaint)
        self.claim_id: str | None = m.group(0) if m else None
        self.ids: dict[str, str] = {}
        self.seen: list[str] = []
        self.records: dict[str, Any] = {}
        self.lines: list[dict[str, Any]] = []
        self.denied: str | None = None
        self.paid: str | None = None
        self.plan_id: str | None = None
        self.others: list[str] = []
        self.decision: dict[str, Any] = {}
        self.queue: list[dict[str, Any]] = [_a("authenticate_patient", patient_id=self.case_id)]
        if self.claim_id:
            self.queue += [_a("fetch_claim_record", claim_id=self.claim_id),
                           _a("fetch_eob", claim_id=self.claim_id),
                           _a("fetch_provider_record", claim_id=self.claim_id)]
        self.phase = "gather"

    # -- reading results -------------------------------------------------------------------
    def _read(self, observation: Any) -> None:
        res = _get(observation, "last_action_result")
        if not res or _get(observation, "last_action_error"):
            return
        aid, atype = res.get("artifact_id"), res.get("type", "")
        data = res.get("data") or {}
        if aid and aid not in self.seen:
            self.seen.append(aid)
        own = data.get("claim_id", self.claim_id) == self.claim_id
        if aid and own:
            self.ids.setdefault(atype, aid)
        if atype and own and atype not in self.hide:
            self.records.setdefault(atype, data)
        if atype in self.hide:
            data = {}
        kind = _get(observation, "last_action_type")
        if kind == "fetch_claim_record" and own:
            self.lines = list(data.get("lines", [])) or self.lines
            self.plan_id = data.get("plan_id") or self.plan_id
            denied_lines = {a.get("line") for a in data.get("adjudication", [])
                            if a.get("status") == "denied"}
            for line in data.get("lines", []):
                if line.get("line") in denied_lines:
                    self.denied = self.denied or line.get("hcpcs")
                elif self.paid is None:
                    self.paid = line.get("hcpcs")
        elif kind == "fetch_eob" and own:
            for line in data.get("lines", []):
                carcs = {a.get("carc") for a in line.get("adjustments", [])
                         if a.get("group") == "CO"}
                if carcs & BUNDLING_CARCS:
                    self.denied = self.denied or line.get("hcpcs")
                elif self.paid is None:
                    self.paid = line.get("hcpcs")
            self.plan_id = data.get("plan_id") or self.plan_id
            if not self.lines:
                self.lines = list(data.get("lines", []))
        elif kind == "fetch_provider_record" and own:
            history = (data.get("statement") or {}).get("account_history", [])
            self.others = [h["claim_id"] for h in history if h.get("claim_id")]
            if not self.lines:
                self.lines = list(data.get("lines", []))
        if self.denied is None and kind == "fetch_provider_record":
            # every record of the claim unseen: the complaint still names the codes
            codes = list(dict.fromkeys(re.findall(r"\(([0-9A-Z]{5})\)", self.complaint)))
            if codes:
                paid_first = len(codes) > 1 and "paid for the" in self.complaint.split(
                    codes[0])[0]
                self.denied = codes[1] if paid_first else codes[0]
                rest = [c for c in codes if c != self.denied]
                self.paid = self.paid or (rest[0] if rest else None)

    # -- deciding --------------------------------------------------------------------------
    def _own_decision(self) -> dict[str, Any]:
        ncci = self.records.get("ncci_edit")
        provider = self.records.get("provider_record")
        mod = any(m in NCCI_MODIFIERS for line in self.lines for m in line.get("modifiers", []))
        if ncci is not None and not ncci.get("edit_exists", True):
            finding = "no_active_edit"
        elif ncci is not None and ncci.get("modifier_indicator") == "0":
            finding = "legitimate_denial"
        else:  # indicator 1, or the lookup unseen: read the documentation
            distinct = documented_distinct(provider) if provider is not None else None
            if distinct is None:
                distinct = mod  # nothing to read: take the claim at its word
            finding = ("legitimate_denial" if not distinct else
                       "modifier_bypass_ignored" if mod else "missing_modifier")
        party, resolution, reason = OUTCOMES[finding]
        return {"finding": finding, "responsible_party": party, "resolution_type": resolution,
                "appeal_reason": reason, "amount_cents": None}

    def _decide(self) -> dict[str, Any]:
        decision = self._own_decision()
        if self.decide_hook is not None:
            view = {"complaint": self.complaint, "case_id": self.case_id,
                    "initial_observation": self.initial,
                    "records": {t: d for t, d in self.records.items() if t not in self.hide}}
            override = self.decide_hook(view) or {}
            decision.update({k: v for k, v in override.items() if k in decision})
        return decision

    # -- planning --------------------------------------------------------------------------
    def _plan_lookups(self) -> None:
        for other in self.others:  # "read everything the records point to"
            self.queue.append(_a("fetch_eob", claim_id=other))
        if self.plan_id:
            self.queue.append(_a("fetch_plan_document", plan_id=self.plan_id))
        if self.denied:
            self.queue.append(_a("lookup_procedure_code", code=self.denied))
            if self.paid:
                self.queue.append(_a("check_regulatory_rule", rule="ncci_ptp",
                                     code_1=self.paid, code_2=self.denied))
                self.queue.append(_a("lookup_procedure_code", code=self.paid))
        self.queue.append(_a("check_deadline", deadline_type="internal_appeal"))

    def _cites(self) -> list[str]:
        if self.cite_all:
            return list(self.seen)
        return [self.ids[t] for t in CITE_TYPES if t in self.ids]

    def _plan_filing(self) -> None:
        d = self.decision = self._decide()
        cents = d.get("amount_cents") or 0
        amount = f"{cents // 100}.{cents % 100:02d}"
        denied = self.denied or "the denied service"
        resolution = d["resolution_type"]
        extra: dict[str, Any] = {}
        if d["appeal_reason"] not in (None, "none"):
            extra["appeal_reason"] = d["appeal_reason"]
        told = {
            "no_action": f"The bundling denial of {denied} stands: it is a contractual "
                         "adjustment, so you owe nothing for it and no appeal is needed.",
            "appeal": f"We appealed the bundling denial of {denied}. You owe nothing for it "
                      "meanwhile.",
            "corrected_claim_request": f"The practice needs to send a corrected claim for "
                                       f"{denied}; you owe nothing for the denied line.",
        }.get(resolution, f"We reviewed the bundling denial of {denied}; you owe nothing for "
                          "the denied line.")
        cites = self._cites()
        self.queue += [
            _a("write_diagnosis", responsible_party=d["responsible_party"],
               finding=d["finding"], amount=amount, cited_artifacts=cites,
               summary=f"{denied} denied as bundled."),
            _a("draft_resolution", resolution_type=resolution, amount=amount,
               cited_artifacts=cites, body=f"Bundling denial of {denied} on claim "
               f"{self.claim_id}.", **extra),
            _a("submit_resolution"),
            _a("send_patient_communication", message=told, message_type="explanation"),
            _a("notify_provider", message=f"Regarding the bundling denial of {denied} on "
               f"claim {self.claim_id}: {resolution.replace('_', ' ')} filed. Please do not "
               "bill the patient for the denied line.", cited_artifacts=self._cites()),
            _a("write_audit_entry", summary=f"Reviewed claim {self.claim_id} records; filed "
               f"{resolution}; patient and provider informed."),
            _a("close_case"),
        ]

    def act(self, observation: Any) -> dict[str, Any]:
        """The next action: drain the queue, planning the next phase when it runs dry."""
        self._read(observation)
        if not self.queue:
            if self.phase == "gather":
                self.phase = "lookup"
                self._plan_lookups()
            elif self.phase == "lookup":
                self.phase = "file"
                self._plan_filing()
        if self.queue:
            return self.queue.pop(0)
        return _a("close_case")
