"""Removes what earlier builds left in the shared cargo target directory and no build of now uses.

Each change to the code or a dependency links new test executables beside the old ones, and a
change to DuckDB's build leaves its previous object files behind: the directory grew past 70 GB.
Reads cargo's JSON messages (of `cargo test --no-run` and `cargo build`, which rebuild nothing
when run right after the real builds) on stdin and, under <target>/debug, removes:

- test executables in deps/ of this package's test targets that no build of now produced;
- build-script output folders (build/<package>-<hash>/) of packages whose current folder differs.

Prints what it freed. It never touches release/ (the benchmarks' builds) or anything it cannot
attribute to a stale build.
"""

import json
import os
import re
import shutil
import sys


def main():
    target = os.path.join(sys.argv[1], "debug")
    executables, out_dirs, test_names = set(), {}, set()
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        reason = msg.get("reason")
        if reason == "compiler-artifact":
            if msg.get("executable"):
                executables.add(os.path.realpath(msg["executable"]))
            if msg["target"]["kind"] == ["test"] or msg.get("profile", {}).get("test"):
                test_names.add(msg["target"]["name"].replace("-", "_"))
            for f in msg.get("filenames", []):
                executables.add(os.path.realpath(f))
        elif reason == "build-script-executed":
            pkg = msg["package_id"]
            out_dirs.setdefault(package_name(pkg), set()).add(os.path.realpath(os.path.dirname(msg["out_dir"])))
    freed = 0
    deps = os.path.join(target, "deps")
    stem = re.compile(r"^(?P<name>[A-Za-z0-9_]+)-[0-9a-f]{16}$")
    for entry in os.scandir(deps) if os.path.isdir(deps) else []:
        m = stem.match(entry.name)
        if not m or m["name"] not in test_names or not entry.is_file():
            continue
        path = os.path.realpath(entry.path)
        if path in executables or not os.access(path, os.X_OK):
            continue
        freed += remove(path)
        freed += remove(path + ".d")
    build = os.path.join(target, "build")
    for entry in os.scandir(build) if os.path.isdir(build) else []:
        name = entry.name.rsplit("-", 1)[0]
        current = out_dirs.get(name)
        if not current or not os.path.isdir(os.path.join(entry.path, "out")):
            continue
        if os.path.realpath(entry.path) not in current:
            freed += remove(entry.path)
    print(f"scripts/test: pruned {freed / 2**30:.1f} GiB of stale builds from {target}", file=sys.stderr)


def package_name(package_id):
    # "registry+https://...#libduckdb-sys@1.2.0" or "libduckdb-sys 1.2.0 (registry+...)".
    if "#" in package_id:
        tail = package_id.rsplit("#", 1)[1]
        return tail.split("@", 1)[0] if "@" in tail else tail.rsplit("/", 1)[-1].split("@")[0]
    return package_id.split(" ", 1)[0]


def size(path):
    if os.path.isdir(path) and not os.path.islink(path):
        return sum(size(os.path.join(path, e)) for e in os.listdir(path))
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def remove(path):
    if not os.path.lexists(path):
        return 0
    n = size(path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.remove(path)
    return n


if __name__ == "__main__":
    main()
