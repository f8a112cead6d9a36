"""The benchmark harness behind scripts/bench.

Builds a synthetic warehouse (deterministic from a seed) on Postgres and/or DuckDB, writes a
matching project, and times whole sqb processes over several runs (median, min, max, peak RSS)
beside the floor: the same catalog queries run by psql, or by DuckDB itself.

scripts/bench passes its arguments here, except --smoke, which it turns into a run on the dev
builds at 200 relations (--generate-models 100 --runs 1), as scripts/test does.
"""

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PG_TYPES = [
    ("integer", "INTEGER"), ("bigint", "BIGINT"), ("numeric(12,2)", "NUMERIC(12,2)"),
    ("varchar(40)", "VARCHAR(40)"), ("text", "TEXT"), ("boolean", "BOOLEAN"), ("date", "DATE"),
    ("timestamp", "TIMESTAMP"), ("timestamptz", "TIMESTAMPTZ"), ("uuid", "UUID"),
    ("jsonb", "JSONB"), ("text[]", "TEXT[]"), ("bench_status", "bench_status"),
]
DUCK_TYPES = [
    ("INTEGER", "INTEGER"), ("BIGINT", "BIGINT"), ("DECIMAL(12,2)", "NUMERIC(12,2)"),
    ("VARCHAR", "VARCHAR"), ("BOOLEAN", "BOOLEAN"), ("DATE", "DATE"), ("TIMESTAMP", "TIMESTAMP"),
    ("TIMESTAMPTZ", "TIMESTAMPTZ"), ("UUID", "UUID"), ("VARCHAR[]", "VARCHAR[]"),
    ("HUGEINT", "HUGEINT"), ("bench_status", "bench_status"),
]
DRIFT = {"INTEGER": "BIGINT", "BIGINT": "INTEGER"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Layout:
    """The synthetic relations: names, kinds, columns (physical type, declared type, NOT NULL)."""

    def __init__(self, engine, relations, columns, seed):
        rng = random.Random(seed)
        types = PG_TYPES if engine == "postgres" else DUCK_TYPES
        self.tables = []
        for i in range(relations):
            roll = rng.random()
            kind = "table"
            if roll < 0.10 and i > 0:
                kind = "view"
            elif roll < 0.15 and i > 0 and engine == "postgres":
                kind = "matview"
            cols = []
            for c in range(columns):
                physical, declared = types[0] if c == 0 else rng.choice(types)
                cols.append((f"c{c:02d}", physical, declared, c == 0 or rng.random() < 0.2))
            self.tables.append((f"rel_{i:05d}", kind, cols))

    def base_of(self, i):
        """Views read the nearest table before them, so they share its columns."""
        for j in range(i - 1, -1, -1):
            if self.tables[j][1] == "table":
                return j
        return 0


def pg_sql_batches(layout, batch=500):
    yield "DROP SCHEMA IF EXISTS bench CASCADE; CREATE SCHEMA bench; " \
          "DO $$ BEGIN CREATE TYPE bench_status AS ENUM ('new', 'done'); EXCEPTION WHEN duplicate_object THEN NULL; END $$;"
    stmts = []
    for i, (name, kind, cols) in enumerate(layout.tables):
        if kind == "table":
            body = ", ".join(f"{c} {t}{' NOT NULL' if nn else ''}" for c, t, _, nn in cols)
            stmts.append(f"CREATE TABLE bench.{name} ({body});")
        else:
            base = layout.tables[layout.base_of(i)][0]
            mat = "MATERIALIZED " if kind == "matview" else ""
            stmts.append(f"CREATE {mat}VIEW bench.{name} AS SELECT * FROM bench.{base};")
        if len(stmts) >= batch:
            yield "BEGIN; " + " ".join(stmts) + " COMMIT;"
            stmts = []
    if stmts:
        yield "BEGIN; " + " ".join(stmts) + " COMMIT;"


def duck_sql(layout):
    out = ["CREATE SCHEMA bench; CREATE TYPE bench_status AS ENUM ('new', 'done');"]
    for i, (name, kind, cols) in enumerate(layout.tables):
        if kind == "table":
            body = ", ".join(f"{c} {t}{' NOT NULL' if nn else ''}" for c, t, _, nn in cols)
            out.append(f"CREATE TABLE bench.{name} ({body});")
        else:
            out.append(f"CREATE VIEW bench.{name} AS SELECT * FROM bench.{layout.tables[layout.base_of(i)][0]};")
    return "\n".join(out)


def declared_columns(layout, i):
    name, kind, cols = layout.tables[i]
    if kind != "table":
        cols = layout.tables[layout.base_of(i)][2]
    return cols


def write_project(root, engine, layout, declared_fraction, drift_fraction, seed, url=None, reads="raw_data"):
    rng = random.Random(seed + 1)
    os.makedirs(os.path.join(root, "models"), exist_ok=True)
    os.makedirs(os.path.join(root, "enums"), exist_ok=True)
    conn = 'engine = "postgres"' if engine == "postgres" else 'engine = "duckdb"\npath = "w.duckdb"'
    with open(os.path.join(root, "sqb.toml"), "w") as f:
        f.write(f'name = "bench"\ndefault_target = "prod"\n\n[connection]\n{conn}\n\n[targets.prod]\nschema = "bench"\n')
    with open(os.path.join(root, "enums", "bench_status.toml"), "w") as f:
        f.write('[members]\nNEW = "new"\nDONE = "done"\n')
    drifted = 0
    for i, (name, kind, _) in enumerate(layout.tables):
        base = os.path.join(root, "models", name)
        drift_here = rng.random() < drift_fraction
        declared = rng.random() < declared_fraction
        # Drift is a declaration that disagrees: an undeclared relation cannot drift.
        drift_here = drift_here and declared
        columns = []
        for c, _, decl, nn in declared_columns(layout, i):
            cast = True
            if drift_here and decl in DRIFT:
                # The declaration drifted from the warehouse; the SQL does not pin the type.
                decl, drift_here, cast = DRIFT[decl], False, False
                drifted += 1
            columns.append((c, decl, nn and kind == "table", cast))
        with open(base + ".sql", "w") as f:
            f.write(model_sql(name, columns, reads))
        if not declared:
            continue
        lines = [f'description = "Synthetic relation {name}."\n']
        for c, decl, nn, _ in columns:
            lines.append(f'\n[columns.{c}]\ntype = "{decl}"\n')
            if nn:
                lines.append("nullable = false\n")
        with open(base + ".toml", "w") as f:
            f.write("".join(lines))
    return drifted


NUMERIC = ("INTEGER", "BIGINT", "DECIMAL(12,2)", "NUMERIC(12,2)", "numeric(12,2)", "integer", "bigint", "HUGEINT")


def add_semantic(root, layout, metrics, guardrails=200, assertions=500):
    """Semantic contracts over a written project: a measure and a dimension on the sidecars of
    the models that have a numeric column, `metrics` bindings in contracts/metrics/ (one in
    five a ratio of two others), each with a population filter, then `guardrails` guardrails
    (filters and required dimensions) and `assertions` assertions over them. Returns the counts
    written, and a metric with the dimension its guardrail requires (for `sqb query`)."""
    out = os.path.join(root, "contracts", "metrics")
    os.makedirs(out, exist_ok=True)
    singles, shapes = [], []
    for i, (name, _, _) in enumerate(layout.tables):
        if len(singles) * 5 >= metrics * 4:
            break
        sidecar = os.path.join(root, "models", name + ".toml")
        cols = declared_columns(layout, i)
        numeric = next((c for c, _, decl, _ in cols if decl in NUMERIC), None)
        if numeric is None or not os.path.exists(sidecar):
            continue
        with open(sidecar, "a") as f:
            f.write(f'\n[measures.total]\nagg = "sum"\ncolumn = "{numeric}"\n\n[dimensions.{cols[0][0]}]\n')
        metric = f"total_{name}"
        with open(os.path.join(out, metric + ".toml"), "w") as f:
            f.write(f'metric = "{metric}"\nowner = "bench"\n\n[canonical]\nkind = "single"\nsource = "{name}"\nmeasure = "total"\npopulation_filter = "{numeric} > 0"\n')
        singles.append(metric)
        shapes.append((metric, numeric, cols[0][0]))
    for k in range(min(metrics - len(singles), len(singles) // 2)):
        a, b = singles[2 * k], singles[2 * k + 1]
        with open(os.path.join(out, f"ratio_{k}.toml"), "w") as f:
            f.write(f'metric = "ratio_{k}"\n\n[canonical]\nkind = "ratio"\nnumerator = "{a}"\ndenominator = "{b}"\n')
    bound = len(os.listdir(out))
    rails = os.path.join(root, "contracts", "guardrails")
    os.makedirs(rails, exist_ok=True)
    for k, (metric, numeric, dim) in enumerate(shapes[:guardrails]):
        rule = f'kind = "mandatory_filter"\nfilter = "{numeric} >= 0"' if k % 2 else f'kind = "required_dimension"\ndimension = "{dim}"'
        with open(os.path.join(rails, f"g_{k}.toml"), "w") as f:
            f.write(f'id = "g_{k}"\napplies_to = {{ metric = "{metric}" }}\n{rule}\nrationale = "bench"\n')
    checks = os.path.join(root, "contracts", "assertions")
    os.makedirs(checks, exist_ok=True)
    for k in range(assertions):
        metric, numeric, dim = shapes[k % len(shapes)]
        with open(os.path.join(checks, f"a_{k}.toml"), "w") as f:
            f.write(
                f'id = "a_{k}"\nsource_of_truth = "bench"\n\n[query]\nmetrics = ["{metric}"]\ndimensions = ["{dim}"]\n'
                f'filters = ["{dim} is not null"]\n\n[expect]\ntolerance = {{ relative = 0.01 }}\n\n[[expect.rows]]\n{dim} = {{ null = true }}\n{metric} = "1.50"\n'
            )
    return bound, len(os.listdir(rails)), len(os.listdir(checks)), (shapes[0][0], shapes[0][2])


NAMESPACE_QUERY = (
    "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
    "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = 'bench' AND a.attnum > 0 AND NOT a.attisdropped "
    "ORDER BY c.relname, a.attnum"
)


def write_select1(root, engine, layout):
    """#47's project: a `select 1 as x` model per relation, explicit mode, no sidecars yet."""
    os.makedirs(os.path.join(root, "models"), exist_ok=True)
    os.makedirs(os.path.join(root, "enums"), exist_ok=True)
    conn = 'engine = "postgres"' if engine == "postgres" else 'engine = "duckdb"\npath = "w.duckdb"'
    with open(os.path.join(root, "sqb.toml"), "w") as f:
        f.write(
            f'name = "bench"\ndefault_target = "prod"\n\n[connection]\n{conn}\n\n[targets.prod]\n'
            'schema = "bench"\n\n[settings]\ncolumn_contract_mode = "explicit"\n'
        )
    with open(os.path.join(root, "enums", "bench_status.toml"), "w") as f:
        f.write('[members]\nNEW = "new"\nDONE = "done"\n')
    for name, _, _ in layout.tables:
        with open(os.path.join(root, "models", name + ".sql"), "w") as f:
            f.write("select 1 as x\n")


def model_sql(name, columns, reads="raw_data"):
    """A 30-40 line model: two CTEs over the raw relation (in schema `reads`), a join, and a cast
    per column, so that SQL analysis proves every declared type."""
    casts = ",\n".join(f"    CAST(s.{c} AS {decl}) AS {c}" if cast else f"    s.{c} AS {c}" for c, decl, _, cast in columns)
    return (
        f"-- {name}: a synthetic model\n"
        f"WITH src AS (\n    SELECT *\n    FROM {reads}.{name}\n),\n"
        f"keys AS (\n    SELECT DISTINCT c00 AS k\n    FROM {reads}.{name}\n    WHERE c00 IS NOT NULL\n)\n"
        f"SELECT\n{casts}\nFROM src AS s\nJOIN keys AS k\n    ON k.k = s.c00\n"
    )


def measure(cmd, runs, env=None, cwd=None, ok=(0,), prepare=None):
    """Runs cmd `runs` times (calling `prepare` before each, untimed); returns (seconds list,
    peak RSS in MiB)."""
    times, peak = [], 0
    for _ in range(runs):
        if prepare:
            prepare()
        with tempfile.NamedTemporaryFile("r", prefix="sqb-bench-rss-") as rss:
            # The peak comes from GNU time, which forks the command from its own small process:
            # a process forked from this one would report this script's resident size as its
            # peak when its own is smaller (Linux keeps the high-water mark across exec).
            # Without GNU time (a smoke run on a bare machine) no peak is reported.
            wrapped = [TIME, "-f", "%M", "-o", rss.name] + cmd if TIME else cmd
            start = time.perf_counter()
            proc = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
            _, status, _ = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
            code = os.waitstatus_to_exitcode(status)
            if code not in ok:
                err = proc.stderr.read().decode(errors="replace")
                raise SystemExit(f"{' '.join(cmd[:4])}... exited {code}:\n{err}")
            proc.stderr.close()
            kib = [line for line in rss.read().splitlines() if line.strip().isdigit()]
        times.append(elapsed)
        peak = max(peak, int(kib[-1]) / 1024 if kib else 0)
    return times, peak


TIME = shutil.which("time", path="/usr/bin:/bin")


def change_models(root, names):
    """Appends a comment to each named model's SQL: a change every run."""
    for name in names:
        with open(os.path.join(root, "models", name + ".sql"), "a") as f:
            f.write(f"-- changed {time.time_ns()}\n")


UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def span_times(cmd, span, runs, env):
    """The busy time of the `-v` span `span` over `runs` runs of the sqb command `cmd`."""
    pattern = re.compile(re.escape(span) + r": .*time\.busy=([0-9.]+)(ns|µs|us|ms|s)\b")
    times = []
    for _ in range(runs):
        out = subprocess.run([cmd[0], "-v"] + cmd[1:], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
        found = pattern.search(out.stderr.decode("utf-8", "replace"))
        if not found:
            sys.exit(f"bench: `{' '.join(cmd)}` logged no `{span}` span")
        times.append(float(found.group(1)) * UNITS[found.group(2)])
    return times


def row(label, times, peak, floor=None):
    med = statistics.median(times)
    ratio = f"{med / floor:5.2f}x" if floor else "     "
    shown = f"{peak:8.1f}" if peak else "       -"
    return f"| {label:<44} | {med:8.3f} | {min(times):8.3f} | {max(times):8.3f} | {ratio} | {shown} |"


def header(title):
    return [f"\n### {title}\n", "| step | median s | min s | max s | / floor | peak MiB |", "|---|---|---|---|---|---|"]


def pg_floor_sql(bin_dir, url, names):
    """sqb's three catalog queries as psql runs them: the relations by name, their columns by
    OID, the columns' distinct (type, modifier) pairs spelled. The OIDs and pairs the later
    queries take are read here first (untimed), and written as literals, as sqb binds them."""
    out = subprocess.check_output([os.path.join(bin_dir, "examples", "duckdb_query"), "--print-postgres-queries"]).decode()
    relations, columns, types = [q for q in out.split("-- sqb: end") if q.strip()]
    names_array = "ARRAY[" + ",".join(f"'{n}'" for n in names) + "]::text[]"
    relations = relations.replace("$1", "'bench'").replace("$2", names_array)

    def psql_rows(sql):
        text = subprocess.check_output(["psql", url, "-X", "-A", "-t", "-q", "-F", "|", "-c", sql]).decode()
        return [line.split("|") for line in text.splitlines() if line]

    oids = [r[0] for r in psql_rows(relations)]
    columns = columns.replace("$1", "'{" + ",".join(oids) + "}'")
    pairs = psql_rows(
        "SELECT DISTINCT atttypid, atttypmod FROM pg_attribute"
        " WHERE attrelid = ANY('{" + ",".join(oids) + "}') AND attnum > 0 AND NOT attisdropped"
    )
    types = types.replace("$1", "'{" + ",".join(p[0] for p in pairs) + "}'").replace("$2", "'{" + ",".join(p[1] for p in pairs) + "}'")
    return ";\n".join(q.strip() for q in [relations, columns, types]) + ";\n"


def bench_database():
    """The Postgres database of this run: its own, so that two runs at once (`scripts/test`'s
    smoke run beside a `scripts/bench`) do not drop each other's."""
    return f"sqb_bench_{os.getpid()}"


def run_engine(engine, args, results):
    sqb = os.path.join(args.bin_dir, "sqb")
    layout = Layout(engine, args.relations, args.columns, args.seed)
    work = tempfile.mkdtemp(prefix=f"sqb-bench-{engine}-")
    env = dict(os.environ)
    psql_env = dict(os.environ)
    try:
        t0 = time.perf_counter()
        if engine == "postgres":
            base_url = args.postgres_url
            url = base_url.rsplit("/", 1)[0] + "/" + bench_database()
            subprocess.run(["psql", base_url, "-qc", f"DROP DATABASE IF EXISTS {bench_database()} WITH (FORCE)"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["psql", base_url, "-qc", f"CREATE DATABASE {bench_database()}"], check=True, stdout=subprocess.DEVNULL)
            for sql in pg_sql_batches(layout):
                subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-q"], input=sql.encode(), check=True, stdout=subprocess.DEVNULL)
            env["SQB_DATABASE_URL"] = url
        else:
            sql_path = os.path.join(work, "warehouse.sql")
            with open(sql_path, "w") as f:
                f.write(duck_sql(layout))
        log(f"{engine}: built {args.relations} relations x {args.columns} columns in {time.perf_counter() - t0:.1f}s")

        def project(name, declared, drift):
            root = os.path.join(work, name)
            d = write_project(root, engine, layout, declared, drift, args.seed, url=None)
            if engine == "duckdb":
                if name == "clean":
                    subprocess.run([os.path.join(args.bin_dir, "examples", "demo_warehouse"), os.path.join(root, "w.duckdb"), sql_path], check=True, stderr=subprocess.DEVNULL)
                else:
                    shutil.copy(os.path.join(work, "clean", "w.duckdb"), os.path.join(root, "w.duckdb"))
            return root, d

        clean, _ = project("clean", args.declared, 0.0)
        # The project as users will have it: models without sidecars, then every sidecar written
        # by `sqb contract generate --write` from the warehouse (untimed here).
        generated = os.path.join(work, "generated")
        write_project(generated, engine, layout, 0.0, 0.0, args.seed)
        if engine == "duckdb":
            shutil.copy(os.path.join(clean, "w.duckdb"), os.path.join(generated, "w.duckdb"))
        measure([sqb, "--project-dir", generated, "contract", "generate", "--from", "prod", "--write"], 1, env=env)
        # Compile at the size the SQL-analysis target names (--generate-models, default 5,000).
        compile_root = os.path.join(work, "compile")
        sub = Layout(engine, args.relations, args.columns, args.seed)
        sub.tables = sub.tables[: args.generate_models]
        write_project(compile_root, engine, sub, args.declared, 0.0, args.seed)
        # The same project with semantic contracts: the cost of checking them.
        semantic_root = os.path.join(work, "semantic")
        write_project(semantic_root, engine, sub, args.declared, 0.0, args.seed)
        bound, rails, checks, (asked, by) = add_semantic(semantic_root, sub, 1_000)
        query_sql = [sqb, "--project-dir", semantic_root, "query", "-m", asked, "-d", by, "--from", "prod", "--sql"]
        drifted_root, drifted = project("drifted", args.declared, args.drift)
        # `contract check` needs SQL the warehouse can describe: the same project, its models
        # reading the bench relations themselves.
        checked = os.path.join(work, "checked")
        write_project(checked, engine, layout, args.declared, 0.0, args.seed, reads="bench")
        if engine == "duckdb":
            shutil.copy(os.path.join(clean, "w.duckdb"), os.path.join(checked, "w.duckdb"))
        # The shape of #47: `select 1 as x` models in explicit mode, every sidecar written by
        # `contract generate --write` (untimed): the project as an adopting team has it on day
        # one, before any model's SQL says what it builds.
        select1 = os.path.join(work, "select1")
        write_select1(select1, engine, layout)
        if engine == "duckdb":
            shutil.copy(os.path.join(clean, "w.duckdb"), os.path.join(select1, "w.duckdb"))
        measure([sqb, "--project-dir", select1, "contract", "generate", "--from", "prod", "--write"], 1, env=env)
        pct = f"{args.drift:.0%}"
        share = f", {args.declared:.0%} of models declared" if args.declared < 1.0 else ""
        lines = header(f"{engine}: {args.relations} relations x {args.columns} columns{share}, {drifted} drifted relations in the {pct} run")
        names = [t[0] for t in layout.tables]
        # With few declared relations the drift can round to none: then the diff agrees.
        drift_exit = (1,) if drifted else (0,)
        if engine == "postgres":
            floor_sql = pg_floor_sql(args.bin_dir, url, names)
            floor_file = os.path.join(work, "floor.sql")
            with open(floor_file, "w") as f:
                f.write(floor_sql)
            floor_cmd = ["psql", url, "-X", "-A", "-t", "-q", "-o", "/dev/null", "-f", floor_file]
        else:
            floor_cmd = [os.path.join(args.bin_dir, "examples", "duckdb_query"), os.path.join(clean, "w.duckdb"), "w", "bench"]
        ft, fp = measure(floor_cmd, args.runs, env=psql_env)
        floor = statistics.median(ft)
        lines.append(row("floor: the catalog query (" + ("psql" if engine == "postgres" else "DuckDB") + ")", ft, fp))
        # #47's floor: psql running the plainest catalog query of the whole namespace (no name
        # list, no enum or array detail), as a whole process.
        floor47 = None
        if engine == "postgres":
            f47 = ["psql", url, "-X", "-A", "-t", "-q", "-o", "/dev/null", "-c", NAMESPACE_QUERY]
            t47, p47 = measure(f47, args.runs, env=psql_env)
            floor47 = statistics.median(t47)
            lines.append(row("floor #47: pg_attribute x pg_class x pg_namespace (psql)", t47, p47))
        # What the engine itself needs to describe the check's models, on as many sessions as the
        # machine has cores: `contract check` cannot go below it.
        cores = os.cpu_count() or 1
        if engine == "postgres":
            parts = [[] for _ in range(cores)]
            models = sorted(n for n in os.listdir(os.path.join(checked, "models")) if n.endswith(".sql"))
            for i, name in enumerate(models):
                with open(os.path.join(checked, "models", name)) as f:
                    parts[i % cores].append(f"PREPARE p{i} AS {f.read().strip().rstrip(';')};\n")
            files = []
            for k, part in enumerate(parts):
                files.append(os.path.join(work, f"prepare-{k}.sql"))
                with open(files[-1], "w") as f:
                    f.writelines(part)
            each = " & ".join(f"psql '{url}' -X -q -v ON_ERROR_STOP=1 -o /dev/null -f '{p}'" for p in files)
            describe_cmd = ["bash", "-c", f"{each} & for j in $(jobs -p); do wait $j || exit 1; done"]
        else:
            describe_cmd = [os.path.join(args.bin_dir, "examples", "duckdb_query"), "--prepare", os.path.join(checked, "w.duckdb"), os.path.join(checked, "models"), str(cores)]
        if engine == "duckdb":
            # What DuckDB needs just to hold the file's catalog: no client of the file goes below it.
            ot, op = measure([os.path.join(args.bin_dir, "examples", "duckdb_query"), "--open-only", os.path.join(clean, "w.duckdb")], args.runs)
            lines.append(row("  of which opening the file (DuckDB)", ot, op))
        # "cold" runs start without the compile cache (.sqb/cache), as on a fresh checkout;
        # the others find the verdict of an earlier run of the same project.
        steps = [
            (f"compile ({len(sub.tables)} models), cold", [sqb, "--project-dir", compile_root, "compile"], compile_root, (0,), True),
            (f"compile ({len(sub.tables)} models)", [sqb, "--project-dir", compile_root, "compile"], compile_root, (0,), False),
            (f"compile ({len(sub.tables)} models, {bound} metrics, {rails} guardrails, {checks} assertions), cold", [sqb, "--project-dir", semantic_root, "compile"], semantic_root, (0,), True),
            (f"compile ({len(sub.tables)} models, {bound} metrics, {rails} guardrails, {checks} assertions)", [sqb, "--project-dir", semantic_root, "compile"], semantic_root, (0,), False),
            # The same project's compile (cached) and then one query (a metric by a dimension): the
            # difference from the line above is compiling the query.
            (f"query --sql ({bound} metrics)", query_sql, semantic_root, (0,), False),
            (f"compile ({args.relations} models), cold", [sqb, "--project-dir", clean, "compile"], clean, (0,), True),
            ("contract diff, no drift, cold", [sqb, "--project-dir", clean, "contract", "diff", "--from", "prod"], clean, (0,), True),
            ("contract diff, no drift", [sqb, "--project-dir", clean, "contract", "diff", "--from", "prod"], clean, (0,), False),
            ("contract diff, generate-written, cold", [sqb, "--project-dir", generated, "contract", "diff", "--from", "prod"], generated, (0,), True),
            ("contract diff, generate-written", [sqb, "--project-dir", generated, "contract", "diff", "--from", "prod"], generated, (0,), False),
            (f"contract diff, {pct} drift, cold", [sqb, "--project-dir", drifted_root, "contract", "diff", "--from", "prod"], drifted_root, drift_exit, True),
            (f"contract diff, {pct} drift", [sqb, "--project-dir", drifted_root, "contract", "diff", "--from", "prod"], drifted_root, drift_exit, False),
            (f"contract diff --json, {pct} drift", [sqb, "--project-dir", drifted_root, "contract", "diff", "--from", "prod", "--json"], drifted_root, drift_exit, False),
            # Each run appends to the same history, as a nightly job does.
            (f"contract diff --history, {pct} drift", [sqb, "--project-dir", drifted_root, "contract", "diff", "--from", "prod", "--history", os.path.join(work, f"drift-{engine}.duckdb")], drifted_root, drift_exit, False),
            ("contract diff, no drift (check's project)", [sqb, "--project-dir", checked, "contract", "diff", "--from", "prod"], checked, (0,), False),
            (f"contract check ({args.relations} models described)", [sqb, "--project-dir", checked, "contract", "check", "--from", "prod"], checked, (0,), False),
            (f"contract generate (preview, {pct} drift)", [sqb, "--project-dir", drifted_root, "contract", "generate", "--from", "prod"], drifted_root, (0,), False),
            ("contract diff, #47 shape (select 1, explicit), cold", [sqb, "--project-dir", select1, "contract", "diff", "--from", "prod", "--json"], select1, (0, 1), True),
            ("contract diff, #47 shape (select 1, explicit)", [sqb, "--project-dir", select1, "contract", "diff", "--from", "prod", "--json"], select1, (0, 1), False),
        ]
        for label, cmd, root, ok, cold in steps:
            cache = os.path.join(root, ".sqb", "cache")
            prepare = (lambda c=cache: shutil.rmtree(c, ignore_errors=True)) if cold else None
            if not cold:
                subprocess.run([sqb, "--project-dir", root, "compile"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            describe_floor = None
            if label.startswith("contract check"):
                # Measured just before the check, on a server as settled as the check finds it
                # (a new bench database keeps autovacuum busy for a while after it is built).
                dt, dp = measure(describe_cmd, args.runs, env=psql_env)
                describe_floor = statistics.median(dt)
                lines.append(row(f"floor: the engine prepares the {args.relations} models ({cores} sessions)", dt, dp))
            t, p = measure(cmd, args.runs, env=env, ok=ok, prepare=prepare)
            # `contract check` is measured against the engine preparing the same models.
            against = describe_floor if label.startswith("contract check") else floor if "diff" in label or "generate" in label else None
            lines.append(row(label, t, p, against))
            if "#47 shape" in label and floor47:
                lines.append(row("  the same, against floor #47", t, p, floor47))
        # A change to 3 models of a project whose cache holds the last run's analyses (a CI job
        # restoring .sqb/cache from the base branch): the verdict misses, the 3 models and those
        # reading them are analysed again, the others reused.
        for label, cmd, ok in [
            (f"compile ({args.relations} models), 3 changed", [sqb, "--project-dir", clean, "compile"], (0,)),
            ("contract diff, no drift, 3 models changed", [sqb, "--project-dir", clean, "contract", "diff", "--from", "prod"], (0,)),
        ]:
            subprocess.run([sqb, "--project-dir", clean, "compile"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t, p = measure(cmd, args.runs, env=env, ok=ok, prepare=lambda: change_models(clean, names[:3]))
            lines.append(row(label, t, p, floor if "diff" in label else None))
        # The request compile alone, inside the process (its `-v` span), without loading the
        # project around it.
        lines.append(row(f"  of which the query compile ({bound} metrics)", span_times(query_sql, "query compiled", args.runs, env), 0))
        # Writes change the project, so each run starts from a fresh copy.
        for label, declared, extra in [
            (f"generate --write, no declarations ({min(args.generate_models, args.relations)} models), cold", 0.0, []),
            (f"generate --write --overwrite, {pct} drift, cold", 1.0, ["--overwrite"]),
        ]:
            times, peak = [], 0
            diff_times, diff_peak = [], 0
            for r in range(args.runs):
                root = os.path.join(work, f"write{r}-{len(extra)}")
                if declared == 0.0:
                    write_project(root, engine, layout, 0.0, 0.0, args.seed)
                    select = []
                    if args.generate_models < args.relations:
                        path = os.path.join(root, "select.txt")
                        with open(path, "w") as f:
                            f.write("\n".join(t[0] for t in layout.tables[: args.generate_models]))
                        select = ["--select-file", path]
                else:
                    write_project(root, engine, layout, 1.0, args.drift, args.seed)
                    select = []
                if engine == "duckdb":
                    shutil.copy(os.path.join(clean, "w.duckdb"), os.path.join(root, "w.duckdb"))
                # The diff of the same project and selection, cold, is what "beyond diff" means.
                t, p = measure([sqb, "--project-dir", root, "contract", "diff", "--from", "prod"] + select, 1, env=env, ok=(0, 1))
                diff_times += t
                diff_peak = max(diff_peak, p)
                shutil.rmtree(os.path.join(root, ".sqb"), ignore_errors=True)
                t, p = measure([sqb, "--project-dir", root, "contract", "generate", "--from", "prod", "--write"] + extra + select, 1, env=env)
                times += t
                peak = max(peak, p)
                # Untimed: what was written must agree with the warehouse.
                measure([sqb, "--project-dir", root, "contract", "diff", "--from", "prod"] + select, 1, env=env, ok=(0,))
            lines.append(row(f"  diff of the same project, cold", diff_times, diff_peak, floor))
            lines.append(row(label, times, peak, floor))
            beyond = statistics.median(times) - statistics.median(diff_times)
            lines.append(f"| {'  beyond that diff':<44} | {beyond:8.3f} |          |          |       |          |")
        results.extend(lines)
    finally:
        if args.keep:
            print(f"kept the projects in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
        if engine == "postgres" and not args.keep:
            subprocess.run(["psql", args.postgres_url, "-qc", f"DROP DATABASE IF EXISTS {bench_database()} WITH (FORCE)"], stdout=subprocess.DEVNULL)
        elif engine == "postgres":
            log(f"postgres: kept the database {bench_database()}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--postgres-url", help="a superuser URL; needed for the Postgres runs")
    p.add_argument("--engine", choices=["postgres", "duckdb", "both"], default="both")
    p.add_argument("--relations", type=int, default=10_000)
    p.add_argument("--columns", type=int, default=25)
    p.add_argument("--generate-models", type=int, default=5_000, help="models for the generate --write run")
    p.add_argument("--drift", type=float, default=0.05, help="fraction of relations with one drifted column")
    p.add_argument("--declared", type=float, default=1.0, help="fraction of models with a sidecar declaring their columns")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--keep", action="store_true", help="keep the Postgres bench database and the projects")
    args = p.parse_args()
    results = [f"machine: {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}; seed {args.seed}; {args.runs} runs each"]
    engines = ["postgres", "duckdb"] if args.engine == "both" else [args.engine]
    if "postgres" in engines and not args.postgres_url:
        p.error("--postgres-url is needed for the Postgres runs (or pass --engine duckdb)")
    for engine in engines:
        run_engine(engine, args, results)
    print("\n".join(results))


if __name__ == "__main__":
    main()
