"""The ``analysis_fidelity`` gate check: a study's figures from the judge's labels against the
same figures from the reference's labels, on the items the reference rated.

:func:`fidelity_results` reads what each analysis needs from the store (the judge's and the
reference's ratings, the items, H for calibration, the criteria file) and computes the figure
pairs (:mod:`judgekit.analysis.fidelity`); :func:`fidelity_checks` turns them into gate checks:

* one check per figure instance (:func:`fidelity_checks`), its subject the analysis, the figure and
  its cell with model, turn, tier or criterion as fields (its name reads
  ``analysis_fidelity[calibration:drift(model=m-a, tier=4, turn=6)]``);
* its figure is |d|, d = figure(judge) − figure(reference); its interval the interval of |d|
  implied by the (1 − 2α) paired bootstrap interval of d (90% at the default α = 0.05: two
  one-sided tests, :class:`judgekit.verdict.fidelity_policy.AnalysisFidelity`); rule ``ci<=``
  against the figure's margin (pass when the whole interval is within it, so a figure off by
  more than the margin passes with probability ≤ α; fail when the whole interval is above it;
  inconclusive otherwise, :func:`judgekit.verdict.check.derive_state`);
* a figure with fewer than ``min_units`` labelled resampling units (conversations, prompts)
  behind it, or one the labelled items cannot define, is inconclusive, and its label budget says
  how many more conversations rated whole by humans would likely decide it
  (``judgekit sample --by-conversation`` draws them);
* the detail gives the judge's value, the reference's value and d with its interval.

The reference is the gate's: the adjudicated rater when the agreement report used one, else the
mean of the humans' values (``consensus``; for refusal, the share of humans saying refusal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.gate.budget import label_budget
from judgekit.rubric.model import Rubric
from judgekit.stats.intervals import abs_interval
from judgekit.verdict.check import Budget, Check, Subject, interval_of, new_check
from judgekit.verdict.fidelity_policy import AnalysisFidelity
from judgekit.verdict.numbers import num, signed, signed_pair
from judgekit.verdict.read import finite

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from judgekit.analysis.fidelity import FigurePair
    from judgekit.analysis.options import ItemColumns

__all__ = ["CriteriaMemo", "criteria_digests", "fidelity_checks", "fidelity_lines", "fidelity_results"]


def _reference_ratings(store: Any, rubric: Rubric, ref: str | None, humans: list[str]) -> pd.DataFrame:
    """The reference's ratings: the rater ``ref``, else (consensus) those of ``humans`` (every
    human rater when none is named, as the agreement report's consensus)."""
    if ref and ref != "consensus":
        return store.ratings(rubric=rubric, rater_ids=[ref])
    return store.ratings(rubric=rubric, rater_ids=humans) if humans else store.ratings(
        rubric=rubric, rater_kind="human")


def _refusal_share(ratings: pd.DataFrame, indicator: Any) -> pd.Series:
    """Per item: the share of ok trials (of every rater in ``ratings``) that say refusal."""
    r = ratings[ratings["status"].eq("ok") & ratings["label"].notna()]
    r = r.assign(item_id=r["item_id"].astype(str), _x=indicator(r["label"]).to_numpy(float))
    return r.groupby("item_id")["_x"].mean()


def fidelity_results(store: Any, policy: Any, policy_path: str | Path, rubric: Rubric,
                     report: Any = None, *, reference: str | None = None,
                     humans: list[str] | None = None, per_unit: bool = False,
                     memo: CriteriaMemo | None = None) -> dict[str, list[FigurePair]]:
    """judge → its figure pairs under the policy's ``checks.analysis_fidelity`` (module doc).
    The reference is the agreement ``report``'s (the gate), or ``reference`` and ``humans`` as a
    verdict records them (the report). ``per_unit``: the pairs keep their per-conversation (per
    cluster) jackknife pseudo-values (``extra["per_unit"]``, for ``judgekit plan``). ``memo``: the
    run's :class:`CriteriaMemo` (``analysis: criteria``), so that the digests read the same file once."""
    from judgekit.analysis import fidelity as af
    from judgekit.analysis.frames import per_item_values

    spec: AnalysisFidelity = policy.checks.analysis_fidelity
    where = f"Policy file {policy_path}: analysis_fidelity"
    n_boot, seed = policy.n_resamples, policy.seed
    if report is not None:
        reference = (report.data.get("reference") or {}).get("rater")
        humans = list(report.data.get("humans") or [])
    ref = _reference_ratings(store, rubric, reference, list(humans or []))
    items = store.items()
    out: dict[str, list[FigurePair]] = {}
    harm = None
    if spec.analysis == "calibration":
        vals = list(rubric.values.values())
        if not vals or min(vals) < 0 or max(vals) > 1:
            raise JudgekitError(f"{where}: calibration needs a rubric with values in [0, 1] (restrictiveness), "
                                f"not {rubric.id}; gate it under restrictiveness or use analysis: distribution.")
        harm = _guard(where, lambda: harm_of(store, items, spec))
        rv = per_item_values(ref, rubric)
        for judge in policy.judges:
            jv = per_item_values(store.ratings(rubric=rubric, rater_ids=[judge]), rubric)
            out[judge] = _guard(where, lambda jv=jv: af.calibration_pairs(
                jv, rv, items, harm, figures=spec.chosen, columns=_columns(spec),
                include_lookalikes=spec.include_lookalikes,
                n_boot=n_boot, seed=seed, per_unit=per_unit, level=spec.level))
    elif spec.analysis == "distribution":
        from judgekit.analysis.distribution.refusal import refusal_definition

        _, indicator = _guard(where, lambda: refusal_definition(
            rubric, threshold=spec.threshold, refusal_codes=spec.refusal_codes))
        rs = _refusal_share(ref, indicator)
        for judge in policy.judges:
            js = _refusal_share(store.ratings(rubric=rubric, rater_ids=[judge]), indicator)
            out[judge] = _guard(where, lambda js=js: af.distribution_pairs(
                js, rs, items, figures=spec.chosen, columns=_columns(spec), n_boot=n_boot,
                seed=seed, per_unit=per_unit, level=spec.level))
    else:
        out = _criteria_results(store, policy, policy_path, rubric, ref, items, where, per_unit, memo)
    units_total(out, items, spec, harm)
    return out


def _columns(spec: AnalysisFidelity) -> ItemColumns:
    """The item columns an analysis fidelity check names."""
    from judgekit.analysis.options import ItemColumns

    return ItemColumns(model=spec.model_column, prompt=spec.prompt_column,
                       turn=spec.turn_column, lookalike=spec.lookalike_column)


def units_total(out: dict[str, list[FigurePair]], items: pd.DataFrame, spec: AnalysisFidelity,
                harm: pd.Series | None = None) -> None:
    """Record in each pair's ``extra["units_total"]`` how many units (conversations) of its model
    (and tier) the study holds that can enter the figure, so that a label budget never asks for
    more than there are: benign look-alikes are left out unless the policy includes them (the
    figures leave them out), and a tier is read from the harm column, else from ``harm`` (H per
    item, e.g. from the human harm ratings: :func:`judgekit.analysis.frames.tier_of`)."""
    import numpy as np
    import pandas as pd

    from judgekit.analysis.frames import tier_of

    col = "conversation_id" if "conversation_id" in items.columns else spec.prompt_column
    if col is None or col not in items.columns or spec.model_column not in items.columns:
        return
    if spec.harm_column in items.columns:
        tiers: pd.Series | None = items[spec.harm_column].astype(str)
    elif harm is not None:
        h = items["item_id"].astype(str).map(harm).to_numpy(float)
        tiers = pd.Series(np.where(np.isnan(h), "", tier_of(np.nan_to_num(h)).astype(str)), index=items.index)
    else:
        tiers = None
    enters = pd.Series(True, index=items.index)
    if not spec.include_lookalikes and spec.lookalike_column in items.columns:
        enters = ~items[spec.lookalike_column].astype(str).str.lower().isin(("true", "1", "yes"))
    for pairs in out.values():
        for p in pairs:
            if p.unit != "conversations" or "model" not in p.key:
                continue
            sel = enters & (items[spec.model_column].astype(str) == str(p.key["model"]))
            if "tier" in p.key:
                if tiers is None:
                    continue
                sel &= tiers == str(p.key["tier"])
            p.extra["units_total"] = int(items.loc[sel, col].nunique())


def harm_of(store: Any, items: pd.DataFrame, spec: AnalysisFidelity) -> pd.Series:
    """H per item as ``judgekit analyze calibration`` takes it: the tiers of ``harm_column``, else
    the human ``harm_rubric`` ratings shared by every item with the same ``harm_key``."""
    from judgekit.analysis.frames import harm_from_column, harm_from_ratings, spread_harm
    from judgekit.rubric.model import load_rubric

    if spec.harm_column:
        return harm_from_column(items, spec.harm_column)
    hrub = load_rubric(spec.harm_rubric)
    hr = store.ratings(rubric=hrub, rater_kind=["human", "reference"])
    if hr.empty:
        raise JudgekitError(f"there are no human {hrub.id} ratings in {store.path} to take H from; import "
                            "them or give harm_column (e.g. severity).")
    key = None if spec.harm_key is None or spec.harm_key.lower() == "none" else spec.harm_key
    return spread_harm(harm_from_ratings(hr, hrub), items, key)


def _guard(where: str, fn: Any) -> Any:
    try:
        return fn()
    except JudgekitError as exc:
        raise JudgekitError(f"{where}: {exc}") from None


@dataclass
class CriteriaMemo:
    """A gate run's criteria file, read once for its figures and for its digests: the file and
    its criteria under the gated rubric once read, and each rubric a criterion names."""

    path: Path | None = None
    criteria: list[Any] | None = None
    rubrics: dict[str, Rubric] = field(default_factory=dict)


def _same_rubric(c: Any, rubric: Rubric, source: str, rubrics: dict[str, Rubric] | None = None) -> bool:
    """Whether criterion ``c`` counts labels of the gated ``rubric``: its ``rubric:`` names it
    (name or id) or is a rubric file (as ``judgekit analyze criteria`` takes it) with the same id
    and content hash; a view is matched by the full rubric it collapses."""
    from judgekit.analysis.criteria.spec import criterion_rubric

    if c.rubric in (rubric.name, rubric.id):
        return True
    theirs = criterion_rubric(c, source, rubrics)
    return (theirs.id, theirs.hash) == (rubric.id, rubric.hash)


def _gated_criteria(policy: Any, policy_path: str | Path, rubric: Rubric, where: str,
                    memo: CriteriaMemo | None = None) -> tuple[Path, list[Any]]:
    """The criteria file of the policy's ``analysis_fidelity`` (relative to the policy file) and
    its criteria under the gated ``rubric`` (at least one); read once per ``memo``."""
    from judgekit.analysis.criteria.spec import load_criteria

    if memo is not None and memo.path is not None and memo.criteria is not None:
        return memo.path, memo.criteria
    rubrics = memo.rubrics if memo is not None else {}

    path = Path(policy.checks.analysis_fidelity.criteria or "")
    if not path.is_absolute():
        path = Path(policy_path).parent / path
    crit = load_criteria(path)
    mine = [c for c in crit.criteria if _same_rubric(c, rubric, f"Criteria file {path}", rubrics)]
    if not mine:
        raise JudgekitError(f"{where}: the criteria file {path} has no criterion under {rubric.id}; "
                            "fidelity is measured on the gated rubric's criteria.")
    if memo is not None:
        memo.path, memo.criteria = path, mine
    return path, mine


def criteria_digests(policy: Any, policy_path: str | Path, rubric: Rubric,
                     memo: CriteriaMemo | None = None) -> dict[str, str] | None:
    """criterion name → the digest of its definition
    (:func:`judgekit.analysis.criteria.spec.criterion_digest`), for each criterion the policy's
    ``analysis: criteria`` fidelity check gates; None for any other policy. The verdict records
    them (``criteria_digests``) so that ``judgekit analyze criteria`` trusts a judge for one
    criterion only while the criteria file still defines it as the gate read it."""
    from judgekit.analysis.criteria.spec import criterion_digest

    spec = policy.checks.analysis_fidelity
    if spec is None or spec.analysis != "criteria":
        return None
    memo = memo if memo is not None else CriteriaMemo()
    path, mine = _gated_criteria(policy, policy_path, rubric, f"Policy file {policy_path}: analysis_fidelity", memo)
    return {c.name: criterion_digest(c, f"Criteria file {path}", memo.rubrics) for c in mine}


def _on_items(shares: pd.DataFrame, ids: np.ndarray, codes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Label shares by item id (:func:`judgekit.analysis.frames.label_shares`) laid over the items
    ``ids``: whether each item has them, and the shares (items × ``codes``; NaN where it has none)."""
    import numpy as np
    by_id = shares.set_axis(shares.index.astype(str))
    rated = np.isin(ids, by_id.index.to_numpy())
    return rated, by_id.reindex(ids)[list(codes)].to_numpy(float)


def _criteria_masks(mine: list[Any], items: pd.DataFrame, order: np.ndarray, path: Path,
                    where: str) -> list[np.ndarray]:
    """Each criterion's items as a boolean array in ``order`` (item ids ascending); criteria with
    the same ``where`` share one array, computed once."""
    import json

    import numpy as np

    from judgekit.analysis.criteria.spec import criterion_mask

    seen: dict[str, np.ndarray] = {}
    matched: dict[str, pd.Series] = {}  # (each column and value matched once)
    out = []
    for c in mine:
        key = json.dumps(c.where, sort_keys=True, default=str)
        if key not in seen:
            mask = _guard(where, lambda c=c: criterion_mask(c, items, source=str(path), seen=matched))
            seen[key] = np.asarray(mask, dtype=bool)[order]
        out.append(seen[key])
    return out


def _criteria_results(store: Any, policy: Any, policy_path: str | Path, rubric: Rubric,
                      ref: pd.DataFrame, items: pd.DataFrame, where: str,
                      per_unit: bool = False, memo: CriteriaMemo | None = None) -> dict[str, list[FigurePair]]:
    import numpy as np
    import pandas as pd

    from judgekit.analysis import fidelity as af
    from judgekit.analysis.frames import label_shares
    from judgekit.analysis.options import Resampling

    spec: AnalysisFidelity = policy.checks.analysis_fidelity
    path, mine = _gated_criteria(policy, policy_path, rubric, where, memo)
    ids, clusters, unit = af.criteria_units(items, prompt_col=spec.prompt_column, turn_col=spec.turn_column)
    # the items in ascending id order (the order the figures sum in), each criterion's items and
    # hit shares as arrays over them once (the same for every judge): a criterion then costs a
    # boolean selection, and criteria with the same items share one bootstrap
    pos = pd.Series(np.arange(len(items)), index=items["item_id"].astype(str).to_numpy())
    order = pos.reindex(ids).to_numpy()
    masks = _criteria_masks(mine, items, order, path, where)
    columns = {code: k for k, code in enumerate(rubric.codes)}
    picks = [tuple(columns[x] for x in dict.fromkeys(rubric.normalise(lab) or lab for lab in c.labels))
             for c in mine]
    ref_rated, ref_arr = _on_items(label_shares(ref, rubric.codes).set_index("item_id"), ids, rubric.codes)
    ref_hits = {pick: np.nansum(ref_arr[:, list(pick)], axis=1) for pick in set(picks)}
    out: dict[str, list[FigurePair]] = {}
    for judge in policy.judges:
        js = label_shares(store.ratings(rubric=rubric, rater_ids=[judge]), rubric.codes).set_index("item_id")
        rated, arr = _on_items(js, ids, rubric.codes)
        hits = {pick: np.nansum(arr[:, list(pick)], axis=1) for pick in set(picks)}
        both = rated & ref_rated
        rows = [np.flatnonzero(mask & both) for mask in masks]
        out[judge] = af.criteria_hit_pairs(
            [af.CriterionHits(c.name, r, hits[pick][r], ref_hits[pick][r]) for c, r, pick in zip(mine, rows, picks,
                                                                                                  strict=True)],
            clusters, unit, Resampling(policy.n_resamples, policy.seed), per_unit=per_unit, level=spec.level)
    return out


def _fidelity_check(spec: AnalysisFidelity, judge: str, p: FigurePair, *, seed: int = 0) -> Check:
    """The gate check of one figure pair (module doc), with its budget when it is open."""
    from judgekit.analysis.fidelity import describe, describe_level  # (pandas: only with the check)

    fig = None if p.diff is None else finite(abs(p.diff))
    raw = None if p.low is None or p.high is None else abs_interval(p.low, p.high)
    ci = None if raw is None else _outward(raw)
    margin = spec.margin(p.figure)
    rule = (f"|difference| must stay within {margin:g} over its whole {describe_level(p.level)} CI (two one-sided "
            f"tests at {spec.alpha:g})" if p.undefined is None else "inconclusive until the labelled items define it")
    what = describe(p)
    if p.diff is not None and p.judge is not None and p.reference is not None:  # (never a -0.000)
        head = (f"{p.analysis} {p.name}: judge {num(p.judge)}, reference {num(p.reference)}, difference "
                f"{signed(p.diff)}")
        what = f"{head} on {p.n} {p.unit}"
        if raw is not None and raw[0] == raw[1]:  # decided on the raw interval, not on its rounded ends
            # no spread: every resample gives the same difference — a zero-width interval is no interval
            ci, what = None, (f"{what}, no spread (the same difference in every bootstrap resample, so no "
                              "interval)")
            rule = f"the point decides: |difference| must stay within {margin:g}"
        elif p.low is not None and p.high is not None:
            lo_text, hi_text = signed_pair(p.low, p.high)
            what = f"{head} [{describe_level(p.level)} CI {lo_text}, {hi_text}] on {p.n} {p.unit}"
    subject = Subject(analysis=p.analysis, figure=p.figure, cell=p.name,
                      **{k: str(v) for k, v in p.key.items() if k in ("model", "turn", "tier", "criterion")})
    ch = new_check("analysis_fidelity", judge, fig, margin, p.n, f"{what}; {rule}",
                   interval=interval_of(ci, "bootstrap", p.level), subject=subject, unit=p.unit,
                   min_n=spec.min_units, undefined=p.undefined, floor=f"{p.unit} is below min_units")
    return ch.with_budget(_budget(ch, p, spec, seed)) if ch.state == "inconclusive" else ch


def _outward(iv: tuple[float, float]) -> list[float | None]:
    """An interval's ends as the verdict records them (6 places), rounded outward: an interval
    with any spread keeps some (never two equal ends), and it never narrows."""
    import math

    lo, hi = iv
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == hi:
        return [finite(lo), finite(hi)]
    return [finite(math.floor(lo * 1e6) / 1e6), finite(math.ceil(hi * 1e6) / 1e6)]


def fidelity_checks(spec: AnalysisFidelity, judge: str, pairs: list[FigurePair], *, seed: int = 0) -> list[Check]:
    """The gate checks of one judge's figure pairs (module doc)."""
    return [_fidelity_check(spec, judge, p, seed=seed) for p in pairs]


def _budget(ch: Check, p: FigurePair, spec: AnalysisFidelity, seed: int) -> Budget:
    """About how many more resampling units (conversations, prompts) rated by humans would
    likely decide the check, and about how many items that is."""
    per = float(p.extra.get("items_per_unit") or 1.0)
    where = ", ".join(f"{k} {v}" for k, v in p.key.items() if k in ("model", "tier", "criterion"))
    whole = (" rated whole by humans (every turn; `judgekit sample --by-conversation` draws them)"
             if p.unit == "conversations" else " rated by humans")
    if p.undefined is not None and p.n >= spec.min_units:
        return Budget(None, f"{ch.name}: undefined ({p.undefined}); more labels of the same kind are unlikely to "
                            "define it.")
    total = p.extra.get("units_total")
    b = label_budget(replace(ch, undefined=None), seed=seed,
                     available=None if total is None else max(int(total) - p.n, 0))
    if b.items is None:
        return Budget(None, b.sentence)
    units = int(b.items)
    items = int(math.ceil(units * per))
    small = f" (n={p.n} {p.unit} is below min_units {spec.min_units})" if p.n < spec.min_units else ""
    return Budget(items, (
        f"{ch.name}: about {units:,} more {p.unit}{f' of {where}' if where else ''}{whole}, about {items:,} "
        f"items, would likely decide it{small} (CI half-width ∝ 1/√n, confirmed by one simulation)."), {}, units, p.unit)


def fidelity_lines(judge: str, checks: list[Check]) -> list[str]:
    """The fidelity checks of a judge, one line each (every state: the figures are the point, not
    only the failures)."""
    rows = [c for c in checks if c.kind == "analysis_fidelity"]
    if not rows:
        return []
    mark = {"pass": "ok  ", "fail": "FAIL", "inconclusive": "?   "}
    return [f"             fidelity of {judge} (judge vs reference on the human-rated items):"] + [
        f"               {mark[c.state]} {c.detail}" for c in rows]
