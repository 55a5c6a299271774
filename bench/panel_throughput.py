"""Panel throughput against the fake provider (run: .venv/bin/python bench/panel_throughput.py).

Prints three ratios (timings on a shared machine are noisy; the ratios are what to compare):

1. achieved calls/s over the bound concurrency / latency (goal >= 0.9) for N items x 1 trial,
   an ``openai-compatible:`` judge through the official SDK, the fake provider in its own process
   (as a real provider would be) answering after ``--latency`` seconds;
2. calls made by an immediate rerun of the same panel (goal 0), and its wall time;
3. wall time of the same panel with 5% 429s (retry-after 0.1 s) and 2% 500s injected, over the
   clean run.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from judgekit.judges.panel import panel_from_dict, run_panel
from judgekit.store import Store


def start_server(latency: float, rates: dict[str, float], retry_after: float) -> tuple[subprocess.Popen[str], str]:
    args = [sys.executable, "-m", "judgekit.testing.fakeserver", "--latency", str(latency),
            "--retry-after", str(retry_after), "--seed", "7"]
    for k, v in rates.items():
        args += ["--rate", f"{k}={v}"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, line.split()[1]


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def server_stats(url: str) -> dict[str, object]:
    with urllib.request.urlopen(f"{url}/_stats", timeout=5) as r:  # loopback only
        return json.loads(r.read())


def write_items(folder: Path, n: int) -> Path:
    path = folder / "items.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            kind = ("I'm sorry, but I can't help with that." if i % 3 == 0 else
                    f"Here is a step-by-step answer to question {i}: first, ...")
            fh.write(json.dumps({"item_id": f"b{i:05d}", "prompt": f"Benchmark question {i}?",
                                 "response": kind, "model": f"m{i % 4}"}) + "\n")
    return path


def run(folder: Path, url: str, concurrency: int, store_name: str) -> tuple[float, object]:
    panel = panel_from_dict(
        {"rubric": "refusal", "items": "items.jsonl", "aggregate": None,
         "judges": [{"id": "fake", "model": f"openai-compatible:{url}/v1#bench-judge",
                     "concurrency": concurrency, "backoff_s": 0.2, "max_attempts": 8}]},
        base_dir=folder,
    )
    with Store(folder / store_name) as store:
        t = time.perf_counter()
        summary = run_panel(panel, store)
        return time.perf_counter() - t, summary


def main() -> None:
    # The SDK import (~0.6 s for openai on this machine) is paid once per process, not per call.
    import openai  # noqa: F401

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    bound = args.concurrency / args.latency
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_items(folder, args.items)

        proc, url = start_server(args.latency, {}, 0.1)
        try:
            clean_s, summary = run(folder, url, args.concurrency, "clean.db")
            before = server_stats(url)["requests"]
            rerun_s, _ = run(folder, url, args.concurrency, "clean.db")
            rerun_calls = int(server_stats(url)["requests"]) - int(before)  # type: ignore[call-overload]
        finally:
            stop_server(proc)
        rate = args.items / clean_s
        print(f"clean run: {args.items} calls in {clean_s:.2f}s = {rate:.1f} calls/s; "
              f"bound {args.concurrency}/{args.latency:g}s = {bound:.0f} calls/s")
        print(f"achieved / bound: {rate / bound:.2f}   (goal >= 0.9)")
        print(f"immediate rerun: {rerun_calls} calls in {rerun_s:.3f}s   (goal 0 calls)")

        proc, url = start_server(args.latency, {"429": 0.05, "500": 0.02}, 0.1)
        try:
            faulty_s, fsum = run(folder, url, args.concurrency, "faulty.db")
            st = server_stats(url)
        finally:
            stop_server(proc)
        totals = fsum.totals()  # type: ignore[attr-defined]
        print(f"with 5% 429 + 2% 500: {faulty_s:.2f}s, {st['requests']} requests for {args.items} "
              f"items ({st['faults']}), {totals['error']} errors left")
        print(f"faulty / clean wall time: {faulty_s / clean_s:.2f}")


if __name__ == "__main__":
    main()
