"""Panel throughput against the fake provider (run: .venv/bin/python bench/panel_throughput.py).

Prints four ratios (timings on a shared machine are noisy; the ratios are what to compare):

1. achieved calls/s over the bound concurrency / latency (goal >= 0.9) for N items x 1 trial,
   an ``openai-compatible:http://`` judge (judgekit's lean HTTP client; ``JUDGEKIT_LEAN_HTTP=0``
   in the environment measures the official SDK instead), the fake provider in its own process
   (as a real provider would be) answering after ``--latency`` seconds;
2. calls made by an immediate rerun of the same panel (goal 0), and its wall time;
3. wall time of the same panel with 5% 429s (retry-after 0.1 s) and 2% 500s injected, over the
   clean run;
4. end to end, command-line start included: the bound (calls / concurrency x latency) over the
   wall time of ``judgekit judge panel.yaml`` in a fresh interpreter, from spawn to exit, into a
   new store, at 16 and 64 connections (``--e2e-concurrency``; goals >= 0.9 and >= 0.75). This
   pays what a user pays: interpreter, imports, reading the items, the plan.

Beside 4, what the machine allows: the same 1,000 requests from a bare client (asyncio, the
lean HTTP/1.1 client an ``openai-compatible:http://`` judge uses, nothing of a panel around it)
at the same connections, over the bound — the end-to-end figures cannot be above it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from judgekit.judges.panel import panel_from_dict, run_panel
from judgekit.store.database import Store


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


def run_cli(folder: Path, url: str, concurrency: int, store_name: str) -> float:
    """Wall seconds of ``python -m judgekit judge`` (this checkout) from spawn to exit."""
    panel = folder / f"panel-{concurrency}.yaml"
    panel.write_text(
        "rubric: refusal\nitems: items.jsonl\naggregate: null\njudges:\n"
        f"  - {{id: fake, model: \"openai-compatible:{url}/v1#bench-judge\", concurrency: {concurrency},"
        " backoff_s: 0.2, max_attempts: 8}\n",
        encoding="utf-8",
    )
    repo = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo), *filter(None, [os.environ.get("PYTHONPATH")])])
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "judgekit", "judge", str(panel), "--store",
                          str(folder / store_name), "--no-progress"], cwd=folder, env=env,
                         capture_output=True, text=True)
    s = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"judgekit judge failed ({res.returncode}): {res.stderr.strip()[-500:]}")
    return s


def bare_client(url: str, n: int, concurrency: int) -> float:
    """Seconds for ``n`` chat-completion requests from ``concurrency`` bare workers."""
    from judgekit.judges.lean_http import LeanHTTP

    body = json.dumps({"model": "bench-judge", "max_tokens": 400, "messages": [
        {"role": "system", "content": "You are a judge; answer in JSON."},
        {"role": "user", "content": "Rate this. LABEL=full_refusal"}]}).encode()

    async def go() -> float:
        client = LeanHTTP(f"{url}/v1", {"Authorization": "Bearer bench"}, 60.0)
        left = [n]

        async def worker() -> None:
            while left[0] > 0:
                left[0] -= 1
                status, _, answer = await client.post("/chat/completions", body)
                if status != 200:
                    raise SystemExit(f"bare client: HTTP {status}: {answer[:200]!r}")

        t = time.perf_counter()
        try:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        finally:
            await client.aclose()
        return time.perf_counter() - t

    return asyncio.run(go())


def end_to_end(folder: Path, n: int, latency: float, concurrencies: list[int]) -> None:
    """Print bound / wall time of the whole command for each concurrency, and of a bare client."""
    goals = {16: 0.9, 64: 0.75}
    proc, url = start_server(latency, {}, 0.1)
    try:
        for c in concurrencies:
            bare = bare_client(url, n, c)
            print(f"bare client (no judgekit around it), {c} connections: {n} requests in {bare:.2f}s; "
                  f"bound / wall: {n / c * latency / bare:.2f}   (what this machine allows)")
            before = int(server_stats(url)["requests"])  # type: ignore[call-overload]
            s = run_cli(folder, url, c, f"e2e-{c}.db")
            calls = int(server_stats(url)["requests"]) - before  # type: ignore[call-overload]
            bound = n / c * latency
            goal = f"   (goal >= {goals[c]:g})" if c in goals else ""
            print(f"end to end, CLI start included, {c} connections: {calls} calls in {s:.2f}s; "
                  f"bound {n}/{c} x {latency:g}s = {bound:.2f}s; bound / wall: {bound / s:.2f}{goal}")
    finally:
        stop_server(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--e2e-concurrency", default="16,64",
                    help="connections of the end-to-end runs, comma-separated ('' skips them)")
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

        e2e = [int(c) for c in args.e2e_concurrency.split(",") if c.strip()]
        if e2e:
            end_to_end(folder, args.items, args.latency, e2e)


if __name__ == "__main__":
    main()
