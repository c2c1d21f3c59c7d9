"""`clarus audit` round 8: structural counts of a view's records (``gb_counts``).

An independent red team read the deductive finding at 0.567 / 0.588 (bar 0.34) from how many
processor-log transactions of each type, status and description a view holds, how many
ledger rows of each type, how many of them fall on the claim's date of service, how many EOB
lines. The word counts (``record_word_counts``) see a word's total over a record, not which
list it sits in nor which day its item is dated, and the numeric leaves see a list's length
only. ``struct_counts`` is that reading made generic: it names no task, record or field, and
follows the data's shape, so it keeps working when the generators change.

Self-contained (no import from ``audit``): ``audit.view_leaves`` calls it for every view.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# an ISO date or timestamp as printed; its first ten characters are the day
ISO_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}.*)?$")
MONEYISH = re.compile(r"^-?\$?\d[\d,]*(\.\d+)?$")
MAX_VALUE_CHARS = 40  # a longer string is a free text, not a category
# an item's day against the view's anchor day: on it, before it, after it
BUCKETS = {0: "=", -1: "<", 1: ">"}


def _day(value: Any) -> str | None:
    if isinstance(value, str):
        m = ISO_DAY.match(value.strip())
        if m:
            return m.group(1)
    return None


def _days(obj: Any, out: list[str]) -> None:
    if isinstance(obj, dict):
        for v in obj.values():
            _days(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _days(v, out)
    else:
        day = _day(obj)
        if day is not None:
            out.append(day)


def anchor_day(records: dict[str, Any]) -> str | None:
    """The view's own day: the day printed by the most records (ties: the one printed most
    often, then the earliest). A claim's date of service is printed on the claim, the EOB, the
    provider's record and the ledger alike, where a payment's or a letter's day sits in one
    record: the rule finds the visit without naming a field."""
    in_records: Counter[str] = Counter()
    printed: Counter[str] = Counter()
    for t in sorted(records):
        days: list[str] = []
        _days(records[t], days)
        printed.update(days)
        in_records.update(set(days))
    if not printed:
        return None
    return min(printed, key=lambda d: (-in_records[d], -printed[d], d))


def _category(value: Any) -> str | None:
    """A short categorical string as printed (a type, a status, a description, a code), or a
    boolean; amounts and dates are not categories (a digit-only code is)."""
    if isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_VALUE_CHARS or _day(text) is not None:
        return None
    if MONEYISH.match(text) and not text.isdigit():
        return None
    return text


def _item_bucket(item: dict[str, Any], anchor: str | None) -> str | None:
    """Where a list item falls against the anchor day: ``=`` if any of its own values prints
    that day, else ``<`` or ``>`` by its first own date; None without a date or an anchor."""
    if anchor is None:
        return None
    days = [d for d in (_day(v) for v in item.values()) if d is not None]
    if not days:
        return None
    if anchor in days:
        return BUCKETS[0]
    return BUCKETS[-1] if days[0] < anchor else BUCKETS[1]


def _walk(obj: Any, path: str, anchor: str | None, out: Counter[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)):
                _walk(v, f"{path}.{k}", anchor, out)
        return
    if not isinstance(obj, list):
        return
    at = f"{path}[]"
    out[f"{at}#n"] += len(obj)
    for item in obj:
        if isinstance(item, dict):
            bucket = _item_bucket(item, anchor)
            if bucket is not None:
                out[f"{at}#n@{bucket}"] += 1
            for k, v in item.items():
                value = _category(v)
                if value is None:
                    continue
                out[f"{at}.{k}={value}"] += 1
                if bucket is not None:
                    out[f"{at}.{k}={value}@{bucket}"] += 1
            _walk(item, at, anchor, out)
        elif isinstance(item, list):
            _walk(item, at, anchor, out)
        else:
            value = _category(item)
            if value is not None:
                out[f"{at}={value}"] += 1


def struct_counts(records: dict[str, Any]) -> Counter[str]:
    """Per record, for every list (list paths without their indices, so the same list in
    every view is one key): its length; for a list of objects, how many of its items hold
    each value of each short categorical field (``transactions[].type=capture``), and the same
    two counts over the items dated on, before and after the view's anchor day
    (``anchor_day``: ``...=capture@=`` counts the captures on the date of service); for a
    list of strings, how many hold each value. Nested lists are counted across all their
    parents. Which values become columns is left to the matrix (seen in enough train views)."""
    anchor = anchor_day(records)
    out: Counter[str] = Counter()
    for t in sorted(records):
        if records[t]:
            _walk(records[t], t, anchor, out)
    return out
