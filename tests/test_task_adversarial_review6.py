"""adversarial_fabrication, domain review round 6: a balance correction of a bill for a
service other than the estimate's accepts the correction to the biller's documented
self-pay price of what was done (84012), and the complaint names the deposit the biller's
statement credits, whose payment is on record (19 of 40 named another deposit)."""

from __future__ import annotations

from decimal import Decimal
from functools import cache
from typing import Any

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.tasks import get_task
from tests.test_task_adversarial_fabrication import play

TASK = "adversarial_fabrication"
FRESH = range(920_000, 921_500)  # outside every split


@cache
def _ref() -> Any:
    return open_reference()


@cache
def _s(seed: int) -> dict[str, Any]:
    return compile_scenario(TASK, seed, _ref())


def _cents(text: str) -> int:
    return int(Decimal(text) * 100)


def _play(s: dict[str, Any], actions: list[dict[str, Any]]) -> set[str]:
    """The ids of the checks an episode of ``actions`` fails."""
    return {c["id"] for c in play(s, actions)["checks"] if not c["passed"]}


def _with_amount(actions: list[dict[str, Any]], amount: str) -> list[dict[str, Any]]:
    names = ("draft_resolution", "write_diagnosis")
    return [{"action_type": a["action_type"], "parameters": {**a["parameters"], "amount": amount}}
            if a["action_type"] in names else a for a in actions]


def _changed_corrections() -> list[dict[str, Any]]:
    return [s for s in map(_s, FRESH)
            if s["expected"]["resolution_type"] == "balance_correction"
            and s["variant"]["bill_recipe"] == "change"]


def test_changed_service_correction_amount_is_the_bill_above_its_documented_price() -> None:
    """Read from the records: each claim line's charge at its billed multiple against the same
    code at the biller's documented self-pay multiple (within a cent of rounding per line)."""
    cases = _changed_corrections()
    assert len(cases) >= 20
    with_alt = 0
    for s in cases:
        exp, var = s["expected"], s["variant"]
        claim = next(a["data"] for a in s["artifacts"]
                     if a["type"] == "claim_record" and not a["distractor"])
        m = var["self_pay_pct"]
        over = sum(_cents(line["billed"]) * (pct - m) / pct for line, (_, pct)
                   in zip(claim["lines"], var["billed_pcts"], strict=True))
        alt = exp["amount_alt_cents"]
        if alt is None:  # at or under the documented price (no_action accepted) or the same
            assert over <= len(claim["lines"]) or abs(over - exp["amount_cents"]) <= 2
        else:
            with_alt += 1
            assert alt > 0 and alt != exp["amount_cents"]
            assert abs(alt - over) <= len(claim["lines"]), (alt, over)
    assert with_alt >= 5
    # a bill of anything other than a changed service in a balance correction has no alternative
    others = [s for s in map(_s, FRESH[:400]) if s["variant"]["bill_recipe"] != "change"
              or s["expected"]["resolution_type"] != "balance_correction"]
    assert all(s["expected"]["amount_alt_cents"] is None for s in others)


def test_documented_price_correction_passes_and_other_amounts_fail() -> None:
    s = next(x for x in _changed_corrections() if x["expected"]["amount_alt_cents"])
    exp = s["expected"]
    oracle = get_task(TASK).oracle(s)
    assert "reference_amount" not in _play(s, oracle)
    alt = f"{exp['amount_alt_cents'] / 100:.2f}"
    assert "reference_amount" not in _play(s, _with_amount(oracle, alt))
    wrong = f"{(exp['amount_alt_cents'] + 1) / 100:.2f}"
    assert "reference_amount" in _play(s, _with_amount(oracle, wrong))


def _money(text: str) -> list[int]:
    return [_cents(x) for x in __import__("re").findall(r"\$(\d+\.\d\d)", text)]


def test_complaint_names_the_credited_deposit_whose_payment_is_on_record() -> None:
    """Whoever scheduled, the complaint's deposit is the one the biller's ledger and statement
    credit, the biller's record holds its receipt, and the complaint's arithmetic adds up."""
    split = balance_named = 0
    for seed in FRESH[:600]:
        s = _s(seed)
        a = {x["type"]: x["data"] for x in s["artifacts"] if not x["distractor"]}
        led, prv = a["payment_ledger"], a["provider_record"]
        credits = [e for e in led["entries"] if e["description"].startswith("Prepaid deposit")]
        assert len(credits) == 1
        credited = -_cents(credits[0]["amount"])
        receipts = prv["deposits_received"]
        assert [_cents(r["amount"]) for r in receipts] == [credited]
        assert receipts[0]["receipt_id"] in credits[0]["description"]
        assert _cents(prv["statement"]["payments"]) == credited
        text = s["case"]["patient_complaint"]
        amounts = _money(text)
        billed, balance = s["expected"]["billed_total_cents"], _cents(led["balance"])
        assert balance == billed - credited
        if "deposit" in text:
            assert credited in amounts, text
            if balance in amounts:
                balance_named += 1
        split += s["variant"]["split_scheduler"]
    assert split >= 100 and balance_named >= 50


def test_physician_group_is_never_printed_as_booked_by() -> None:
    """The facility record names the physician group by its legal name and NPI, outside the
    encounter: never the string ``booked_by`` prints (it was exactly when the practice had
    booked), and the NPI ties it to the practice's section of the GFE."""
    practice_booked = 0
    for seed in FRESH[:600]:
        s = _s(seed)
        a = {x["type"]: x["data"] for x in s["artifacts"] if not x["distractor"]}
        fac, prv = a["facility_record"], a["provider_record"]
        group = fac["credentialed_physician_group"]
        booked = fac["encounter"]["booked_by"]
        assert "physician_group" not in fac["encounter"]
        assert group["legal_name"] != booked
        sections = {sec["npi"]: sec["name"] for sec in prv["gfe"]["providers"]}
        name = sections[group["npi"]]
        assert group["legal_name"].startswith(f"{name}, ")
        practice_booked += booked == name
    assert practice_booked >= 100
