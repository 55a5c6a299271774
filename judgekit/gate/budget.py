"""Label budgets: for a check the gate could not decide (``inconclusive``), about how many more
human-rated items — overall and in which slices — would likely decide it.

The estimate scales the CI half-width as 1/√n (solved exactly for Wilson intervals of rates) and is
confirmed by one simulation from the current data; no nested bootstrap. The alt-test's budget is
the units each human still lacks. A judge's budget is the largest need over its open checks.
"""

from __future__ import annotations

import math
from typing import Any

from judgekit.verdict.check import Budget, Check


def _decided(rule: str, lo: float, hi: float, thr: float) -> bool:
    if rule == "ci>=":
        return lo >= thr or hi < thr
    return hi <= thr or lo > thr


def _wilson_n(rule: str, p: float, thr: float, low: int, high: int) -> int:
    """The smallest n in [low, high] at which the Wilson interval of the rate ``p`` decides
    (``high`` when none does)."""
    from judgekit.stats.intervals import wilson_interval

    def ok(n: int) -> bool:
        lo, hi = wilson_interval(p * n, n)
        return _decided(rule, float(lo), float(hi), thr)

    if not ok(high):
        return high
    while low < high:
        mid = (low + high) // 2
        if ok(mid):
            high = mid
        else:
            low = mid + 1
    return high


def label_budget(check: Check, *, point: Any = None, seed: int = 0, available: int | None = None) -> Budget:
    """About how many more units of the check's ``unit`` (human-rated items, items rated by two
    humans, items judged by the judge …) would likely decide an inconclusive ``check``.

    Two reasons a check is inconclusive, each with its count: its n is below its floor ``min_n``
    (then ``min_n - n`` more), and its interval straddles the threshold. For the latter the
    interval's half-width h on the side facing the threshold shrinks like 1/√n, so it clears the
    distance d = |point − threshold| at about n' = n (h/d)² (for a Wilson interval, wider than
    that at small n, the smallest n' at which the Wilson interval of the current rate decides,
    found by bisection below n (h/d)²); that n' is then confirmed by one simulated sample of that
    size (a binomial draw at the current rate for Wilson intervals, a normal draw with the scaled
    spread at the interval's own level otherwise) and grown by a quarter until the simulated
    interval decides (at most 20 times). ``point``: the estimate (default the check's figure).
    When the estimate sits on the threshold (d = 0) no number of labels is likely to decide it.

    ``available`` is how many more such units the data holds: a need above it is "undecidable"
    with that reason (``items`` None), never a budget larger than the study. An undefined figure
    (the check's ``undefined``) is undecidable, as more units of the same kind leave it undefined.
    Counts are written with thousands separators.
    """
    import numpy as np

    from judgekit.stats.intervals import wilson_interval, z_two_sided

    point = check.figure if point is None else point
    n, min_n, unit, thr, iv = check.n or 0, check.min_n, check.unit, check.threshold, check.interval
    need = max(0, (min_n or 0) - n)
    what = check.name
    undecidable = False
    if iv is not None and point is not None and thr is not None and check.rule != "point>=":
        lo, hi, rule = iv.low, iv.high, check.rule
        if not _decided(rule, lo, hi, thr):
            d = abs(point - thr)
            h = (point - lo) if point > thr else (hi - point)
            if d <= 0 or n == 0:
                undecidable = True
            else:
                wilson = iv.method == "wilson"
                target = max(n + 1, math.ceil(n * (h / d) ** 2))
                if wilson:  # a Wilson interval is wider than 1/√n at small n: solve it
                    target = _wilson_n(rule, float(point), thr, n + 1, target)
                rng = np.random.default_rng(seed)
                z = z_two_sided(iv.level)
                for _ in range(20):
                    if wilson:
                        k = int(rng.binomial(target, min(max(float(point), 0.0), 1.0)))
                        slo, shi = wilson_interval(k, target)
                    else:
                        scale = math.sqrt(n / target)
                        sim = float(point) + float(rng.normal(0.0, h / z * scale))
                        slo, shi = sim - (point - lo) * scale, sim + (hi - point) * scale
                    if _decided(rule, float(slo), float(shi), thr):
                        break
                    target = math.ceil(target * 1.25)
                need = max(need, target - n)
    key = check.subject.slice if check.kind != "min_class_recall" else None
    slices = {} if key is None else {key: need}
    if check.undefined is not None and check.figure is None:
        return undecidable_budget(what, f"the figure is undefined ({check.undefined}), and more {unit} of the "
                                        "same kind leave it undefined")
    if undecidable and need == 0:
        return undecidable_budget(what, f"the estimate sits on the threshold {thr:g}, so no number of more "
                                        f"{unit} is likely to decide it")
    if available is not None and need > available:
        floor = (min_n or 0) - n
        why = (f"the estimate {point:.4g} on {n:,} {unit} sits {abs(point - thr):.2g} from the threshold {thr:g}, and the "
               "interval's half-width shrinks only as 1/√n" if need > floor and point is not None and thr is not None
               else f"{n:,} {unit} is below the policy's floor of {min_n:,}")
        return beyond_study(what, need, unit, available, why, held=n + available)
    where = f" in slice {key}" if key else ""
    small = f" (n={n:,} is below the floor {min_n:,})" if check.small and min_n is not None else ""
    return Budget(need, f"{what}: about {need:,} more {unit}{where} would likely decide it{small} "
                        "(CI half-width ∝ 1/√n, confirmed by one simulation).", slices, need, unit)


def beyond_study(name: str, need: int, unit: str, available: int, why: str, *, held: int | None = None) -> Budget:
    """The budget of a check whose need is more than the study can still supply: "cannot be
    decided with this study: needs about N more …, the study holds M more" with the reason. A
    need above ten times the ``held`` units of the study (those it has and those it can still
    supply) is no count worth printing (the 1/√n extrapolation grows without bound as the
    estimate nears the threshold): "needs more than ten times the H … the study holds"."""
    if held and need > 10 * held:
        return Budget(None, f"{name}: cannot be decided with this study: needs more than ten times the {held:,} "
                            f"{unit} the study holds (because {why}).")
    holds = f"the study holds {available:,} more" if available else (
        "the study holds no more: every item it holds already has a human label"
        if unit == "human-rated items" else f"the study holds no more {unit}")
    return Budget(None, f"{name}: cannot be decided with this study: needs about {need:,} more {unit}, {holds} "
                        f"(because {why}).")


def undecidable_budget(name: str, reason: str) -> Budget:
    """The budget of a check no number of labels of its kind decides: ``items`` None and the
    reason in one sentence starting "undecidable"."""
    return Budget(None, f"{name}: undecidable: {reason}.")


def rate_budget(check: Check, *, k: int, unjudged: int, seed: int = 0) -> Budget:
    """The budget of an inconclusive abstention or error rate, decided on the judge's own calls:
    more items judged by the judge (no human label needed) while the study has unjudged items;
    when the judge has rated every item, what its k of n calls show — the upper end of the very
    interval that left the check open ("2 of 359 abstentions: shows ≤ 0.0201 (95% CI), not ≤
    0.02") — and that only a larger study could decide it."""
    n = int(check.n or 0)
    what = "abstentions" if check.kind == "max_abstention_rate" else "failed calls"
    if unjudged <= 0 and n > 0 and check.interval is not None:
        iv = check.interval
        return undecidable_budget(check.name, (
            f"{check.judge} has judged every item of the study; {k:,} of {n:,} {what}: shows ≤ {_apart(iv.high, check.threshold)} "
            f"({iv.label()}), not ≤ {check.threshold:g} — only a larger study could decide it"))
    return label_budget(check, seed=seed, available=unjudged)


def _apart(x: float, threshold: float | None) -> str:
    """``x`` to 3 significant digits, or as many more as it takes not to print as ``threshold``
    ("shows ≤ 0.020004, not ≤ 0.02", never "shows ≤ 0.02, not ≤ 0.02")."""
    for digits in range(3, 17):
        text = f"{x:.{digits}g}"
        if threshold is None or float(text) != threshold:
            return text
    return repr(x)


def probe_budget(check: Check, *, seed: int = 0, no_family: bool = False, no_trials: bool = False) -> Budget:
    """The budget of an inconclusive probe check (:mod:`judgekit.probes.run`), saying what would
    decide it when more human labels would not: a judge without a model family
    (``max_self_preference``), without trials (``min_stability``: the judge's own repeated ratings,
    no human label), or without perturbed ratings (``max_flip_rate``: ``judgekit probe`` asks the
    judge again). The other probe checks compare with the reference: :func:`label_budget`."""
    name, judge = check.name, check.judge
    if no_family:
        return Budget(None, f"{name}: {judge} has no model family, so no number of labels decides it; give the "
                            "judge a family in checks.max_self_preference.judges (or drop the check for it).")
    how = _NO_HUMAN.get(check.kind)
    if how is None:
        return label_budget(check, seed=seed)
    lacks, fix, more = how
    if not check.n or (no_trials and check.kind == "min_stability"):
        return Budget(None, f"{name}: {judge} has no {lacks}, so no number of human labels decides it; {fix}.")
    b = label_budget(check, seed=seed)
    return Budget(None, f"{name}: {'more' if b.items is None else f'about {b.items} more'} {more.format(judge=judge)} "
                        "would likely decide it.")


#: probe kinds that the judge's own ratings decide, not human labels: what the judge lacks, how to
#: get it, and what more of it is
_NO_HUMAN = {
    "min_stability": ("item with two ok trials", "rate it with trials: 2 or more in its panel (e.g. trials: 3) and "
                      "run the gate again", "items rated by {judge} with trials (no human label needed)"),
    "max_flip_rate": ("perturbed ratings", "run `judgekit probe` with a perturb section for this judge, then the "
                      "gate again", "items asked again under the perturbation (`judgekit probe` with a perturb "
                      "section; no human label needed)"),
}


def alt_budget(res: Any, min_units: int) -> Budget:
    """The budget of an alt-test that cannot run: the units each human still lacks."""
    if res is None or res.n_units == 0:
        return Budget(None, "alt_test: needs items rated by the judge and at least 3 humans each (two besides "
                            "the one left out); more items rated by this panel alone will not do.")
    most = max((n for _, n in res.skipped), default=0)
    need = max(0, min_units - most)
    unit = "items rated by every human"
    return Budget(need, f"alt_test: about {need} more {unit} would let each reach the {min_units} units the test "
                        "needs per human.", {}, need, unit)


def _no_human(b: Budget) -> bool:
    """Whether a budget counts the judge's own calls (no human label), not human labels."""
    return bool(b.unit) and "no human label" in str(b.unit)


def judge_budget(judge: str, checks: list[Check]) -> Budget:
    """The label budget of an inconclusive judge: per unit its checks count (conversations, items
    rated by two humans, items judged by the judge …) the largest need over its inconclusive checks
    in that unit — needs in different units are never compared — and, per slice, the largest need
    in that slice; one sentence. Its ``items`` are human-rated items only (the largest over the
    checks that count human labels, or the slices' sum): a need for more judge calls is none."""
    open_ = [(ch, ch.budget) for ch in checks if ch.state == "inconclusive" and ch.budget is not None]
    overall = [b for _, b in open_ if not b.slices and b.items is not None]
    slices: dict[str, int] = {}
    for _, b in open_:
        for k, v in b.slices.items():
            slices[k] = max(slices.get(k, 0), v)
    if not overall and not slices:
        return Budget(None, f"{judge} is inconclusive and more human-rated items are unlikely to decide it: "
                            + " ".join(b.sentence for _, b in open_))
    human = [int(b.items or 0) for b in overall if not _no_human(b)]
    items: int | None = max([*human, sum(slices.values())]) if human or slices else None
    others = [b.sentence for _, b in open_ if b.items is None]
    by_unit: dict[str, tuple[int, Budget]] = {}
    for b in overall:
        unit, count = ((b.unit, int(b.need)) if b.need is not None and b.unit
                       else ("human-rated items overall", int(b.items or 0)))
        if unit not in by_unit or count > by_unit[unit][0]:
            by_unit[unit] = (count, b)
    parts = [f"about {count:,} more {unit}" for unit, (count, _) in by_unit.items()]
    if slices:
        parts.append("in slices " + ", ".join(f"{k}: {v:,}" for k, v in slices.items()))
    names = ", ".join(ch.name for ch, _ in open_[:5]) + (f" and {len(open_) - 5:,} more" if len(open_) > 5 else "")
    # with checks no label decides, more labels decide some of its open checks, never the judge
    whom = "it" if not others else (f"{len(open_) - len(others):,} of its {len(open_):,} open checks; "
                                    f"{len(others):,} cannot be decided with this study (each says why)")
    return Budget(items, f"{judge} is inconclusive ({names}): {'; '.join(parts)} would likely decide {whom}."
                  + "".join(f" Besides: {x}" for x in others[:3])
                  + (f" ({len(others) - 3:,} more checks cannot be decided; each says why.)" if len(others) > 3 else ""),
                  slices)
