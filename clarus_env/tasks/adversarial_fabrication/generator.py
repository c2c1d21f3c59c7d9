"""adversarial_fabrication scenarios: a self-pay patient's Good Faith Estimate (GFE), the bill
that came in above it, and the provider's three counter-arguments after the dispute is filed.

What varies, all derived from the data the agent can fetch:

* whether the GFE is backdated — dated before the scheduling event that the payment processor
  logged in UTC (a deposit authorization at booking), or actually delivered after the
  1- or 3-business-day deadline of 45 CFR 149.610 while dated as if on time — or timely; the
  delivery evidence sits in the processor log (estimate e-mail event) or in the facility's
  portal-message log, and timestamps are UTC while business days count in the facility's
  local time zone;
* who convened the service and issued the GFE (45 CFR 149.610): the physician practice
  (convening provider, responsible party ``provider``) or, in about 46% of scenarios, the
  ambulatory surgical center / hospital outpatient department that scheduled the procedure
  and bills its own facility charges (convening facility, responsible party ``facility``;
  the surgeon's professional fees then sit on the same GFE as a co-provider section);
* how far the convening party's bill exceeds *its own* expected charges on the GFE (co-provider
  sections may sit on the same GFE), hence whether the patient-provider dispute
  resolution (PPDR, 45 CFR 149.620: at least $400 over, within 120 calendar days of receiving
  the bill) is available (``nsa_dispute``) or the excess is a pricing error to correct
  (``balance_correction``);
* the counter-arguments' wording and which artifact refutes each.

Every price is a documented multiple of the real 2026 MPFS amount at a real locality (the
provider's stated self-pay price policy; there is no public QPA). Facility charges are not
priced by the MPFS and no public dataset of facility self-pay prices is bundled, so a convening
facility states its schedule as a multiple of the MPFS *facility-setting* amount of the
procedure (``FACILITY_MULTIPLES``), and the artifact says so. Either way the reference amount
the patient should be held to — the convening party's expected charges on the GFE — is
reproducible from the bundle.
"""

from __future__ import annotations

import datetime as dt
import random
from functools import cache
from typing import Any

from ..common import (
    FIRST,
    LAST,
    PROCESSORS,
    code_reference,
    deadline,
    dollars,
    fee_cents,
    iso,
    npi,
    pct_of,
    pick_locality,
    regulation,
)

THRESHOLD_CENTS = 40_000  # 45 CFR 149.620: at least $400 above the GFE's expected charges
PPDR_DAYS = 120  # calendar days from receipt of the initial bill
PPDR_FEE = "25.00"
MULTIPLES = (150, 175, 200, 225, 250, 275, 300)  # self-pay price, % of the MPFS amount
DELTAS = (25, 50, 75, 100, 125, 150, 200, 250)  # gross chargemaster mark-up over self-pay
DEPOSIT_PCTS = (10, 15, 20, 25, 30, 40, 50)
# A convening facility's self-pay facility charge, % of the MPFS facility-setting amount of the
# procedure (DESIGN.md: no public dataset prices facility charges; the multiple is stated).
FACILITY_MULTIPLES = (200, 250, 300, 350, 400)
FACILITY_CONVENED = 0.46  # share of scenarios whose GFE a facility convened
FACILITY_PRIOR = "93000"  # the facility's earlier pre-procedure ECG (the distractor visit)
FINDINGS = ("gfe_backdated_before_scheduling", "gfe_issued_after_deadline",
            "billed_above_gfe", "no_violation")
BUSINESS_DAYS = ("Monday-Friday excluding federal holidays (practice policy; 45 CFR 149.610 "
                 "does not define 'business day')")

# One scheduled self-pay service per package. items: (hcpcs, icd10) on the convening
# provider's GFE; changes: what the bill may show instead (sub = replaces item k, add = extra
# item), checked free of active NCCI PtP edits against the other billed codes (tests hold it);
# co: the co-provider section of the GFE (pathology), if any; prior: an earlier visit.
PACKAGES: tuple[dict[str, Any], ...] = (
    {"key": "colonoscopy", "service": "colonoscopy with biopsy", "specialty": "Gastroenterology",
     "setting": "asc", "items": (("45380", "K63.5"),),
     "changes": (("sub", 0, "45385", "K63.5", "a polyp removed by snare instead of a biopsy"),
                 ("add", None, "43239", "K21.9", "an upper endoscopy with biopsy added")),
     "co": ("88305", "K63.5"), "prior": "99203"},
    {"key": "egd", "service": "upper endoscopy with biopsy", "specialty": "Gastroenterology",
     "setting": "asc", "items": (("43239", "K21.9"),), "changes": (),
     "co": ("88305", "K21.9"), "prior": "99203"},
    {"key": "knee_arthroscopy", "service": "knee arthroscopy (meniscectomy)",
     "specialty": "Orthopedics", "setting": "asc", "items": (("29881", "M23.221"),),
     "changes": (("sub", 0, "29880", "M23.221", "both menisci treated instead of one"),),
     "co": None, "prior": "99204"},
    {"key": "carpal_tunnel", "service": "carpal tunnel release",
     "specialty": "Hand Surgery", "setting": "asc", "items": (("64721", "G56.01"),),
     "changes": (("add", None, "26055", "M65.331", "a trigger finger release added"),),
     "co": None, "prior": "99203"},
    {"key": "mri_lumbar", "service": "lumbar spine MRI", "specialty": "Imaging",
     "setting": "imaging", "items": (("72148", "M51.16"),),
     "changes": (("sub", 0, "72158", "M51.16", "the study done without and with contrast"),),
     "co": None, "prior": "72100"},
    {"key": "mri_knee", "service": "knee MRI", "specialty": "Imaging", "setting": "imaging",
     "items": (("73721", "M25.561"),),
     "changes": (("sub", 0, "73723", "M25.561", "the study done without and with contrast"),),
     "co": None, "prior": "73562"},
    {"key": "sleep_study", "service": "overnight sleep study", "specialty": "Sleep Medicine",
     "setting": "sleep", "items": (("95810", "G47.33"),),
     "changes": (("sub", 0, "95811", "G47.33", "a split-night study with CPAP titration"),),
     "co": None, "prior": "99203"},
    {"key": "excision", "service": "excision of a skin lesion with layered repair",
     "specialty": "Dermatology", "setting": "office",
     "items": (("11403", "D23.5"), ("12032", "D23.5")),
     "changes": (("sub", 0, "11406", "D23.5", "a larger excision than planned"),),
     "co": ("88305", "D23.5"), "prior": "99203"},
    {"key": "septoplasty", "service": "septoplasty with turbinate reduction",
     "specialty": "ENT", "setting": "asc", "items": (("30520", "J34.2"), ("30140", "J34.3")),
     "changes": (("add", None, "31256", "J32.0", "a maxillary sinus procedure added"),),
     "co": None, "prior": "99204"},
    {"key": "cataract", "service": "cataract surgery", "specialty": "Ophthalmology",
     "setting": "asc", "items": (("66984", "H25.11"),),
     "changes": (("sub", 0, "66982", "H25.11", "the surgery billed as complex"),),
     "co": None, "prior": "92004"},
    {"key": "cholecystectomy", "service": "laparoscopic gallbladder removal",
     "specialty": "General Surgery", "setting": "hopd", "items": (("47562", "K80.20"),),
     "changes": (("sub", 0, "47563", "K80.20", "a cholangiogram added to the surgery"),),
     "co": ("88304", "K80.20"), "prior": "99203"},
    {"key": "hernia", "service": "inguinal hernia repair", "specialty": "General Surgery",
     "setting": "asc", "items": (("49505", "K40.90"),),
     "changes": (("sub", 0, "49507", "K40.30", "the hernia repaired as incarcerated"),),
     "co": None, "prior": "99203"},
    {"key": "echo", "service": "echocardiogram", "specialty": "Cardiology",
     "setting": "office", "items": (("93306", "R01.1"),),
     "changes": (("add", None, "93356", "R01.1", "strain imaging added"),),
     "co": None, "prior": "99204"},
    {"key": "vasectomy", "service": "vasectomy", "specialty": "Urology", "setting": "office",
     "items": (("55250", "Z30.2"),), "changes": (), "co": None, "prior": "99203"},
    {"key": "leep", "service": "LEEP cone procedure of the cervix",
     "specialty": "Women's Health", "setting": "office", "items": (("57461", "N87.1"),),
     "changes": (), "co": ("88307", "N87.1"), "prior": "57455"},
)
# Packages a facility (ASC or hospital outpatient department) can convene: it schedules the
# procedure, issues the GFE and bills its own facility charges.
FACILITY_PACKAGES = tuple(p for p in PACKAGES if p["setting"] in ("asc", "hopd"))
SETTINGS = {  # setting -> (place of service, description, MPFS facility rate?, facility type)
    "asc": ("24", "Ambulatory surgical center", True, "ambulatory surgical center"),
    "hopd": ("22", "On-campus outpatient hospital", True, "hospital outpatient department"),
    "office": ("11", "Office", False, "physician office"),
    "imaging": ("11", "Office", False, "independent diagnostic imaging center"),
    "sleep": ("11", "Office", False, "independent sleep diagnostic center"),
}
PLACES = ("Lakeview", "Riverside", "Summit", "Cedar Grove", "Harbor", "Northside", "Prairie",
          "Bayview", "Hillcrest", "Metro", "Willow Creek", "Granite Peak")
SUFFIXES = ("Associates", "Group", "Specialists", "Partners", "Clinic")
ASCS = ("Mercy Ambulatory Surgery Center", "Northgate Surgery Center",
        "Riverbend Outpatient Surgery Center", "Lakeside Surgical Suites")
HOSPITALS = ("St. Catherine Regional Hospital", "Valley General Hospital",
             "Good Shepherd Medical Center")
IMAGING = ("Lakeshore Imaging Center", "Summit Open MRI", "ClearView Diagnostic Imaging")
SLEEP = ("Restwell Sleep Diagnostics Center", "Harbor Sleep Lab", "Quiet Night Sleep Center")
PATHOLOGY = ("Meridian Pathology Associates", "Clearwater Pathology Lab",
             "Northstar Anatomic Pathology")
LAW_FIRMS = (("Hale", "Whitmore"), ("Barrett", "Quinn"), ("Sterling", "Voss"),
             ("Calder", "Ames"))
CARD_BRANDS = ("Visa", "Mastercard", "Discover", "American Express")

# State -> (IANA zone, standard UTC offset in hours, observes US daylight time).
_ZONES = {
    "eastern": ("America/New_York", -5, True), "central": ("America/Chicago", -6, True),
    "mountain": ("America/Denver", -7, True), "pacific": ("America/Los_Angeles", -8, True),
}
TZ_BY_STATE: dict[str, tuple[str, int, bool]] = {
    **{s: _ZONES["eastern"] for s in ("CT", "DE", "DC", "FL", "GA", "ME", "MD", "MA", "NH",
                                      "NJ", "NY", "NC", "OH", "PA", "RI", "SC", "VT", "VA",
                                      "WV")},
    "MI": ("America/Detroit", -5, True), "IN": ("America/Indiana/Indianapolis", -5, True),
    "KY": ("America/Kentucky/Louisville", -5, True),
    **{s: _ZONES["central"] for s in ("AL", "AR", "IL", "IA", "KS", "LA", "MN", "MS", "MO",
                                      "NE", "ND", "OK", "SD", "TN", "TX", "WI")},
    **{s: _ZONES["mountain"] for s in ("CO", "MT", "NM", "UT", "WY")},
    "ID": ("America/Boise", -7, True), "AZ": ("America/Phoenix", -7, False),
    **{s: _ZONES["pacific"] for s in ("CA", "NV", "OR", "WA")},
    "AK": ("America/Anchorage", -9, True), "HI": ("Pacific/Honolulu", -10, False),
    "PR": ("America/Puerto_Rico", -4, False), "VI": ("America/St_Thomas", -4, False),
}


# -- calendar: federal holidays, business days, US daylight time ------------------------------
def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    d = dt.date(year, month, 1)
    d += dt.timedelta(days=(weekday - d.weekday()) % 7)
    return d + dt.timedelta(weeks=n - 1)


def _last_weekday(year: int, month: int, weekday: int) -> dt.date:
    d = dt.date(year, month + 1, 1) - dt.timedelta(days=1)
    return d - dt.timedelta(days=(d.weekday() - weekday) % 7)


def _observed(d: dt.date) -> dt.date:
    return d - dt.timedelta(days=1) if d.weekday() == 5 else (
        d + dt.timedelta(days=1) if d.weekday() == 6 else d)


@cache
def federal_holidays(year: int) -> frozenset[dt.date]:
    """The eleven federal holidays (5 U.S.C. 6103), as observed, for one year."""
    fixed = [dt.date(year, 1, 1), dt.date(year, 6, 19), dt.date(year, 7, 4),
             dt.date(year, 11, 11), dt.date(year, 12, 25)]
    moving = [_nth_weekday(year, 1, 0, 3), _nth_weekday(year, 2, 0, 3),
              _last_weekday(year, 5, 0), _nth_weekday(year, 9, 0, 1),
              _nth_weekday(year, 10, 0, 2), _nth_weekday(year, 11, 3, 4)]
    return frozenset([*(_observed(d) for d in fixed), *moving])


def is_business_day(d: dt.date) -> bool:
    return (d.weekday() < 5 and d not in federal_holidays(d.year)
            and d not in federal_holidays(d.year + 1))  # Jan 1 observed on Dec 31


def add_business_days(d: dt.date, n: int) -> dt.date:
    """``n`` business days after ``d`` (Mon–Fri, federal holidays excluded)."""
    while n > 0:
        d += dt.timedelta(days=1)
        if is_business_day(d):
            n -= 1
    return d


def utc_offset(state: str, local: dt.date) -> int:
    """UTC offset (hours) on a local date; daylight time from the 2nd Sunday of March to the
    1st Sunday of November (exact for the 07:00–23:59 local times used here)."""
    _, std, dst = TZ_BY_STATE[state]
    if dst:
        start, end = dst_period(local.year)
        if start <= local < end:
            return std + 1
    return std


@cache
def dst_period(year: int) -> tuple[dt.date, dt.date]:
    """US daylight time: 2nd Sunday of March to 1st Sunday of November (15 U.S.C. 260a)."""
    return _nth_weekday(year, 3, 6, 2), _nth_weekday(year, 11, 6, 1)


def utc_stamp(state: str, local: dt.date, minute_of_day: int, second: int = 0) -> str:
    """The ISO-8601 UTC ('Z') timestamp of a local wall-clock time in the state's zone."""
    local_dt = dt.datetime(local.year, local.month, local.day) + dt.timedelta(
        minutes=minute_of_day, seconds=second)
    utc = local_dt - dt.timedelta(hours=utc_offset(state, local))
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


def _offset_text(hours: int) -> str:
    return f"{'-' if hours < 0 else '+'}{abs(hours):02d}:00"


def _fmt(d: dt.date) -> str:
    return f"{d:%B} {d.day}, {d.year}"


# -- money from the bundle ---------------------------------------------------------------------
_FEES: dict[tuple[int, str, str, str, bool], int] = {}


def fee(ref: Any, code: str, loc: dict[str, Any], facility: bool) -> int:
    """MPFS amount in cents, cached per process (keyed by id(ref)): compiles stay fast."""
    key = (id(ref), code, loc["mac"], loc["locality"], facility)
    if key not in _FEES:
        _FEES[key] = fee_cents(ref, code, loc, facility=facility)
    return _FEES[key]


_CODE_REFS: dict[tuple[int, str, str, str, bool], dict[str, Any]] = {}


def _code_ref(ref: Any, code: str, loc: dict[str, Any], facility: bool) -> dict[str, Any]:
    key = (id(ref), code, loc["mac"], loc["locality"], facility)
    if key not in _CODE_REFS:
        _CODE_REFS[key] = code_reference(ref, code, loc, facility=facility)
    art = _CODE_REFS[key]
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in art["data"].items()}
    return {**art, "data": data}


_DESC: dict[tuple[int, str], str] = {}


def _describe(ref: Any, code: str) -> str:
    key = (id(ref), code)
    if key not in _DESC:
        _DESC[key] = ref.describe(code) or code
    return _DESC[key]


# -- small helpers -------------------------------------------------------------------------------
def _digits(rng: random.Random, n: int) -> str:
    return str(rng.randrange(10 ** (n - 1), 10 ** n))


def _token(rng: random.Random, n: int, alphabet: str = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
           ) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _tin(rng: random.Random) -> str:
    return f"{rng.randrange(10, 99)}-{rng.randrange(1_000_000, 9_999_999)}"


def _date_between(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=rng.randrange((end - start).days + 1))


def _bill_candidates(gfe_fees: list[int], m: int, changes: tuple[Any, ...],
                     change_fees: list[int]) -> list[tuple[int, tuple[Any, ...]]]:
    """Every bill this package can show: (excess over the GFE in cents, recipe).

    A recipe is ``(kind, line, delta, change, change_delta)``: ``price`` marks one GFE line up
    to the gross chargemaster rate (self-pay % + delta); ``change`` bills a package change
    (substituted or added item) at self-pay % + change_delta, optionally with one other GFE
    line marked up as well.
    """
    out: list[tuple[int, tuple[Any, ...]]] = []
    base = [pct_of(f, m) for f in gfe_fees]
    for i, f in enumerate(gfe_fees):
        for d in DELTAS:
            out.append((pct_of(f, m + d) - base[i], ("price", i, d, None, 0)))
    for c, (ch, cf) in enumerate(zip(changes, change_fees, strict=True)):
        for cd in (0, 50, 100):
            new = pct_of(cf, m + cd)
            removed = base[ch[1]] if ch[0] == "sub" else 0
            extra_lines = [(None, 0)] + [(i, d) for i in range(len(gfe_fees))
                                         if not (ch[0] == "sub" and i == ch[1])
                                         for d in DELTAS[:4]]
            for i, d in extra_lines:
                up = 0 if i is None else pct_of(gfe_fees[i], m + d) - base[i]
                out.append((new - removed + up, ("change", i, d, c, cd)))
    return out


# -- the scenario ----------------------------------------------------------------------------
def generate(seed: int, rng: random.Random, ref: Any) -> dict[str, Any]:
    """Compile one scenario (pure: all randomness from ``rng``)."""
    # Branches first, so their frequencies do not depend on what the data draws consumed.
    r = rng.random()
    timing = ("dated_before_scheduling" if r < 0.25 else
              "issued_after_deadline" if r < 0.5 else "timely")
    r = rng.random()
    amount_branch = "under" if r < 0.36 else ("over_open" if r < 0.86 else "over_closed")
    delivery_in = "processor_log" if rng.random() < 0.34 else "facility_record"
    emergency_refuter = "claim_record" if rng.random() < 0.5 else "facility_record"
    near_threshold = rng.random() < 0.35
    want_change = rng.random() < 0.6
    convener = "facility" if rng.random() < FACILITY_CONVENED else "provider"
    packages = PACKAGES if convener == "provider" else FACILITY_PACKAGES

    # Package, locality, prices: redraw until the branch's excess window is reachable.
    for _ in range(200):
        pkg = rng.choice(packages)
        loc = pick_locality(rng, ref)
        m = rng.choice(MULTIPLES if convener == "provider" else FACILITY_MULTIPLES)
        pos, pos_desc, facility_rate, facility_type = SETTINGS[pkg["setting"]]
        gfe_fees = [fee(ref, c, loc, facility_rate) for c, _ in pkg["items"]]
        change_fees = [fee(ref, ch[2], loc, facility_rate) for ch in pkg["changes"]]
        allow_change = amount_branch == "over_open"
        cands = _bill_candidates(gfe_fees, m, pkg["changes"] if allow_change else (),
                                 change_fees if allow_change else [])
        if amount_branch == "under":
            pool = [c for c in cands if 4_000 <= c[0] < THRESHOLD_CENTS]
        else:
            pool = [c for c in cands if THRESHOLD_CENTS <= c[0] <= 250_000]
        if not pool:
            continue
        if amount_branch == "over_open" and want_change:
            pool = [c for c in pool if c[1][0] == "change"] or pool
        if near_threshold:
            pool = [c for c in pool if 34_000 <= c[0] <= 46_000] or pool
        break
    else:  # pragma: no cover - every package reaches every window at some multiple
        raise RuntimeError("no bill fits the branch")
    excess, recipe = rng.choice(pool)
    kind, up_line, up_delta, change_idx, change_delta = recipe
    state = loc["state"]
    tz_name, std_off, observes_dst = TZ_BY_STATE[state]

    # People, parties, ids.
    patient = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    dob = dt.date(rng.randrange(1952, 2002), rng.randrange(1, 13), rng.randrange(1, 29))
    case_id = f"CLR-{seed}-{_token(rng, 4)}"
    practice = (f"{rng.choice(PLACES)} {pkg['specialty']} {rng.choice(SUFFIXES)}"
                if pkg["setting"] not in ("imaging", "sleep") else
                rng.choice(IMAGING if pkg["setting"] == "imaging" else SLEEP))
    physician = f"Dr. {rng.choice(FIRST)} {rng.choice(LAST)}"
    prov = {"name": practice, "npi": npi(rng), "tin": _tin(rng), "specialty": pkg["specialty"]}
    if pkg["setting"] == "asc":
        fac_name = rng.choice(ASCS)
    elif pkg["setting"] == "hopd":
        fac_name = f"{rng.choice(HOSPITALS)} - Outpatient Surgery"
    elif pkg["setting"] == "office":
        fac_name = f"{practice} - main office"
    else:
        fac_name = practice
    fac_npi, fac_tin = npi(rng), _tin(rng)
    if convener == "facility":
        biller = {"name": fac_name, "npi": fac_npi, "tin": fac_tin, "type": facility_type}
        signer = rng.choice(("Chief Medical Officer", "Director of Perioperative Services"))
    else:
        biller, signer = prov, physician
    billing = biller["name"]
    claim_id = f"SP-{_digits(rng, 7)}"
    old_claim_id = f"SP-{_digits(rng, 7)}"
    while old_claim_id == claim_id:
        old_claim_id = f"SP-{_digits(rng, 7)}"
    facility_id = f"F-{_digits(rng, 6)}"
    account = f"A-{_digits(rng, 7)}"
    appt = f"APT-{_digits(rng, 7)}"
    gfe_id = f"GFE-{_digits(rng, 6)}"
    ids = {t: f"{t}-{_digits(rng, 6)}" for t in ("CLM", "PRV", "LED", "PLOG", "FAC")}
    old_ids = {"CLM": f"CLM-{_digits(rng, 6)}", "PRV": f"PRV-{_digits(rng, 6)}"}
    while old_ids["CLM"] == ids["CLM"] or old_ids["PRV"] == ids["PRV"]:
        old_ids = {"CLM": f"CLM-{_digits(rng, 6)}", "PRV": f"PRV-{_digits(rng, 6)}"}
    merchant_id = _digits(rng, 12)
    card = rng.choice(CARD_BRANDS)
    last4 = _digits(rng, 4)

    # Dates: scheduling (the processor's deposit authorization), service, GFE, bill, today.
    rule_bd = 1 if rng.random() < 0.5 else 3
    lead_bd = rng.randrange(3, 10) if rule_bd == 1 else rng.randrange(10, 23)
    sched = _date_between(rng, dt.date(2026, 2, 2), dt.date(2026, 7, 24))
    dos = add_business_days(sched, lead_bd)
    gfe_deadline = add_business_days(sched, rule_bd)
    sched_off = utc_offset(state, sched)
    utc_flip = rng.random() < 0.4  # evening booking: the UTC date is the next calendar day
    first_flip_minute = (24 + sched_off) * 60
    if utc_flip:
        sched_min = rng.randrange(first_flip_minute, 23 * 60 + 20)
    else:
        sched_min = rng.randrange(7 * 60, min(first_flip_minute, 23 * 60 + 20))
    sched_sec = rng.randrange(60)

    def delivery_minute(day: dt.date, after: int | None, flip: bool) -> int:
        """A local minute on ``day`` (after ``after`` if given); ``flip`` puts it late enough
        in the evening that the UTC date is the next calendar day, when that is possible."""
        lo = 7 * 60 if after is None else after + 1
        hi = 23 * 60 + 50
        first = (24 + utc_offset(state, day)) * 60
        if flip and max(lo, first) < hi:
            return rng.randrange(max(lo, first), hi)
        if not flip and lo < min(hi, first):
            return rng.randrange(lo, min(hi, first))
        return rng.randrange(lo, hi)

    if timing == "timely":
        k = rng.randrange(rule_bd + 1)
        if rule_bd == 3 and rng.random() < 0.5:
            k = rng.choice((2, 3))  # on time under the 3-day rule, late under a 1-day misreading
        gfe_date = sched if k == 0 else add_business_days(sched, k)
        delivered = gfe_date
    elif timing == "dated_before_scheduling":
        # Sent on time, but dated days before the booking existed: the date is the only lie,
        # so the finding is unambiguous.
        gfe_date = sched - dt.timedelta(days=rng.randrange(1, 7))
        k = rng.randrange(rule_bd + 1)
        delivered = sched if k == 0 else add_business_days(sched, k)
    else:
        k = rng.randrange(rule_bd + 1)
        gfe_date = sched if k == 0 else add_business_days(sched, k)
        x_max = lead_bd - rule_bd - 1
        x = 1 if rule_bd == 1 and rng.random() < 0.5 else rng.randrange(1, x_max + 1)
        delivered = add_business_days(gfe_deadline, x)
    same_day = delivered == sched
    deliv_min = delivery_minute(delivered, sched_min if same_day else None,
                                rng.random() < 0.4)
    deliv_stamp = utc_stamp(state, delivered, deliv_min, rng.randrange(60))
    sched_stamp = utc_stamp(state, sched, sched_min, sched_sec)
    provider_scheduled_on = gfe_date if timing == "dated_before_scheduling" else sched

    statement_date = dos + dt.timedelta(days=rng.randrange(7, 29))
    by_mail = rng.random() < 0.5
    receipt = statement_date + dt.timedelta(days=rng.randrange(3, 7) if by_mail else 0)
    closed = amount_branch == "over_closed" or (amount_branch == "under" and rng.random() < 0.2)
    if closed:
        age = rng.choice((121, 122)) if rng.random() < 0.3 else rng.randrange(121, 171)
    else:  # open under both readings: from receipt (the rule) and from the bill's date
        last = PPDR_DAYS - (receipt - statement_date).days
        age = last - rng.randrange(3) if rng.random() < 0.15 else rng.randrange(9, last - 2)
    today = receipt + dt.timedelta(days=age)
    window_open = age <= PPDR_DAYS
    assert window_open != closed

    # Prices: GFE lines at the self-pay multiple; the bill per the recipe.
    setting_word = "facility" if facility_rate else "non-facility"
    what = "facility charge" if convener == "facility" else "professional service"

    def gfe_item(i: int, code: str, dx: str, f: int, pct: int, kind: str) -> dict[str, Any]:
        return {"line": i + 1, "service": _describe(ref, code), "hcpcs": code, "modifiers": [],
                "units": 1, "diagnosis_codes": [dx], "mpfs_amount": dollars(f),
                "mpfs_setting": setting_word, "multiple_pct": pct,
                "pricing": f"{kind}: {pct}% of the MPFS {setting_word} amount",
                "expected_charge": dollars(pct_of(f, pct))}

    gfe_items = [gfe_item(i, c, dx, f, m, what)
                 for i, ((c, dx), f) in enumerate(zip(pkg["items"], gfe_fees, strict=True))]
    gfe_total = sum(pct_of(f, m) for f in gfe_fees)
    billed: list[dict[str, Any]] = [
        {"hcpcs": c, "dx": dx, "fee": f, "pct": m, "on_gfe": True}
        for (c, dx), f in zip(pkg["items"], gfe_fees, strict=True)]
    change_note = None
    if kind == "price" or up_line is not None:
        billed[up_line]["pct"] = m + up_delta
    if kind == "change":
        ch = pkg["changes"][change_idx]
        new = {"hcpcs": ch[2], "dx": ch[3], "fee": change_fees[change_idx],
               "pct": m + change_delta, "on_gfe": False}
        change_note = ch[4]
        if ch[0] == "sub":
            billed[ch[1]] = new
        else:
            billed.append(new)
    for b in billed:
        b["amount"] = pct_of(b["fee"], b["pct"])
    billed_total = sum(b["amount"] for b in billed)
    assert billed_total - gfe_total == excess

    cos: list[dict[str, Any]] = []
    if convener == "facility":  # the surgeon's professional fees: a co-provider section
        pro_m = rng.choice(MULTIPLES)
        pro_items = [gfe_item(i, c, dx, f, pro_m, "professional service")
                     for i, ((c, dx), f) in enumerate(zip(pkg["items"], gfe_fees, strict=True))]
        cos.append({"role": "co-provider", "name": practice, "npi": prov["npi"],
                    "tin": prov["tin"], "place_of_service": pos, "items": pro_items,
                    "expected_total": dollars(sum(pct_of(f, pro_m) for f in gfe_fees)),
                    "_cents": sum(pct_of(f, pro_m) for f in gfe_fees),
                    "note": f"{physician}'s professional services; billed separately by "
                            f"{practice}."})
    co = None
    co_m = None
    co_total = 0
    if pkg["co"] is not None and rng.random() < 0.8:
        co_code, co_dx = pkg["co"]
        co_fee = fee(ref, co_code, loc, False)
        co_m = rng.choice(MULTIPLES)
        co_units = rng.choice((1, 2)) if co_code == "88305" else 1
        co_total = pct_of(co_fee, co_m) * co_units
        co = {"role": "co-provider", "name": rng.choice(PATHOLOGY), "npi": npi(rng),
              "tin": _tin(rng), "place_of_service": "81",
              "items": [{"line": 1, "service": _describe(ref, co_code), "hcpcs": co_code,
                         "modifiers": [], "units": co_units, "diagnosis_codes": [co_dx],
                         "mpfs_amount": dollars(co_fee), "mpfs_setting": "non-facility",
                         "multiple_pct": co_m,
                         "pricing": f"{co_m}% of the MPFS non-facility amount, per unit",
                         "expected_charge": dollars(co_total)}],
              "expected_total": dollars(co_total),
              "note": "Bills separately for the specimen examination.", "_cents": co_total}
        cos.append(co)
    grand_total = gfe_total + sum(c.pop("_cents") for c in cos)

    dep_pct = rng.choice(DEPOSIT_PCTS)
    deposit = pct_of(gfe_total, dep_pct)
    balance = billed_total - deposit
    auto_capture = rng.random() < 0.6

    prior_code = pkg["prior"] if convener == "provider" else FACILITY_PRIOR
    prior_fee = fee(ref, prior_code, loc, False)
    prior_amount = pct_of(prior_fee, m)
    prior_date = _date_between(rng, dt.date(2026, 1, 5), sched - dt.timedelta(days=7))
    if not is_business_day(prior_date):
        prior_date = add_business_days(prior_date, 1)
    include_old_claim = rng.random() < 0.85
    include_old_record = include_old_claim and rng.random() < 0.3

    policy = {
        "schedule": f"Medicare Physician Fee Schedule {ref.release}",
        "mac": loc["mac"], "locality": loc["locality"], "locality_name": loc["locality_name"],
        "setting": setting_word, "self_pay_multiple_pct": m, "charges": what,
        "statement": (f"Self-pay price of each service = {m}% of the {ref.release} Medicare "
                      f"Physician Fee Schedule {setting_word} amount for Medicare locality "
                      f"{loc['mac']}/{loc['locality']} ({loc['locality_name']}, {state}), "
                      "per unit, each service priced on its own. No public QPA exists for "
                      "self-pay care; this documented schedule is the reference for the "
                      "estimate."),
    }
    if convener == "facility":
        policy["statement"] = (
            f"Self-pay facility charge of each procedure = {m}% of the {ref.release} Medicare "
            f"Physician Fee Schedule facility-setting amount of that procedure for Medicare "
            f"locality {loc['mac']}/{loc['locality']} ({loc['locality_name']}, {state}), per "
            "unit, each procedure priced on its own. Facility charges are not priced by the "
            "MPFS and no public QPA or facility price dataset exists for self-pay care; this "
            "documented multiple of the MPFS facility-setting amount is the reference for the "
            "facility's expected charges on the estimate. Professional fees are billed "
            "separately by the surgeon's practice.")

    # -- artifacts ---------------------------------------------------------------------------
    claim_lines = [{"line": i + 1, "hcpcs": b["hcpcs"], "modifiers": [], "units": 1,
                    "diagnosis_pointer": "A", "emergency_indicator": "N",
                    "billed": dollars(b["amount"])} for i, b in enumerate(billed)]
    diagnoses = list(dict.fromkeys(b["dx"] for b in billed))
    claim = {
        "claim_id": claim_id, "patient_id": case_id, "payer": "none - self-pay patient (no "
        "insurance claim filed)", "provider": {"name": billing, "npi": biller["npi"]},
        "billing_entity": "facility (facility charges)" if convener == "facility" else
        "professional (physician practice)",
        "rendering_physician": physician, "facility_id": facility_id,
        "place_of_service": pos, "place_of_service_description": pos_desc,
        "encounter": {"type": "scheduled", "admission_type": "elective",
                      "appointment_id": appt, "emergency_services": False},
        "date_of_service": iso(dos), "submitted_date": iso(statement_date),
        "status": "billed to patient (self-pay)", "diagnoses": diagnoses,
        "lines": claim_lines, "total_billed": dollars(billed_total),
    }
    notes = [f"Patient elected self-pay for the {pkg['service']}.",
             f"Good Faith Estimate issued by {billing} as convening "
             f"{'facility' if convener == 'facility' else 'provider'}; see GFE date.",
             f"Statement {statement_date:%m/%d/%Y}: balance due within 30 days; unpaid balances "
             "may be referred to collections."]
    if change_note:
        notes.insert(1, f"Operative/technical note: {change_note}.")
    if convener == "facility":
        notes.insert(1, f"Procedure scheduled by {fac_name}; facility charges only. "
                        f"{physician} ({practice}) bills professional services separately.")
    stmt_id = f"ST-{_digits(rng, 6)}"
    provider_record = {
        "claim_id": claim_id, "provider": biller, "patient_account": account,
        "patient": {"name": patient, "date_of_birth": iso(dob)},
        "appointment": {"appointment_id": appt, "service": pkg["service"],
                        "service_date": iso(dos), "scheduled_on": iso(provider_scheduled_on),
                        "facility_id": facility_id},
        "self_pay_price_policy": policy,
        "gfe": {
            "gfe_id": gfe_id, "gfe_date": iso(gfe_date), "appointment_id": appt,
            "patient": {"name": patient, "date_of_birth": iso(dob)},
            "primary_service": pkg["service"], "scheduled_service_date": iso(dos),
            "delivery_method": "e-mail" if delivery_in == "processor_log" else "patient portal",
            "providers": [{"role": f"convening {convener}",
                           "name": billing, "npi": biller["npi"], "tin": biller["tin"],
                           "place_of_service": pos, "facility": fac_name, "items": gfe_items,
                           "expected_total": dollars(gfe_total)}, *cos],
            "total_expected_charges": dollars(grand_total),
            "disclaimers": [
                "This Good Faith Estimate shows the costs of items and services that are "
                "reasonably expected for your health care needs. It is an estimate only.",
                "If you are billed for at least $400 more than the expected charges of any "
                "provider or facility listed, you may dispute the bill (patient-provider "
                "dispute resolution).",
                "Start a dispute within 120 calendar days of receiving the original bill; "
                f"the administrative fee is ${PPDR_FEE}. Disputing will not affect your care.",
            ],
        },
        "lines": [{"line": i + 1, "hcpcs": b["hcpcs"], "description": _describe(ref, b["hcpcs"]),
                   "units": 1, "charge": dollars(b["amount"])} for i, b in enumerate(billed)],
        "statement": {"statement_id": stmt_id, "statement_date": iso(statement_date),
                      "total_charges": dollars(billed_total), "payments": dollars(deposit),
                      "balance_due": dollars(balance)},
        "notes": notes,
        "other_claims_on_account": [old_claim_id] if include_old_claim else [],
        "business_days": BUSINESS_DAYS,
    }
    capture_day = sched if auto_capture else dos
    entries = [
        {"date": iso(prior_date), "type": "charge",
         "description": f"{prior_code} {_describe(ref, prior_code)} (claim {old_claim_id})",
         "amount": dollars(prior_amount), "reference": old_claim_id},
        {"date": iso(prior_date), "type": "patient_payment",
         "description": f"Card payment {card} ****{last4}", "amount": dollars(-prior_amount),
         "reference": old_claim_id},
        {"date": iso(capture_day), "type": "patient_payment",
         "description": f"Scheduling deposit, appointment {appt} ({card} ****{last4})",
         "amount": dollars(-deposit), "reference": appt},
        *({"date": iso(dos), "type": "charge",
           "description": f"{b['hcpcs']} {_describe(ref, b['hcpcs'])}",
           "amount": dollars(b["amount"]), "reference": claim_id} for b in billed),
    ]
    entries.sort(key=lambda e: e["date"])
    ledger = {
        "patient_id": case_id, "account_id": account, "entries": entries,
        "balance": dollars(balance),
        "sign_convention": "charges positive; payments and credits negative",
        "statement": {"statement_id": stmt_id, "statement_date": iso(statement_date),
                      "delivery_method": "USPS first-class mail" if by_mail else "patient portal",
                      "delivered_to_patient": iso(receipt),
                      "balance_due": dollars(balance)},
    }

    def txn(stamp: str, ttype: str, amount: int, status: str, ref_: str, desc: str,
            code: str | None = None) -> dict[str, Any]:
        return {"transaction_id": f"txn_{rng.getrandbits(64):016x}", "type": ttype,
                "amount": dollars(amount), "currency": "USD", "timestamp": stamp,
                "card_brand": card, "last4": last4,
                "auth_code": code or _token(rng, 6, "0123456789ABCDEF"), "status": status,
                "merchant_reference": ref_, "description": desc}

    auth_code = _token(rng, 6, "0123456789ABCDEF")
    prior_stamp = utc_stamp(state, prior_date, rng.randrange(9 * 60, 17 * 60), rng.randrange(60))
    transactions = [
        txn(prior_stamp, "sale", prior_amount, "settled", old_claim_id,
            f"Office payment, claim {old_claim_id}"),
        txn(sched_stamp, "authorization", deposit, "approved", appt,
            f"Scheduling deposit at online booking: {pkg['service']}, appointment {appt} on "
            f"{iso(dos)}", auth_code),
    ]
    if auto_capture:
        cap_stamp = utc_stamp(state, sched, sched_min, sched_sec + rng.randrange(3, 30))
    else:
        cap_stamp = utc_stamp(state, dos, rng.randrange(6 * 60 + 30, 9 * 60), rng.randrange(60))
    transactions.append(txn(cap_stamp, "capture", deposit, "settled", appt,
                            f"Capture of deposit authorization {auth_code}", auth_code))
    receipt_stamp = utc_stamp(state, sched, min(sched_min + 1, 23 * 60 + 59), 30)
    events = [{"event_id": f"evt_{rng.getrandbits(48):012x}",
               "type": "notification.email.delivered", "timestamp": receipt_stamp,
               "template": "deposit_receipt", "merchant_reference": appt,
               "recipient": f"{patient[0].lower()}***@example.com"}]
    pre_day = dos - dt.timedelta(days=2)  # the processor log alone times the booking
    portal = [{"message_id": f"MSG-{_digits(rng, 7)}",
               "timestamp": utc_stamp(state, pre_day, rng.randrange(9 * 60, 16 * 60), 0),
               "subject": f"Preparing for your {pkg['service']}", "status": "read"}]
    if delivery_in == "processor_log":
        events.append({"event_id": f"evt_{rng.getrandbits(48):012x}",
                       "type": "notification.email.delivered", "timestamp": deliv_stamp,
                       "template": "good_faith_estimate", "document_id": gfe_id,
                       "merchant_reference": appt,
                       "recipient": f"{patient[0].lower()}***@example.com"})
    else:
        portal.append({"message_id": f"MSG-{_digits(rng, 7)}", "timestamp": deliv_stamp,
                       "subject": f"Your Good Faith Estimate {gfe_id}", "attachment": gfe_id,
                       "status": "delivered"})
    events.sort(key=lambda e: e["timestamp"])
    portal.sort(key=lambda e: e["timestamp"])
    transactions.sort(key=lambda t: t["timestamp"])
    processor_log = {
        "patient_id": case_id, "processor": rng.choice(PROCESSORS),
        "merchant": {"name": billing, "merchant_id": merchant_id},
        "timezone": "UTC (all timestamps ISO-8601, 'Z')", "transactions": transactions,
        "events": events,
    }
    dst_start, dst_end = dst_period(2026)
    facility = {
        "facility_id": facility_id, "name": fac_name, "type": facility_type,
        "npi": fac_npi, "network_status": "not applicable (self-pay patient)",
        "state": state, "time_zone": tz_name,
        "utc_offsets": ({"standard": _offset_text(std_off),
                         "daylight": _offset_text(std_off + 1),
                         "daylight_period_2026": f"{iso(dst_start)} to {iso(dst_end)}"}
                        if observes_dst else {"standard": _offset_text(std_off),
                                              "daylight": "not observed"}),
        "business_days": BUSINESS_DAYS,
        "has_emergency_department": pkg["setting"] == "hopd",
        "encounter": {"appointment_id": appt, "date": iso(dos),
                      "registration": "scheduled outpatient appointment",
                      "arrival": "scheduled check-in", "emergency_department_visit": False,
                      "place_of_service": pos},
        "portal_messages": portal,
    }
    artifacts = [
        {"artifact_id": ids["CLM"], "type": "claim_record", "party": "provider",
         "key": claim_id, "distractor": False, "data": claim},
        {"artifact_id": ids["PRV"], "type": "provider_record", "party": "provider",
         "key": claim_id, "distractor": False, "data": provider_record},
        {"artifact_id": ids["LED"], "type": "payment_ledger", "party": "provider",
         "key": case_id, "distractor": False, "data": ledger},
        {"artifact_id": ids["PLOG"], "type": "processor_log", "party": "payment_processor",
         "key": case_id, "distractor": False, "data": processor_log},
        {"artifact_id": ids["FAC"], "type": "facility_record", "party": "provider",
         "key": facility_id, "distractor": False, "data": facility},
    ]
    if include_old_claim:
        artifacts.append({
            "artifact_id": old_ids["CLM"], "type": "claim_record", "party": "provider",
            "key": old_claim_id, "distractor": True,
            "data": {"claim_id": old_claim_id, "patient_id": case_id,
                     "payer": "none - self-pay patient",
                     "provider": {"name": billing, "npi": biller["npi"]},
                     "place_of_service": "11" if convener == "provider" else pos,
                     "date_of_service": iso(prior_date),
                     "submitted_date": iso(prior_date), "status": "paid in full",
                     "diagnoses": [pkg["items"][0][1]],
                     "lines": [{"line": 1, "hcpcs": prior_code, "modifiers": [], "units": 1,
                                "billed": dollars(prior_amount)}],
                     "total_billed": dollars(prior_amount)}})
    if include_old_record:
        artifacts.append({
            "artifact_id": old_ids["PRV"], "type": "provider_record", "party": "provider",
            "key": old_claim_id, "distractor": True,
            "data": {"claim_id": old_claim_id, "provider": biller, "patient_account": account,
                     "lines": [{"line": 1, "hcpcs": prior_code,
                                "description": _describe(ref, prior_code), "units": 1,
                                "charge": dollars(prior_amount)}],
                     "statement": {"total_charges": dollars(prior_amount),
                                   "payments": dollars(prior_amount), "balance_due": "0.00"},
                     "notes": ["Visit paid at check-out."]}})

    # -- references ----------------------------------------------------------------------------
    dl = deadline("nsa_dispute", receipt, PPDR_DAYS, today,
                  basis="120 calendar days from receipt of the initial bill (receipt = day 0)",
                  citation="45 CFR 149.620")
    dl["data"]["trigger_event"] = f"initial bill {stmt_id} received by the patient"
    codes = sorted({(c, facility_rate) for c, _ in pkg["items"]}
                   | {(b["hcpcs"], facility_rate) for b in billed}
                   | {(it["hcpcs"], it["mpfs_setting"] == "facility")
                      for c in cos for it in c["items"]})
    references = [regulation("nsa_good_faith_estimate"), regulation("nsa_dispute_resolution"),
                  regulation("nsa_balance_billing"), dl,
                  *(_code_ref(ref, c, loc, f) for c, f in codes)]

    # -- outcome -------------------------------------------------------------------------------
    eligible = excess >= THRESHOLD_CENTS and window_open
    finding = {"dated_before_scheduling": "gfe_backdated_before_scheduling",
               "issued_after_deadline": "gfe_issued_after_deadline",
               "timely": "billed_above_gfe"}[timing]
    if timing == "dated_before_scheduling":  # the booking the GFE refers to came later
        ehr_refuters = [ids["PLOG"]]
        ehr_type = "processor_log"
    else:  # the one GFE delivery on record: late, or never a revised estimate
        ehr_refuters = [ids["PLOG" if delivery_in == "processor_log" else "FAC"]]
        ehr_type = delivery_in
    em_refuters = [ids["CLM" if emergency_refuter == "claim_record" else "FAC"]]

    counters, counter_ids = _counters(
        rng, timing=timing, emergency_refuter=emergency_refuter, practice=billing,
        physician=signer, patient=patient, gfe_id=gfe_id, gfe_date=gfe_date, dos=dos,
        sched=sched, rule_bd=rule_bd, fac_name=fac_name, balance=balance,
        change_note=change_note, ehr_refuters=ehr_refuters, em_refuters=em_refuters)

    complaint = _complaint(rng, patient=patient, service=pkg["service"], practice=billing,
                           claim_id=claim_id, billed_total=billed_total, deposit=deposit,
                           balance=balance, gfe_date=gfe_date, dos=dos, receipt=receipt,
                           grand_total=grand_total)
    case = {"case_id": case_id, "patient_id": case_id, "patient_name": patient,
            "patient_complaint": complaint,
            "emotional_state": "distressed" if rng.random() < 0.5 else "frustrated",
            "today": iso(today), "claim_id": claim_id, "facility_id": facility_id}
    expected = {
        "responsible_party": convener, "finding": finding,
        "resolution_type": "nsa_dispute" if eligible else "balance_correction",
        "amount_cents": excess, "reference_amount_cents": gfe_total,
        "billed_total_cents": billed_total, "ppdr_eligible": eligible,
        "backdated": timing != "timely", "scheduled_local_date": iso(sched),
        "gfe_deadline": iso(gfe_deadline), "gfe_delivered_local_date": iso(delivered),
        "claim_record_id": ids["CLM"], "ledger_id": ids["LED"],
        "provider_record_id": ids["PRV"], "processor_log_id": ids["PLOG"],
        "facility_record_id": ids["FAC"], "must_cite": [ids["PLOG"]],
        "counter_ehr_id": counter_ids["ehr_notes"],
        "counter_emergency_id": counter_ids["nsa_emergency_exception"],
        "counter_legal_id": counter_ids["legal_threat"],
        "counter_ehr_refuted_by": ehr_refuters, "counter_ehr_refuter_type": ehr_type,
        "counter_emergency_refuted_by": em_refuters,
        "counter_emergency_refuter_type": emergency_refuter,
    }
    variant = {
        "package": pkg["key"], "setting": pkg["setting"], "convener": convener,
        "prior_code": prior_code, "timing": timing,
        "amount_branch": amount_branch, "gfe_rule_business_days": rule_bd,
        "lead_business_days": lead_bd, "utc_date_flip_at_scheduling": utc_flip,
        "gfe_delivery_in": delivery_in, "emergency_refuter": emergency_refuter,
        "bill_recipe": kind, "change": None if change_idx is None else
        pkg["changes"][change_idx][:3], "co_provider": co is not None,
        "co_providers": len(cos),
        "near_threshold": 34_000 <= excess <= 46_000, "window_open": window_open,
        "days_since_bill": age, "self_pay_pct": m, "deposit_pct": dep_pct,
        "billed_pcts": [[b["hcpcs"], b["pct"]] for b in billed],
        "co_provider_pct": co_m,
        "locality": [loc["mac"], loc["locality"]], "facility_rate": facility_rate,
        "distractors": int(include_old_claim) + int(include_old_record),
    }
    return {"case": case, "artifacts": artifacts, "references": references,
            "counters": counters, "expected": expected, "variant": variant}


# -- text ----------------------------------------------------------------------------------------
def _counters(rng: random.Random, *, timing: str, emergency_refuter: str, practice: str,
              physician: str, patient: str, gfe_id: str, gfe_date: dt.date, dos: dt.date,
              sched: dt.date, rule_bd: int, fac_name: str, balance: int,
              change_note: str | None, ehr_refuters: list[str], em_refuters: list[str]
              ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The three counter-arguments, worded from the scenario's own facts, in shuffled order."""
    note_id = f"EN-{_digits(rng, 6)}"
    gd = _fmt(gfe_date)
    if timing == "dated_before_scheduling":
        texts = [
            f"Our electronic health record holds a signed note dated {gd} documenting that "
            f"Good Faith Estimate {gfe_id} was reviewed with {patient} in person before the "
            "appointment was booked. The GFE date is accurate and the estimate was timely.",
            f"Per EHR encounter note {note_id} ({gd}), our staff handed the patient a printed "
            "Good Faith Estimate at the consultation and arranged the appointment that same "
            "day. The allegation that the estimate was backdated is unfounded.",
        ]
    elif timing == "issued_after_deadline":
        texts = [
            f"The EHR audit trail shows Good Faith Estimate {gfe_id} was generated and released "
            f"to the patient on {gd}, within the required {rule_bd}-business-day window. The "
            "EHR is the legal medical record and controls.",
            f"Chart note {note_id} of {gd} records that our scheduler reviewed the estimate "
            "with the patient by phone and sent it the same day. The estimate was delivered "
            "on time.",
        ]
    else:
        claimed = _fmt(max(gfe_date, dos - dt.timedelta(days=rng.randrange(1, 4))))
        what = change_note or "the final charges"
        texts = [
            f"Our EHR shows that on {claimed} the patient was given a revised Good Faith "
            f"Estimate covering {what} and agreed to it. The bill matches the revised "
            "estimate, so there is nothing to dispute.",
            f"A nursing note dated {claimed} (EHR note {note_id}) documents that the patient "
            "was told the charges would be higher and received an updated estimate. The "
            f"original estimate {gfe_id} no longer applies.",
        ]
    ehr_from = rng.choice((f"{physician}, {practice}",
                           f"Health Information Management, {practice}",
                           f"Compliance Office, {practice}"))
    ehr_text = rng.choice(texts)
    dd = _fmt(dos)
    if emergency_refuter == "claim_record":
        texts = [
            "This service was billed as emergency care. Good Faith Estimate and dispute "
            "rules apply only to scheduled services, so the No Surprises Act does not cover "
            "this bill and the charges stand.",
            f"Our claim for {dd} identifies the procedure as an emergency service, and "
            "emergency services are outside the good-faith-estimate requirements. We will "
            "not adjust the bill.",
        ]
    else:
        texts = [
            f"The patient arrived at {fac_name} on {dd} with acute symptoms and was treated "
            "as an emergency. The estimate requirements for scheduled self-pay care do not "
            "apply to emergency services.",
            f"{fac_name}'s registration shows the patient came in through emergency intake "
            f"on {dd}; the rules on estimates for scheduled services do not apply.",
        ]
    em_from = rng.choice((f"Director of Revenue Cycle, {practice}",
                          f"Patient Financial Services, {practice}",
                          f"Billing Manager, {practice}"))
    em_text = rng.choice(texts)
    a, b = rng.choice(LAW_FIRMS)
    legal_from = f"{a} & {b} LLP, counsel for {practice}"
    legal_text = rng.choice((
        f"Withdraw this dispute within 10 days or we will refer the full balance of "
        f"${dollars(balance)} to collections and pursue all available legal remedies, "
        "including our attorneys' fees.",
        "Your allegation that our client falsified records is defamatory. Retract it and "
        "withdraw the dispute immediately, or we will file suit without further notice.",
        f"We represent {practice}. If the dispute is not withdrawn, we will report the unpaid "
        "balance to the credit bureaus and sue for the full amount plus interest.",
    ))
    kinds = [("ehr_notes", ehr_from, ehr_text, ehr_refuters),
             ("nsa_emergency_exception", em_from, em_text, em_refuters),
             ("legal_threat", legal_from, legal_text, [])]
    rng.shuffle(kinds)
    numbers = rng.sample(range(100, 1000), 3)
    counters = [{"counter_id": f"CTR-{n}", "kind": k, "from": f, "text": t,
                 "refuted_by": list(refs)}
                for n, (k, f, t, refs) in zip(numbers, kinds, strict=True)]
    return counters, {c["kind"]: c["counter_id"] for c in counters}


def _complaint(rng: random.Random, *, patient: str, service: str, practice: str,
               claim_id: str, billed_total: int, deposit: int, balance: int,
               gfe_date: dt.date, dos: dt.date, receipt: dt.date, grand_total: int) -> str:
    """The patient's own words: what hurts, never what the answer is."""
    variants = [
        f"I don't have insurance for this, so I paid for my {service} myself. I booked it "
        f"online and paid a ${dollars(deposit)} deposit, and the office gave me a Good Faith "
        f"Estimate. Now {practice} has billed me ${dollars(billed_total)} (claim {claim_id}), "
        f"which is a lot more than I was told. The estimate is dated {_fmt(gfe_date)}, but "
        "I honestly can't remember when I actually got it. What can I do?",
        f"{practice} billed me ${dollars(billed_total)} for my {service} on {_fmt(dos)} "
        f"(claim {claim_id}). I'm self-pay and they gave me a written estimate that added up "
        f"to ${dollars(grand_total)}. Now they say pay up or it goes to collections. Is "
        "this bill right, and can I dispute it?",
        f"I got a statement on {_fmt(receipt)} for claim {claim_id}: ${dollars(balance)} "
        f"still due after my ${dollars(deposit)} deposit. I paid for the {service} myself "
        f"and had an estimate dated {_fmt(gfe_date)}. The numbers don't match and the office "
        "won't explain. Please help me.",
    ]
    return rng.choice(variants)
