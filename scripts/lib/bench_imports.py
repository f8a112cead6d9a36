"""The cross-team contracts benchmark behind `scripts/bench --imports` (docs/performance.md).

Writes a producer of N public models (25 declared columns each) and a consumer of N models,
each reading one imported model (a join of two CTEs over it, a filter, most of its columns),
then times, over several runs:

- `sqb publish` of the producer, cold and (as in a producer's CI, after `sqb compile`) on the
  compile cache (the issue's target: under 0.5 s at 5,000 models);
- the consumer's cold compile with `[imports]` (snapshot = baseline, and snapshot with 5% of
  the models changed), against the same consumer whose imported relations are declared as
  sources instead: the difference is what the imports check costs (target: under 10%).

Offline: no warehouse.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench import header, measure, row  # noqa: E402

TYPES = ["INTEGER", "BIGINT", "NUMERIC(12,2)", "VARCHAR(40)", "BOOLEAN", "DATE", "TIMESTAMP"]


def columns(i, n):
    rng = random.Random(i)
    return [(f"c{c:02}", rng.choice(TYPES), c == 0) for c in range(n)]


def write_producer(root, models, ncols):
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "sqb.toml"), "w") as f:
        f.write('name = "producer"\ndefault_target = "prod"\n\n[connection]\nengine = "duckdb"\npath = "w.duckdb"\n\n[targets.prod]\nschema = "published"\n')
    for i in range(models):
        name = f"pub_{i:05}"
        cols = columns(i, ncols)
        with open(os.path.join(root, "models", name + ".sql"), "w") as f:
            casts = ",\n".join(f"    CAST(r.{c} AS {t}) AS {c}" for c, t, _ in cols)
            f.write(f"SELECT\n{casts}\nFROM raw_data.{name} AS r\n")
        lines = ['access = "public"\n']
        for c, t, nn in cols:
            lines.append(f'\n[columns.{c}]\ntype = "{t}"\n' + ("nullable = false\n" if nn else ""))
        with open(os.path.join(root, "models", name + ".toml"), "w") as f:
            f.write("".join(lines))


def consumer_sql(i, ncols):
    read = ", ".join(f"o.c{c:02}" for c in range(1, ncols - 2))
    return (
        f"WITH o AS (\n    SELECT * FROM published.pub_{i:05}\n),\n"
        f"k AS (\n    SELECT c00 FROM published.pub_{i:05} WHERE c00 IS NOT NULL\n)\n"
        f"SELECT o.c00, {read}\nFROM o\nJOIN k USING (c00)\nWHERE o.c{ncols - 1:02} IS NOT NULL\n"
    )


def write_consumer(root, models, ncols, sources):
    """The consumer; with `sources`, the imported relations are declared as sources instead."""
    os.makedirs(os.path.join(root, "models"))
    toml = 'name = "consumer"\ndefault_target = "prod"\n\n[connection]\nengine = "duckdb"\npath = "w.duckdb"\n\n[targets.prod]\nschema = "consumer"\n'
    if not sources:
        toml += '\n[imports.producer]\npath = "vendor/producer"\n'
    with open(os.path.join(root, "sqb.toml"), "w") as f:
        f.write(toml)
    for i in range(models):
        with open(os.path.join(root, "models", f"read_{i:05}.sql"), "w") as f:
            f.write(consumer_sql(i, ncols))
    if sources:
        os.makedirs(os.path.join(root, "sources"))
        lines = []
        for i in range(models):
            name = f"pub_{i:05}"
            lines.append(f'\n[{name}]\nschema = "published"\ntable = "{name}"\n')
            for c, t, nn in columns(i, ncols):
                lines.append(f'\n[{name}.columns.{c}]\ntype = "{t}"\n' + ("nullable = false\n" if nn else ""))
        with open(os.path.join(root, "sources", "published.toml"), "w") as f:
            f.write("".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--models", type=int, default=5_000)
    p.add_argument("--columns", type=int, default=25)
    p.add_argument("--changed", type=float, default=0.05, help="fraction of producer models with a dropped read column")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    sqb = os.path.join(args.bin_dir, "sqb")
    work = tempfile.mkdtemp(prefix="sqb-bench-imports-")
    try:
        producer = os.path.join(work, "producer")
        write_producer(producer, args.models, args.columns)
        snapshot = os.path.join(work, "snapshot.json")
        lines = header(f"imports: a {args.models}-model producer, a {args.models}-model consumer reading it, {args.columns} columns")
        t, peak = measure([sqb, "--project-dir", producer, "--no-cache", "publish", "--out", snapshot], args.runs)
        lines.append(row(f"publish ({args.models} models), cold", t, peak))
        # As in the producer's CI: `sqb compile`, then `sqb publish --check` on its cache.
        subprocess.run([sqb, "--project-dir", producer, "compile"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t, peak = measure([sqb, "--project-dir", producer, "publish", "--check", snapshot], args.runs)
        lines.append(row(f"publish --check ({args.models} models), after a compile", t, peak))
        with_imports = os.path.join(work, "consumer")
        write_consumer(with_imports, args.models, args.columns, sources=False)
        vendor = os.path.join(with_imports, "vendor", "producer")
        os.makedirs(vendor)
        shutil.copy(snapshot, os.path.join(vendor, "baseline.json"))
        shutil.copy(snapshot, os.path.join(vendor, "current.json"))
        with_sources = os.path.join(work, "consumer_sources")
        write_consumer(with_sources, args.models, args.columns, sources=True)
        compile_cold = lambda root, ok=(0,): measure([sqb, "--project-dir", root, "--no-cache", "compile"], args.runs, ok=ok)
        ts, ps = compile_cold(with_sources)
        lines.append(row("consumer compile, cold, relations as sources", ts, ps))
        ti, pi = compile_cold(with_imports)
        lines.append(row("consumer compile, cold, with [imports]", ti, pi, statistics.median(ts)))
        # The producer drops a read column from a share of its models, and publishes again.
        rng = random.Random(7)
        dropped = 0
        for i in range(args.models):
            if rng.random() >= args.changed:
                continue
            path = os.path.join(producer, "models", f"pub_{i:05}")
            with open(path + ".sql") as f:
                sql = f.read()
            with open(path + ".sql", "w") as f:
                f.write(sql.replace(") AS c01,\n", ") AS c01x,\n", 1))
            with open(path + ".toml") as f:
                toml = f.read()
            with open(path + ".toml", "w") as f:
                f.write(toml.replace("[columns.c01]", "[columns.c01x]", 1))
            dropped += 1
        subprocess.run([sqb, "--project-dir", producer, "--no-cache", "publish", "--out", os.path.join(vendor, "current.json")], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tc, pc = compile_cold(with_imports, ok=(1,))
        lines.append(row(f"  the same, {dropped} models changed (E030 each)", tc, pc, statistics.median(ts)))
        overhead = statistics.median(ti) / statistics.median(ts) - 1
        lines.append(f"\nimports check overhead on a cold compile: {overhead * 100:+.1f}% (target: under +10%)")
        print("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
