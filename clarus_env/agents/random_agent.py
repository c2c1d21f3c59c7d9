"""Uniformly random, valid-looking actions: the floor every benchmark number is read against.

It picks an action type uniformly and fills parameters from what it has seen (the case id,
ids in results) or from the enums, so most of its actions pass validation and it fails on
strategy, not on syntax.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ..actions import ACTIONS, Param
from ..tasks import get_task

ID_RE = re.compile(r"\b[A-Z][A-Z0-9]*-[A-Za-z0-9-]+\b")


class RandomAgent:
    privileged = False

    def __init__(self, task: str, *, seed: int = 0) -> None:
        self.task = get_task(task)
        self.rng = random.Random(f"random-agent:{task}:{seed}")
        self.ids: list[str] = []
        self.codes: list[str] = []

    def reset(self, observation: Any, **_: Any) -> None:
        self.ids = [observation.case_id]
        self.codes = []
        self._harvest(observation.patient_complaint)

    def _harvest(self, text: str) -> None:
        for m in ID_RE.findall(text):
            if m not in self.ids:
                self.ids.append(m)
        for m in re.findall(r"\b\d{4}[0-9A-Z]\b|\b[A-Z]\d{4}\b", text):
            if m not in self.codes:
                self.codes.append(m)

    def _value(self, p: Param) -> Any:
        rng = self.rng
        if p.enum:
            return rng.choice(p.enum)
        if p.type == "money":
            return round(rng.uniform(0, 500), 2)
        if p.type == "string_list":
            return rng.sample(self.ids, k=rng.randint(0, min(3, len(self.ids))))
        if p.name == "finding":
            return rng.choice(self.task.findings)
        if p.name == "appeal_reason":
            return rng.choice(self.task.appeal_reasons or ("none",))
        if p.name in ("code", "paired_code", "code_1", "code_2"):
            return rng.choice(self.codes or ["99213"])
        if p.name.endswith("_id"):
            return rng.choice(self.ids)
        return "random agent text"

    def act(self, observation: Any) -> dict[str, Any]:
        if observation.last_action_result:
            self._harvest(str(observation.last_action_result))
        spec = ACTIONS[self.rng.choice(sorted(ACTIONS))]
        params = {p.name: self._value(p) for p in spec.params
                  if p.required or self.rng.random() < 0.5}
        return {"action_type": spec.name, "parameters": params}


class RandomCodingAgent:
    """Random but well-formed medical coding: valid-looking codes drawn from the real code
    sets (billable ICD-10-CM, priced CPT), with an occasional random lookup."""

    privileged = False

    def __init__(self, task: str = "medical_coding", *, seed: int = 0) -> None:
        self.rng = random.Random(f"random-agent:{task}:{seed}")
        self._icd: list[str] | None = None
        self._cpt: list[str] | None = None

    def reset(self, observation: Any, **_: Any) -> None:
        if self._icd is None:
            from ..reference import open_reference

            ref = open_reference()
            t = ref.table("icd10cm")
            self._icd = [c for c, b in zip(t.column("code").to_pylist(),
                                           t.column("billable").to_pylist(), strict=True) if b]
            r = ref.table("hcpcs_rvu")
            self._cpt = sorted({c for c, s in zip(r.column("hcpcs").to_pylist(),
                                                  r.column("status").to_pylist(), strict=True)
                                if s == "A"})

    def act(self, observation: Any) -> dict[str, Any]:
        assert self._icd is not None and self._cpt is not None
        rng = self.rng
        if rng.random() < 0.2:
            kind = rng.choice(("search_icd10", "search_cpt", "get_icd10"))
            params = {"code": rng.choice(self._icd)} if kind == "get_icd10" else \
                {"query": rng.choice(("pain", "infection", "visit", "injury", "diabetes"))}
            return {"action_type": kind, "parameters": params}
        return {"action_type": "submit_codes", "parameters": {
            "primary_icd10": rng.choice(self._icd),
            "secondary_icd10s": rng.sample(self._icd, k=rng.randint(0, 3)),
            "cpt_codes": rng.sample(self._cpt, k=rng.randint(1, 2))}}
