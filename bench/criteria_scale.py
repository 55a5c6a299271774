"""A gate's cost per criterion (run: PYTHONPATH=. .venv/bin/python bench/criteria_scale.py).

Builds the study of tests/gate/test_gate_many_criteria.py once (``write_study``, 1,080 items), then
gates it under an ``analysis: criteria`` fidelity check with a criteria file of N criteria, for
N = 500 and N = 5,000, in two shapes:

* ``shared``: the test's file — 15 distinct definitions (5 severities × 3 label sets) repeated,
  so many criteria count the same items (they share one bootstrap);
* ``distinct``: every criterion on its own items (``where: {prompt_id: [three prompts]}``, no two
  alike), the worst case: one mask and one bootstrap per criterion.

Prints the CPU seconds of each gate (``run_gate``, not recording), the CPU time per criterion,
and the ratio of the per-criterion time at 5,000 to that at 500. Goal: the ratio stays about 1
(linear in the criteria; a ratio near 10 would mean work quadratic in them). Timings on a shared
machine are noisy; compare the ratios, not the seconds.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from pathlib import Path

POLICY = ("rubric: restrictiveness\njudges: [judge-fair]\nreference: adjudicated\nn_resamples: 100\nchecks:\n"
          "  min_items: 10\n  min_value: 0.5\n  analysis_fidelity: {{analysis: criteria, criteria: {crit}, "
          "max_abs_diff: 0.05}}\n")
LABELS = ("r4_hard_refusal", "[r3_deflection, r4_hard_refusal]", "r0_full_compliance")


def shared(n: int) -> str:
    return "criteria:\n" + "".join(
        f"  - {{name: c{k}, rubric: restrictiveness, label: {LABELS[k % 3]}, where: {{severity: {1 + k % 5}}}}}\n"
        for k in range(n))


def distinct(n: int, prompts: list[str]) -> str:
    combos = itertools.islice(itertools.combinations(prompts, 3), n)
    return "criteria:\n" + "".join(
        f"  - {{name: c{k}, rubric: restrictiveness, label: {LABELS[k % 3]}, where: {{prompt_id: [{', '.join(c)}]}}}}\n"
        for k, c in enumerate(combos))


def main() -> int:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        paths = write_study(d, figures=("C",), n_resamples=100, human_share=0.5, conversations_per_tier=10)
        with Store(d / "s.db") as store:
            import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
            prompts = sorted(store.items()["prompt_id"].astype(str).unique())
            per: dict[tuple[str, int], float] = {}
            for shape in ("shared", "distinct"):
                for n in (500, 5000):
                    text = shared(n) if shape == "shared" else distinct(n, prompts)
                    (d / f"{shape}{n}.yaml").write_text(text)
                    (d / f"{shape}{n}.p.yaml").write_text(POLICY.format(crit=f"{shape}{n}.yaml"))
                    t = time.process_time()
                    run_gate(store, d / f"{shape}{n}.p.yaml", record=False)
                    cpu = time.process_time() - t
                    per[(shape, n)] = cpu / n
                    print(f"{shape:8s} {n:5d} criteria: {cpu:6.2f} CPU-s, {1000 * cpu / n:6.3f} ms per criterion")
                print(f"{shape:8s} per-criterion time at 5,000 / at 500: {per[(shape, 5000)] / per[(shape, 500)]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
