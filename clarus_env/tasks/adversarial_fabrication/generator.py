"""adversarial_fabrication scenarios: a self-pay patient's Good Faith Estimate (GFE), the bill
that came after it, and — once a dispute is filed — the billing party's three counter-arguments.

The answer follows from the records the agent fetches and from nothing else:

* **GFE timing** (the finding). The GFE is backdated — dated before the scheduling event that
  the payment processor logged in UTC (the deposit authorization at online booking): a
  falsified record with a motive, delivered late by the real booking (read in the facility's
  local time) and on time only by its false printed date and the provider's false booking
  date, so ``gfe_issued_after_deadline`` is accepted too —, delivered after the 1- or
  3-business-day deadline of 45 CFR 149.610, or timely. The delivery evidence sits in the
  processor log (estimate e-mail event) or in the facility's portal-message log; timestamps
  are UTC while business days count in the facility's local time zone (the facility record
  states zone, offsets and the counting convention).
* **Nothing but the deadline arithmetic separates late from timely.** The printed date and the
  delivery are drawn independently of the branch: a timely GFE is often released a day or
  more after its printed date (still by the deadline), a late one is dated as if on time, on
  the booking day, or honestly on its late delivery day; deliveries cluster on the deadline
  day and the first business day after it, weekends and federal holidays included. Booking
  and delivery times mix business hours, evenings (the UTC date is already the next day) and
  the small hours (a low UTC hour on the same local date), so neither the UTC date nor the UTC
  hour gives the local date; only the facility's zone does. A backdated GFE's provider story
  (booking date, GFE date) is drawn exactly as a timely one's; only the processor log's
  authorization dates the real booking (the ledger posts the deposit on the date of service).
* **The bill against the estimate**: above the billing party's own section, or within it
  (a third of the bills, after every GFE timing alike: the filing says nothing about the
  timing). The service, locality,
  self-pay multiple and the other parties' sections are kept only when every excess window
  is reachable from them, whichever the branch wants, and a changed service goes either way
  (needed unplanned, or planned and not needed) at the same rate in every branch: no single
  amount, code or note tells within from above — only the bill minus the biller's own
  section does. Within the estimate with a
  timely GFE: ``no_violation`` (nothing to dispute, the patient is told why). Within it with a
  late or backdated GFE: the violation is the finding (the convener is named) but nothing is
  billed above the estimate, so nothing is filed (``no_action``; the patient is told the GFE
  violation can be reported to the No Surprises Help Desk).
* **Who is responsible.** Nothing prints "convening": the convener is the party that scheduled
  the service (it took the booking deposit: the processor log's merchant; the facility
  record's encounter names who booked it). With a practice and a facility on the GFE it is
  the other one of the two in about two thirds of scenarios (a surgeon's office booking the
  case at an ASC / hospital department, or the facility booking the surgeon), so neither
  kind of biller predicts the responsible party (single-party sites, where the site's kind
  does, are kept rare); then the biller's
  ledger applies its own pre-registration deposit and the scheduler's processor log shows its
  own earlier visit (both records look alike whoever scheduled; only the merchant and the
  facility's ``booked_by`` name the scheduler). A GFE timing failure is the convener's (45 CFR
  149.610(b)); a bill above a party's own expected charges is that billing party's. A
  physician practice is a provider (its own office suite, even with an MRI or a sleep lab,
  holds no facility licence: the facility record says so); an ambulatory surgical center, a
  hospital outpatient department, an independent imaging center or sleep diagnostic center is
  a health care facility under 45 CFR 149.610(a)(2). Every service can be convened by either
  kind, names say nothing about the kind (practices and facilities are named from one pool),
  deposits are flat amounts whoever took them, and the earlier-visit distractor is the package's own
  visit whoever convened. Co-provider and co-facility sections sit on the GFE in shuffled
  order with notes in the same words; each party is held to its own section.
* **The filing.** PPDR (45 CFR 149.620: the billing party billed at least $400 above its own
  expected charges, within 120 calendar days of receiving the bill — receipt from the
  ledger's statement delivery, "today" from the deadline lookup's ``as_of``; the bill's age
  often falls in the window's last or first closed week, the boundary days no likelier than
  their neighbours, and a mailed bill is often read when its window is open only counted from
  receipt, not from the statement's date) → ``nsa_dispute`` of the excess (with a late or
  backdated GFE the PPDR-eligible excess makes ``billed_above_gfe`` naming the biller an
  accepted finding too: the filing rests on it; every excess window is drawn at the same rate
  after every timing); a smaller
  excess or a closed window → ``balance_correction`` of the excess;
  a bill within the estimate → ``no_action`` (no dispute: the decision is a no_action draft or
  a no_action submission).
* **Counter-arguments** (after a filing): the same three kinds and wording templates in every
  branch. The EHR-notes counter (from the party that scheduled) asserts that the GFE went out
  on a stated day within the deadline — the real delivery day when it was timely (or the
  earlier day the EHR generated it); its printed date or a later day by the stated deadline
  otherwise, about as often (so the stated day against the printed date says nothing): the
  records refute it
  when the GFE was backdated or late, and bear it out
  when it was timely (then it must be conceded — the dispute of the excess still stands). The
  emergency-exception counter is always false (the claim, the facility's registration, the
  provider's appointment record and the processor log's deposit at online booking all show a
  scheduled elective service: each refutes it). The legal threat is never evidence (rejected)
  and accuses no one of anything the agent alleged.

Prices: professional services at a documented multiple of the real 2026 MPFS amount at a real
locality (the practice's stated self-pay policy; there is no public QPA). A hospital outpatient
department's facility charge is a documented multiple of the CMS OPPS Addendum B national
payment rate of the code, an ambulatory surgical center's of the ASC Addendum AA rate, so a
facility charge normally exceeds the surgeon's fee (the generator redraws when it would not).
Hospital outpatient departments bill on the UB-04, ASCs and practices on the CMS-1500.
Independent imaging and sleep centers are paid under the MPFS (global, non-facility) and price
from it. Every price states its derivation in the artifact.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from ..common import (
    FIRST,
    LAST,
    PROCESSORS,
    cents,
    code_reference,
    dollars,
    fee_cents,
    iso,
    npi,
    pct_of,
    pick_locality,
    regulation,
)
from ..us_calendar import (
    TZ_BY_STATE,
    _business_days_between,
    add_business_days,
    dst_period,
    federal_holidays,
    is_business_day,
    utc_offset,
    utc_stamp,
)

# The deadline rule (from the lead: 3 business days when the service is 10+ business days
# ahead, else 1) is the 3-day one after most timely GFEs and after about a third of late ones
# (issue 8, round 4). Whether a GFE was late is "delivery business days after the booking >
# rule", and with the rule independent of the branch the business-day offset alone answered
# (timely GFEs on their deadline day at 1 or 3, late ones the day after at 2 or 4: the red
# team's forest read it off the weekdays of booking and delivery). Now timely and late
# deliveries share the offsets 2-3 (a 3-day rule kept, a 1-day rule missed), so the offset
# alone, the lead alone and the calendar lag alone each answer little (measured on 2,400
# fresh seeds: finding +0.06 from the lead, +0.08 from the UTC-day lag table, +0.08 from
# the red team's weekday/holiday/hour forest); only the offset against the lead's rule does.
# Issue 8, round 6 (red team round 5, pattern B): at 0.9 / 0.35 the lead printed in the
# provider record alone (service date - stated booking <= 13 days: the 1-day rule) marked a
# late or backdated GFE in 90% of scenarios. The shares are now close (0.75 / 0.5) and the
# deliveries packed at the deadline from both sides (a timely GFE on its deadline day 80% of
# the time, a late one on the first business day after it 90%; weekends and holidays now and
# then, OFF_DAY_SEND): on 4,000 fresh seeds the lead table reads the finding +0.00 above the
# modal share, the UTC-day lag +0.03, the (booking weekday, lag) table +0.02. Spreading the
# offsets (a timely GFE on any day up to its deadline, a late one up to three days past it, as
# the red team proposed) was tried: it moved the lag table to +0.07 and lead + lag to +0.17.
RULE_3_TIMELY = 0.75
RULE_3_LATE = 0.5
# some bookings fall on or just before a federal holiday (in every branch alike): the
# business days of the deadline skip it
NEAR_HOLIDAY = 0.35
# an open window is read in its last week this often (for a mailed bill, partly on days it is
# open only counted from the bill's receipt — the rule —, not from the statement's date)
OPEN_LAST_WEEK = 0.35
# The GFE's delivery and printed date, drawn alike in every branch except for the side of the
# deadline the delivery falls on (issue 8, round 4): a timely GFE goes out on its deadline day
# (TIMELY_ON_DEADLINE) or the business day before it (to TIMELY_DAY_BEFORE) or earlier, a late
# one on the first business day after the deadline unless on the second (LATE_SECOND_DAY),
# never more than MAX_LAG_DAYS calendar days after the booking and never on the booking day;
# either goes out on a weekend or holiday now and then (OFF_DAY_SEND); the printed date is the
# delivery day (SENT_ON_PRINTED_DATE), else the booking day or a day between, in every branch.
TIMELY_ON_DEADLINE = 0.8
TIMELY_DAY_BEFORE = 0.95
LATE_SECOND_DAY = 0.1
LATE_THIRD_DAY = 0.0
MAX_LAG_DAYS = 6
OFF_DAY_SEND = 0.16
SENT_ON_PRINTED_DATE = 0.2
PRINTED_AT_BOOKING_BELOW = 0.9  # else the booking day (below this) or a day between
# Bookings (and deliveries) in the evening, late enough that the UTC date is the next day: one
# rate in every branch (issue 8, round 6: a lower rate after a backdated GFE was itself a cue -
# a booking at UTC hour 0-3 was backdated in 13% of scenarios against 40% in the others).
EVENING = 0.5
# Facilities in Hawaii (UTC-10), Alaska (UTC-9/-8) and Guam (UTC+10) drawn this often (each
# is in one Medicare locality of ~110, so about 1% by the locality draw alone). Hawaii's and
# Alaska's evenings begin on the next UTC date from 14:00-16:00 local, so a booking's UTC hour
# 0-9 is an evening there and the small hours on the mainland; Guam's mornings (before 10:00)
# are still on the previous UTC date. With the UTC date of a booking after, on or before its
# local date in every branch, a backdated story's stated booking (one local day before the
# real one) is two, one or no UTC days before the authorization's date, as an honest one is
# one, none or one after: the printed dates' difference alone hardly tells them apart
# (issue 8, round 6, pattern A). All three are States under the PHS Act (42 U.S.C.
# 300gg-91(d)(14)), so 45 CFR 149.610 applies; Guam is priced in Medicare's "HAWAII, GUAM"
# locality (MAC 01212, locality 01).
FAR_WEST = 0.25
FAR_WEST_STATES = ("HI", "AK", "GU")
THRESHOLD_CENTS = 40_000  # 45 CFR 149.620: at least $400 above the GFE's expected charges
PPDR_DAYS = 120  # calendar days from receipt of the initial bill
PPDR_FEE = "25.00"
# Self-pay price, % of the MPFS amount. Issue 8, round 6 (red team round 5: boosted trees read
# the resolution off the bill's size next to the GFE totals, 0.596 on test against a bar of
# 0.568): the multiples span 110-500%, so a service's estimate varies about 4.5-fold and the
# bill's size alone says less about where the bill stands against it (chargemaster and
# self-pay prices commonly run several times the Medicare rate).
MULTIPLES = (110, 125, 150, 175, 200, 225, 250, 300, 350, 400, 450, 500)
# one line billed at the gross chargemaster rate: self-pay % + delta
DELTAS = (2, 3, 5, 10, 15, 25, 50, 75, 100, 125, 150, 200, 250, 300, 400)
DISCOUNTS = (5, 10, 15, 25)  # prompt-pay discount on one line (bills within the estimate)
DEPOSIT_FLAT = (5_000, 7_500, 10_000, 12_500, 15_000, 20_000, 25_000)  # scheduling deposits
# A facility's self-pay facility charge: % of the CMS facility payment rate of the code (OPPS
# Addendum B for a hospital outpatient department, ASC Addendum AA for an ASC).
FACILITY_MULTIPLES = MULTIPLES
FACILITY_CONVENED = 0.48  # share of scenarios whose GFE a facility convened
# With a practice and a facility on the GFE, the other one of the two scheduled the service
# (and so convened the GFE) in this share of scenarios: the party that bills is not the one
# that scheduled (a practice billing after the facility booked it / a facility billing after
# the surgeon's office booked it; shares set so either kind of party schedules about as often).
# About two thirds either way: then "the biller's kind" and "the other kind" name the responsible
# party of a two-party case about equally often (billed_above_gfe names the biller), so
# only the processor log's merchant read against the GFE's parties decides.
SPLIT_SCHEDULER = {"provider_bills": 0.7, "facility_bills": 0.66}
SINGLE_PARTY_SETTINGS = ("office", "imaging", "sleep")
SINGLE_PARTY_KEEP = 0.3  # share of single-party draws kept (the rest redrawn)
MAX_EXCESS = 100_000  # a bill $400 to $1,000 above the estimate
# The excess windows of the bill against the biller's own section. A draw of the service,
# the locality and the self-pay multiple is kept only when *every* window is reachable from
# it, whichever one the branch wants: the kept draws (and so the multiple, the service, the
# estimate's size) are then distributed alike in every branch, and only the relation of the
# bill to the estimate tells them apart (the red team's forests read the resolution off the
# multiple and the bill's size when a draw was redrawn until the branch's own window fit).
EXCESS_WINDOWS = {"within": (-10**9, 0), "under": (4_000, THRESHOLD_CENTS - 1),
                  "over": (THRESHOLD_CENTS, MAX_EXCESS)}
EHR_STATES_PRINTED = 0.15  # a late GFE's EHR counter states its printed date (else later)
EHR_TIMELY_STATES_PRINTED = 0.4  # a timely GFE's counter states its printed date
# The bill against the biller's own section is drawn with the same shares after every GFE
# timing (issue 8, round 3 red team): the share of bills within the estimate and, above it,
# the shares under $400 / $400+ with the window open / $400+ after it closed. With shares that
# depended on the timing (a balance correction followed a late or backdated GFE 86-90% of the
# time) an agent that worked out the filing without the processor log answered the finding
# most common for that filing and beat the modal finding by +0.18. Now the filing says nothing
# about the timing: only the processor log read in local time does. With the timing shares
# below, no_violation (timely and within) is 40% x 36% = 14% of scenarios.
WITHIN_ESTIMATE = 0.36
# A bill above the estimate: under $400 above it below UNDER_BELOW, else $400+ with the
# 120-day window open below OVER_OPEN_BELOW and closed above it (the day the deadline lookup is
# read on against the statement's receipt, not the size of the excess, decides between a
# dispute and a correction): about 22% / 19% / 23% of scenarios, so balance_correction, the
# most common resolution, stays under half.
UNDER_BELOW = 0.34
OVER_OPEN_BELOW = 0.64
FINDINGS = ("gfe_backdated_before_scheduling", "gfe_issued_after_deadline",
            "billed_above_gfe", "no_violation")
BUSINESS_DAYS = ("Monday-Friday excluding federal holidays (practice policy; 45 CFR 149.610 "
                 "does not define 'business day'). Counting: the business days after the "
                 "local calendar date of the scheduling event (a booking made after hours or "
                 "on a weekend or holiday counts from its calendar date); 'scheduled N business "
                 "days ahead' counts those business days up to and including the date of "
                 "service; the GFE is due by the end of the Nth business day after the "
                 "scheduling date, in the facility's local time")
GFE_RULE_SUMMARY = (
    "The convening provider or convening facility — the one that schedules the item or "
    "service (or is asked for an estimate) — must give a self-pay patient a GFE within 1 "
    "business day of scheduling a service 3+ business days ahead (3 business days when "
    "scheduled 10+ business days ahead, or after a request), including the expected charges "
    "of co-providers and co-facilities. A 'health care facility' is an institution such as a "
    "hospital or hospital outpatient department, critical access hospital, ambulatory "
    "surgical center, rural health center, federally qualified health center, laboratory or "
    "imaging center (45 CFR 149.610(a)(2)); a 'provider' is a physician or other health care "
    "practitioner or group. A GFE furnished after the deadline does not meet the rule. "
    "Separately, a GFE (or a scheduling record) dated before the scheduling event that the "
    "independent records show misstates when the service was scheduled: a falsified record "
    "(a record-integrity finding), whatever the delivery date.")


# One scheduled self-pay service per package. items: (hcpcs, icd10) of the service; changes:
# how the service done may differ from the one planned (sub = item k replaced, add = an extra
# item), with the note for each direction — "up": the GFE lists the items and the bill the
# changed set; "down": the GFE lists the changed set (planned) and the bill the items (the
# change was not needed) — so a changed bill is as likely to cost less than the estimate as
# more, and which codes are billed says nothing about the branch; checked free of active NCCI
# PtP edits against the other codes (tests hold it);
# co: the co-provider section of the GFE (pathology), if any; prior: an earlier visit.
PACKAGES: tuple[dict[str, Any], ...] = (
    {"key": "colonoscopy", "service": "colonoscopy with biopsy", "specialty": "Gastroenterology",
     "setting": "asc", "items": (("45380", "K63.5"),),
     "changes": (("sub", 0, "45385", "K63.5", "a polyp removed by snare instead of a biopsy",
                  "a biopsy only: no polyp needed removal by snare"),
                 ("add", None, "43239", "K21.9", "an upper endoscopy with biopsy added",
                  "the planned upper endoscopy was not needed")),
     "co": ("88305", "K63.5"), "prior": "99203"},
    {"key": "egd", "service": "upper endoscopy with biopsy", "specialty": "Gastroenterology",
     "setting": "asc", "items": (("43239", "K21.9"),), "changes": (),
     "co": ("88305", "K21.9"), "prior": "99203"},
    {"key": "knee_arthroscopy", "service": "knee arthroscopy (meniscectomy)",
     "specialty": "Orthopedics", "setting": "asc", "items": (("29881", "M23.221"),),
     "changes": (("sub", 0, "29880", "M23.221", "both menisci treated instead of one",
                  "only one meniscus needed treatment"),),
     "co": None, "prior": "99204"},
    {"key": "carpal_tunnel", "service": "carpal tunnel release",
     "specialty": "Hand Surgery", "setting": "asc", "items": (("64721", "G56.01"),),
     "changes": (("add", None, "26055", "M65.331", "a trigger finger release added",
                  "the planned trigger finger release was not needed"),),
     "co": None, "prior": "99203"},
    {"key": "mri_lumbar", "service": "lumbar spine MRI", "specialty": "Imaging",
     "setting": "imaging", "items": (("72148", "M51.16"),),
     "changes": (("sub", 0, "72158", "M51.16", "the study done without and with contrast",
                  "the study done without contrast only"),),
     "co": None, "prior": "72100"},
    {"key": "mri_knee", "service": "knee MRI", "specialty": "Imaging", "setting": "imaging",
     "items": (("73721", "M25.561"),),
     "changes": (("sub", 0, "73723", "M25.561", "the study done without and with contrast",
                  "the study done without contrast only"),),
     "co": None, "prior": "73562"},
    {"key": "sleep_study", "service": "overnight sleep study", "specialty": "Sleep Medicine",
     "setting": "sleep", "items": (("95810", "G47.33"),),
     "changes": (("sub", 0, "95811", "G47.33", "a split-night study with CPAP titration",
                  "a diagnostic study only, without CPAP titration"),),
     "co": None, "prior": "99203"},
    {"key": "excision", "service": "excision of a skin lesion with layered repair",
     "specialty": "Dermatology", "setting": "office",
     "items": (("11403", "D23.5"), ("12032", "D23.5")),
     "changes": (("sub", 0, "11406", "D23.5", "a larger excision than planned",
                  "a smaller excision than planned"),),
     "co": ("88305", "D23.5"), "prior": "99203"},
    {"key": "septoplasty", "service": "septoplasty with turbinate reduction",
     "specialty": "ENT", "setting": "asc", "items": (("30520", "J34.2"), ("30140", "J34.3")),
     "changes": (("add", None, "31256", "J32.0", "a maxillary sinus procedure added",
                  "the planned maxillary sinus procedure was not needed"),),
     "co": None, "prior": "99204"},
    {"key": "cataract", "service": "cataract surgery", "specialty": "Ophthalmology",
     "setting": "asc", "items": (("66984", "H25.11"),),
     "changes": (("sub", 0, "66982", "H25.11", "the surgery billed as complex",
                  "the surgery was routine, not complex"),),
     "co": None, "prior": "92004"},
    {"key": "cholecystectomy", "service": "laparoscopic gallbladder removal",
     "specialty": "General Surgery", "setting": "hopd", "items": (("47562", "K80.20"),),
     "changes": (("sub", 0, "47563", "K80.20", "a cholangiogram added to the surgery",
                  "no cholangiogram was needed"),),
     "co": ("88304", "K80.20"), "prior": "99203"},
    {"key": "hernia", "service": "inguinal hernia repair", "specialty": "General Surgery",
     "setting": "asc", "items": (("49505", "K40.90"),),
     "changes": (("sub", 0, "49507", "K40.30", "the hernia repaired as incarcerated",
                  "the hernia was reducible, not incarcerated"),),
     "co": None, "prior": "99203"},
    {"key": "echo", "service": "echocardiogram", "specialty": "Cardiology",
     "setting": "office", "items": (("93306", "R01.1"),),
     "changes": (("add", None, "93356", "R01.1", "strain imaging added",
                  "the planned strain imaging was not performed"),),
     "co": None, "prior": "99204"},
    {"key": "vasectomy", "service": "vasectomy", "specialty": "Urology", "setting": "office",
     "items": (("55250", "Z30.2"),), "changes": (), "co": None, "prior": "99203",
     "sex": "M"},
    {"key": "leep", "service": "LEEP cone procedure of the cervix",
     "specialty": "Women's Health", "setting": "office", "items": (("57461", "N87.1"),),
     "changes": (), "co": ("88307", "N87.1"), "prior": "57455", "sex": "F"},
)
# first names for a sex-specific procedure (a cervical conization's patient is female, a
# vasectomy's male); every other package draws from the whole list
FIRST_BY_SEX = {
    "F": tuple(n for n in FIRST if n in {
        "Ana", "Priya", "Grace", "Keisha", "Fatima", "Lena", "Sofia", "Hannah", "Mei", "Olivia",
        "Nadia", "Carmen", "Aisha", "Rosa", "Yuki", "Diane"}),
    "M": tuple(n for n in FIRST if n in {
        "Marcus", "Daniel", "Tomás", "Robert", "Omar", "Jamal", "Luis", "Andre", "Samuel",
        "Ethan", "Victor", "Peter", "Kevin"}),
}
# Every service can be convened by either kind of party, so the service says nothing about
# who convened it: a physician practice (provider) schedules office care (imaging and sleep
# studies in its own office suite) and books procedures at an ASC / hospital outpatient
# department; a facility — the ASC, the hospital outpatient department (office procedures in
# its outpatient clinic), an independent imaging or sleep center — schedules them itself.
def setting_of(pkg: dict[str, Any], convener: str, at_hospital: bool = False) -> str:
    """Where the service is done. A practice may also book an office procedure in a hospital
    outpatient department (``at_hospital``; not the echocardiogram, whose professional
    component in a hospital would be billed with modifier 26)."""
    base = pkg["setting"]
    if convener == "facility":
        return "hopd" if base == "office" else base
    if base == "office" and at_hospital and pkg["key"] != "echo":
        return "hopd"
    return "office" if base in ("imaging", "sleep") else base


PRACTICE_SPECIALTY = {"Imaging": "Radiology"}
# The earlier service a facility biller bills (a practice bills the package's `prior`
# consult): an ASC is paid only for covered surgical procedures (an earlier one on its ASC
# list, by package, with its own diagnosis: the cataract patient's earlier laser capsulotomy
# was on the other, left eye), a hospital outpatient department bills its clinic visit as
# G0463, an independent sleep center an earlier test (an imaging center's `prior` is already
# an x-ray).
ASC_PRIOR = {"colonoscopy": ("45330", "K64.9"), "egd": ("45330", "K64.9"),
             "knee_arthroscopy": ("20610", "M25.561"), "carpal_tunnel": ("20526", "G56.01"),
             "septoplasty": ("31231", "J34.2"), "cataract": ("66821", "H26.492"),
             "hernia": ("10060", "L02.214")}


def prior_code_of(pkg: dict[str, Any], biller_setting: str) -> tuple[str, str]:
    """The (code, diagnosis) of the earlier service on the biller's own records, by the kind
    of biller (``biller_setting``: "office" for a physician practice, else the facility's)."""
    dx = pkg["items"][0][1]
    if biller_setting == "hopd":
        return "G0463", dx
    if biller_setting == "asc":
        return ASC_PRIOR[pkg["key"]]
    if biller_setting == "sleep":
        return "95806", dx
    return pkg["prior"], dx
# UB-04 revenue codes of the hospital outpatient lines (0360 operating room services is the
# default for a procedure; the echocardiogram is cardiology, 0483)
REVENUE_CODES = {"93306": "0483", "93356": "0483"}
# the facility record states each site's licence, which settles the kind of party (45 CFR
# 149.610(a)(2) lists imaging centers and laboratories as facilities where state law licenses
# them): an ASC or an independent imaging / sleep center holds a state facility licence, a
# hospital outpatient department the hospital's, a physician practice's own office suite
# (where it may run an MRI or a sleep lab) none. Terse values: the type already names the site.
LICENSURE = {"asc": "state facility license", "hopd": "hospital license", "office": "none",
             "imaging": "state facility license", "sleep": "state facility license"}
SETTINGS = {  # setting -> (place of service, description, facility type)
    "asc": ("24", "Ambulatory surgical center", "ambulatory surgical center"),
    "hopd": ("22", "On-campus outpatient hospital", "hospital outpatient department"),
    "office": ("11", "Office", "physician office"),
    "imaging": ("11", "Office", "independent diagnostic imaging center"),
    "sleep": ("11", "Office", "independent sleep diagnostic center"),
}

PLACES = ("Lakeview", "Riverside", "Summit", "Cedar Grove", "Harbor", "Northside", "Prairie",
          "Bayview", "Hillcrest", "Metro", "Willow Creek", "Granite Peak")
PATHOLOGY = ("Meridian Pathology Associates", "Clearwater Pathology Lab",
             "Northstar Anatomic Pathology")
HEALTH_SYSTEMS = ("St. Catherine Health", "Valley Health", "Good Shepherd Health")
# One name pool for both kinds of party: a physician practice and an ASC, hospital outpatient
# department or imaging/sleep center are named from the same places, health systems and
# suffixes, so a name (the processor log's merchant, the facility's ``booked_by``) never says
# which kind of party scheduled — only the records' ``type`` and licence do, read against the
# party that name belongs to (the red team's forests read "Surgery Center", "Physicians" and
# "Outpatient Department" off the merchant name).
NAME_SUFFIXES = ("Partners", "Group", "Specialists", "Associates", "Center", "Institute")
# the physician group's registered entity form: the facility's credentialing file names it by
# its legal name, the GFE and the bills by the name it does business as
ENTITY_SUFFIXES = ("PLLC", "P.C.", "LLC", "P.A.", "Inc.")


def _party_name(rng: random.Random, specialty: str) -> str:
    """A practice's or a facility's name, drawn the same way for either kind."""
    prefix = rng.choice(HEALTH_SYSTEMS) if rng.random() < 0.3 else rng.choice(PLACES)
    return f"{prefix} {specialty} {rng.choice(NAME_SUFFIXES)}"


LAW_FIRMS = (("Hale", "Whitmore"), ("Barrett", "Quinn"), ("Sterling", "Voss"),
             ("Calder", "Ames"))
CARD_BRANDS = ("Visa", "Mastercard", "Discover", "American Express")

# the federal holidays that fall in the booking window (Feb-Jul 2026), as observed
BOOKING_HOLIDAYS = tuple(sorted(h for h in federal_holidays(2026)
                                if dt.date(2026, 2, 5) <= h <= dt.date(2026, 7, 24)))


def _minute_of_day(rng: random.Random, state: str, day: dt.date, after: int | None,
                   hi: int = 23 * 60 + 55, evening: float = 0.6) -> int:
    """A local minute on ``day`` (after minute ``after`` if given): business hours, an
    evening late enough that the UTC date is the next day, or the small hours (UTC hour
    low, same local date) — the same mixture in every branch."""
    lo = 0 if after is None else after + 1
    flip = (24 + utc_offset(state, day)) * 60  # first local minute on the next UTC day
    r = rng.random()
    # evenings most often (online bookings and automated sends after work): then the UTC
    # date is already the next day, so a GFE dated on the booking's local day reads as dated
    # before it to anyone who takes the UTC date for the local one (issue 8, round 3)
    if r < evening and max(lo, flip) < hi:
        return rng.randrange(max(lo, flip), hi)
    if r < (1 + evening) / 2 and lo < 6 * 60 + 30:
        return rng.randrange(lo, 6 * 60 + 30)
    if lo < min(flip, 18 * 60) and max(lo, 8 * 60) < min(flip, 18 * 60):
        return rng.randrange(max(lo, 8 * 60), min(flip, 18 * 60))
    return rng.randrange(lo, hi)


def _offset_text(hours: int) -> str:
    return f"{'-' if hours < 0 else '+'}{abs(hours):02d}:00"


def _fmt(d: dt.date) -> str:
    return f"{d:%B} {d.day}, {d.year}"


# -- money from the bundle ---------------------------------------------------------------------
_FEES: dict[tuple[int, str, str, str, bool, str], int] = {}


def fee(ref: Any, code: str, loc: dict[str, Any], facility: bool, modifier: str = "") -> int:
    """MPFS amount in cents, cached per process (keyed by id(ref)): compiles stay fast."""
    key = (id(ref), code, loc["mac"], loc["locality"], facility, modifier)
    if key not in _FEES:
        _FEES[key] = fee_cents(ref, code, loc, facility=facility, modifier=modifier)
    return _FEES[key]


# Diagnostic tests with a professional/technical split: in a hospital outpatient department
# the hospital bills the technical part as its facility charge and the physician bills only
# the interpretation, with modifier 26 at the MPFS -26 amount (DOMAIN.md section 5).
PC_TC_CODES = frozenset({"93306"})


def pro_modifier(code: str, setting: str) -> str:
    """The physician's modifier for ``code`` in ``setting`` ('26' or none)."""
    return "26" if setting == "hopd" and code in PC_TC_CODES else ""


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


# -- facility rates --------------------------------------------------------------------------
_FAC_RATES: dict[tuple[int, str, str], tuple[int, dict[str, Any]]] = {}


def facility_rate(ref: Any, code: str, setting: str) -> tuple[int, dict[str, Any]]:
    """The CMS national facility payment rate of ``code`` in cents — OPPS Addendum B for a
    hospital outpatient department, ASC Addendum AA for an ambulatory surgical center — and a
    description of where it comes from (cached per process, keyed by id(ref))."""
    key = (id(ref), code, setting)
    if key not in _FAC_RATES:
        if setting == "hopd":
            row = ref.opps(code)
            if row is None or row.get("payment_rate") is None:
                raise KeyError(f"{code} has no OPPS payment rate")
            basis = {"schedule": "CMS OPPS Addendum B national unadjusted payment rate",
                     "release": row.get("release"), "apc": row.get("apc"),
                     "status_indicator": row.get("status_indicator")}
        else:
            row = ref.asc(code)
            if row is None or row.get("payment_rate") is None:
                raise KeyError(f"{code} has no ASC payment rate")
            basis = {"schedule": "CMS ASC Addendum AA national unadjusted payment rate",
                     "release": row.get("release"),
                     "payment_indicator": row.get("payment_indicator")}
        rate = cents(row["payment_rate"])
        basis["payment_rate"] = dollars(rate)
        _FAC_RATES[key] = (rate, {k: v for k, v in basis.items() if v is not None})
    rate, basis = _FAC_RATES[key]
    return rate, dict(basis)


def _has_rate(ref: Any, code: str, setting: str) -> bool:
    try:
        facility_rate(ref, code, setting)
    except KeyError:
        return False
    return True


def _bill_candidates(planned_fees: list[int], performed_fees: list[int], m: int
                     ) -> list[tuple[int, tuple[int | None, int]]]:
    """Every bill of the performed services against the planned ones on the GFE, all at the
    self-pay % ``m``: (excess over the GFE in cents, (line, delta)) — every line at ``m``
    (line None), or one performed line ``delta`` points off ``m`` (a prompt-pay discount
    below it, the gross chargemaster rate above it)."""
    base = (sum(pct_of(f, m) for f in performed_fees)
            - sum(pct_of(f, m) for f in planned_fees))
    out: list[tuple[int, tuple[int | None, int]]] = [(base, (None, 0))]
    for i, f in enumerate(performed_fees):
        for d in (*(-x for x in DISCOUNTS), *DELTAS):
            out.append((base + pct_of(f, m + d) - pct_of(f, m), (i, d)))
    return out


def _window_pools(cands: list[tuple[int, tuple[int | None, int]]]
                  ) -> dict[str, list[tuple[int, tuple[int | None, int]]]]:
    """The bill candidates of each excess window. A bill within the estimate never prices a
    line above the biller's self-pay % (domain review round 4: 84012, 84015, 84004): such a
    line is billed above its own GFE line, or for a substituted code above the biller's
    documented self-pay price of that code (provider record ``self_pay_price_policy``, "each
    service priced on its own"), so an advocate would ask for that line's correction even
    though the total is within the estimate - while the key of a within-estimate bill is
    no_action (45 CFR 149.620 measures the total only). Above the estimate the key already
    asks for a correction or a dispute, so the gross-chargemaster line stays there."""
    return {w: [c for c in cands if lo <= c[0] <= hi and (w != "within" or c[1][1] <= 0)]
            for w, (lo, hi) in EXCESS_WINDOWS.items()}


def _pick_locality(rng: random.Random, ref: Any) -> dict[str, Any]:
    """A real Medicare locality, in Hawaii or Alaska in a FAR_WEST share of draws (their
    evenings begin on the next UTC date at 14:00-16:00 local; see FAR_WEST)."""
    if rng.random() < FAR_WEST:
        far = _far_west(ref)
        if far:
            return rng.choice(far)
    return pick_locality(rng, ref)


_FAR: dict[int, list[dict[str, Any]]] = {}


def _far_west(ref: Any) -> list[dict[str, Any]]:
    """The Hawaii, Alaska and Guam localities, one state each (Guam is in Hawaii's locality)."""
    key = id(ref)
    if key not in _FAR:
        rows = sorted(ref.localities(), key=lambda r: (r["mac"], r["locality"]))
        far = [r for r in rows if r["state"] in FAR_WEST_STATES]
        far += [{**r, "state": "GU"} for r in rows
                if r["state"] == "HI" and "GUAM" in str(r["locality_name"]).upper()]
        _FAR[key] = far
    return _FAR[key]


def _deposit(rng: random.Random, own_cents: int) -> int:
    """A flat scheduling deposit in cents, at most half the party's own expected charges
    (the smallest one when even that is more)."""
    fits = [d for d in DEPOSIT_FLAT if 2 * d <= own_cents] or [DEPOSIT_FLAT[0]]
    return rng.choice(fits)


# -- the scenario ----------------------------------------------------------------------------
def generate(seed: int, rng: random.Random, ref: Any) -> dict[str, Any]:
    """Compile one scenario (pure: all randomness from ``rng``)."""
    # Branches first, so their frequencies do not depend on what the data draws consumed.
    # The bill against the estimate is drawn after the GFE's timing (WITHIN_ESTIMATE): a late
    # or backdated GFE can come with a bill within the estimate (a violation with nothing to
    # recover), so "the bill is within the estimate" does not settle the timing.
    r = rng.random()
    # backdated 20%, late 40%, timely 40% (issue 8, round 3 red team): every backdated GFE is
    # dated before the booking's UTC date too, so a UTC-date reading flags all of them and the
    # non-backdated GFEs dated on an evening booking's local day (about a third); at 32%
    # backdated the flag alone picked the backdated GFEs out and a boosted forest over the
    # raw dates beat the modal finding by +0.23; at 20% late stays the most likely finding
    # among the flagged scenarios, so the flag no longer answers — only the local date does
    timing = ("dated_before_scheduling" if r < 0.20 else
              "issued_after_deadline" if r < 0.60 else "timely")
    within = rng.random() < WITHIN_ESTIMATE
    no_violation = within and timing == "timely"
    r = rng.random()
    amount_branch = ("within" if within else "under" if r < UNDER_BELOW else
                     "over_open" if r < OVER_OPEN_BELOW else "over_closed")
    delivery_in = "processor_log" if rng.random() < 0.34 else "facility_record"
    near_threshold = rng.random() < 0.5
    want_change = rng.random() < 0.6
    convener = "facility" if rng.random() < FACILITY_CONVENED else "provider"
    want_co_facility = rng.random() < 1.0  # 45 CFR 149.610(c): co-facility charges listed
    r_split = rng.random()
    at_hospital = rng.random() < 0.5

    # Package, locality, prices: redraw until a facility's charges on the estimate exceed the
    # professional fees of the same procedure and every excess window (within the estimate,
    # under $400 above it, $400+ above it) is reachable — not only the branch's own: a redraw
    # that depended on the branch made the kept services, multiples and sizes differ by branch.
    window = "over" if amount_branch.startswith("over") else amount_branch
    for _ in range(3000):
        pkg = rng.choice(PACKAGES)
        setting = setting_of(pkg, convener, at_hospital)
        # one party only (a practice's own office suite, an imaging or sleep center alone):
        # the kind of that party names the responsible one, so these are kept rarer than
        # a practice and a facility on one GFE, where who scheduled decides
        if setting in SINGLE_PARTY_SETTINGS and rng.random() >= SINGLE_PARTY_KEEP:
            continue
        loc = _pick_locality(rng, ref)
        pos, pos_desc, facility_type = SETTINGS[setting]
        pro_facility = setting in ("asc", "hopd")  # MPFS facility-setting professional fee
        fac_priced = convener == "facility" and setting in ("asc", "hopd")
        # a change the facility rate tables do not price separately is out at an ASC/HOPD
        options = [ch for ch in pkg["changes"]
                   if not pro_facility or _has_rate(ref, ch[2], setting)]
        change = rng.choice(options) if options else None
        down = rng.random() < 0.5  # the change planned and not needed, or needed unplanned
        items = list(pkg["items"])
        changed = list(items)
        if change is not None:
            if change[0] == "sub":
                changed[change[1]] = (change[2], change[3])
            else:
                changed.append((change[2], change[3]))
        planned = changed if down else items
        performed = (items if down else changed) if want_change else planned
        m = rng.choice(FACILITY_MULTIPLES if fac_priced else MULTIPLES)

        def prices(codes: list[tuple[str, str]], facility_side: bool, _loc: Any = loc,
                   _setting: str = setting, _pf: bool = pro_facility) -> list[int]:
            return [facility_rate(ref, c, _setting)[0] if facility_side else
                    fee(ref, c, _loc, _pf, pro_modifier(c, _setting)) for c, _ in codes]

        pro_fees = prices(planned, False)
        gfe_fees = prices(planned, True) if fac_priced else list(pro_fees)
        bill_fees = prices(performed, fac_priced)
        other_m = rng.choice(FACILITY_MULTIPLES if not fac_priced else MULTIPLES)
        co_facility = convener == "provider" and setting in ("asc", "hopd") and want_co_facility
        if fac_priced:  # the surgeon's professional fees sit on the facility's estimate
            if sum(pct_of(f, m) for f in gfe_fees) <= sum(pct_of(f, other_m) for f in pro_fees):
                continue
        elif co_facility:
            fac_fees = prices(planned, True)
            if sum(pct_of(f, other_m) for f in fac_fees) <= sum(pct_of(f, m) for f in pro_fees):
                continue
        cands = _bill_candidates(gfe_fees, bill_fees, m)
        pools = _window_pools(cands)
        if not all(pools.values()) and performed != planned:
            # a change too large for one repriced line to bring the bill into every window:
            # the service went as planned (decided by reachability alone, never the branch)
            performed, bill_fees = planned, prices(planned, fac_priced)
            cands = _bill_candidates(gfe_fees, bill_fees, m)
            pools = _window_pools(cands)
        if not all(pools.values()):
            continue
        pool = pools[window]
        # the excess often sits near a boundary of its window whatever the bill's size:
        # within $60 of $400 (over or under it), or within $150 of the estimate (a small
        # excess, or a bill a little under it) — so only the subtraction, not the bill's size
        # for its service, tells the windows apart
        if near_threshold and window != "within":
            pool = [c for c in pool if 34_000 <= c[0] <= 46_000] or pool
        elif window != "over" and rng.random() < 0.5:
            pool = [c for c in pool if -15_000 <= c[0] <= 15_000] or pool
        break
    else:  # pragma: no cover - every package reaches every window at some multiple
        raise RuntimeError(f"no bill reaches every excess window (convener {convener})")
    excess, recipe = rng.choice(pool)
    up_line, up_delta = recipe
    kind = ("change" if performed != planned else "exact" if up_line is None else
            "discount" if up_delta < 0 else "price")
    state = loc["state"]
    tz_name, std_off, observes_dst = TZ_BY_STATE[state]

    # People, parties, ids.
    patient = f"{rng.choice(FIRST_BY_SEX.get(pkg.get('sex'), FIRST))} {rng.choice(LAST)}"
    dob = dt.date(rng.randrange(1952, 2002), rng.randrange(1, 13), rng.randrange(1, 29))
    case_id = f"CLR-{rng.randrange(10**5, 10**6)}-{_token(rng, 4)}"  # never the seed
    specialty = PRACTICE_SPECIALTY.get(pkg["specialty"], pkg["specialty"])
    # Names say nothing about the kind of party (one pool for both); the records state what
    # each party is.
    practice = _party_name(rng, specialty)
    practice_legal = f"{practice}, {rng.choice(ENTITY_SUFFIXES)}"
    physician = f"Dr. {rng.choice(FIRST)} {rng.choice(LAST)}"
    prov = {"name": practice, "npi": npi(rng), "tin": _tin(rng), "specialty": specialty,
            "type": "physician practice" if setting not in ("imaging", "sleep") else
            facility_type}
    if setting in ("asc", "hopd"):
        fac_name = _party_name(rng, specialty)
        while fac_name == practice:
            fac_name = _party_name(rng, specialty)
    elif setting == "office":
        fac_name = f"{practice} - main office"
    else:
        fac_name = practice
    fac_npi, fac_tin = npi(rng), _tin(rng)
    if setting in ("imaging", "sleep"):
        fac_npi, fac_tin = prov["npi"], prov["tin"]
    if convener == "facility":
        biller = {"name": fac_name, "npi": fac_npi, "tin": fac_tin, "type": facility_type}
        signer = rng.choice(("Chief Medical Officer", "Director of Patient Financial Services"))
    else:
        biller, signer = prov, physician
    billing = biller["name"]
    # Who scheduled (the convening provider or facility of 45 CFR 149.610(a)(2): it booked
    # the service, took the deposit and furnished the GFE). Usually the party that bills; with
    # a practice and a facility on the GFE, sometimes the other one of the two (a surgeon's
    # office booking the case at the ASC, or the ASC / hospital booking the surgeon).
    split = ((fac_priced and r_split < SPLIT_SCHEDULER["facility_bills"])
             or (co_facility and r_split < SPLIT_SCHEDULER["provider_bills"]))
    if split:
        scheduler, scheduler_kind = ((practice, "provider") if fac_priced else
                                     (fac_name, "facility"))
    else:
        scheduler, scheduler_kind = billing, convener
    ids = {t: f"{t}-{_digits(rng, 6)}" for t in ("CLM", "PRV", "LED", "PLOG", "FAC")}
    old_ids = {"CLM": f"CLM-{_digits(rng, 6)}", "PRV": f"PRV-{_digits(rng, 6)}"}
    while old_ids["CLM"] == ids["CLM"] or old_ids["PRV"] == ids["PRV"]:
        old_ids = {"CLM": f"CLM-{_digits(rng, 6)}", "PRV": f"PRV-{_digits(rng, 6)}"}
    claim_id = f"SP-{_digits(rng, 7)}"
    old_claim_id = f"SP-{_digits(rng, 7)}"
    while old_claim_id == claim_id:
        old_claim_id = f"SP-{_digits(rng, 7)}"
    facility_id = f"F-{_digits(rng, 6)}"
    account = f"A-{_digits(rng, 7)}"
    appt = f"APT-{_digits(rng, 7)}"
    gfe_id = f"GFE-{_digits(rng, 6)}"
    merchant_id = _digits(rng, 12)
    card = rng.choice(CARD_BRANDS)
    last4 = _digits(rng, 4)

    # Dates: scheduling (the processor's deposit authorization), service, GFE, bill, today.
    # Issue 8, round 4 red team: every calendar quantity that is not the relation under test
    # is drawn alike in every branch — the booking's day (weekday, distance to a federal
    # holiday), its time, the rule and the lead, the GFE's printed date against the booking
    # and the delivery's calendar lag. The branch only picks the delivery's offset in
    # *business* days (on or before the deadline, or the first business day or two after it),
    # so the calendar lag follows from the weekends and holidays in between: a timely and a
    # late GFE both go out 1-7 calendar days after the booking, and only the business-day
    # count in the facility's local calendar tells them apart. (Before, backdated GFEs were
    # dated up to a week before the booking, late ones went out up to weeks after it and only
    # timely ones on the booking day, so a table of UTC-day lags read the finding.)
    # The rule (1 or 3 business days, from the lead) is the 3-day one more often after a
    # timely GFE (RULE_3_TIMELY): two or three business days before the 3-day deadline then
    # sit where one or two past the 1-day deadline do, so the calendar lags of timely and late
    # deliveries overlap (within a day at every quartile) and neither the lead nor the lag
    # alone answers — only the delivery counted against the deadline the lead sets.
    rule_bd = 3 if rng.random() < (RULE_3_TIMELY if timing == "timely" else RULE_3_LATE) else 1
    # never a lead of exactly 10 business days: counting the date of service in (10, the
    # 3-day rule) or out (9, the 1-day rule) would then change the deadline, and both
    # readings of "10 business days ahead" are defensible. Under the 1-day rule the lead
    # stays at 5-7 so that a backdated story's earlier booking (at most two business days
    # before the real one) still reads under the same rule and never lands on exactly 10.
    lead_bd = rng.randrange(5, 8) if rule_bd == 1 else rng.randrange(11, 23)
    sched = _date_between(rng, dt.date(2026, 2, 2), dt.date(2026, 7, 24))
    if rng.random() < NEAR_HOLIDAY:
        # booked on a federal holiday or in the days before one: the business days of the
        # deadline skip it (a weekday is not always a business day) — in every branch alike
        sched = rng.choice(BOOKING_HOLIDAYS) - dt.timedelta(days=rng.randrange(0, 4))
    dos = add_business_days(sched, lead_bd)
    gfe_deadline = add_business_days(sched, rule_bd)

    def delivery_day(late: bool) -> dt.date:
        """The GFE's delivery day, chosen in business days after the booking: a timely GFE
        on its deadline day most often (else an earlier business day after the booking), a
        late one on the first business day after the deadline most often (else the second,
        while that is at most a week after the booking). Now and then either goes out on a
        weekend or holiday — before the deadline, or right after it — so neither the weekday
        of the delivery nor its calendar lag alone says which side of the deadline it is."""
        if late:
            r = rng.random()
            k = rule_bd + (3 if r < LATE_THIRD_DAY else 2 if r < LATE_THIRD_DAY + LATE_SECOND_DAY
                           else 1)
            day = add_business_days(sched, k)
            if (day - sched).days > MAX_LAG_DAYS:
                day = add_business_days(sched, rule_bd + 1)
            off = [d for d in (gfe_deadline + dt.timedelta(days=i) for i in range(1, 4))
                   if not is_business_day(d) and (d - sched).days <= MAX_LAG_DAYS and d < dos]
        else:
            r = rng.random()
            k = (rule_bd if r < TIMELY_ON_DEADLINE else
                 max(1, rule_bd - 1) if r < TIMELY_DAY_BEFORE else rng.randrange(1, rule_bd + 1))
            day = add_business_days(sched, k)
            off = [sched + dt.timedelta(days=i) for i in range(1, (gfe_deadline - sched).days)
                   if not is_business_day(sched + dt.timedelta(days=i))]
        if off and rng.random() < OFF_DAY_SEND:
            day = rng.choice(off)
        return day

    def printed_day(delivered: dt.date) -> dt.date:
        """The GFE's printed date in a timely GFE's (or a backdated story's) telling: the day
        it went out, the booking day (prepared at booking, released later) or a business day
        in between — the same mixture a late GFE's printed date is drawn from."""
        r = rng.random()
        if r < SENT_ON_PRINTED_DATE:
            return delivered
        if r < PRINTED_AT_BOOKING_BELOW:
            return sched
        return _date_between(rng, sched, delivered)

    late = timing != "timely"
    delivered = delivery_day(late)
    gfe_date = printed_day(delivered)
    provider_scheduled_on = sched
    claimed_rule_bd = rule_bd
    if timing == "dated_before_scheduling":
        # The motive: the GFE went out late by the real booking, so the provider dated it the
        # day before the booking and told the booking as if made by then, with the printed
        # date standing where a timely GFE's stands against its booking (the business-day gap
        # is drawn from the timely mixture: ``gap``). The processor log's deposit authorization
        # (the real booking, in the local time zone) and the delivery show it went out after
        # the deadline that booking set: late and misdated, so the late finding is accepted
        # too. Only one local day before the booking: the printed date against the booking's
        # local date, not a week-long gap, tells the branch.
        gfe_date = sched - dt.timedelta(days=1)
        # The story: booked on the printed GFE date and the GFE handed over that same day
        # (issue 8, round 6, pattern A: a story booking a business day or more before the
        # printed date put the stated booking two or three days before the deposit
        # authorization's UTC date, a gap no honest record shows; now the stated booking is
        # exactly one local day before the real one, as close as a false booking can be).
        provider_scheduled_on = gfe_date
        story_lead = _business_days_between(provider_scheduled_on, dos)
        assert story_lead != 10 and (story_lead >= 10) == (rule_bd == 3), story_lead
        assert gfe_date < sched <= gfe_deadline < delivered < dos
    claimed = provider_scheduled_on
    # Times of day (local) are drawn the same way for the booking and the GFE's delivery in
    # every branch: business hours, the evening (late enough that the UTC date is already the
    # next calendar day) or the small hours (an overnight batch / a night-owl booking: the UTC
    # hour is low although the local date is the same) — so neither the UTC date nor the UTC
    # hour gives the local date; only the facility's zone and daylight period do.
    # One evening rate in every branch (EVENING). A backdated GFE's stated booking is one local
    # day before the real one, so after an evening booking it reads two days before the
    # booking's UTC date; Hawaii's and Alaska's evenings (FAR_WEST) and the mainland's small
    # hours share the low UTC hours, so the hour alone does not say which reading applies.
    sched_min = _minute_of_day(rng, state, sched, None, hi=23 * 60 + 30, evening=EVENING)
    sched_sec = rng.randrange(60)
    utc_flip = utc_stamp(state, sched, sched_min, sched_sec)[:10] != iso(sched)
    same_day = delivered == sched
    deliv_min = _minute_of_day(rng, state, delivered, sched_min if same_day else None,
                               evening=EVENING)
    deliv_stamp = utc_stamp(state, delivered, deliv_min, rng.randrange(60))
    sched_stamp = utc_stamp(state, sched, sched_min, sched_sec)

    statement_date = dos + dt.timedelta(days=rng.randrange(7, 29))
    by_mail = rng.random() < 0.5
    receipt = statement_date + dt.timedelta(days=rng.randrange(3, 7) if by_mail else 0)
    closed = amount_branch == "over_closed" or (
        amount_branch in ("under", "within") and rng.random() < 0.2)
    if closed:
        # often within a week of the window's close, the first closed day no likelier
        # than the six after it
        age = rng.randrange(121, 128) if rng.random() < 0.3 else rng.randrange(121, 171)
    elif rng.random() < OPEN_LAST_WEEK:
        # the window's last week counted from receipt (the rule, 45 CFR 149.620), each day
        # as likely as the others: for a mailed bill its last days are already past 120
        # days from the statement's date
        age = rng.randrange(PPDR_DAYS - 6, PPDR_DAYS + 1)
    else:  # open under both readings
        age = rng.randrange(9, PPDR_DAYS - (receipt - statement_date).days + 1)
    today = receipt + dt.timedelta(days=age)
    window_open = age <= PPDR_DAYS
    assert window_open != closed

    # Prices: GFE lines at the self-pay multiple; the bill per the recipe.
    pro_setting = "facility" if pro_facility else "non-facility"

    def pro_item(i: int, code: str, dx: str, f: int, pct: int) -> dict[str, Any]:
        mod = pro_modifier(code, setting)
        return {"line": i + 1, "service": _describe(ref, code) + (
                    " (professional component)" if mod else ""), "hcpcs": code,
                "modifiers": [mod] if mod else [],
                "units": 1, "diagnosis_codes": [dx], "mpfs_amount": dollars(f),
                "mpfs_setting": pro_setting, "multiple_pct": pct,
                "pricing": f"{pct}% of the MPFS {pro_setting} amount"
                           + (f" with modifier {mod}" if mod else ""),
                "expected_charge": dollars(pct_of(f, pct))}

    def fac_item(i: int, code: str, dx: str, pct: int) -> dict[str, Any]:
        rate, basis = facility_rate(ref, code, setting)
        return {"line": i + 1, "service": _describe(ref, code), "hcpcs": code, "modifiers": [],
                "units": 1, "diagnosis_codes": [dx], "facility_rate": basis,
                "multiple_pct": pct,
                "pricing": f"facility charge: {pct}% of the {basis['schedule']}",
                "expected_charge": dollars(pct_of(rate, pct))}

    if fac_priced:
        gfe_items = [fac_item(i, c, dx, m) for i, (c, dx) in enumerate(planned)]
    else:
        gfe_items = [pro_item(i, c, dx, f, m)
                     for i, ((c, dx), f) in enumerate(zip(planned, gfe_fees, strict=True))]
    gfe_total = sum(pct_of(f, m) for f in gfe_fees)
    planned_codes = {c for c, _ in planned}
    billed: list[dict[str, Any]] = [
        {"hcpcs": c, "dx": dx, "fee": f, "pct": m, "on_gfe": c in planned_codes}
        for (c, dx), f in zip(performed, bill_fees, strict=True)]
    if up_line is not None:
        billed[up_line]["pct"] = m + up_delta
    # what was done, in the operative/technical note: the change either way, or as planned
    change_note = (None if performed == planned or change is None else
                   change[5] if down else change[4])
    for b in billed:
        b["amount"] = pct_of(b["fee"], b["pct"])
    billed_total = sum(b["amount"] for b in billed)
    assert billed_total - gfe_total == excess

    def section(name: str, party_npi: str, tin: str, ptype: str, place: str,
                items: list[dict[str, Any]], note: str) -> dict[str, Any]:
        total = sum(cents(it["expected_charge"]) for it in items)
        return {"name": name, "npi": party_npi, "tin": tin, "type": ptype,
                "place_of_service": place, "items": items, "expected_total": dollars(total),
                "note": note, "_cents": total}

    # every section names who bills it, in the same words: nothing marks the convener's
    conv_note = (f"Facility charges; billed by {fac_name}." if fac_priced else
                 f"Services of {physician}; billed by {billing}."
                 if biller is prov and setting not in ("imaging", "sleep") else
                 f"Services; billed by {billing}.")
    sections = [section(billing, biller["npi"], biller["tin"], biller["type"], pos, gfe_items,
                        conv_note)]
    if fac_priced:  # the surgeon's professional fees: billed separately by the practice
        sections.append(section(
            practice, prov["npi"], prov["tin"], prov["type"], pos,
            [pro_item(i, c, dx, f, other_m)
             for i, ((c, dx), f) in enumerate(zip(planned, pro_fees, strict=True))],
            f"Services of {physician}; billed by {practice}."))
    elif co_facility:  # the ASC's / hospital's facility charges: billed separately
        sections.append(section(
            fac_name, fac_npi, fac_tin, facility_type, pos,
            [fac_item(i, c, dx, other_m) for i, (c, dx) in enumerate(planned)],
            f"Facility charges; billed by {fac_name}."))
    other_total = sections[1]["_cents"] if len(sections) > 1 else 0
    co_m = None
    if pkg["co"] is not None and rng.random() < 0.8:
        co_code, co_dx = pkg["co"]
        co_fee = fee(ref, co_code, loc, False)
        co_m = rng.choice(MULTIPLES)
        co_units = rng.choice((1, 2)) if co_code == "88305" else 1
        co_total = pct_of(co_fee, co_m) * co_units
        lab = rng.choice(PATHOLOGY)
        sections.append(section(
            lab, npi(rng), _tin(rng), "pathology laboratory", "81",
            [{"line": 1, "service": _describe(ref, co_code), "hcpcs": co_code,
              "modifiers": [], "units": co_units, "diagnosis_codes": [co_dx],
              "mpfs_amount": dollars(co_fee), "mpfs_setting": "non-facility",
              "multiple_pct": co_m,
              "pricing": f"{co_m}% of the MPFS non-facility amount, per unit",
              "expected_charge": dollars(co_total)}],
            f"Specimen examination; billed by {lab}."))
    grand_total = sum(s.pop("_cents") for s in sections)
    rng.shuffle(sections)  # the GFE's order of sections says nothing about who convened

    # the scheduler took a flat scheduling deposit toward its own expected charges (at most
    # half of them); it is applied to this bill when the scheduler is the party that bills.
    # Otherwise the biller applies its own pre-service deposit, taken at pre-registration
    # (facilities and surgeons' offices routinely collect one from self-pay patients): the
    # ledger shows a prepaid deposit either way, and only the processor log's merchant (and
    # the facility's booking record) names the party that scheduled. Flat amounts from one
    # list whoever took them: a share of the party's own charges made a facility's deposit
    # larger than a practice's, and the deposit's size named the scheduler's kind.
    deposit = _deposit(rng, other_total if split else gfe_total)
    biller_deposit = _deposit(rng, gfe_total) if split else None
    applied = biller_deposit if biller_deposit else deposit
    balance = billed_total - applied
    # the biller's receipt of the deposit it credits, on its own record in every branch (domain
    # review round 6: a split scheduler's bill credited a deposit with no record of its payment)
    receipt_id = f"RCPT-{_digits(rng, 8)}"
    auto_capture = rng.random() < 0.6

    # the earlier visit (a distractor): drawn the same way whoever convened. Its code is what
    # the biller itself bills (review of issue 8: an ASC or a hospital department never bills
    # an office E/M visit): a practice its consult, a hospital outpatient department its clinic
    # visit (G0463 on its UB-04; the physician group bills the 9920x), an ASC an earlier covered
    # procedure, an independent center an earlier test. The amount is drawn from the package's
    # consult fee in every case, so its size never names the biller's (or scheduler's) kind.
    biller_setting = setting if fac_priced or setting in ("imaging", "sleep") else "office"
    prior_code, prior_dx = prior_code_of(pkg, biller_setting)
    prior_fee = fee(ref, pkg["prior"], loc, False)
    prior_amount = pct_of(prior_fee, MULTIPLES[rng.randrange(len(MULTIPLES))])
    prior_date = _date_between(rng, dt.date(2026, 1, 5), claimed - dt.timedelta(days=7))
    if not is_business_day(prior_date):
        prior_date = add_business_days(prior_date, 1)
    # the scheduler's own earlier visit (a consult paid at its office), on its processor log
    # when it is not the biller: the log shows an earlier payment whoever scheduled
    sched_prior_claim = f"SP-{_digits(rng, 7)}"
    while sched_prior_claim in (claim_id, old_claim_id):
        sched_prior_claim = f"SP-{_digits(rng, 7)}"
    sched_prior_amount = pct_of(prior_fee, MULTIPLES[rng.randrange(len(MULTIPLES))])
    include_old_claim = rng.random() < 0.85
    include_old_record = include_old_claim and rng.random() < 0.3

    area = (f"Medicare locality {loc['mac']}/{loc['locality']} ({loc['locality_name']}, "
            f"{state})")
    if fac_priced:
        sched_name = ("OPPS Addendum B" if setting == "hopd" else "ASC Addendum AA")
        sched_name += f" ({facility_rate(ref, pkg['items'][0][0], setting)[1]['release']})"
        policy = {
            "schedule": f"CMS {sched_name}", "setting": "facility",
            "mac": loc["mac"], "locality": loc["locality"],
            "locality_name": loc["locality_name"], "self_pay_multiple_pct": m,
            "charges": "facility charge",
            "statement": (f"Self-pay facility charge of each procedure = {m}% of the CMS "
                          f"{sched_name} national payment rate of that HCPCS code, per unit, "
                          "each procedure priced on its own (the facility's chargemaster "
                          "multiple for self-pay patients). No public QPA or facility price "
                          "dataset exists for self-pay care; this documented multiple is the "
                          "reference for the facility's expected charges on the estimate. "
                          "Professional fees are billed separately by the surgeon's practice."),
        }
    else:
        policy = {
            "schedule": f"Medicare Physician Fee Schedule {ref.release}",
            "mac": loc["mac"], "locality": loc["locality"],
            "locality_name": loc["locality_name"], "setting": pro_setting,
            "self_pay_multiple_pct": m, "charges": "professional service"
            if setting not in ("imaging", "sleep") else "global (technical and professional)",
            "statement": (f"Self-pay price of each service = {m}% of the {ref.release} Medicare "
                          f"Physician Fee Schedule {pro_setting} amount for {area}, per unit, "
                          "each service priced on its own. No public QPA exists for self-pay "
                          "care; this documented schedule is the reference for the estimate."),
        }

    # -- artifacts ---------------------------------------------------------------------------
    ub04 = fac_priced and setting == "hopd"
    claim_lines = [{"line": i + 1,
                    **({"revenue_code": REVENUE_CODES.get(b["hcpcs"], "0360")} if ub04 else {}),
                    "hcpcs": b["hcpcs"], "modifiers": [], "units": 1,
                    "diagnosis_pointer": "A", "emergency_indicator": "N",
                    "billed": dollars(b["amount"])} for i, b in enumerate(billed)]
    diagnoses = list(dict.fromkeys(b["dx"] for b in billed))
    claim = {
        "claim_id": claim_id, "patient_id": case_id, "payer": "none - self-pay patient (no "
        "insurance claim filed)", "provider": {"name": billing, "npi": biller["npi"]},
        "claim_form": ("UB-04 (institutional)" if ub04 else "CMS-1500 (professional)"),
        "rendering_physician": physician, "facility_id": facility_id,
        # the UB-04 states a type of bill (013x: hospital outpatient) and revenue codes; a
        # place-of-service code belongs on the CMS-1500
        **({"type_of_bill": "0131"} if ub04 else
           {"place_of_service": pos, "place_of_service_description": pos_desc}),
        "encounter": {"type": "scheduled", "admission_type": "elective",
                      "appointment_id": appt, "emergency_services": False},
        "date_of_service": iso(dos), "submitted_date": iso(statement_date),
        "status": "billed to patient (self-pay)", "diagnoses": diagnoses,
        "lines": claim_lines, "total_billed": dollars(billed_total),
    }
    notes = [f"Patient elected self-pay for the {pkg['service']}.",
             f"Statement {statement_date:%m/%d/%Y}: balance due within 30 days; unpaid balances "
             "may be referred to collections."]
    # every record carries the operative/technical note (a bill with no change says the
    # service went as planned): its presence alone marked a changed, costlier bill
    notes.insert(1, f"Operative/technical note: {change_note or 'performed as scheduled'}.")
    if fac_priced:
        notes.insert(1, f"Facility charges only; {physician} ({practice}) bills professional "
                        "services separately.")
    stmt_id = f"ST-{_digits(rng, 6)}"
    provider_record = {
        "claim_id": claim_id, "provider": biller, "patient_account": account,
        "patient": {"name": patient, "date_of_birth": iso(dob)},
        "appointment": {"appointment_id": appt, "service": pkg["service"],
                        "type": "scheduled elective", "service_date": iso(dos),
                        "scheduled_on": iso(provider_scheduled_on),
                        "facility_id": facility_id},
        "self_pay_price_policy": policy,
        "gfe": {
            "gfe_id": gfe_id, "gfe_date": iso(gfe_date), "appointment_id": appt,
            "patient": {"name": patient, "date_of_birth": iso(dob)},
            "primary_service": pkg["service"], "scheduled_service_date": iso(dos),
            "delivery_method": "e-mail" if delivery_in == "processor_log" else "patient portal",
            "providers": sections,
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
                      "total_charges": dollars(billed_total), "payments": dollars(applied),
                      "balance_due": dollars(balance)},
        "deposits_received": ([{"receipt_id": receipt_id, "appointment_id": appt,
                                "description": "Prepaid deposit, card payment",
                                "card": f"{card} ****{last4}", "amount": dollars(applied),
                                "status": "paid; applied to this statement"}]
                              if applied else []),
        "notes": notes,
        "other_claims_on_account": [old_claim_id] if include_old_claim else [],
        "business_days": BUSINESS_DAYS,
    }
    # A card authorization is captured when the booking is confirmed (seconds later) or in
    # the merchant's next settlement batches (1-3 days) — never weeks later, when it would
    # have expired.
    if auto_capture:
        capture_day, cap_stamp = sched, utc_stamp(state, sched, sched_min,
                                                  sched_sec + rng.randrange(3, 30))
    else:
        capture_day = sched + dt.timedelta(days=rng.randrange(1, 4))
        cap_stamp = utc_stamp(state, capture_day, rng.randrange(60, 5 * 60),
                              rng.randrange(60))
    entries = [
        {"date": iso(prior_date), "type": "charge",
         "description": f"{prior_code} {_describe(ref, prior_code)} (claim {old_claim_id})",
         "amount": dollars(prior_amount), "reference": old_claim_id},
        {"date": iso(prior_date), "type": "patient_payment",
         "description": f"Card payment {card} ****{last4}", "amount": dollars(-prior_amount),
         "reference": old_claim_id},
        # the practice-management system applies the prepaid deposit to the visit at
        # check-in: the ledger never dates the booking (only the processor log does)
        *([{"date": iso(dos), "type": "patient_payment",
            "description": f"Prepaid deposit applied, appointment {appt} ({card} ****{last4}, "
                           f"receipt {receipt_id})",
            "amount": dollars(-applied), "reference": appt}] if applied else []),
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
        # an earlier visit paid to the scheduler (this log is the scheduler's): the one on the
        # biller's ledger when it bills, else its own earlier service. One wording for every
        # kind of merchant ("Office payment" was an ASC's or a hospital's implausible office
        # visit, and a kind-specific wording would name the scheduler: the responsible party)
        (txn(prior_stamp, "sale", prior_amount, "settled", old_claim_id,
             f"Patient payment, claim {old_claim_id}") if not split else
         txn(prior_stamp, "sale", sched_prior_amount, "settled", sched_prior_claim,
             f"Patient payment, claim {sched_prior_claim}")),
        txn(sched_stamp, "authorization", deposit, "approved", appt,
            f"Scheduling deposit at online booking: {pkg['service']}, appointment {appt} on "
            f"{iso(dos)}", auth_code),
        txn(cap_stamp, "capture", deposit, "settled", appt,
            f"Capture of deposit authorization {auth_code}", auth_code),
    ]
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
        "merchant": {"name": scheduler, "merchant_id": merchant_id},
        "timezone": "UTC (all timestamps ISO-8601, 'Z')", "transactions": transactions,
        "events": events,
    }
    dst_start, dst_end = dst_period(2026)
    booked_by = scheduler  # the convener scheduled the service and took the deposit
    facility = {
        "facility_id": facility_id, "name": fac_name, "type": facility_type,
        "facility_license": LICENSURE[setting], "npi": fac_npi,
        "network_status": "not applicable (self-pay patient)",
        "state": state, "time_zone": tz_name,
        "utc_offsets": ({"standard": _offset_text(std_off),
                         "daylight": _offset_text(std_off + 1),
                         "daylight_period_2026": f"{iso(dst_start)} to {iso(dst_end)}"}
                        if observes_dst else {"standard": _offset_text(std_off),
                                              "daylight": "not observed"}),
        "business_days": BUSINESS_DAYS,
        "has_emergency_department": setting == "hopd",
        "encounter": {"appointment_id": appt, "date": iso(dos),
                      "registration": "scheduled outpatient appointment",
                      "booked_by": booked_by,
                      "arrival": "scheduled check-in", "emergency_department_visit": False,
                      "place_of_service": pos},
        # the physician group whose clinician performs the service, named in every branch
        # (issue 8, round 6: with only the facility's own name and ``booked_by`` in the
        # record, a repeated name - counted as words - said the facility had booked it). By
        # its legal name and NPI, outside the encounter: printed as the GFE's name next to
        # ``booked_by`` it was string-equal to it exactly when the practice had booked (audit
        # overlap_records read the party 0.660 / 0.680); now only knowing that the legal name
        # and NPI are the GFE's practice tells who booked
        "credentialed_physician_group": {"legal_name": practice_legal, "npi": prov["npi"]},
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
                     # a hospital department's clinic visit goes on its UB-04 (type of
                     # bill 0131, revenue code 0510 clinic), like the case's own claim
                     **({"claim_form": "UB-04 (institutional)", "type_of_bill": "0131"}
                        if ub04 else {"place_of_service": "11" if not fac_priced else pos}),
                     "date_of_service": iso(prior_date),
                     "submitted_date": iso(prior_date), "status": "paid in full",
                     "diagnoses": [prior_dx],
                     "lines": [{"line": 1, **({"revenue_code": "0510"} if ub04 else {}),
                                "hcpcs": prior_code, "modifiers": [], "units": 1,
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
    # The deadline lookup states the rule and the day it is read on, never whether the window
    # is open: receipt of the bill is on the ledger's statement.
    dl = {"artifact_id": "DL-NSA-DISPUTE", "type": "deadline", "party": "reference",
          "key": "nsa_dispute",
          "data": {"deadline_type": "nsa_dispute", "days": PPDR_DAYS, "as_of": iso(today),
                   "basis": "120 calendar days from the patient's receipt of the initial bill "
                            "(receipt = day 0); the window is open through day 120",
                   "citation": "45 CFR 149.620",
                   "trigger_event": "receipt of the initial bill (see the statement's "
                                    "delivery on the patient account ledger)"}}
    gfe_rule = regulation("nsa_good_faith_estimate")
    gfe_rule["data"]["summary"] = GFE_RULE_SUMMARY
    codes = sorted({(c, pro_facility) for c, _ in planned}
                   | {(b["hcpcs"], pro_facility) for b in billed}
                   | ({(pkg["co"][0], False)} if co_m is not None else set()))
    references = [gfe_rule, regulation("nsa_dispute_resolution"),
                  regulation("nsa_balance_billing"), dl,
                  *(_code_ref(ref, c, loc, f) for c, f in codes)]

    # -- outcome -------------------------------------------------------------------------------
    eligible = excess >= THRESHOLD_CENTS and window_open
    finding = ("no_violation" if no_violation else
               {"dated_before_scheduling": "gfe_backdated_before_scheduling",
                "issued_after_deadline": "gfe_issued_after_deadline",
                "timely": "billed_above_gfe"}[timing])
    resolution = ("no_action" if within else
                  "nsa_dispute" if eligible else "balance_correction")
    # the bill above the biller's own documented self-pay price of the services performed
    policy_excess = billed_total - sum(pct_of(f, m) for f in bill_fees)
    if (resolution != "balance_correction" or kind != "change" or policy_excess <= 0
            or policy_excess == excess):
        policy_excess = None  # (at or below that price no_action is accepted already)
    # the records that support the finding: the GFE, the independent timestamps, the local
    # time zone and business days, and the bill
    relevant = [ids["PRV"], ids["PLOG"], ids["FAC"], ids["CLM"]]
    ehr_decision = "concede" if timing == "timely" else "reject"
    ehr_records = [ids["PLOG"], ids["FAC"]]  # booking and delivery times, local calendar
    ehr_refuters = ehr_records if ehr_decision == "reject" else []
    # an honestly dated late GFE: the provider record's own booking date and GFE date
    # already refute "delivered within the deadline of booking"
    if timing == "issued_after_deadline" and gfe_date > add_business_days(
            provider_scheduled_on, claimed_rule_bd):
        ehr_refuters = [*ehr_refuters, ids["PRV"]]
    em_refuters = [ids["CLM"], ids["FAC"], ids["PRV"], ids["PLOG"]]

    # The day the EHR counter says the GFE went out, drawn alike in every branch: a timely
    # GFE's real delivery (its printed date or a later day by the deadline); a late or
    # backdated one's false day — its printed date, or a later day by the deadline of the
    # provider's stated booking, at the rates a timely GFE's delivery shows them (when the
    # counter always stated the printed date of a late GFE, "concede when the counter's day
    # differs from the printed date" answered it without the deadline arithmetic).
    story_due = add_business_days(provider_scheduled_on, claimed_rule_bd)
    if timing == "timely":
        # the EHR logs the day the GFE was generated, and the note states it as "sent" now
        # and then when the GFE went out a day or two later (still on time: the counter's
        # conclusion stands, so it is conceded); as often as a late GFE's false day is its
        # printed date, so "the stated day is the printed date" says nothing (round 4)
        stated = (gfe_date if gfe_date < delivered and rng.random() < EHR_TIMELY_STATES_PRINTED
                  else delivered)
    elif gfe_date >= story_due or rng.random() < EHR_STATES_PRINTED:
        stated = gfe_date
    else:
        stated = story_due if rng.random() < 0.5 else _date_between(rng, gfe_date, story_due)
    counters, counter_ids = _counters(
        rng, practice=billing, scheduler=scheduler, physician=signer, patient=patient,
        gfe_id=gfe_id, gfe_date=stated, dos=dos,
        rule_bd=claimed_rule_bd, fac_name=fac_name, balance=balance,
        ehr_refuters=ehr_refuters, em_refuters=em_refuters)

    complaint = _complaint(rng, patient=patient, service=pkg["service"],
                           claim_id=claim_id, billed_total=billed_total, deposit=applied,
                           balance=balance, gfe_date=gfe_date, dos=dos, receipt=receipt)
    case = {"case_id": case_id, "patient_id": case_id, "patient_name": patient,
            "patient_complaint": complaint,
            "emotional_state": "distressed" if rng.random() < 0.5 else "frustrated",
            "today": iso(today), "claim_id": claim_id, "facility_id": facility_id}
    expected = {
        # the GFE's timing is the convener's (who scheduled) duty; a bill above a party's own
        # expected charges is that billing party's
        "responsible_party": ("none" if no_violation else
                              convener if finding == "billed_above_gfe" else scheduler_kind),
        # with nothing wrong, naming the party that billed is also defensible. A GFE timing
        # violation is the convener's alone: 45 CFR 149.610(a)(2) defines the convening
        # provider or facility as the one responsible for scheduling the primary item or
        # service, and 149.610(b)(1) puts the GFE's furnishing and its deadline on it; a
        # co-provider or co-facility only submits its own expected charges to the convener
        # (149.610(b)(2)). The biller that did not schedule is not accepted for a timing
        # finding (it was, and then "facility" was right in every two-party timing case, so a
        # constant answer passed without reading who scheduled).
        "responsible_party_alt": convener if no_violation else "none-accepted-only",
        "finding": finding,
        # other findings the records equally support: a backdated GFE was also late by the
        # real booking; a late or backdated GFE whose biller billed $400+ above its own
        # section within the window is also PPDR-eligible (45 CFR 149.620), and the filing
        # rests on that excess (only then: the timing breach is the finding otherwise — a
        # bill above a GFE breaks no rule by itself; $400+ matters only as the PPDR's
        # threshold, so once the 120-day window has closed the late GFE is the only
        # violation the records show. Reviewed in rounds 2 and 3 (seed 82014) as contestable
        # at most; accepting the excess there too would let an agent that never dates the
        # booking pass a fifth of the timing cases)
        "finding_alts": ((["gfe_issued_after_deadline"]
                          if timing == "dated_before_scheduling" else [])
                         + (["billed_above_gfe"]
                            if timing != "timely" and eligible else [])),
        # the party billed_above_gfe names (the biller, also when another party scheduled)
        "biller": convener,
        "resolution_type": resolution,
        # a GFE is an estimate: a bill less than $400 above it, or one disputed after the
        # 120-day window, leaves the patient no federal remedy (45 CFR 149.620), so asking
        # the biller for a correction and explaining the bill without filing (no_action)
        # are both defensible
        "resolution_type_alt": ("no_action" if resolution == "balance_correction" else
                                resolution),
        "amount_cents": 0 if within else excess, "reference_amount_cents": gfe_total,
        # a balance correction of a bill for a service other than the estimate's: the
        # correction to the biller's documented self-pay price of what was done (provider
        # record ``self_pay_price_policy``) is as defensible as the excess over the estimate
        # (domain review round 6, 84012: 47562 estimated, 47563 done, $18.91 above its
        # documented price and $139.26 above the GFE), so either amount passes
        "amount_alt_cents": policy_excess,
        "billed_total_cents": billed_total, "ppdr_eligible": eligible,
        "gfe_timing_violation": timing != "timely", "scheduled_local_date": iso(sched),
        "gfe_deadline": iso(gfe_deadline), "gfe_delivered_local_date": iso(delivered),
        "claim_record_id": ids["CLM"], "ledger_id": ids["LED"],
        "provider_record_id": ids["PRV"], "processor_log_id": ids["PLOG"],
        "facility_record_id": ids["FAC"], "relevant_ids": relevant,
        "counter_ehr_id": counter_ids["ehr_notes"],
        "counter_emergency_id": counter_ids["nsa_emergency_exception"],
        "counter_legal_id": counter_ids["legal_threat"],
        "counter_ehr_decision": ehr_decision, "counter_ehr_refuted_by": ehr_refuters,
        "counter_ehr_support_ids": ehr_records if ehr_decision == "concede" else [],
        "counter_emergency_refuted_by": em_refuters,
    }
    variant = {
        "package": pkg["key"], "setting": setting, "convener": convener,
        "biller": convener, "scheduler": scheduler_kind, "split_scheduler": split,
        "facility_priced": fac_priced, "co_facility": co_facility,
        "prior_code": prior_code, "timing": timing, "no_violation": no_violation,
        "within_estimate": within,
        "amount_branch": amount_branch, "gfe_rule_business_days": rule_bd,
        "lead_business_days": lead_bd, "utc_date_flip_at_scheduling": utc_flip,
        "gfe_delivery_in": delivery_in, "bill_recipe": kind,
        "change": None if kind != "change" else [*change[:3], "down" if down else "up"],
        "co_providers": len(sections) - 1,
        "near_threshold": 34_000 <= excess <= 46_000, "window_open": window_open,
        "days_since_bill": age, "self_pay_pct": m, "deposit_cents": deposit,
        "biller_deposit_cents": biller_deposit,
        "auto_capture": auto_capture,
        "billed_pcts": [[b["hcpcs"], b["pct"]] for b in billed],
        "co_provider_pct": co_m, "other_section_pct": other_m,
        "locality": [loc["mac"], loc["locality"]],
        "distractors": int(include_old_claim) + int(include_old_record),
    }
    return {"case": case, "artifacts": artifacts, "references": references,
            "counters": counters, "expected": expected, "variant": variant}


# -- text ----------------------------------------------------------------------------------------
def _counters(rng: random.Random, *, practice: str, scheduler: str, physician: str,
              patient: str, gfe_id: str,
              gfe_date: dt.date, dos: dt.date, rule_bd: int, fac_name: str, balance: int,
              ehr_refuters: list[str], em_refuters: list[str]
              ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The three counter-arguments, from the same templates in every branch (their wording
    never depends on what the records show), in shuffled order."""
    note_id = f"EN-{_digits(rng, 6)}"
    gd = _fmt(gfe_date)
    ehr_text = rng.choice((
        f"Our electronic health record shows that Good Faith Estimate {gfe_id} was delivered "
        f"to {patient} on {gd}, within {rule_bd} business day(s) of booking "
        "as 45 CFR 149.610 requires. The estimate was timely and its date is accurate.",
        f"Per EHR note {note_id}, our scheduler reviewed Good Faith Estimate {gfe_id} with "
        f"the patient and sent it on {gd}, within the {rule_bd}-business-day window after "
        "the appointment was booked. It was issued on time.",
        f"The EHR audit trail shows Good Faith Estimate {gfe_id} was released "
        f"to the patient on {gd}, after the appointment was booked and within the "
        f"{rule_bd}-business-day deadline. The EHR is the legal medical record and controls.",
    ))
    # the GFE's timing is argued by the party that scheduled and furnished it
    ehr_from = rng.choice((f"Scheduling Office, {scheduler}",
                           f"Health Information Management, {scheduler}",
                           f"Compliance Office, {scheduler}"))
    dd = _fmt(dos)
    em_text = rng.choice((
        "This service was billed as emergency care. Good Faith Estimate and dispute rules "
        "apply only to scheduled services, so the No Surprises Act does not cover this bill "
        "and the charges stand.",
        f"Our claim for {dd} identifies the procedure as an emergency service, and emergency "
        "services are outside the good-faith-estimate requirements. We will not adjust the "
        "bill.",
        f"The patient arrived at {fac_name} on {dd} with acute symptoms and was treated as an "
        "emergency. The estimate requirements for scheduled self-pay care do not apply to "
        "emergency services.",
        f"{fac_name}'s registration shows the patient came in through emergency intake on "
        f"{dd}; the rules on estimates for scheduled services do not apply.",
    ))
    em_from = rng.choice((f"Director of Revenue Cycle, {practice}",
                          f"Patient Financial Services, {practice}",
                          f"Billing Manager, {practice}"))
    a, b = rng.choice(LAW_FIRMS)
    legal_from = f"{a} & {b} LLP, counsel for {practice}"
    legal_text = rng.choice((
        "Withdraw your challenge to this bill within 10 days or we will refer the full "
        f"balance of ${dollars(balance)} to collections and pursue all available legal remedies, "
        "including our attorneys' fees.",
        "Our client rejects your position in full. Withdraw your challenge to the bill "
        "immediately, or we will file suit for the balance without further notice.",
        f"We represent {practice}. If the challenge to the bill is not withdrawn, we will "
        "report the unpaid balance to the credit bureaus and sue for the full amount plus "
        "interest.",
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


def _complaint(rng: random.Random, *, patient: str, service: str,
               claim_id: str, billed_total: int, deposit: int, balance: int,
               gfe_date: dt.date, dos: dt.date, receipt: dt.date) -> str:
    """The patient's own words: what worries them, never what the answer is (the same
    templates in every branch)."""
    variants = [
        f"I don't have insurance for this, so I paid for my {service} myself. I booked it "
        f"online and paid a ${dollars(deposit)} deposit, and I was given a Good Faith "
        f"Estimate. Now I've been billed ${dollars(billed_total)} (claim {claim_id}), "
        "and I can't tell if that is what I was quoted. The estimate is dated "
        f"{_fmt(gfe_date)}, but I "
        "honestly can't remember when I actually got it. What can I do?",
        f"I was billed ${dollars(billed_total)} for my {service} on {_fmt(dos)} "
        f"(claim {claim_id}). I'm self-pay and I got a written estimate. Now they say "
        "pay up or it goes to collections. Is this bill right, and can I dispute it?",
        f"I got a statement on {_fmt(receipt)} for claim {claim_id}: ${dollars(balance)} "
        f"due, and I had paid a ${dollars(deposit)} deposit when I booked. I paid for the "
        f"{service} myself and had an estimate dated {_fmt(gfe_date)}. I can't tell if the "
        "numbers match and the billing office won't explain. Please help me.",
    ]
    return rng.choice(variants)
