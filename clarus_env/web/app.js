// The /web page: play an episode through the public /reset and /step routes (the page sees
// exactly what an agent sees), and replay a stored results file through /web/api/replay.
// Forms are generated from the action JSON Schemas the server lists in /web/api/catalog.
"use strict";

(() => {
  const { el } = R;
  const $ = (sel) => document.querySelector(sel);
  let catalog = null;
  const play = { episodeId: null, task: null, obs: null, log: [], seen: new Set(), done: false };

  async function api(path, body) {
    const res = await fetch(path, body === undefined ? {} : {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const data = await res.json();
    if (!res.ok) throw new Error(`${data.code || res.status}: ${data.message || res.statusText}`);
    return data;
  }

  function status(id, text, isError) {
    const node = $(id);
    node.textContent = text;
    node.classList.toggle("error", Boolean(isError));
  }

  // ---------- tabs ----------
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => {
      for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
      for (const p of document.querySelectorAll(".pane")) p.hidden = p.id !== tab.dataset.tab;
    });
  }

  // ---------- forms from JSON Schema ----------
  const LONG_TEXT = new Set(["message", "summary", "body", "rationale"]);

  function field(name, schema, required) {
    const id = `f-${Math.random().toString(36).slice(2)}`;
    let input;
    if (schema.enum) {
      input = el("select", { id, name });
      if (!required) input.append(el("option", { value: "", text: "(none)" }));
      for (const v of schema.enum) input.append(el("option", { value: v, text: v }));
    } else if (schema.type === "array") {
      input = el("input", { id, name, type: "text", "data-kind": "list", placeholder: "comma-separated" });
    } else if (schema.oneOf) {
      input = el("input", { id, name, type: "text", "data-kind": "money", inputmode: "decimal", placeholder: "0.00" });
    } else if (schema.type === "boolean") {
      input = el("input", { id, name, type: "checkbox", "data-kind": "boolean" });
    } else if (schema.type === "integer") {
      input = el("input", { id, name, type: "number", step: "1", "data-kind": "integer" });
    } else if (LONG_TEXT.has(name)) {
      input = el("textarea", { id, name, rows: 3, maxlength: schema.maxLength });
    } else {
      input = el("input", { id, name, type: "text", maxlength: schema.maxLength });
    }
    const wrap = el("div", { class: "field" },
      el("label", { for: id }, name, required ? el("span", { class: "req", text: " *" }) : null),
      input, schema.description ? el("small", { text: schema.description }) : null);
    if (name === "cited_artifacts") wrap.append(el("div", { class: "chips", "data-for": name }));
    return wrap;
  }

  function actionForm(action) {
    const { name, schema } = action;
    const required = schema.required || [];
    const form = el("form", { class: "action-form", id: `form-${name}`, "data-action": name, hidden: true },
      el("h3", { text: name }), el("p", { class: "small", text: schema.description || "" }),
      Object.entries(schema.properties || {}).map(([p, s]) => field(p, s, required.includes(p))),
      el("button", { type: "submit", class: "send", text: `Send ${name}` }));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      sendAction(name, collect(form, schema)).catch((e) => status("#play-status", e.message, true));
    });
    return form;
  }

  function collect(form, schema) {
    const required = schema.required || [];
    const params = {};
    for (const [name] of Object.entries(schema.properties || {})) {
      const input = form.elements[name];
      const kind = input.dataset.kind;
      if (kind === "boolean") { params[name] = input.checked; continue; }
      const raw = input.value.trim();
      if (kind === "list") {
        const items = raw.split(/[,\n]/).map((x) => x.trim()).filter(Boolean);
        if (items.length || required.includes(name)) params[name] = items;
        continue;
      }
      if (raw === "" && !required.includes(name)) continue;
      params[name] = kind === "integer" ? Number(raw) : raw;
    }
    return params;
  }

  function refreshChips() {
    for (const box of document.querySelectorAll(".chips")) {
      box.replaceChildren(...[...play.seen].map((id) => el("button", {
        type: "button", class: "chip", text: id, onclick: () => {
          const input = box.parentElement.querySelector("input");
          const items = input.value.split(",").map((x) => x.trim()).filter(Boolean);
          if (!items.includes(id)) items.push(id);
          input.value = items.join(", ");
        },
      })));
    }
  }

  function showForm(name) {
    for (const f of document.querySelectorAll("#forms .action-form")) f.hidden = f.dataset.action !== name;
    for (const b of document.querySelectorAll("#action-picker .pick")) b.classList.toggle("active", b.dataset.action === name);
    const form = document.querySelector(`#form-${name}`);
    if (form && form.elements.patient_id && !form.elements.patient_id.value && play.obs && play.obs.case_id) {
      form.elements.patient_id.value = play.obs.case_id;  // the one id the page may fill: it is printed on the case file
    }
  }

  function buildActions(task) {
    const t = catalog.tasks.find((x) => x.name === task);
    const picker = $("#action-picker");
    const forms = $("#forms");
    picker.replaceChildren();
    forms.replaceChildren();
    for (const a of t.actions) {
      picker.append(el("button", { type: "button", class: "pick", "data-action": a.name, text: a.name, title: a.schema.description, onclick: () => showForm(a.name) }));
      forms.append(actionForm(a));
    }
    const coding = t.kind === "coding";
    if (coding) {  // the code-entry form and lookup tools stay open one under the other
      for (const f of forms.children) f.hidden = false;
    }
    picker.hidden = coding;
    $("#documents").hidden = coding;
  }

  // ---------- play ----------
  async function start(ev) {
    ev.preventDefault();
    const task = $("#task").value;
    const split = $("#split").value;
    const random = $("#random-seed").checked || $("#seed").value === "";
    const body = { task_name: task, split, seed: random ? null : Number($("#seed").value) };
    if (play.episodeId && !play.done) {
      fetch(`/episodes/${encodeURIComponent(play.episodeId)}`, { method: "DELETE" }).catch(() => {});
    }
    status("#play-status", "starting…");
    const out = await api("/reset", body);
    Object.assign(play, { episodeId: out.episode_id, task, split, obs: out.observation, log: [], seen: new Set(), done: false, grade: null });
    const state = await api(`/state?episode_id=${encodeURIComponent(out.episode_id)}`);
    play.seed = state.seed;
    $("#seed").value = state.seed;
    status("#play-status", `${task} · ${split} · seed ${state.seed}`);
    $("#episode").hidden = false;
    $("#grade").hidden = true;
    $("#doc-list").replaceChildren();
    $("#no-docs").hidden = false;
    $("#last-result").replaceChildren();
    $("#counters").hidden = true;
    buildActions(task);
    render();
  }

  function summarize(params) {
    return Object.entries(params || {}).map(([k, v]) => {
      const s = Array.isArray(v) ? v.join(",") : String(v);
      return `${k}=${s.length > 40 ? s.slice(0, 40) + "…" : s}`;
    }).join(" ");
  }

  async function sendAction(name, params) {
    if (play.done) throw new Error("the episode is over: start a new one");
    const out = await api("/step", { episode_id: play.episodeId, action: { action_type: name, parameters: params } });
    const obs = out.observation;
    play.obs = obs;
    play.done = out.done;
    play.log.push({ step: obs.step_number, name, params, reward: out.reward, error: obs.last_action_error });
    const result = obs.last_action_result;
    const box = $("#last-result");
    box.replaceChildren();
    if (obs.last_action_error) {
      box.append(el("p", { class: "error", id: "action-error", text: obs.last_action_error }));
    } else if (R.isArtifact(result)) {
      play.seen.add(result.artifact_id);
      const list = $("#doc-list");
      const old = list.querySelector(`[data-artifact="${CSS.escape(result.artifact_id)}"]`);
      if (old) old.remove();
      list.prepend(R.documentCard(result));
      $("#no-docs").hidden = true;
      box.append(el("p", {}, `Fetched ${result.artifact_id} (${R.label(result.type)}).`));
    } else if (result && Array.isArray(result.results) && name.startsWith("search_")) {
      box.append(el("h4", { text: `${name} "${result.query}" →` }), lookupTable(name, result.results));
    } else if (result) {
      box.append(el("h4", { text: `${name} →` }), R.value(result));
      for (const id of collectIds(result)) play.seen.add(id);
      if (Array.isArray(result.counter_arguments)) showCounters(result.counter_arguments);
    }
    if (name === "reject_counter_argument" && !obs.last_action_error) {
      const card = document.querySelector(`#counters [data-counter="${CSS.escape(params.counter_id || "")}"]`);
      if (card) {
        card.classList.add("answered");
        card.querySelector("header").append(el("span", { class: "muted", text: ` · answered (${params.decision || "reject"})` }));
      }
    }
    if (out.done && out.info && out.info.grade) showGrade(out.info.grade);
    render();
  }

  // Search results: each code is a button that puts it into the code-entry form (the first
  // ICD-10-CM code becomes the primary, later ones secondaries; CPT codes go to cpt_codes).
  function lookupTable(name, rows) {
    const use = (code) => {
      const form = document.querySelector("#form-submit_codes");
      if (!form) return;
      const target = name === "search_cpt" ? form.elements.cpt_codes
        : (form.elements.primary_icd10.value.trim() ? form.elements.secondary_icd10s : form.elements.primary_icd10);
      if (target.dataset.kind === "list") {
        const items = target.value.split(",").map((x) => x.trim()).filter(Boolean);
        if (!items.includes(code)) items.push(code);
        target.value = items.join(", ");
      } else {
        target.value = code;
      }
    };
    return R.table(rows, null, {
      code: (r) => el("button", { type: "button", class: "use-code", title: "use this code", text: r.code, onclick: () => use(r.code) }),
    });
  }

  function collectIds(result) {  // record ids cited inside a reply, for the citation chips
    const ids = [];
    JSON.stringify(result, (k, v) => { if (k === "artifact_id" && typeof v === "string") ids.push(v); return v; });
    return ids;
  }

  // Counter-arguments arrive in the filing's reply and stay on screen until answered; each
  // has a button that opens reject_counter_argument with its id filled in.
  function showCounters(counters) {
    const box = $("#counters");
    box.hidden = false;
    box.replaceChildren(el("h2", { text: "Counter-arguments" }), ...counters.map((c) =>
      el("article", { class: "counter", "data-counter": c.counter_id },
        el("header", {}, el("b", { text: c.counter_id }), " from ", el("span", { text: c.from || "" })),
        el("blockquote", { text: c.text || "" }),
        el("button", { type: "button", class: "answer", text: "answer it", onclick: () => {
          showForm("reject_counter_argument");
          document.querySelector("#form-reject_counter_argument").elements.counter_id.value = c.counter_id;
        } }))));
  }

  function showGrade(grade) {
    play.grade = grade;
    const box = $("#grade");
    box.hidden = false;
    box.replaceChildren(el("h2", { text: "Grade" }), R.grade(grade),
      el("button", { type: "button", id: "save-episode", text: "Save as a results file", onclick: saveEpisode }),
      el("small", { class: "muted", text: " — opens in Replay, and in clarus regrade / clarus report" }));
    box.scrollIntoView({ block: "nearest" });
  }

  // The episode as a one-episode results file (the format clarus eval --out writes), so a
  // person's play can be replayed, regraded and compared with agents like any run.
  function saveEpisode() {
    const rewards = play.log.map((e) => e.reward);
    const doc = {
      format: "clarus-eval-results", version: catalog.version, agent: "human (web)",
      split: play.split, trials: 1, tasks: [play.task],
      episodes: [{ task: play.task, seed: play.seed, trial: 0, agent: "human (web)",
        actions: play.log.map((e) => ({ action_type: e.name, parameters: e.params })),
        rewards, return: Math.round(rewards.reduce((a, b) => a + b, 0) * 1e6) / 1e6,
        grade: play.grade, agent_error: null }],
    };
    const blob = new Blob([JSON.stringify(doc, null, 1)], { type: "application/json" });
    const a = el("a", { href: URL.createObjectURL(blob), download: `clarus-${play.task}-${play.seed}.json` });
    document.body.append(a);
    a.click();
    a.remove();
  }

  function render() {
    const obs = play.obs;
    $("#case-summary").replaceChildren(...R.caseSummary(obs, play.task));
    const body = $("#action-log tbody");
    body.replaceChildren(...play.log.map((e) => el("tr", { class: e.error ? "bad" : null },
      el("td", { text: e.step }), el("td", {}, el("code", { text: e.name })),
      el("td", { class: "small", text: summarize(e.params) }),
      el("td", { class: "num", text: e.reward.toFixed(3) }),
      el("td", { class: e.error ? "fail small" : "small", text: e.error || "ok" }))));
    const coding = obs.clinical_note !== undefined;
    $("#coding").hidden = !coding;
    if (coding) {
      $("#note").textContent = obs.clinical_note || (obs.done ? "All cases coded." : "");
      $("#coding-patient").replaceChildren(R.dl({ age: obs.patient_age, sex: obs.patient_sex, cases_left: obs.remaining_tasks }));
      $("#coding-feedback").textContent = obs.feedback || "";
    }
    refreshChips();
    for (const b of document.querySelectorAll("#forms .send")) b.disabled = play.done;
  }

  // ---------- replay ----------
  let results = null;
  let current = null;

  function loadResults(text, name) {
    let doc;
    try { doc = JSON.parse(text); } catch (e) { throw new Error(`${name} is not JSON (${e.message})`); }
    if (!doc || doc.format !== "clarus-eval-results" || !Array.isArray(doc.episodes)) {
      throw new Error(`${name} is not a clarus results file (format ${JSON.stringify(doc && doc.format)}; expected clarus-eval-results from clarus eval/infer --out)`);
    }
    results = doc;
    $("#results-meta").replaceChildren(R.dl({ agent: doc.agent, model: doc.model, split: doc.split, trials: doc.trials, episodes: doc.episodes.length, version: doc.version }));
    listEpisodes();
    status("#replay-status", `${name}: ${doc.episodes.length} episodes`);
  }

  function listEpisodes() {
    const onlyFailed = $("#episode-filter").value === "failed";
    const body = $("#episode-list tbody");
    body.replaceChildren();
    results.episodes.forEach((e, i) => {
      const g = e.grade;
      if (onlyFailed && g && g.passed === g.total) return;
      body.append(el("tr", { class: g && g.passed === g.total ? "ok" : "bad" },
        el("td", { text: e.task }), el("td", { text: e.seed }), el("td", { text: e.trial }),
        el("td", { class: "num", text: g ? Number(g.score).toFixed(3) : "—" }),
        el("td", { text: g ? `${g.passed}/${g.total}` : "no grade" }),
        el("td", {}, el("button", { type: "button", class: "open-episode", "data-index": i, text: "open", onclick: () => openEpisode(i).catch((err) => status("#replay-status", err.message, true)) }))));
    });
  }

  async function openEpisode(i) {
    const e = results.episodes[i];
    status("#replay-status", `replaying ${e.task} seed ${e.seed}…`);
    const out = await api("/web/api/replay", { task: e.task, split: results.split || "dev", seed: e.seed, actions: e.actions });
    current = { episode: e, replay: out };
    const tl = $("#timeline");
    tl.replaceChildren(el("li", {}, el("button", { type: "button", class: "step", "data-step": 0, onclick: () => showStep(0) }, "0 · start")));
    for (const s of out.steps) {
      const obs = s.observation;
      tl.append(el("li", { class: obs.last_action_error ? "bad" : null },
        el("button", { type: "button", class: "step", "data-step": s.step, onclick: () => showStep(s.step) },
          `${s.step} · ${s.action && s.action.action_type} `, el("span", { class: s.reward < 0 ? "fail" : "muted", text: (s.reward >= 0 ? "+" : "") + s.reward.toFixed(3) }))));
    }
    $("#timeline-card").hidden = false;
    const gradeBox = $("#replay-grade");
    gradeBox.hidden = false;
    const stored = e.grade;
    const same = stored && out.grade && stored.score === out.grade.score &&
      JSON.stringify(stored.checks.map((c) => [c.id, c.passed])) === JSON.stringify(out.grade.checks.map((c) => [c.id, c.passed]));
    gradeBox.replaceChildren(el("h2", { text: "Final grade" }),
      out.grade ? R.grade(out.grade, out.links, showStep) : el("p", { text: "The stored actions never ended the episode." }),
      e.agent_error ? el("p", { class: "error", text: `The agent failed: ${e.agent_error}` }) : null,
      out.ignored_actions ? el("p", { class: "muted", text: `${out.ignored_actions} stored action(s) after the episode ended were not replayed.` }) : null,
      stored && !same ? el("p", { class: "error", text: `The stored grade (${stored.passed}/${stored.total}, score ${stored.score}) differs from the replay's: the file was written by another version.` }) : null);
    showStep(out.steps.length);
    status("#replay-status", `${e.task} seed ${e.seed} trial ${e.trial}: ${out.steps.length} steps`);
  }

  function showStep(n) {
    const { replay } = current;
    for (const b of document.querySelectorAll("#timeline .step")) b.classList.toggle("active", Number(b.dataset.step) === n);
    const box = $("#step-detail");
    box.hidden = false;
    const s = n === 0 ? null : replay.steps[n - 1];
    const obs = s ? s.observation : replay.initial;
    const parts = [el("h2", { text: s ? `Step ${n}: ${s.action && s.action.action_type}` : "Start of the episode" })];
    if (s) {
      parts.push(el("h4", { text: "Action" }), R.value((s.action && s.action.parameters) || {}),
        el("p", {}, `reward ${s.reward.toFixed(3)}${s.done ? " · episode over" : ""}`));
      if (obs.last_action_error) parts.push(el("p", { class: "error", text: obs.last_action_error }));
      const result = obs.last_action_result;
      if (R.isArtifact(result)) parts.push(R.documentCard(result));
      else if (result) parts.push(el("h4", { text: "Result" }), R.value(result));
    }
    parts.push(el("h4", { text: "Observation after it" }), ...R.caseSummary(obs, replay.task));
    if (obs.clinical_note !== undefined) {
      parts.push(el("pre", { class: "note", text: obs.clinical_note }), obs.feedback ? el("p", { class: "feedback", text: obs.feedback }) : null);
    }
    box.replaceChildren(...parts.filter(Boolean));
    box.scrollIntoView({ block: "nearest" });
  }

  $("#results-file").addEventListener("change", (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    file.text().then((t) => loadResults(t, file.name)).catch((e) => status("#replay-status", e.message, true));
  });
  $("#episode-filter").addEventListener("change", () => results && listEpisodes());

  // ---------- boot ----------
  async function boot() {
    catalog = await api("/web/api/catalog");
    $("#task").replaceChildren(...catalog.tasks.map((t) => el("option", { value: t.name, text: `${t.name} (${t.checks} checks, ${t.api_call_budget} calls)` })));
    $("#split").replaceChildren(...catalog.splits.map((s) => el("option", { value: s, text: s, selected: s === "dev" })));
    const seedRange = () => {  // the split's seeds as the seed box's hint
      const t = catalog.tasks.find((x) => x.name === $("#task").value);
      const r = t.splits[$("#split").value];
      $("#seed").placeholder = `${r.first} … ${r.first + r.count - 1}`;
    };
    $("#task").addEventListener("change", seedRange);
    $("#split").addEventListener("change", seedRange);
    seedRange();
    $("#new-episode").addEventListener("submit", (ev) => start(ev).catch((e) => status("#play-status", e.message, true)));
    document.body.dataset.ready = "1";
  }
  boot().catch((e) => status("#play-status", `could not load the catalog: ${e.message}`, true));
})();
