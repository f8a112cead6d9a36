"""The drift history benchmark behind `scripts/bench --drift` (docs/performance.md).

A DuckDB warehouse of 40 tables and a project declaring 25 columns on each that the tables lack
(1,000 findings a run). `sqb contract diff --history` writes the first night; the other nights
(365 in all by default) are added with SQL from that night's rows, 5% of the findings absent on
any one day, so that findings open, resolve and come back. Then times:

- `sqb contract diff` of the project without and with `--history` (appending to a history that
  already holds a year);
- `sqb drift report` over the whole year, in each format (the issue's target: under 1 s).
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench import header, measure, row  # noqa: E402


def write_project(root, tables, columns):
    os.makedirs(os.path.join(root, "sources"))
    with open(os.path.join(root, "sqb.toml"), "w") as f:
        f.write('name = "drift"\ndefault_target = "prod"\n\n[connection]\nengine = "duckdb"\npath = "w.duckdb"\n\n[targets.prod]\nschema = "bench"\n')
    lines = []
    for t in range(tables):
        lines.append(f'\n[t{t:03}]\nschema = "bench"\n')
        for c in range(columns):
            lines.append(f'\n[t{t:03}.columns.c{c:02}]\ntype = "INTEGER"\n')
    with open(os.path.join(root, "sources", "bench.toml"), "w") as f:
        f.write("".join(lines))
    with open(os.path.join(root, "warehouse.sql"), "w") as f:
        f.write("CREATE SCHEMA bench;\n")
        for t in range(tables):
            f.write(f"CREATE TABLE bench.t{t:03} (id INTEGER);\n")


def synth_sql(history, days):
    """The nights after the first, from the first night's rows."""
    return f"""
ATTACH '{history}' AS h;
INSERT INTO h.runs BY NAME
SELECT run_id + k AS run_id, run_at + to_days(CAST(k AS INTEGER)) AS run_at, target, engine,
       database_name, schema_name, sqb_version, git_commit, resources, findings, errors, warnings,
       infos, command
  FROM h.runs, range(1, {days}) AS r(k) WHERE run_id = 1;
INSERT INTO h.run_kinds SELECT run_id + k, kind, count FROM h.run_kinds, range(1, {days}) AS r(k) WHERE run_id = 1;
INSERT INTO h.findings BY NAME
SELECT run_id + k AS run_id, fingerprint, resource_type, resource_name, relation, kind,
       column_name, severity, message, audit_name
  FROM h.findings, range(1, {days}) AS r(k)
 WHERE run_id = 1 AND (hash(fingerprint) + k) % 20 <> 0;
DETACH h;
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--tables", type=int, default=40)
    p.add_argument("--columns", type=int, default=25)
    p.add_argument("--days", type=int, default=365)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    sqb = os.path.join(args.bin_dir, "sqb")
    build = os.path.join(args.bin_dir, "examples", "demo_warehouse")
    with tempfile.TemporaryDirectory(prefix="sqb-bench-drift-") as work:
        root = os.path.join(work, "p")
        write_project(root, args.tables, args.columns)
        subprocess.run([build, os.path.join(root, "w.duckdb"), os.path.join(root, "warehouse.sql")], check=True, stderr=subprocess.DEVNULL)
        history = os.path.join(work, "drift.duckdb")
        env = dict(os.environ, SQB_NOW="2025-12-01 02:00:00")
        diff = [sqb, "--project-dir", root, "contract", "diff", "--from", "prod"]
        first = subprocess.run(diff + ["--history", history], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if first.returncode != 1:
            raise SystemExit(f"the first night exited {first.returncode}:\n{first.stderr.decode()}")
        synth = os.path.join(work, "synth.sql")
        with open(synth, "w") as f:
            f.write(synth_sql(history, args.days))
        subprocess.run([build, os.path.join(work, "scratch.duckdb"), synth], check=True, stderr=subprocess.DEVNULL)
        findings = args.tables * args.columns
        lines = header(f"drift history: {args.days} nightly runs x {findings} findings")
        t, peak = measure(diff, args.runs, env=env, ok=(1,))
        lines.append(row(f"contract diff ({args.tables} relations, {findings} findings)", t, peak))
        t, peak = measure(diff + ["--history", history], args.runs, env=env, ok=(1,))
        lines.append(row("  the same with --history (a year in it)", t, peak))
        for fmt in ["text", "json", "markdown"]:
            t, peak = measure([sqb, "drift", "report", "--history", history, "--format", fmt], args.runs)
            lines.append(row(f"drift report --format {fmt}, {args.days + args.runs} runs", t, peak))
        print("\n".join(lines))


if __name__ == "__main__":
    main()
