"""Scale: judgekit's store, import and agreement report on many ratings, as ratios over floors.

Run: ``.venv/bin/python bench/scale.py`` (1,000,000 ratings: 200,000 items x 5 raters, about
2 minutes), ``--quick`` (50,000 ratings, a smoke run), ``--ratings 10000000`` (opt-in, outside
the 5-minute set; add ``--import-only`` for the import rows alone).

The ``no-op re-import, 2 files`` row is a study fed by several files: the humans' rows and the
judges' rows of the same CSV as two files imported one after the other into another store
(not timed), then the humans' file imported again (timed, over the bare insert of that file).

The data: a long CSV ``item_id, rater_id, rater_kind, label, model`` under the ``refusal``
rubric: three humans (h1, h2, h3) and two judges (j1, j2), each agreeing with a hidden true
label 80% of the time; four models. Each command runs in a fresh interpreter (``python -m
judgekit ...``) and is measured by its wall time and its peak resident memory (``os.wait4``'s
``ru_maxrss`` of that child), over the floors measured in the same run:

* **insert floor**: a fresh interpreter reading the CSV with the ``csv`` module and inserting
  the rows with one ``executemany`` into a SQLite table keyed on (item_id, rater_id);
* **fetch floor**: a fresh interpreter fetching (item_id, rater_id, label) of those rows.

Under other load both wall times stretch; the CPU-time ratio (user + system of each child) is
printed beside the wall-time ratio for that reason. Goals (issue 13): import <= 3x the insert floor, a no-op re-import <= 1x it, ``agree --by
model`` <= 4x the fetch floor, ``report`` <= 6x it, peak memory under 600 MB for each.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

LABELS = ("full_compliance", "partial_refusal", "full_refusal")
RATERS = (("h1", "human"), ("h2", "human"), ("h3", "human"), ("j1", "judge"), ("j2", "judge"))
MODELS = ("model_a", "model_b", "model_c", "model_d")

INSERT_FLOOR = textwrap.dedent("""
    import csv, sqlite3, sys
    conn = sqlite3.connect(sys.argv[2], isolation_level=None)
    conn.execute("CREATE TABLE r (item_id TEXT, rater_id TEXT, rater_kind TEXT, label TEXT,"
                 " model TEXT, PRIMARY KEY (item_id, rater_id))")
    with open(sys.argv[1], newline="") as fh:
        rows = csv.reader(fh)
        next(rows)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO r VALUES (?, ?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
""")
FETCH_FLOOR = textwrap.dedent("""
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1])
    rows = conn.execute("SELECT item_id, rater_id, label FROM r").fetchall()
    assert rows
""")
POLICY = textwrap.dedent("""
    rubric: refusal
    judges: [j1, j2]
    reference: consensus
    by: [model]
    checks:
      min_items: 200
      metric: kappa
      min_lower_bound: 0.5
      max_abstention_rate: 0.01
      max_error_rate: 0.01
""")
#: the same policy with every check that reads an agreement figure (per-slice κ and bias, class
#: recall, coverage, the leave-one-out human ceiling): the gate's most expensive figures
POLICY_ALL = POLICY + textwrap.indent(textwrap.dedent("""
    min_class_recall: {min: 0.3, min_support: 20}
    per_slice: {min_items: 100, min_value: 0.4}
    within_human_noise: {margin: 0.15}
    min_coverage: 0.95
    max_abs_bias: {max: 0.05, per_slice: true}
"""), "  ").lstrip("\n")


def generate(path: Path, n_ratings: int, seed: int = 13) -> int:
    """Write the ratings CSV; returns the number of ratings written."""
    rng = random.Random(seed)
    n_items = n_ratings // len(RATERS)
    with path.open("w", newline="") as fh:
        fh.write("item_id,rater_id,rater_kind,label,model\n")
        for i in range(n_items):
            truth = rng.choices(LABELS, weights=(6, 1, 3))[0]
            model = MODELS[i % len(MODELS)]
            item = f"item-{i:07d}"
            lines = []
            for rater, kind in RATERS:
                label = truth if rng.random() < 0.8 else rng.choice(LABELS)
                lines.append(f"{item},{rater},{kind},{label},{model}\n")
            fh.write("".join(lines))
    return n_items * len(RATERS)


class Result:
    """One child's wall time, CPU time (user + system) and peak resident memory."""

    def __init__(self, wall: float, cpu: float, rss_mb: float, code: int, tail: str) -> None:
        self.wall, self.cpu, self.rss_mb, self.code, self.tail = wall, cpu, rss_mb, code, tail


def run(args: list[str], cwd: Path) -> Result:
    """Run a child and measure it (``os.wait4`` gives that child's own resource usage)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        tail = out.read().decode("utf-8", "replace")[-600:]
    # ru_maxrss is in KiB on Linux (bytes on macOS)
    rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return Result(wall, usage.ru_utime + usage.ru_stime, rss, proc.returncode, tail)


def floor(kind: str, py: str, csv_path: Path, tmp: Path) -> Result:
    """The insert or fetch floor, measured now (next to the command it is compared with, so a
    machine shared with other work loads both alike)."""
    db = tmp / "floor.db"
    if kind == "insert":
        for f in (db, db.with_name("floor.db-journal")):
            f.unlink(missing_ok=True)
        r = run([py, "-c", INSERT_FLOOR, str(csv_path), str(db)], tmp)
    else:
        r = run([py, "-c", FETCH_FLOOR, str(db)], tmp)
    if r.code != 0:
        raise SystemExit(f"floor {kind} failed: {r.tail}")
    return r


def several_files(py: str, jk: list[str], csv_path: Path, tmp: Path) -> None:
    """The ``no-op re-import, 2 files`` row (see the module docstring)."""
    humans, judges = tmp / "humans.csv", tmp / "judges.csv"
    with csv_path.open() as src, humans.open("w") as h, judges.open("w") as j:
        header = src.readline()
        h.write(header)
        j.write(header)
        for line in src:
            (j if ",judge," in line else h).write(line)
    store = ["--store", str(tmp / "two-files.db")]
    for f in (humans, judges):
        r = run([*jk, "import", str(f), "--rubric", "refusal", *store], tmp)
        if r.code != 0:
            print(f"import {f.name}: exit {r.code}\n{r.tail}")
            return
    base = floor("insert", py, humans, tmp)
    r = run([*jk, "import", str(humans), "--rubric", "refusal", *store], tmp)
    if r.code != 0:
        print(f"no-op re-import, 2 files: exit {r.code}\n{r.tail}")
    ratio, cpu_ratio = r.wall / base.wall, r.cpu / max(base.cpu, 1e-3)
    met = ["time ok" if ratio <= 1.0 else "time MISSED",
           "memory ok" if r.rss_mb < 600 else "memory MISSED"]
    print(f"{'no-op, 2 files':<18} {r.wall:7.2f} {base.wall:7.2f} {ratio:5.1f}x {cpu_ratio:8.1f}x "
          f"{'<=1x':>6} {r.rss_mb:8.0f}  {', '.join(met)}  (floor: bare insert of humans.csv; "
          f"{'skipped' if ': 0 new, 0 changed' in r.tail else 'NOT skipped'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratings", type=int, default=1_000_000, help="ratings to generate (default 1M)")
    ap.add_argument("--quick", action="store_true", help="50,000 ratings: a smoke run")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (printed)")
    ap.add_argument("--import-only", action="store_true",
                    help="only the import rows (e.g. with --ratings 10000000)")
    a = ap.parse_args()
    n = 50_000 if a.quick else a.ratings
    py = sys.executable
    jk = [py, "-m", "judgekit"]
    tmp = Path(tempfile.mkdtemp(prefix="judgekit-scale-"))
    try:
        csv_path = tmp / "ratings.csv"
        t0 = time.perf_counter()
        n = generate(csv_path, n)
        size = csv_path.stat().st_size / 1e6
        print(f"{n:,} ratings ({n // len(RATERS):,} items x {len(RATERS)} raters), "
              f"{size:.0f} MB CSV, generated in {time.perf_counter() - t0:.1f} s")
        (tmp / "policy.yaml").write_text(POLICY)
        (tmp / "policy-all.yaml").write_text(POLICY_ALL)
        store = ["--store", str(tmp / "judgekit.db")]
        commands = [
            ("import", [*jk, "import", str(csv_path), "--rubric", "refusal", *store], "insert", 3.0),
            ("no-op re-import", [*jk, "import", str(csv_path), "--rubric", "refusal", *store],
             "insert", 1.0),
            ("agree --by model", [*jk, "agree", "--rubric", "refusal", "--by", "model", *store],
             "fetch", 4.0),
            ("gate", [*jk, "gate", str(tmp / "policy.yaml"), "--out", str(tmp), *store], "fetch", None),
            ("gate, every check", [*jk, "gate", str(tmp / "policy-all.yaml"), "--out", str(tmp / "all"), *store],
             "fetch", None),
            ("report", [*jk, "report", "--rubric", "refusal", "--by", "model", "--verdict",
                        str(tmp / "verdict.json"), "--out", str(tmp / "report"), *store], "fetch", 6.0),
        ]
        if a.import_only:
            commands = commands[:2]
        print("each floor is measured just before the command compared with it; ratios of wall "
              "time (and of CPU time, less sensitive to other load on the machine)")
        print(f"{'command':<18} {'wall s':>7} {'floor s':>7} {'ratio':>6} {'cpu ratio':>9} "
              f"{'goal':>6} {'peak MB':>8}  result")
        for name, args, kind, goal in commands:
            base = floor(kind, py, csv_path, tmp)
            r = run(args, tmp)
            ok_code = r.code in (0, 1, 3) if name.startswith("gate") else r.code == 0
            if not ok_code:
                print(f"{name}: exit {r.code}\n{r.tail}")
            ratio, cpu_ratio = r.wall / base.wall, r.cpu / max(base.cpu, 1e-3)
            met = []
            if goal is not None:
                met.append("time ok" if ratio <= goal else "time MISSED")
            met.append("memory ok" if r.rss_mb < 600 else "memory MISSED")
            print(f"{name:<18} {r.wall:7.2f} {base.wall:7.2f} {ratio:5.1f}x {cpu_ratio:8.1f}x "
                  f"{f'<={goal:g}x' if goal else '-':>6} {r.rss_mb:8.0f}  {', '.join(met)}  "
                  f"(floor: bare {kind})")
        several_files(py, jk, csv_path, tmp)
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
