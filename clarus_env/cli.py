"""``clarus`` command line: inspect reference bundles (and, later, play and evaluate)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .reference import BundleError, open_reference


def _summary(args: argparse.Namespace) -> int:
    ref = open_reference(args.bundle)
    m = ref.manifest
    print(f"Reference bundle {ref.release}  ({ref.path})")
    print(f"builder {m['builder']['name']} {m['builder']['version']}, "
          f"format {m['format']} v{m['format_version']}")
    print(f"\n{'table':<16}{'rows':>11}  {'MB':>6}  releases")
    total = 0
    for name in ref.table_names:
        out = m["outputs"][name]
        total += out["bytes"]
        print(f"{name:<16}{out['rows']:>11,}  {out['bytes'] / 1e6:>6.2f}  "
              f"{', '.join(out.get('releases', [])) or 'authored'}")
    print(f"{'total':<16}{'':>11}  {total / 1e6:>6.2f}")
    print("\ninputs:")
    for i in m["inputs"]:
        flags = [f for f in ("excerpt", "derived") if i[f]]
        rows = f"{i['rows']:,} rows" if i.get("rows") is not None else "not parsed"
        print(f"  {i['source']:<10} {i['release']:<10} {i['file']:<48} {rows:>16}"
              f"{'  [' + ', '.join(flags) + ']' if flags else ''}")
    if m.get("gaps"):
        print("\nknown gaps:")
        for g in m["gaps"]:
            print(f"  - {g}")
    return 0


def _lookup(args: argparse.Namespace) -> int:
    ref = open_reference(args.bundle)
    found = True
    if args.fee:
        loc = ref.locality(args.mac, args.locality)
        name = loc["locality_name"] if loc else "unknown locality"
        for facility in (False, True):
            amount = ref.fee(args.fee, args.mac, args.locality, modifier=args.modifier,
                             facility=facility)
            found &= amount is not None
            setting = "facility" if facility else "non-facility"
            print(f"MPFS {ref.release} {args.fee}{'-' + args.modifier if args.modifier else ''} "
                  f"at {args.mac}/{args.locality} ({name}), {setting}: "
                  f"{'$' + str(amount) if amount is not None else 'not priced'}")
    if args.ncci:
        c1, c2 = args.ncci
        edit = ref.ncci_edit(c1, c2)
        if edit:
            print(f"NCCI PtP {c1}/{c2}: active edit, modifier indicator "
                  f"{edit['modifier_indicator']} ({edit['rationale']})")
        else:
            print(f"NCCI PtP {c1}/{c2}: no active edit")
    if args.icd10cm:
        node = ref.icd10cm(args.icd10cm)
        found &= node is not None
        if node:
            chain = " < ".join(n["code"] for n in ref.icd10cm_ancestors(args.icd10cm)[1:])
            print(f"ICD-10-CM {node['code']}: {node['description']} "
                  f"[{'billable' if node['billable'] else 'not billable'}; {chain}]")
        else:
            print(f"ICD-10-CM {args.icd10cm}: not in the code set")
    if args.opps:
        row = ref.opps(args.opps)
        found &= row is not None
        if row:
            rate = f"${row['payment_rate']:,}" if row["payment_rate"] is not None else \
                "no separate OPPS payment"
            copay = row["minimum_copay"]
            print(f"OPPS {row['release']} {row['hcpcs']} ({row['description']}): status "
                  f"indicator {row['status_indicator']}, APC {row['apc'] or '-'}"
                  f"{' (' + row['apc_title'] + ')' if row.get('apc_title') else ''}, "
                  f"relative weight {row['relative_weight'] or '-'}, national unadjusted rate "
                  f"{rate}{f', minimum copayment ${copay:,}' if copay is not None else ''}")
        else:
            print(f"OPPS {args.opps}: not in Addendum B")
    if args.asc:
        row = ref.asc(args.asc)
        found &= row is not None
        if row:
            rate = f"${row['payment_rate']:,}" if row["payment_rate"] is not None else \
                "packaged, no separate payment"
            print(f"ASC {row['release']} {row['hcpcs']} ({row['description']}): payment "
                  f"indicator {row['payment_indicator']}, national unadjusted rate {rate}, "
                  f"multiple procedure discounting "
                  f"{'applies' if row['multiple_procedure_discount'] else 'does not apply'}")
        else:
            print(f"ASC {args.asc}: not an ASC covered surgical procedure (not in Addendum AA)")
    return 0 if found else 1


def _eval(args: argparse.Namespace) -> int:
    from .agents import AGENTS
    from .evaluation import ALL_TASKS, default_workers, dump, evaluate, format_table

    agents = [a.strip() for a in args.agent.split(",") if a.strip()]
    unknown = [a for a in agents if a not in AGENTS]
    if unknown or not agents:
        raise ValueError(f"unknown agent(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(AGENTS)}")
    if args.out and len(agents) > 1:
        raise ValueError("--out stores one agent's trajectories; give a single --agent")
    tasks = ALL_TASKS if args.task == "all" else (args.task,)
    if args.workers is None:  # every core here, or every CPU of the Ray cluster
        args.workers = 0 if args.backend == "ray" else default_workers()
    overview: dict[str, dict[str, dict[str, float]]] = {}
    for agent in agents:
        results = evaluate(agent, tasks, args.split, trials=args.trials, limit=args.limit,
                           progress=not args.quiet, workers=args.workers,
                           backend=args.backend, address=args.address)
        print(format_table(results) + "\n")
        overview[agent] = results["summary"]
        if args.out:
            dump(results, args.out)
            print(f"trajectories and grades written to {args.out}")
    if len(agents) > 1:
        for label, key in (("outcome accuracy", "outcome_accuracy"),
                           ("pass rate (every check)", "pass_rate"),
                           ("mean score (the seed's Laplace score)", "mean_score")):
            print(f"{label} on {args.split}:")
            print(f"{'task':<26}" + "".join(f"{a:>11}" for a in agents))
            for t in tasks:
                print(f"{t:<26}" + "".join(f"{overview[a][t][key]:>11.3f}" for a in agents))
            print()
    return 0


def _audit_explain(args: argparse.Namespace) -> int:
    """``clarus audit --explain``: bad input is a one-line error and exit status 2."""

    from .audit_explain import ExplainError, explain, format_explain

    try:
        if args.replicates:
            raise ExplainError("--explain runs on the committed splits: drop --replicates")
        if args.agents:
            raise ExplainError("--explain names its agents itself: drop --agents")
        timings: dict[str, float] = {}
        report = explain(args.task, args.split.split(","), args.explain.split(","),
                         fields=args.explain_field.split(","), top=args.top,
                         repeats=args.repeats, limit=args.limit, train_limit=args.train_limit,
                         timings=timings)
    except ExplainError as err:
        print(f"clarus audit --explain: {err}", file=sys.stderr)
        return 2
    print(format_explain(report))
    # to stderr: the seconds differ run to run, the report's bytes must not
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()), file=sys.stderr)
    return _write_report(args, report, report, "explanation")


def _audit(args: argparse.Namespace) -> int:

    if args.explain is not None:
        return _audit_explain(args)
    from .audit import BILLING_TASKS, audit_splits, format_audit

    tasks = (*BILLING_TASKS, "medical_coding") if args.task == "all" else (args.task,)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()] if args.agents else None
    reports = []
    for task in tasks:
        for report in audit_splits(task, args.split.split(","), limit=args.limit,
                                   train_limit=args.train_limit, agents=agents,
                                   progress=not args.quiet):
            print(format_audit(report) + "\n")
            reports.append(report)
    out: dict[str, object] = {"format": "clarus-audit", "split": args.split, "reports": reports}
    if args.replicates:
        from .audit_replicates import format_replicates, replicates

        # the same audit (agents, limits) on fresh salted train/dev/test, after the committed
        # splits' audit: a shortcut over its bar in every replicate is a cue, in some is luck
        rep = replicates(tasks, args.split.split(","), args.replicates, args.salt_prefix,
                         limit=args.limit, train_limit=args.train_limit, agents=agents,
                         progress=not args.quiet)
        print(format_replicates(rep) + "\n")
        out["replicates"] = rep
    return _write_report(args, out, reports, "audit")


def _write_report(args: argparse.Namespace, out: object, printed: object, what: str) -> int:
    """``--out`` stores the whole report, ``--json`` prints the part a caller pipes on: shared
    by the audit and its ``--explain`` so both answer the two flags alike."""
    import json

    from .evaluation import dump

    if args.out:
        dump(out, args.out)
        print(f"{what} written to {args.out}")
    if args.json:
        print(json.dumps(printed, indent=1, sort_keys=True))
    return 0


def _regrade(args: argparse.Namespace) -> int:
    import json

    from .evaluation import regrade

    with open(args.results) as fh:
        results = json.load(fh)
    diffs = regrade(results)
    n = len(results["episodes"])
    if diffs:
        print(f"{len(diffs)} of {n} episodes grade differently:")
        for d in diffs:
            print(f"  {d}")
        return 1
    print(f"all {n} episodes re-graded identically")
    return 0


def _report(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401  (the .[report] extra draws the charts)
    except ImportError:
        print("clarus report: matplotlib is not installed (pip install 'clarus[report]')",
              file=sys.stderr)
        return 2
    from .report import ReportError, write_report

    try:
        path = write_report(args.results, args.out, args.title)
    except ReportError as exc:
        print(f"clarus report: {exc}", file=sys.stderr)
        return 2
    print(f"report written to {path}")
    return 0


def _infer(args: argparse.Namespace) -> int:
    from .llm_agent import infer_main

    return infer_main(args)


def _serve(args: argparse.Namespace) -> int:
    import os

    import uvicorn

    store = args.store or os.environ.get("CLARUS_SESSION_STORE", "")
    if args.workers > 1 and not store.startswith(("redis://", "rediss://", "unix://")):
        print("clarus serve: --workers > 1 needs a shared session store "
              "(--store redis://HOST:PORT/DB or CLARUS_SESSION_STORE); with the in-process "
              "store each worker would hold its own episodes", file=sys.stderr)
        return 2
    # the workers inherit these: the app reads them at import
    os.environ["CLARUS_WORKERS"] = str(args.workers)
    if store:
        os.environ["CLARUS_SESSION_STORE"] = store
    if args.max_sessions is not None:
        os.environ["CLARUS_MAX_SESSIONS"] = str(args.max_sessions)
    if args.max_sessions_per_client is not None:
        os.environ["CLARUS_MAX_SESSIONS_PER_CLIENT"] = str(args.max_sessions_per_client)
    os.environ.setdefault("CLARUS_HEADER_TIMEOUT_S", str(args.header_timeout))
    os.environ.setdefault("CLARUS_BODY_TIMEOUT_S", str(args.header_timeout))
    uvicorn.run("clarus_env.server.app:app", host=args.host, port=args.port,
                log_level=args.log_level, workers=args.workers,
                http="clarus_env.server.timeouts:HeaderTimeoutProtocol",
                limit_concurrency=args.limit_concurrency, backlog=args.backlog,
                timeout_keep_alive=args.keep_alive, ws_max_size=args.ws_max_size,
                ws_per_message_deflate=args.ws_deflate,
                timeout_graceful_shutdown=10)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from .agents import AGENTS
    from .tasks import TASKS

    parser = argparse.ArgumentParser(prog="clarus", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="run an agent over a frozen split and report scores")
    ev.add_argument("--agent", required=True,
                    help=f"one of {', '.join(AGENTS)}, or several separated by commas")
    ev.add_argument("--task", default="all", choices=("all", *TASKS))
    ev.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    ev.add_argument("--trials", type=int, default=1, help="trials per scenario (pass^k up to k)")
    ev.add_argument("--limit", type=int, default=None, help="only the first N seeds of the split")
    ev.add_argument("--out", help="write trajectories and grades to this JSON file")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.add_argument("--workers", type=int, default=None,
                    help="processes (or Ray actors) running episodes; default: every core "
                         "this process may use (with --backend ray: every CPU of the "
                         "cluster). Results are the same for any number")
    ev.add_argument("--backend", default="process", choices=("process", "ray"),
                    help="ray: run on a Ray cluster (pip install 'clarus[ray]')")
    ev.add_argument("--address", default=None,
                    help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    ev.set_defaults(func=_eval)
    inf = sub.add_parser("infer", help="LLM baseline: an OpenAI-compatible model plays via "
                         "tool calls (env: API_BASE_URL, MODEL_NAME, HF_TOKEN/OPENAI_API_KEY)")
    inf.add_argument("--task", default="all", choices=("all", *TASKS))
    inf.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    inf.add_argument("--limit", type=int, default=5, help="first N seeds of the split per task")
    inf.add_argument("--seeds", help="explicit seeds instead of the split, e.g. 1001,1002-1004")
    inf.add_argument("--trials", type=int, default=1)
    inf.add_argument("--url", help="play against this Clarus server instead of in-process")
    inf.add_argument("--api-base-url", help="OpenAI-compatible base URL (env API_BASE_URL)")
    inf.add_argument("--model", help="model name (env MODEL_NAME)")
    inf.add_argument("--api-key", help="API key (env HF_TOKEN or OPENAI_API_KEY)")
    inf.add_argument("--temperature", type=float, default=None)
    inf.add_argument("--max-tokens", type=int, default=None)
    inf.add_argument("--timeout", type=float, default=None, help="seconds per model request")
    inf.add_argument("--max-retries", type=int, default=None,
                     help="retries with backoff on 5xx/429/timeouts")
    inf.add_argument("--out", help="write trajectories and grades (for `clarus regrade`); "
                     "re-running with the same --out skips the episodes already finished")
    inf.add_argument("--concurrency", type=int, default=1,
                     help="episodes played at once against the endpoint (asyncio)")
    inf.add_argument("--price-input", type=float, default=None,
                     help="USD per million prompt tokens, for the run's cost tally")
    inf.add_argument("--price-output", type=float, default=None,
                     help="USD per million completion tokens, for the run's cost tally")
    inf.set_defaults(func=_infer)
    sv = sub.add_parser("serve", help="serve HTTP, OpenEnv WebSocket and MCP (uvicorn)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=7860)
    sv.add_argument("--log-level", default="info")
    sv.add_argument("--workers", type=int, default=1,
                    help="worker processes; more than 1 needs --store redis://…")
    sv.add_argument("--store", default=None,
                    help="session store: 'memory' (default, one worker) or redis://HOST:PORT/DB "
                         "(env CLARUS_SESSION_STORE)")
    sv.add_argument("--max-sessions", type=int, default=None,
                    help="live episodes across all workers (env CLARUS_MAX_SESSIONS, 256)")
    sv.add_argument("--max-sessions-per-client", type=int, default=None,
                    help="live episodes per client address (default: half of --max-sessions)")
    sv.add_argument("--limit-concurrency", type=int, default=1024,
                    help="open connections + WebSockets per worker before uvicorn answers 503")
    sv.add_argument("--backlog", type=int, default=2048)
    sv.add_argument("--keep-alive", type=int, default=5, help="idle keep-alive seconds")
    sv.add_argument("--header-timeout", type=float, default=10.0,
                    help="seconds to receive a request's headers (and, separately, its body)")
    sv.add_argument("--ws-max-size", type=int, default=1024 * 1024,
                    help="largest WebSocket frame uvicorn accepts (bytes)")
    sv.add_argument("--ws-deflate", action="store_true",
                    help="offer permessage-deflate on /ws (off by default: compressing each "
                         "small JSON frame costs more CPU than it saves on a LAN)")
    sv.set_defaults(func=_serve)
    au = sub.add_parser("audit", help="shortcut agents (fitted on train) vs oracle, heuristic "
                        "and random: can the task be won without reasoning?")
    au.add_argument("--task", default="all",
                    choices=("all", "deductive_liability", "abductive_conflict",
                             "adversarial_fabrication", "medical_coding"))
    au.add_argument("--split", default="test", choices=("dev", "test", "dev,test"),
                    help="dev,test: both splits, the shortcuts fitted once")
    au.add_argument("--limit", type=int, default=None, help="only the first N seeds of the split")
    au.add_argument("--train-limit", type=int, default=None,
                    help="fit the shortcuts on the first N train seeds only")
    au.add_argument("--agents", help="only these agents (comma-separated names from the table)")
    au.add_argument("--out", help="write the audit report to this JSON file")
    au.add_argument("--json", action="store_true", help="also print the report as JSON")
    au.add_argument("--quiet", action="store_true", help="no progress bar")
    au.add_argument("--replicates", type=int, default=0, metavar="N",
                    help="then the same audit on N fresh replicates (train/dev/test compiled "
                    "under the salts PREFIX-0..N-1) and a summary: which shortcut crosses its "
                    "bar in every replicate (a cue) or only in some (chance)")
    au.add_argument("--salt-prefix", default="replicate", metavar="PREFIX",
                    help="the replicates' salt prefix (under CLARUS_SCENARIO_SALT if set)")
    au.add_argument("--explain", metavar="AGENT[,AGENT]",
                    help="instead of the audit: refit these learned agents on train and rank "
                    "their features by permutation importance on the split (the drop in a "
                    "field's accuracy when a column, or a family of columns, is shuffled), "
                    "with each feature's mean per expected value")
    au.add_argument("--explain-field", default="finding", metavar="FIELD[,FIELD]",
                    help="the outcome field(s) --explain measures (default: finding)")
    au.add_argument("--top", type=int, default=15, help="--explain: features listed per run")
    au.add_argument("--repeats", type=int, default=5,
                    help="--explain: seeded shuffles per feature (mean and s.d.)")
    au.set_defaults(func=_audit)
    rg = sub.add_parser("regrade", help="replay stored trajectories and compare the grades")
    rg.add_argument("results", help="a results JSON written by `clarus eval --out`")
    rg.set_defaults(func=_regrade)
    rp = sub.add_parser("report", help="one self-contained HTML file comparing agents from "
                        "results files (charts inlined, opens offline)")
    rp.add_argument("results", nargs="+", help="results JSON from clarus eval/infer --out")
    rp.add_argument("--out", required=True, help="the HTML file to write")
    rp.add_argument("--title", default=None)
    rp.set_defaults(func=_report)
    ref = sub.add_parser("reference", help="inspect a reference bundle")
    ref_sub = ref.add_subparsers(dest="action", required=True)
    for action in ("summary", "lookup"):
        p = ref_sub.add_parser(action)
        p.add_argument("--bundle", help="bundle directory (default: newest committed)")
        if action == "summary":
            p.set_defaults(func=_summary)
        else:
            p.add_argument("--fee", metavar="HCPCS")
            p.add_argument("--modifier", default="")
            p.add_argument("--mac", default="04412")
            p.add_argument("--locality", default="18")
            p.add_argument("--ncci", nargs=2, metavar=("COLUMN1", "COLUMN2"))
            p.add_argument("--icd10cm", metavar="CODE")
            p.add_argument("--opps", metavar="HCPCS", help="OPPS Addendum B (hospital outpatient)")
            p.add_argument("--asc", metavar="HCPCS", help="ASC Addendum AA (surgical center)")
            p.set_defaults(func=_lookup)
    args = parser.parse_args(argv)
    if getattr(args, "trials", 1) < 1:
        parser.error("--trials must be at least 1")
    if getattr(args, "replicates", 0) < 0:
        parser.error("--replicates must be at least 0")
    try:
        return args.func(args)
    except (BundleError, KeyError, ValueError, OSError) as exc:
        print(f"clarus: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
