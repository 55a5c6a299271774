"""Label budgets: for a check the gate could not decide (``inconclusive``), about how many more
human-rated items — overall and in which slices — would likely decide it.

The estimate scales the CI half-width as 1/√n (solved exactly for Wilson intervals of rates) and is
confirmed by one simulation from the current data; no nested bootstrap. The alt-test's budget is
the units each human still lacks. A judge's budget is the largest need over its open checks.
"""

from __future__ import annotations

import math
import re
from typing import Any

from judgekit.verdict.checks import check_kind

_WILSON_KINDS = ("max_abstention_rate", "max_error_rate", "min_class_recall", "min_coverage")


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


#: probe checks whose bracket names what is probed (a covariate, a variant), a slice only after "|"
_PROBE_INNER = ("max_covariate_effect", "max_flip_rate")
#: probe checks whose bracket is the slice ("by=key")
_PROBE_SLICED = ("min_stability", "max_label_drift", "max_self_preference")


def _slice_of(kind: str, inner: str) -> str | None:
    """The slice ("by=key") of a check name's bracket, or None for an overall check: a probe's
    covariate or variant (``max_covariate_effect[response_chars:full_refusal]``) is not a slice."""
    if kind in _PROBE_INNER:
        _, sep, tail = inner.partition("|")
        return tail if sep else None
    return inner


def label_budget(check: dict[str, Any], *, point: Any, min_n: int | None, seed: int = 0,
                 unit: str = "human-rated items", available: int | None = None,
                 undefined: str | None = None, level: float = 0.95) -> dict[str, Any]:
    """About how many more human-rated items would likely decide an inconclusive ``check``.

    Two reasons a check is inconclusive, each with its count: its n is below the floor
    ``min_n`` (then ``min_n - n`` more), and its interval straddles the threshold. For the
    latter the interval's half-width h on the side facing the threshold shrinks like 1/√n, so
    it clears the distance d = |point − threshold| at about n' = n (h/d)² (for a Wilson interval,
    wider than that at small n, the smallest n' at which the Wilson interval of the current rate
    decides, found by bisection below n (h/d)²); that n' is then
    confirmed by one simulated sample of that size (a binomial draw at the current rate for
    Wilson intervals, a normal draw with the scaled spread for bootstrap figures) and grown by a
    quarter until the simulated interval decides (at most 20 times). When the estimate sits on
    the threshold (d = 0) no number of labels is likely to decide it: ``items`` is None.

    ``unit`` names what is counted (human-rated items, items rated by two humans, items judged by
    the judge); ``available`` is how many more such units the data holds: a need above it is
    "undecidable" with that reason (``items`` None), never a budget larger than the study.
    ``undefined`` (why the figure is undefined, e.g. one label only in a slice): undecidable, as
    more units of the same kind leave it undefined. Counts are written with thousands separators.
    ``level``: the confidence level of the check's interval (a fidelity check's is 1 − 2α), for
    the spread of the simulated sample.
    """
    import numpy as np

    from judgekit.stats.intervals import wilson_interval, z_two_sided

    kind, rule, _ = check_kind(check["name"]) or ("", "", None)
    n = check["n"] or 0
    need = max(0, (min_n or 0) - n)
    ci, thr = check["ci"], check["threshold"]
    what = check["name"]
    z = z_two_sided(level)
    undecidable = False
    if ci is not None and point is not None and thr is not None and rule in ("ci>=", "ci<="):
        lo, hi = ci
        if not _decided(rule, lo, hi, thr):
            d = abs(point - thr)
            h = (point - lo) if point > thr else (hi - point)
            if d <= 0 or n == 0:
                undecidable = True
            else:
                target = max(n + 1, math.ceil(n * (h / d) ** 2))
                if kind in _WILSON_KINDS:  # a Wilson interval is wider than 1/√n at small n: solve it
                    target = _wilson_n(rule, float(point), thr, n + 1, target)
                rng = np.random.default_rng(seed)
                for _ in range(20):
                    if kind in _WILSON_KINDS:
                        p = min(max(float(point), 0.0), 1.0)
                        k = int(rng.binomial(target, p))
                        slo, shi = wilson_interval(k, target)
                    else:
                        scale = math.sqrt(n / target)
                        sim = float(point) + float(rng.normal(0.0, h / z * scale))
                        slo, shi = sim - (point - lo) * scale, sim + (hi - point) * scale
                    if _decided(rule, float(slo), float(shi), thr):
                        break
                    target = math.ceil(target * 1.25)
                need = max(need, target - n)
    slices: dict[str, int] = {}
    m = re.fullmatch(r"[a-z_]+\[(.+)\]", what, re.DOTALL)
    key = None if m is None else _slice_of(kind, m.group(1))
    if key is not None and not what.startswith("min_recall"):
        slices[key] = need
    if undefined is not None:
        return undecidable_budget(what, f"the figure is undefined ({undefined}), and more {unit} of the "
                                        "same kind leave it undefined")
    if undecidable and need == 0:
        return undecidable_budget(what, f"the estimate sits on the threshold {thr:g}, so no number of more "
                                        f"{unit} is likely to decide it")
    if available is not None and need > available:
        return undecidable_budget(what, f"it would need about {need:,} more {unit}, but the data holds only "
                                        f"{available:,} more")
    where = f" in slice {next(iter(slices))}" if slices else ""
    small = f" (n={n:,} is below the floor {min_n:,})" if min_n is not None and n < min_n else ""
    return {"items": need, "slices": slices, "sentence": (
        f"{what}: about {need:,} more {unit}{where} would likely decide it{small} "
        "(CI half-width ∝ 1/√n, confirmed by one simulation).")}


def undecidable_budget(name: str, reason: str) -> dict[str, Any]:
    """The budget of a check no number of labels of its kind decides: ``items`` None and the
    reason in one sentence starting "undecidable"."""
    return {"items": None, "slices": {}, "sentence": f"{name}: undecidable: {reason}."}


def rate_budget(check: dict[str, Any], *, judge: str, k: int, unjudged: int, min_n: int | None,
                seed: int = 0) -> dict[str, Any]:
    """The budget of an inconclusive abstention or error rate, decided on the judge's own calls:
    more items judged by the judge (no human label needed) while the study has unjudged items;
    when the judge has rated every item, what its k of n calls can show (the exact one-sided 95%
    bound, :func:`judgekit.stats.power.what_it_shows`: "0 of 18 abstentions: shows ≤ 0.153, not
    ≤ 0.05") and that only a larger study could decide it."""
    from judgekit.stats.power import what_it_shows

    n = int(check["n"] or 0)
    what = "abstentions" if check["name"] == "max_abstention_rate" else "failed calls"
    if unjudged <= 0 and n > 0:
        shows = what_it_shows(int(k), n).text
        return undecidable_budget(check["name"], (
            f"{judge} has judged every item of the study; {k:,} of {n:,} {what}: {shows}, not ≤ "
            f"{check['threshold']:g} — only a larger study could decide it"))
    return label_budget(check, point=check["figure"], min_n=min_n, seed=seed,
                        unit=f"items judged by {judge} (no human label needed)", available=unjudged)


def probe_budget(check: dict[str, Any], *, judge: str, min_n: int | None, seed: int = 0,
                 no_family: bool = False, no_trials: bool = False) -> dict[str, Any]:
    """The budget of an inconclusive probe check (:mod:`judgekit.probes.run`), saying what would
    decide it when more human labels would not: a judge without a model family
    (``max_self_preference``), without trials (``min_stability``: the judge's own repeated ratings,
    no human label), or without perturbed ratings (``max_flip_rate``: ``judgekit probe`` asks the
    judge again). The other probe checks compare with the reference: :func:`label_budget`."""
    name = check["name"]
    none: dict[str, Any] = {"items": None, "slices": {}}
    if no_family:
        return {**none, "sentence": (
            f"{name}: {judge} has no model family, so no number of labels decides it; give the judge a family "
            "in checks.max_self_preference.judges (or drop the check for it).")}
    if name.startswith("min_stability"):
        if no_trials or not check["n"]:
            return {**none, "sentence": (
                f"{name}: {judge} has no item with two ok trials, so no number of human labels decides it; rate "
                "it with trials: 2 or more in its panel (e.g. trials: 3) and run the gate again.")}
        b = label_budget(check, point=check["figure"], min_n=min_n, seed=seed)
        more = "more" if b["items"] is None else f"about {b['items']} more"
        return {**none, "sentence": (
            f"{name}: {more} items rated by {judge} with trials (no human label needed) would likely decide it.")}
    if name.startswith("max_flip_rate"):
        if not check["n"]:
            return {**none, "sentence": (
                f"{name}: {judge} has no perturbed ratings, so no number of human labels decides it; run "
                "`judgekit probe` with a perturb section for this judge, then the gate again.")}
        b = label_budget(check, point=check["figure"], min_n=min_n, seed=seed)
        more = "more" if b["items"] is None else f"about {b['items']} more"
        return {**none, "sentence": (
            f"{name}: {more} items asked again under the perturbation (`judgekit probe` with a perturb section; "
            "no human label needed) would likely decide it.")}
    return label_budget(check, point=check["figure"], min_n=min_n, seed=seed)


def alt_budget(res: Any, min_units: int) -> dict[str, Any]:
    if res is None or res.n_units == 0:
        return {"items": None, "slices": {}, "sentence": (
            "alt_test: needs items rated by the judge and at least 3 humans each (two besides the one left out); "
            "more items rated by this panel alone will not do.")}
    most = max((n for _, n in res.skipped), default=0)
    need = max(0, min_units - most)
    return {"items": need, "slices": {}, "sentence": (
        f"alt_test: about {need} more items rated by every human would let each reach the "
        f"{min_units} units the test needs per human.")}


def judge_budget(judge: str, checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The label budget of an inconclusive judge: the largest need over its inconclusive checks
    overall and, per slice, the largest need in that slice; one sentence."""
    open_ = [ch for ch in checks if ch["state"] == "inconclusive" and ch["budget"]]
    overall = [ch["budget"]["items"] for ch in open_ if not ch["budget"]["slices"] and ch["budget"]["items"] is not None]
    slices: dict[str, int] = {}
    for ch in open_:
        for k, v in ch["budget"]["slices"].items():
            slices[k] = max(slices.get(k, 0), v)
    if not overall and not slices:
        return {"items": None, "slices": {}, "sentence": (
            f"{judge} is inconclusive and more human-rated items are unlikely to decide it: "
            + " ".join(ch["budget"]["sentence"] for ch in open_))}
    items = max([*overall, sum(slices.values())])
    others = [ch["budget"]["sentence"] for ch in open_ if ch["budget"]["items"] is None]
    parts = []
    if overall:
        top = max((ch for ch in open_ if not ch["budget"]["slices"] and ch["budget"]["items"] is not None),
                  key=lambda ch: ch["budget"]["items"])
        # the largest need, in the unit its check counts (conversations, items judged, ...)
        said = re.search(r"about ([\d,]+) more (.+?)(?: of | in slice | would |, about )", top["budget"]["sentence"])
        parts.append(f"about {said.group(1)} more {said.group(2)}" if said else
                     f"about {max(overall):,} more human-rated items overall")
    if slices:
        parts.append("in slices " + ", ".join(f"{k}: {v:,}" for k, v in slices.items()))
    names = ", ".join(ch["name"] for ch in open_[:5]) + (f" and {len(open_) - 5:,} more" if len(open_) > 5 else "")
    return {"items": items, "slices": slices, "sentence": (
        f"{judge} is inconclusive ({names}): {'; '.join(parts)} would likely decide it."
        + "".join(f" Besides: {x}" for x in others[:3])
        + (f" ({len(others) - 3:,} more checks are undecidable; each says why.)" if len(others) > 3 else ""))}
