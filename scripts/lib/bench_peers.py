"""The harness behind scripts/bench-peers: sqb beside datacontract-cli and dbt-osmosis.

On one synthetic Postgres schema (the same generator as scripts/bench), times each tool's way
of writing column declarations with types from the warehouse, and checks the types they wrote
against the catalog: lengths, precisions, arrays, enums.

- sqb: `sqb contract generate --from prod --write` on a project with no declarations;
- datacontract-cli: `datacontract import postgres ...` (the whole schema into one
  data contract YAML);
- dbt-osmosis: `dbt-osmosis yaml refactor --auto-apply --numeric-precision-and-scale
  --string-length` on a dbt project with one model per relation (the relations already exist, as
  dbt-osmosis reads them from the warehouse; the two flags are its way to keep lengths and
  precisions, which it drops by default).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import bench  # noqa: E402

# What each physical type must keep: a regex a faithful declaration matches.
EXPECTED = {
    "integer": r"^(integer|int|int4)$",
    "bigint": r"^(bigint|int8)$",
    "numeric(12,2)": r"^(numeric|decimal)\(12, ?2\)$",
    "varchar(40)": r"^(varchar|character varying)\(40\)$",
    "text": r"^(text|string)$",
    "boolean": r"^(boolean|bool)$",
    "date": r"^date$",
    "timestamp": r"^timestamp( without time zone)?$",
    "timestamptz": r"^(timestamptz|timestamp with time zone)$",
    "uuid": r"^uuid$",
    "jsonb": r"^jsonb$",
    "text[]": r"^(text\[\]|array<text>)$",
    "bench_status": r"^(bench\.)?bench_status$",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def timed(cmd, env=None, cwd=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])}... exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed


def physical_types(layout):
    """(relation, column) -> physical type, for relations whose columns are declared directly."""
    out = {}
    for i, (name, kind, cols) in enumerate(layout.tables):
        for c, physical, _, _ in bench.declared_columns(layout, i):
            out[(name, c)] = physical
    return out


def score(declared, physical):
    """How many declared types keep what the physical type says; examples of the others; how many
    physical columns were not declared at all."""
    kept, lost, examples = 0, 0, {}
    missing = sum(1 for key in physical if key not in declared)
    for key, ty in declared.items():
        want = physical.get(key)
        if want is None:
            continue
        if ty is not None and re.match(EXPECTED[want], ty.strip().lower()):
            kept += 1
        else:
            lost += 1
            examples.setdefault(want, ty)
    return kept, lost, missing, examples


def sqb_types(root):
    import tomllib
    out = {}
    models = os.path.join(root, "models")
    for f in os.listdir(models):
        if f.endswith(".toml"):
            with open(os.path.join(models, f), "rb") as fh:
                doc = tomllib.load(fh)
            for c, spec in doc.get("columns", {}).items():
                out[(f[:-5], c)] = spec.get("type")
    return out


def datacontract_types(path):
    import yaml
    with open(path) as fh:
        doc = yaml.safe_load(fh)
    out = {}
    # ODCS (schema: [ {name, properties: [...]}, ...]) or the older data contract spec (models).
    for table in doc.get("schema") or []:
        for prop in table.get("properties") or []:
            ty = prop.get("physicalType") or prop.get("logicalType")
            out[(table["name"], prop["name"])] = ty
    for name, model in (doc.get("models") or {}).items():
        for c, spec in (model.get("fields") or {}).items():
            ty = spec.get("config", {}).get("postgresType") or spec.get("type")
            if spec.get("maxLength") and ty in ("varchar", "string", "text"):
                ty = f"varchar({spec['maxLength']})"
            out[(name, c)] = ty
    return out


def osmosis_types(root):
    import yaml
    out = {}
    for dirpath, _, files in os.walk(os.path.join(root, "models")):
        for f in files:
            if not f.endswith(".yml"):
                continue
            with open(os.path.join(dirpath, f)) as fh:
                doc = yaml.safe_load(fh) or {}
            for model in doc.get("models") or []:
                for col in model.get("columns") or []:
                    out[(model["name"], col["name"])] = col.get("data_type")
    return out


def dbt_project(root, layout, url):
    from urllib.parse import urlparse
    u = urlparse(url)
    os.makedirs(os.path.join(root, "models"), exist_ok=True)
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: bench\nversion: '1.0'\nprofile: bench\nmodel-paths: ['models']\n"
                "models:\n  bench:\n    +dbt-osmosis: '_{model}.yml'\n    +materialized: view\n")
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(f"bench:\n  target: prod\n  outputs:\n    prod:\n      type: postgres\n"
                f"      host: {u.hostname}\n      port: {u.port or 5432}\n      user: {u.username}\n"
                f"      password: {u.password}\n      dbname: {u.path.lstrip('/')}\n      schema: bench\n      threads: 2\n")
    for name, _, _ in layout.tables:
        with open(os.path.join(root, "models", f"{name}.sql"), "w") as f:
            f.write("select 1 as placeholder\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--venv", required=True)
    p.add_argument("--postgres-url", required=True)
    p.add_argument("--relations", type=int, default=1000)
    p.add_argument("--columns", type=int, default=25)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args()

    sqb = os.path.join(args.bin_dir, "sqb")
    vbin = os.path.join(args.venv, "bin")
    layout = bench.Layout("postgres", args.relations, args.columns, args.seed)
    base = args.postgres_url.rsplit("/", 1)[0]
    url = base + "/sqb_peers"
    subprocess.run(["psql", args.postgres_url, "-qc", "DROP DATABASE IF EXISTS sqb_peers WITH (FORCE)"], check=True)
    subprocess.run(["psql", args.postgres_url, "-qc", "CREATE DATABASE sqb_peers"], check=True)
    for sql in bench.pg_sql_batches(layout):
        subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-q"], input=sql.encode(), check=True, stdout=subprocess.DEVNULL)
    log(f"built {args.relations} relations x {args.columns} columns")
    physical = physical_types(layout)
    work = tempfile.mkdtemp(prefix="sqb-peers-")
    env = dict(os.environ, SQB_DATABASE_URL=url)
    rows = []
    try:
        # sqb
        times = []
        for r in range(args.runs):
            root = os.path.join(work, f"sqb{r}")
            bench.write_project(root, "postgres", layout, 0.0, 0.0, args.seed)
            times.append(timed([sqb, "--project-dir", root, "contract", "generate", "--from", "prod", "--write"], env=env))
        rows.append(("sqb contract generate --write", times, score(sqb_types(root), physical)))

        # datacontract-cli
        from urllib.parse import urlparse
        u = urlparse(url)
        dc_env = dict(os.environ, DATACONTRACT_POSTGRES_USERNAME=u.username, DATACONTRACT_POSTGRES_PASSWORD=u.password)
        times = []
        for r in range(args.runs):
            out = os.path.join(work, f"datacontract{r}.yaml")
            times.append(timed([os.path.join(vbin, "datacontract"), "import", "postgres",
                                "--source", u.hostname, "--port", str(u.port or 5432), "--database", "sqb_peers",
                                "--schema", "bench", "--output", out], env=dc_env, cwd=work))
        rows.append(("datacontract import postgres", times, score(datacontract_types(out), physical)))

        # dbt-osmosis
        times = []
        for r in range(args.runs):
            root = os.path.join(work, f"dbt{r}")
            dbt_project(root, layout, url)
            times.append(timed([os.path.join(vbin, "dbt-osmosis"), "yaml", "refactor", "--project-dir", root,
                                "--profiles-dir", root, "--auto-apply", "--numeric-precision-and-scale",
                                "--string-length"], cwd=root))
        rows.append(("dbt-osmosis yaml refactor", times, score(osmosis_types(root), physical)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["psql", args.postgres_url, "-qc", "DROP DATABASE IF EXISTS sqb_peers WITH (FORCE)"], stdout=subprocess.DEVNULL)

    print(f"\n{args.relations} relations x {args.columns} columns on PostgreSQL; {args.runs} runs each\n")
    print("| tool | median s | min s | max s | types kept | types lost | columns missing | examples of lost types |")
    print("|---|---|---|---|---|---|---|---|")
    for label, times, (kept, lost, missing, examples) in rows:
        shown = "; ".join(f"`{k}` → `{v}`" for k, v in sorted(examples.items())) or "-"
        print(f"| {label} | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} | {kept} | {lost} | {missing} | {shown} |")


if __name__ == "__main__":
    main()
