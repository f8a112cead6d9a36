"""The semantic-layer benchmark behind `scripts/bench --query` (docs/performance.md, #50).

Imports the MetricFlow fixture (testdata/dbt/semantic, built by real dbt) with `sqb import
dbt`, copies its DuckDB file beside it, and adds simple metric bindings until the project has
at least --metrics metrics (#50 asks for a project of 100+). Then times whole `sqb query`
processes, one question at a time, over --runs runs each (median, min, max in milliseconds, and
the peak RSS), beside two floors: `sqb --version` (starting the process at all) and DuckDB
itself opening the file and running its first statement (`duckdb_query --open-only`), which
every question on an embedded DuckDB needs before it can run. #50's target: every question
under 50 ms at the median, whole process.

The questions are those of the fixture's kinds: a simple metric by month, a ratio and a
derived offset metric by month and a joined dimension, a cumulative metric by day, a
conversion metric, a saved query, and a filter on a metric. The compile cache is warmed first
(a question asked in a loop finds it), so each run is what an analyst or a client asking again
sees.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench import measure  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURE = os.path.join(REPO, "testdata", "dbt", "semantic")

QUESTIONS = [
    ("revenue by month", ["-m", "revenue", "-d", "metric_time__month"]),
    ("a ratio and a derived offset metric by month and segment",
     ["-m", "average_order", "-m", "revenue_growth", "-d", "metric_time__month", "-d", "customer__segment"]),
    ("a cumulative metric by day", ["-m", "all_time_revenue", "-d", "metric_time__day"]),
    ("a conversion metric by month", ["-m", "refund_request_rate", "-d", "metric_time__month"]),
    ("a saved query", ["--saved", "monthly_completed_by_segment"]),
    ("revenue by segment, filtered by a metric",
     ["-m", "revenue", "-d", "customer__segment", "--filter", "{{ Metric('order_count', group_by=['customer']) }} >= 3"]),
]


def prepare(root, sqb, metrics):
    subprocess.run([sqb, "-q", "import", "dbt", FIXTURE, "--out", root], check=True, stdout=subprocess.DEVNULL)
    shutil.copy(os.path.join(FIXTURE, "target", "semantic.duckdb"), os.path.join(root, "semantic.duckdb"))
    bindings = os.path.join(root, "contracts", "metrics")
    have = len([f for f in os.listdir(bindings) if f.endswith(".toml")])
    for k in range(max(0, metrics - have)):
        with open(os.path.join(bindings, f"bench_revenue_{k}.toml"), "w") as f:
            f.write(f'metric = "bench_revenue_{k}"\n\n[canonical]\nkind = "single"\nsource = "orders"\nmeasure = "order_total"\n')
    subprocess.run([sqb, "-q", "--project-dir", root, "compile"], check=True, stdout=subprocess.DEVNULL)
    return max(have, metrics)


def row(label, times, peak):
    ms = [t * 1000 for t in times]
    shown = f"{peak:6.1f}" if peak else "     -"
    return f"| {label:<58} | {statistics.median(ms):7.1f} | {min(ms):7.1f} | {max(ms):7.1f} | {shown} |"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--runs", type=int, default=31)
    p.add_argument("--metrics", type=int, default=120, help="metrics in the project (bindings added to the import's)")
    args = p.parse_args()
    sqb = os.path.join(args.bin_dir, "sqb")
    floor = os.path.join(args.bin_dir, "examples", "duckdb_query")
    work = tempfile.mkdtemp(prefix="sqb-bench-query-")
    try:
        root = os.path.join(work, "semantic")
        metrics = prepare(root, sqb, args.metrics)
        env = dict(os.environ, NO_COLOR="1")
        env.pop("SQB_DATABASE_URL", None)
        lines = [
            f"\n### sqb query on the MetricFlow fixture, {metrics} metrics, {args.runs} runs each (whole process)\n",
            "| question | median ms | min ms | max ms | peak MiB |",
            "|---|---|---|---|---|",
        ]
        t, m = measure([sqb, "--version"], args.runs, env=env)
        lines.append(row("floor: `sqb --version` (the process alone)", t, m))
        t, m = measure([floor, "--open-only", os.path.join(root, "semantic.duckdb")], args.runs, env=env)
        lines.append(row("floor: DuckDB opening the file and a first statement", t, m))
        sql = [sqb, "-q", "--project-dir", root, "query", "--sql"] + QUESTIONS[0][1]
        t, m = measure(sql, args.runs, env=env)
        lines.append(row("revenue by month, `--sql` (nothing run)", t, m))
        worst = 0.0
        for label, question in QUESTIONS:
            t, m = measure([sqb, "-q", "--project-dir", root, "query"] + question, args.runs, env=env)
            worst = max(worst, statistics.median(t))
            lines.append(row(label, t, m))
        lines.append(f"\nworst median: {worst * 1000:.1f} ms (#50's target: under 50 ms)")
        print("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
