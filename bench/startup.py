"""Start-up cost of the command line (run: .venv/bin/python bench/startup.py).

Prints, for each command, the median wall time of several fresh-interpreter runs, its difference
from ``python -c "import click"`` measured in the same run (interleaved, so machine load hits all
alike) and the ratio of the two:

* ``judgekit --help``;
* ``judgekit rubrics``;
* a rerun of a 1,000-item panel whose every call is cached (0 calls: the fake provider counts the
  requests it gets), through an ``openai-compatible:`` judge — the goal is that it imports neither
  the SDK nor anything else the rerun does not use.

Goal: ``--help`` and the 0-call rerun within 0.3 s of ``import click``. The commands run as
``python -m judgekit`` from this checkout (the console script adds nothing measurable).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from panel_throughput import server_stats, start_server, stop_server, write_items  # noqa: E402

REPO = HERE.parent
GOAL_S = 0.3


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def wall(args: list[str], cwd: Path) -> float:
    """Seconds from spawning ``python ARGS`` to its exit (it must succeed)."""
    t = time.perf_counter()
    res = subprocess.run([sys.executable, *args], cwd=cwd, env=_env(), capture_output=True, text=True)
    s = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({res.returncode}): {res.stderr.strip()[-500:]}")
    return s


def write_panel(folder: Path, url: str, concurrency: int = 16) -> Path:
    path = folder / "panel.yaml"
    path.write_text(
        "rubric: refusal\nitems: items.jsonl\naggregate: null\njudges:\n"
        f"  - {{id: fake, model: \"openai-compatible:{url}/v1#bench-judge\", concurrency: {concurrency}}}\n",
        encoding="utf-8",
    )
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7, help="fresh-interpreter runs per command (median)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_items(folder, args.items)
        proc, url = start_server(0.01, {}, 0.1)
        try:
            panel = write_panel(folder, url)
            judge = ["-m", "judgekit", "judge", str(panel), "--store", str(folder / "s.db")]
            first = wall(judge, folder)  # fills the cache
            before = int(server_stats(url)["requests"])  # type: ignore[call-overload]
            commands = {
                'python -c "import click"': ["-c", "import click"],
                "judgekit --help": ["-m", "judgekit", "--help"],
                "judgekit rubrics": ["-m", "judgekit", "rubrics"],
                f"0-call rerun ({args.items} items)": judge,
            }
            times: dict[str, list[float]] = {k: [] for k in commands}
            for _ in range(args.runs):
                for name, cmd in commands.items():
                    times[name].append(wall(cmd, folder))
            rerun_calls = int(server_stats(url)["requests"]) - before  # type: ignore[call-overload]
        finally:
            stop_server(proc)
    med = {k: statistics.median(v) for k, v in times.items()}
    base_name = next(iter(med))
    base = med[base_name]
    print(f"median of {args.runs} fresh-interpreter runs each (first panel run, {args.items} calls: "
          f"{first:.2f}s)")
    print(f"{base_name:<28} {base:6.3f}s")
    for name, s in list(med.items())[1:]:
        goal = "" if "rubrics" in name else f"   (goal: within {GOAL_S:g}s)"
        print(f"{name:<28} {s:6.3f}s   +{s - base:.3f}s over import click, {s / base:4.1f}x{goal}")
    print(f"calls made by the {args.runs} reruns: {rerun_calls}   (goal 0)")


if __name__ == "__main__":
    main()
