"""A PostgreSQL store at scale: import and ``agree`` on 1,000,000 ratings, as ratios in one run.

Run: ``.venv/bin/python bench/postgres_store.py`` (1,000,000 ratings, a few minutes),
``--quick`` (50,000 ratings, a smoke run). Needs PostgreSQL's binaries (initdb, pg_ctl; see
docs/scale.md) and the ``postgres`` extra: a throwaway server is started on loopback for the run
(tests/pg_server.py) and stopped by its PID at the end.

The data is bench/scale.py's CSV (200,000 items x 5 raters under ``refusal``). Rows, each a fresh
interpreter timed by wall clock (the server's own CPU is not the child's, so CPU ratios would
flatter PostgreSQL):

* **bare COPY**: ``psycopg`` streaming the CSV into a table keyed on (item_id, rater_id) with
  ``COPY … FROM STDIN`` — the floor for the import;
* **import → PostgreSQL**: ``judgekit import CSV --rubric refusal --store postgresql://…``;
  goal (issue 33): within 2x the bare COPY;
* **import → SQLite**: the same into a SQLite file (for reference);
* **agree → PostgreSQL / SQLite**: ``judgekit agree --rubric refusal --by model`` on each;
  goal: PostgreSQL within 2x SQLite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import pg_server  # noqa: E402  (tests/pg_server.py)
from scale import generate, run  # noqa: E402  (bench/scale.py)

BARE_COPY = textwrap.dedent("""
    import sys, psycopg
    with psycopg.connect(sys.argv[2], autocommit=True) as conn:
        conn.execute("CREATE TABLE r (item_id TEXT, rater_id TEXT, rater_kind TEXT, label TEXT,"
                     " model TEXT, PRIMARY KEY (item_id, rater_id))")
        with conn.transaction(), conn.cursor().copy("COPY r FROM STDIN WITH (FORMAT csv, HEADER true)") as cp, \\
                open(sys.argv[1], "rb") as fh:
            while block := fh.read(1 << 20):
                cp.write(block)
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratings", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="50,000 ratings: a smoke run")
    a = ap.parse_args()
    n = 50_000 if a.quick else a.ratings
    bin_dir = pg_server.find_bin_dir()
    if bin_dir is None:
        sys.exit("PostgreSQL is not installed (initdb, pg_ctl): see docs/scale.md")
    py = sys.executable
    jk = [py, "-m", "judgekit"]
    tmp = Path(tempfile.mkdtemp(prefix="judgekit-pg-bench-"))
    server = pg_server.start(bin_dir)
    try:
        csv_path = tmp / "ratings.csv"
        generate(csv_path, n)
        floor_script = tmp / "bare_copy.py"
        floor_script.write_text(BARE_COPY)
        pg_url = server.new_database()
        rows = [
            ("bare COPY", [py, str(floor_script), str(csv_path), server.new_database()]),
            ("import -> PostgreSQL", [*jk, "import", str(csv_path), "--rubric", "refusal", "--store", pg_url]),
            ("import -> SQLite", [*jk, "import", str(csv_path), "--rubric", "refusal", "--store",
                                  str(tmp / "s.db")]),
            ("agree -> PostgreSQL", [*jk, "agree", "--rubric", "refusal", "--by", "model", "--store", pg_url]),
            ("agree -> SQLite", [*jk, "agree", "--rubric", "refusal", "--by", "model", "--store",
                                 str(tmp / "s.db")]),
        ]
        wall: dict[str, float] = {}
        print(f"{n:,} ratings ({tmp})")
        for name, args in rows:
            r = run(args, tmp)
            if r.code != 0:
                print(f"{name}: exit {r.code}\n{r.tail}")
                sys.exit(1)
            wall[name] = r.wall
            print(f"{name:<22} {r.wall:7.2f} s wall  {r.rss_mb:6.0f} MB peak (client)")
        imp = wall["import -> PostgreSQL"] / wall["bare COPY"]
        agr = wall["agree -> PostgreSQL"] / wall["agree -> SQLite"]
        print(f"import into PostgreSQL / bare COPY: {imp:.2f}x (goal <= 2x)")
        print(f"agree on PostgreSQL / on SQLite:    {agr:.2f}x (goal <= 2x)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
