// Renderers shared by play and replay: every record is shown as the document it is (an EOB
// as a claim-line table with its CARC/RARC codes, a ledger as entries, a processor log as
// transactions...), and whatever a specific renderer does not lay out is still shown by the
// generic one, so a field added to an artifact is never hidden. Text always goes in through
// textContent: record text is data, never markup.
"use strict";

const R = (() => {
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const HEADINGS = { hcpcs: "code", rarcs: "remarks (RARC)", adjustments: "adjustments (group-CARC)",
    patient_responsibility: "patient resp.", balance_after: "balance after" };
  const label = (key) => HEADINGS[key] || String(key).replace(/_/g, " ");
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

  function value(v) {
    if (v === null || v === undefined || v === "") return el("span", { class: "muted", text: "—" });
    if (typeof v === "boolean") return el("span", { text: v ? "yes" : "no" });
    if (Array.isArray(v)) {
      if (!v.length) return el("span", { class: "muted", text: "none" });
      if (v.every((x) => isObj(x))) return table(v);
      if (v.every((x) => !isObj(x) && !Array.isArray(x))) {
        return el("span", { text: v.join(", ") });
      }
      return el("ul", {}, v.map((x) => el("li", {}, value(x))));
    }
    if (isObj(v)) return dl(v);
    return el("span", { text: String(v) });
  }

  function dl(obj, skip) {
    const out = el("dl", { class: "kv" });
    for (const [k, v] of Object.entries(obj)) {
      if (skip && skip.includes(k)) continue;
      out.append(el("dt", { text: label(k) }), el("dd", {}, value(v)));
    }
    return out;
  }

  function table(rows, columns, cells) {
    const cols = columns || [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const t = el("table", { class: "grid" });
    t.append(el("thead", {}, el("tr", {}, cols.map((c) => el("th", { text: label(c) })))));
    const body = el("tbody");
    for (const r of rows) {
      body.append(el("tr", {}, cols.map((c) => {
        const custom = cells && cells[c];
        return el("td", { class: /amount|charge|billed|allowed|paid|balance|copay|coinsurance|deductible|responsibility|total/.test(c) ? "num" : null },
          custom ? custom(r) : value(r[c]));
      })));
    }
    t.append(body);
    return t;
  }

  function rest(data, used) {
    const left = Object.fromEntries(Object.entries(data).filter(([k]) => !used.includes(k)));
    return Object.keys(left).length ? el("details", { class: "rest" },
      el("summary", { text: "other fields" }), dl(left)) : null;
  }

  function facts(data, keys) {
    const present = keys.filter((k) => k in data);
    return present.length ? dl(Object.fromEntries(present.map((k) => [k, data[k]]))) : null;
  }

  const adjustments = (line) => el("ul", { class: "codes" }, (line.adjustments || []).map((a) =>
    el("li", {}, el("b", { class: "code", text: `${a.group}-${a.carc}` }), ` $${a.amount} `,
      el("span", { class: "desc", text: a.description || "" }))));
  const remarks = (line) => (line.rarcs && line.rarcs.length) ? el("ul", { class: "codes" },
    line.rarcs.map((r) => el("li", {}, el("b", { class: "code", text: r.code || r }), " ",
      el("span", { class: "desc", text: r.description || "" })))) : el("span", { class: "muted", text: "—" });
  const mods = (line) => el("span", { text: (line.modifiers || []).join(", ") || "—" });

  const HEAD = ["insurer", "claim_id", "claim_status", "date_of_service", "processed_date",
    "member", "member_id", "patient_name", "plan_id", "provider", "network_status"];

  function eob(d) {
    const cols = ["line", "hcpcs", "modifiers", "description", "billed", "allowed", "deductible",
      "copay", "coinsurance", "plan_paid", "patient_responsibility", "adjustments", "rarcs"];
    const lines = (d.lines || []).map((l) => ({ ...l }));
    const extra = [...new Set(lines.flatMap((l) => Object.keys(l)))].filter((k) => !cols.includes(k) && k !== "date_of_service");
    const used = [...HEAD, "lines", "totals", "accumulators", "message", "messages", "payment", "pricing_note"];
    return [
      facts(d, HEAD),
      el("h4", { text: "Claim lines" }),
      table(lines, cols, { adjustments, rarcs: remarks, modifiers: mods }),
      extra.length ? el("details", { class: "rest" }, el("summary", { text: "line details" }),
        table(lines.map((l) => Object.fromEntries([["line", l.line], ...extra.map((k) => [k, l[k]])])))) : null,
      d.totals ? [el("h4", { text: "Totals" }), dl(d.totals)] : null,
      d.accumulators ? [el("h4", { text: "Accumulators" }), dl(d.accumulators)] : null,
      d.payment ? [el("h4", { text: "Payment" }), dl(d.payment)] : null,
      [d.message, ...(d.messages || [])].filter(Boolean).map((m) => el("p", { class: "notice", text: m })),
      d.pricing_note ? el("p", { class: "small", text: d.pricing_note }) : null,
      rest(d, used),
    ];
  }

  function ledger(d) {
    const used = ["entries", "balance"];
    return [
      facts(d, ["practice", "patient_name", "patient_id", "account_id", "as_of"]),
      table(d.entries || [], ["date", "type", "description", "reference", "amount", "balance_after"]),
      el("p", { class: "total" }, "Balance ", el("b", { text: `$${d.balance}` })),
      rest(d, [...used, "practice", "patient_name", "patient_id", "account_id", "as_of"]),
    ];
  }

  function processorLog(d) {
    const cols = ["timestamp", "type", "amount", "status", "card", "transaction_id", "auth_code",
      "description", "merchant_reference"];
    const rows = (d.transactions || []).map((t) => ({ ...t, card: [t.card_brand, t.last4 && `…${t.last4}`].filter(Boolean).join(" ") }));
    const head = ["processor", "merchant", "merchant_id", "patient_id", "timezone_note"];
    return [facts(d, head), table(rows, cols), d.dispute_policy ? el("p", { class: "small", text: d.dispute_policy }) : null,
      rest(d, [...head, "transactions", "dispute_policy"])];
  }

  function plan(d) {
    const head = ["insurer", "plan_id", "template_id", "metal_level", "coverage", "deductible",
      "out_of_pocket_max", "coinsurance_pct", "copays_count_toward_deductible", "cost_sharing_order", "network"];
    const benefits = d.benefits ? table(Object.entries(d.benefits).map(([k, v]) => ({ benefit: k, ...v }))) : null;
    return [facts(d, head),
      d.copays ? [el("h4", { text: "Copays" }), dl(d.copays)] : null,
      benefits ? [el("h4", { text: "Benefits" }), benefits] : null,
      d.member_accumulators ? [el("h4", { text: "Member accumulators (plan of record)" }), dl(d.member_accumulators)] : null,
      d.source ? el("p", { class: "small", text: d.source }) : null,
      rest(d, [...head, "copays", "benefits", "member_accumulators", "source"])];
  }

  function gfe(g) {
    const head = ["gfe_id", "gfe_date", "delivery_method", "appointment_id", "primary_service",
      "scheduled_service_date", "total_expected_charges"];
    return el("section", { class: "gfe" }, el("h4", { text: "Good Faith Estimate" }), facts(g, head),
      g.patient ? dl(g.patient) : null,
      (g.providers || []).map((p) => el("div", { class: "gfe-provider" },
        el("h5", { text: `${p.name || ""} — ${p.type || ""}` }),
        facts(p, ["npi", "tin", "place_of_service", "note", "expected_total"]),
        table(p.items || []))),
      (g.disclaimers || []).length ? el("ul", { class: "small" }, g.disclaimers.map((x) => el("li", { text: x }))) : null,
      rest(g, [...head, "patient", "providers", "disclaimers"]));
  }

  function providerRecord(d) {
    const head = ["provider", "claim_id", "date_of_service", "patient_name", "patient_account",
      "place_of_service", "network_status", "diagnoses"];
    return [facts(d, head),
      d.lines ? [el("h4", { text: "Lines billed" }), table(d.lines, null, { modifiers: mods })] : null,
      d.notes ? [el("h4", { text: "Notes" }), el("ol", { class: "notes" }, d.notes.map((n) => el("li", { text: n })))] : null,
      d.financial_policy ? el("p", { class: "notice", text: d.financial_policy }) : null,
      d.statement ? [el("h4", { text: "Statement" }), dl(d.statement)] : null,
      d.appointment ? [el("h4", { text: "Appointment" }), dl(d.appointment)] : null,
      d.gfe ? gfe(d.gfe) : null,
      rest(d, [...head, "lines", "notes", "financial_policy", "statement", "appointment", "gfe"])];
  }

  function claimRecord(d) {
    const head = ["insurer", "payer", "claim_id", "claim_form", "status", "date_of_service",
      "submitted_date", "provider", "member_id", "patient_id", "plan_id", "place_of_service", "total_billed"];
    return [facts(d, head),
      d.diagnoses ? [el("h4", { text: "Diagnoses" }), value(d.diagnoses)] : null,
      d.lines ? [el("h4", { text: "Lines" }), table(d.lines, null, { modifiers: mods })] : null,
      rest(d, [...head, "diagnoses", "lines"])];
  }

  function ncci(d) {
    const verdict = d.edit_exists
      ? `Active edit: column 1 ${d.column_1}, column 2 ${d.column_2}; modifier indicator ${d.modifier_indicator}`
      : `No active edit for ${d.column_1} / ${d.column_2}`;
    return [el("p", { class: "verdict", text: verdict }),
      d.meaning ? el("p", { text: `Indicator ${d.modifier_indicator}: ${d.meaning}` }) : null,
      facts(d, ["rationale", "status", "table"]),
      rest(d, ["column_1", "column_2", "edit_exists", "modifier_indicator", "meaning", "rationale", "status", "table"])];
  }

  const TITLES = {
    eob: "Explanation of benefits", payment_ledger: "Payment ledger", processor_log: "Payment processor log",
    plan_document: "Plan document", provider_record: "Provider record", claim_record: "Claim record",
    ncci_edit: "NCCI procedure-to-procedure edit", facility_record: "Facility record",
    code_reference: "Procedure code reference", regulation: "Regulation", deadline: "Filing deadline",
  };
  const RENDER = { eob, payment_ledger: ledger, processor_log: processorLog, plan_document: plan,
    provider_record: providerRecord, claim_record: claimRecord, ncci_edit: ncci };

  function documentCard(result) {
    const type = result.type || "record";
    const body = (RENDER[type] || ((d) => dl(d)))(result.data || {});
    return el("article", { class: `doc doc-${type}`, "data-artifact": result.artifact_id, "data-type": type },
      el("header", {}, el("h3", { text: TITLES[type] || label(type) }),
        el("span", { class: "id", text: result.artifact_id || "" }),
        result.party ? el("span", { class: "party", text: result.party }) : null),
      body);
  }

  function isArtifact(result) {
    return isObj(result) && typeof result.artifact_id === "string" && isObj(result.data);
  }

  function grade(g, links, onStep) {
    const box = el("div", { class: "grade-body" });
    const ok = g.outcome_correct;
    box.append(el("p", { class: "score" },
      el("b", { text: `Score ${Number(g.score).toFixed(3)}` }),
      ` — ${g.passed} of ${g.total} checks passed`,
      ok === undefined ? "" : el("span", { class: ok ? "pass" : "fail", text: ok ? " · outcome correct" : " · outcome wrong" }),
      g.ended_by ? ` · ended by ${g.ended_by}` : ""));
    const rows = (g.checks || []).map((c) => {
      const link = links && links[c.id];
      return el("tr", { class: c.passed ? "ok" : "bad", "data-check": c.id },
        el("td", { class: c.passed ? "pass" : "fail", text: c.passed ? "✓" : "✗" }),
        el("td", {}, el("code", { text: c.id })),
        el("td", { text: c.family || "" }),
        el("td", { text: c.description || "" }),
        el("td", { text: c.detail || "" }),
        links && el("td", {}, link ? (link.step
          ? el("button", { type: "button", class: "steplink", "data-step": link.step, onclick: () => onStep && onStep(link.step) }, `step ${link.step}`)
          : el("span", { class: "muted", text: `no ${link.action} step` })) : ""));
    });
    const t = el("table", { class: "grid checks" },
      el("thead", {}, el("tr", {}, ["", "check", "family", "what it checks", "reason", ...(links ? ["where"] : [])].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows));
    box.append(t);
    if (g.cases) {
      box.append(el("h4", { text: "Cases" }), table(g.cases.map((c, i) => ({
        case: i + 1, difficulty: c.difficulty, reward: c.reward,
        primary: c.breakdown && c.breakdown.primary ? c.breakdown.primary.status : "",
        secondary: c.breakdown && c.breakdown.secondary && c.breakdown.secondary.active ? c.breakdown.secondary.score : "n/a",
        cpt: c.breakdown && c.breakdown.cpt && c.breakdown.cpt.active ? c.breakdown.cpt.score : "n/a",
      }))));
    }
    return box;
  }

  function caseSummary(obs, task) {
    const cool = obs.cooldown_steps || {};
    const used = obs.api_calls_used || 0;
    const budget = obs.api_call_budget || 1;
    const meter = el("div", { class: "meter", title: `${used} of ${budget} API calls used` },
      el("div", { class: "fill", style: `width:${Math.min(100, (100 * used) / budget)}%` }));
    const parts = [];
    if (obs.patient_complaint !== undefined) {
      parts.push(el("blockquote", { class: "complaint", id: "complaint", text: obs.patient_complaint }));
      parts.push(dl({ patient: obs.patient_name, case_id: obs.case_id, emotional_state: obs.patient_emotional_state }));
    } else {
      parts.push(dl({ patient_age: obs.patient_age, patient_sex: obs.patient_sex, remaining_cases: obs.remaining_tasks }));
    }
    parts.push(el("div", { class: "budget" }, el("span", { id: "budget-text", text: `API calls ${used} / ${budget}` }), meter));
    if (Object.keys(cool).length) {
      parts.push(el("div", { class: "cooldowns" }, "Cooldowns: ",
        Object.entries(cool).map(([k, v]) => el("span", { class: v > 0 ? "cool hot" : "cool", text: `${k} ${v > 0 ? `(${v} steps)` : "ready"}` }))));
    }
    parts.push(el("p", { class: "muted", text: `task ${task} · step ${obs.step_number}${obs.done ? " · done" : ""}` }));
    return parts;
  }

  return { el, value, dl, table, documentCard, isArtifact, grade, caseSummary, label };
})();
