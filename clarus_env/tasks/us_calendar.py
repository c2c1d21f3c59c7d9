"""US calendar and clock facts the billing generators share: federal holidays (5 U.S.C. 6103),
business days, each state's time zone and US daylight time (15 U.S.C. 260a).

Kept apart from any one task so that two generators placing events in a practice's local
time read one definition of it (adversarial_fabrication's deadlines and stamps,
deductive_liability's check-in desk hours)."""

from __future__ import annotations

import datetime as dt
from functools import cache
from zoneinfo import ZoneInfo

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
    # Guam (Chamorro Standard Time, no daylight time): a "State" under the PHS Act
    # (42 U.S.C. 300gg-91(d)(14)), so 45 CFR 149.610 applies; Medicare prices it in the
    # "HAWAII, GUAM" locality (MAC 01212, locality 01)
    "GU": ("Pacific/Guam", 10, False),
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


def _business_days_between(a: dt.date, b: dt.date) -> int:
    n, d = 0, a
    while d < b:
        d += dt.timedelta(days=1)
        if is_business_day(d):
            n += 1
    return n


def add_business_days(d: dt.date, n: int) -> dt.date:
    """``n`` business days after ``d`` (Mon–Fri, federal holidays excluded)."""
    while n > 0:
        d += dt.timedelta(days=1)
        if is_business_day(d):
            n -= 1
    return d


def utc_offset(state: str, local: dt.date) -> int:
    """UTC offset (hours) in the afternoon and evening of a local date; daylight time from
    the 2nd Sunday of March to the 1st Sunday of November. Only for telling where a local
    evening passes into the next UTC date (03:00 or later, past both changes); stamps take
    the offset of their own instant (``utc_stamp``)."""
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


@cache
def _zone(state: str) -> ZoneInfo:
    return ZoneInfo(TZ_BY_STATE[state][0])


def utc_stamp(state: str, local: dt.date, minute_of_day: int, second: int = 0) -> str:
    """The ISO-8601 UTC ('Z') timestamp of a local wall-clock time in the state's zone.

    The offset is the one in force at that local instant (IANA zone), not on that date:
    the small hours drawn by ``_minute_of_day`` fall before the 02:00 change on a DST-change
    day (15 U.S.C. 260a), where the date's offset put a Saturday 23:47 PST booking on
    Sunday (domain review round 4, 88695). A repeated hour (November) reads as its first
    occurrence, a skipped one (March) with the offset before the change."""
    wall = dt.datetime(local.year, local.month, local.day) + dt.timedelta(
        minutes=minute_of_day, seconds=second)
    utc = wall.replace(tzinfo=_zone(state)).astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
