"""The harness behind scripts/bench-audit: `sqb audit` beside `dbt test` on the same checks.

- A DuckDB warehouse with N relations `analytics.mNNNN` of R rows each (id, parent_id, status,
  amount, created_at), made directly (building them with dbt is not what is measured), with a
  defect planted in four of every ten: a duplicate id, a null status, an unknown status, an
  orphan parent_id.
- A dbt project with one model per relation and five tests on each: unique and not_null on id,
  not_null and accepted_values on status, relationships from parent_id to m0000.id.
- `dbt parse`, then `dbt test` (wall time, on dbt's partial parse: its best case), and the
  failing count dbt reports for every test (run_results.json).
- `sqb import dbt` of the manifest `dbt compile` wrote, then `sqb audit --format json` on the same file,
  cold (no .sqb/) and warm: wall time, queries, and every test's status and failing count,
  which must equal dbt's.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

STATUSES = ["placed", "shipped", "completed", "returned"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, cwd=None, ok=(0,)):
    start = time.perf_counter()
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(
            f"{' '.join(map(str, cmd[:4]))}... exited {proc.returncode}:\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc, elapsed


def model(i):
    return f"m{i:04}"


def make_warehouse(path, models, rows):
    con = duckdb.connect(path)
    con.execute("BEGIN")
    con.execute("CREATE SCHEMA raw; CREATE SCHEMA analytics")
    con.execute(
        "CREATE TABLE raw.events (id INTEGER, parent_id INTEGER, status VARCHAR, "
        "amount DECIMAL(12,2), created_at TIMESTAMP)"
    )
    values = ", ".join(f"'{s}'" for s in STATUSES)
    parents = min(rows, 100)
    for i in range(models):
        t = f"analytics.{model(i)}"
        con.execute(
            f"CREATE TABLE {t} AS SELECT range::INTEGER AS id, "
            f"(range % {parents})::INTEGER AS parent_id, "
            f"([{values}])[range % {len(STATUSES)} + 1] AS status, "
            "(range * 1.25)::DECIMAL(12,2) AS amount, "
            "TIMESTAMP '2026-01-01' + to_seconds(range) AS created_at "
            f"FROM range({rows})"
        )
        defect = i % 10
        if defect == 1:
            con.execute(f"INSERT INTO {t} SELECT * FROM {t} WHERE id = 0")
        elif defect == 3:
            con.execute(f"UPDATE {t} SET status = NULL WHERE id = 1")
        elif defect == 5:
            con.execute(f"UPDATE {t} SET status = 'lost' WHERE id = 2")
        elif defect == 7:
            con.execute(f"UPDATE {t} SET parent_id = -1 WHERE id = 3")
    con.execute("COMMIT")
    con.execute("CHECKPOINT")
    con.close()


def write_dbt_project(root, models, threads):
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write(
            "name: bench\nversion: '1.0.0'\nconfig-version: 2\nprofile: bench\n"
            "model-paths: ['models']\ntarget-path: target\n"
            "models:\n  bench:\n    +materialized: table\n"
        )
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(
            "bench:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
            f"      path: bench.duckdb\n      schema: analytics\n      threads: {threads}\n"
        )
    with open(os.path.join(root, "models", "_sources.yml"), "w") as f:
        f.write(
            "version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n"
            "      - name: events\n"
        )
    values = ", ".join(STATUSES)
    lines = ["version: 2\nmodels:\n"]
    for i in range(models):
        name = model(i)
        with open(os.path.join(root, "models", f"{name}.sql"), "w") as f:
            f.write(
                "select id, parent_id, status, amount, created_at\n"
                "from {{ source('raw', 'events') }}\n"
            )
        lines.append(
            f"  - name: {name}\n    columns:\n"
            "      - name: id\n        data_type: integer\n        data_tests: [unique, not_null]\n"
            "      - name: parent_id\n        data_type: integer\n        data_tests:\n"
            "          - relationships:\n              to: ref('m0000')\n              field: id\n"
            "      - name: status\n        data_type: varchar\n        data_tests:\n"
            f"          - not_null\n          - accepted_values:\n              values: [{values}]\n"
            "      - name: amount\n        data_type: decimal(12,2)\n"
            "      - name: created_at\n        data_type: timestamp\n"
        )
    with open(os.path.join(root, "models", "_models.yml"), "w") as f:
        f.write("".join(lines))


def dbt_results(root):
    """Each test's (model, column, test) -> (status, failures), from dbt's own files."""
    manifest = json.load(open(os.path.join(root, "target", "manifest.json")))
    results = json.load(open(os.path.join(root, "target", "run_results.json")))
    out = {}
    for r in results["results"]:
        node = manifest["nodes"][r["unique_id"]]
        parent = node["attached_node"].split(".")[-1]
        key = (parent, node["column_name"], node["test_metadata"]["name"])
        out[key] = (r["status"], r["failures"])
    return out


def sqb_results(report):
    return {
        (r["resource"], r.get("column") or "", r["audit"]): (r["status"], r["failing"])
        for r in report["results"]
        if "implied_by" not in r
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sqb", required=True)
    p.add_argument("--dbt", required=True)
    p.add_argument("--models", type=int, default=1000)
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--runs", type=int, default=3, help="runs of each sqb step (dbt test runs once)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="dbt's threads")
    p.add_argument("--keep", action="store_true", help="keep the work directory and print it")
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="sqb-bench-audit-")
    dbt_root = os.path.join(work, "dbt")
    log(f"warehouse: {args.models} relations x {args.rows} rows")
    write_dbt_project(dbt_root, args.models, args.threads)
    make_warehouse(os.path.join(dbt_root, "bench.duckdb"), args.models, args.rows)

    dbt = [args.dbt, "--no-version-check", "--quiet"]
    flags = ["--profiles-dir", "."]
    log("dbt parse")
    _, parse = run(dbt + ["parse"] + flags, cwd=dbt_root)
    log("dbt test")
    _, test = run(dbt + ["test"] + flags, cwd=dbt_root, ok=(0, 1))
    expected = dbt_results(dbt_root)
    # The import reads each model's compiled SQL, which `dbt compile` writes into the manifest.
    run(dbt + ["compile"] + flags, cwd=dbt_root)

    sqb_root = os.path.join(work, "sqb")
    run([args.sqb, "import", "dbt", dbt_root, "--out", sqb_root])
    shutil.copy(os.path.join(dbt_root, "bench.duckdb"), os.path.join(sqb_root, "bench.duckdb"))
    audit = [args.sqb, "--project-dir", sqb_root, "audit", "--format", "json"]
    cold, warm = [], []
    report = None
    for _ in range(args.runs):
        shutil.rmtree(os.path.join(sqb_root, ".sqb"), ignore_errors=True)
        proc, elapsed = run(audit, ok=(1,))
        cold.append(elapsed)
        proc, elapsed = run(audit, ok=(1,))
        warm.append(elapsed)
        report = json.loads(proc.stdout)
    got = sqb_results(report)

    differ = sorted(k for k in expected if got.get(k) != expected[k])
    failing = sum(1 for v in expected.values() if v[0] != "pass")
    summary = report["summary"]
    print(f"| checks | {len(expected)} dbt tests ({failing} failing), {summary['audits']} sqb audits |")
    print(f"| `dbt parse` ({args.models} models) | {parse:.2f} s |")
    print(f"| `dbt test` ({args.threads} threads, after that parse) | {test:.2f} s, {len(expected)} queries |")
    print(
        f"| `sqb audit`, cold (median of {args.runs}) | {statistics.median(cold):.2f} s, "
        f"{summary['queries']} queries ({summary['relations']} relations) |"
    )
    print(f"| `sqb audit`, warm (median of {args.runs}) | {statistics.median(warm):.2f} s |")
    print(f"| `dbt test` / `sqb audit` (warm) | {test / statistics.median(warm):.1f}x |")
    print(f"| tests whose status or failing count differ | {len(differ)} |")
    for key in differ[:20]:
        print(f"  {key}: dbt {expected[key]}, sqb {got.get(key)}", file=sys.stderr)
    if args.keep:
        log(f"kept {work}")
    else:
        shutil.rmtree(work)
    if differ:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
