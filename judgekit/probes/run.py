"""Running the probes over a store: one Holm family per probe and judge over its slices
(:func:`judgekit.probes.bands.decide`), the checks, and the gate's probe checks.

:func:`run_probes` is what ``judgekit probe`` runs; :func:`gate_checks` what ``judgekit gate``
adds for a policy's ``max_covariate_effect``, ``max_self_preference``, ``min_stability`` and
``max_flip_rate``. Check names: ``max_covariate_effect[<column>]`` (with a target
``[<column>:<target>]``, a slice ``[<column>|<by>=<key>]``), ``max_self_preference``, ``min_stability`` (``[<by>=<key>]``),
``max_flip_rate[<variant>]``, ``max_label_drift`` (``[<by>=<key>]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.agreement.rating_codes import RatingCodes
from judgekit.errors import JudgekitError, excerpt
from judgekit.probes import inputs
from judgekit.probes.bands import decide
from judgekit.probes.covariate import covariate_effect, self_preference
from judgekit.probes.marginal import label_drift
from judgekit.probes.perturb import flip_figures, variant_rubric
from judgekit.probes.probefile import Binning, Families, ProbeFile
from judgekit.probes.stability import stability
from judgekit.rubric.model import Rubric
from judgekit.stats.intervals import Z95
from judgekit.store.variants import SEP, variant_rater
from judgekit.verdict.check import combine_states


class Context:
    """What every probe of one run reads: rubric, reference and judge labels, items, slices.

    The labels come from the store's items x raters code matrix (``codes``, read here when not
    given: :func:`judgekit.probes.inputs.read_matrix`), the one representation the agreement
    report and the gate compute their figures from."""

    def __init__(self, store: Any, rubric: Rubric, judges: Sequence[str], reference: str | None,
                 by: Sequence[str], where: str, n_resamples: int = 1000, seed: int = 0,
                 codes: RatingCodes | None = None) -> None:
        self.store, self.rubric, self.where = store, rubric, where
        self.codes = inputs.read_matrix(store, rubric) if codes is None else codes
        self.ref, self.reference = inputs.reference_labels(store, self.codes, rubric, reference, where)
        self.labels = inputs.judge_labels(store, self.codes, rubric, judges, where)
        self.items = inputs.item_table(store)
        self.slices = inputs.slices(self.items, by, where)
        self.n_resamples, self.seed = n_resamples, seed

    def paired(self, judge: str, ids: pd.Index) -> pd.DataFrame:
        """Items of ``ids`` with both a reference and a judge label: columns ref, judge."""
        frame = pd.DataFrame({"ref": self.ref, "judge": self.labels[judge]}).dropna()
        return frame[frame.index.isin(ids)]


def _name(base: str, inner: str | None, by: str | None, key: str | None) -> str:
    parts = [p for p in (inner, inputs.slice_suffix(by, key) or None) if p]
    return base if not parts else f"{base}[{'|'.join(parts)}]"


def _where_slice(by: str | None, key: str | None) -> str:
    return "all items" if by is None else f"slice {by}={key}"


# ----------------------------------------------------------------------------- covariate
def covariate_rows(ctx: Context, judge: str, spec: Binning, margin: float, min_n: int,
                   key_path: str, per_slice: bool = True) -> list[dict[str, Any]]:
    """The covariate probe of one judge over the slices (one Holm family)."""
    col = spec.column
    if col not in ctx.items.columns or col in ("prompt", "messages", "response", "content_hash"):
        raise JudgekitError(f"{ctx.where}: {key_path}.column {excerpt(col)} is not an item metadata column "
                            f"(available: {', '.join(inputs.metadata_columns(ctx.items))}); fix {key_path}.column.")
    if spec.target is not None and spec.target not in ctx.rubric.codes:
        raise JudgekitError(f"{ctx.where}: {key_path}.target {excerpt(spec.target)} is not a label of "
                            f"{ctx.rubric.id} (labels: {', '.join(ctx.rubric.codes)}); fix {key_path}.target.")
    values = ctx.items[col]
    if values.notna().sum() == 0:
        raise JudgekitError(f"{ctx.where}: {key_path}.column {col} has no value on any item (an item table "
                            "without response text has no response_length; add a length column); "
                            f"fix {key_path}.column.")
    split = spec.split
    if spec.high is not None:
        present = {str(v) for v in values.dropna()}
        missing = [h for h in spec.high if str(h) not in present]
        if missing:
            shown = ", ".join(sorted(present)[:10]) + (" ..." if len(present) > 10 else "")
            raise JudgekitError(f"{ctx.where}: {key_path}.high names {excerpt(str(missing[0]))}, which is not a "
                                f"value of {col} (its values: {excerpt(shown, 200, quote=False)}); fix {key_path}.high.")
        if len(set(map(str, spec.high))) >= len(present):
            raise JudgekitError(f"{ctx.where}: {key_path}.high lists every value of {col}, so there is no low "
                                f"bin to compare with; fix {key_path}.high.")
    if spec.high is None:
        bad = [v for v in values.dropna() if isinstance(v, bool) or not isinstance(v, int | float | np.number)]
        if bad:
            raise JudgekitError(f"{ctx.where}: {key_path}.column {col} is not numeric (value {excerpt(str(bad[0]))}); "
                                f"give {key_path}.high, the levels that form the high bin.")
        used = ctx.paired(judge, ctx.items.index).index
        if split is None:
            split = float(np.median(values.reindex(used).dropna().astype(float))) if len(used) else 0.0
    rows = []
    for by, key, ids in (ctx.slices if per_slice else ctx.slices[:1]):
        pair = ctx.paired(judge, ids)
        pair = pair[values.reindex(pair.index).notna().to_numpy()]
        res = covariate_effect(pair["ref"].tolist(), pair["judge"].tolist(), values.reindex(pair.index).tolist(),
                               target=spec.target, split=split, high_levels=spec.high)
        bins = (f"{col} > {res['split']:g} vs <= {res['split']:g}" if res["split"] is not None
                else f"{col} in {spec.high} vs not")
        what = res["outcome"]
        detail = (f"{_where_slice(by, key)}: rate of '{what}', {bins} ({res['n_high']} vs {res['n_low']} items), "
                  f"stratified by the reference label" + (f"; {res['dropped']} items in strata missing a bin left out"
                                                          if res["dropped"] else ""))
        inner = col if spec.target is None else f"{col}:{spec.target}"
        rows.append({"probe": "covariate", "name": _name("max_covariate_effect", inner, by, key), "by": by,
                     "key": key, "n": res["n"], "estimate": res["effect"], "se": res["se"],
                     "detail": detail if res["undefined"] is None else f"{_where_slice(by, key)}: {res['undefined']}",
                     "extra": {"column": col, "target": spec.target, "split": res["split"], "strata": res["strata"],
                               "method": res["method"]}})
    return decide(rows, mode="abs", threshold=margin, min_n=min_n)


# ----------------------------------------------------------------------------- self-preference
def self_preference_rows(ctx: Context, judge: str, fam: Families, margin: float, min_n: int,
                         key_path: str) -> list[dict[str, Any]]:
    """The self-preference probe of one judge (overall only: the family is the slice)."""
    if fam.column not in ctx.items.columns:
        raise JudgekitError(f"{ctx.where}: {key_path}.column {excerpt(fam.column)} is not an item metadata "
                            f"column (available: {', '.join(inputs.metadata_columns(ctx.items))}).")
    if judge not in fam.judges:
        return []
    pair = ctx.paired(judge, ctx.items.index)
    models = ctx.items[fam.column].reindex(pair.index)
    unmapped = sorted({str(m) for m in models if str(m) not in fam.models})
    if unmapped:
        raise JudgekitError(f"{ctx.where}: {key_path}.models has no family for {fam.column} "
                            f"{excerpt(unmapped[0])}; add it to {key_path}.models.")
    own = models.map(lambda m: fam.models[str(m)] == fam.judges[judge]).to_numpy(dtype=bool)
    res = self_preference(pair["ref"].tolist(), pair["judge"].tolist(), own, values=ctx.rubric.values)
    ag = res["agreement"]
    detail = (f"judge family {fam.judges[judge]}: signed bias on the rubric's values, own family ({res['n_own']} "
              f"items) − other families ({res['n_other']}), stratified by the reference label; agreement "
              + ", ".join(f"{k} {v['value']:.3f}" for k, v in ag.items() if v["value"] is not None))
    row = {"probe": "self_preference", "name": "max_self_preference", "by": None, "key": None, "n": res["n"],
           "estimate": res["effect"], "se": res["se"],
           "detail": detail if res["undefined"] is None else f"self-preference: {res['undefined']}",
           "extra": {"family": fam.judges[judge], "agreement": ag, "error_diff": res["error_diff"],
                     "n_own": res["n_own"], "n_other": res["n_other"], "strata": res["strata"]}}
    return decide([row], mode="abs", threshold=margin, min_n=min_n)


# ----------------------------------------------------------------------------- stability
def stability_rows(ctx: Context, judge: str, minimum: float, min_n: int, per_slice: bool = True) -> list[dict[str, Any]]:
    """The stability probe of one judge over the slices (its ok ratings with trials)."""
    r = ctx.store.ratings(rubric=ctx.rubric, rater_ids=[judge])
    r = r[r["status"] == "ok"].assign(item_id=lambda d: d["item_id"].astype(str))
    numeric = ctx.rubric.level in ("ordinal", "interval")
    values = [ctx.rubric.values[c] for c in ctx.rubric.codes] if numeric else None
    rows = []
    for by, key, ids in (ctx.slices if per_slice else ctx.slices[:1]):
        res = stability(r[r["item_id"].isin(ids)], codes=ctx.rubric.codes, values=values,
                        n_resamples=ctx.n_resamples, seed=ctx.seed)
        flip = ("" if res["flip_share"] is None else
                f"; {len(res['flipped'])} of {res['n']} items change label across trials "
                f"({100 * res['flip_share']:.1f}%, 95% CI {100 * res['flip_low']:.1f}–{100 * res['flip_high']:.1f}%)")
        detail = (f"{_where_slice(by, key)}: Krippendorff's α ({res['level']}) over up to {res['trials']} trials"
                  f"{flip}" if res["undefined"] is None else f"{_where_slice(by, key)}: {res['undefined']}{flip}")
        rows.append({"probe": "stability", "name": _name("min_stability", None, by, key), "by": by, "key": key,
                     "n": res["n"], "estimate": res["alpha"], "se": res["se"], "detail": detail, "upper": 1.0,
                     "extra": {"flip_share": res["flip_share"], "flip_low": res["flip_low"],
                               "flip_high": res["flip_high"], "flipped": res["flipped"],
                               "trials": res["trials"]}})
    return decide(rows, mode="min", threshold=minimum, min_n=min_n)


# ----------------------------------------------------------------------------- drift
def _drift_rows(ctx: Context, judge: str, margin: float, min_n: int) -> list[dict[str, Any]]:
    """Label-prior drift of one judge over the slices: Stuart–Maxwell and Bowker, and the largest
    share difference (normal interval from its bootstrap spread) against the null band."""
    from judgekit.probes.bands import holm_adjusted

    index = {c: i for i, c in enumerate(ctx.rubric.codes)}
    rows = []
    for by, key, ids in ctx.slices:
        pair = ctx.paired(judge, ids)
        res = label_drift(pair["ref"].map(index).to_numpy(), pair["judge"].map(index).to_numpy(),
                          codes=ctx.rubric.codes, values=[ctx.rubric.values[c] for c in ctx.rubric.codes],
                          n_resamples=ctx.n_resamples, seed=ctx.seed)
        top = res["max_abs"]
        se = None if top["low"] is None or top["high"] is None else (top["high"] - top["low"]) / (2 * Z95)
        sm, bw = res["stuart_maxwell"], res["bowker"]
        detail = (f"{_where_slice(by, key)}: largest difference of a label's share judge − reference "
                  f"({top['code']}); Stuart–Maxwell χ²={_g(sm['statistic'])} (df {sm['df']}, p {_p(sm['p'])}), "
                  f"Bowker χ²={_g(bw['statistic'])} (df {bw['df']}, p {_p(bw['p'])})")
        rows.append({"probe": "drift", "name": _name("max_label_drift", None, by, key), "by": by, "key": key,
                     "n": res["n"], "estimate": top["signed"], "se": se,
                     "detail": detail if top["undefined"] is None else f"{_where_slice(by, key)}: {top['undefined']}",
                     "extra": {"table": res["table"], "stuart_maxwell": sm, "bowker": bw,
                               "share_diff": res["share_diff"], "code": top["code"]}})
    for r, p in zip(rows, holm_adjusted([r["extra"]["stuart_maxwell"]["p"] for r in rows]), strict=True):
        r["extra"]["stuart_maxwell"]["p_holm"] = p
    return decide(rows, mode="abs", threshold=margin, min_n=min_n)


def _p(p: float | None) -> str:
    from judgekit.probes.bands import fmt_p

    out = fmt_p(p)
    return out if out.startswith("<") or out == "n/a" else f"= {out}"


def _g(x: Any) -> str:
    return "n/a" if x is None else f"{x:.3g}"


# ----------------------------------------------------------------------------- flips
def flip_rows(ctx: Context, judge: str, variants: Sequence[str], maximum: float, min_n: int) -> list[dict[str, Any]]:
    """Flip rate of one judge under each perturbation (ratings of ``<judge>~<variant>``), one
    Holm family over the variants; with the change in agreement with the reference."""
    rows = []
    for variant in variants:
        rid = variant_rater(judge, variant)
        rub = variant_rubric(ctx.rubric) if variant == "label_order" else ctx.rubric
        got = inputs.labels_of(inputs.rater_matrix(ctx.store, rub, rid), rid, rub.codes)
        if variant == "padding":
            got.index = [str(i).removesuffix(f"{SEP}padding") for i in got.index]
        res = flip_figures(ctx.labels[judge], got, ctx.ref)
        ch = res["agreement_change"]
        if res["n"] == 0:
            detail = (f"{variant}: no ratings of {rid} on the judge's items; run `judgekit probe` with a perturb "
                      "section to ask the judge again")
        else:
            detail = (f"{variant}: {res['k']} of {res['n']} items change label against the unperturbed rating"
                      + ("" if ch["value"] is None else
                         f"; agreement with the reference {ch['original']:.3f} → {ch['variant']:.3f} "
                         f"(change {ch['value']:+.3f}, 95% CI {ch['low']:+.3f} to {ch['high']:+.3f}, n={ch['n']})"))
        rows.append({"probe": "flip", "name": f"max_flip_rate[{variant}]", "by": None, "key": None, "n": res["n"],
                     "k": res["k"], "estimate": res["k"] / res["n"] if res["n"] else None, "detail": detail,
                     "extra": {"variant": variant, "rater": rid, "flipped": res["flipped"], "agreement_change": ch}})
    return decide(rows, mode="rate", threshold=maximum, min_n=min_n)


# ----------------------------------------------------------------------------- entry points
def run_probes(store: Any, probe: ProbeFile, source: str) -> dict[str, Any]:
    """Every probe of a probe file over ``store`` (perturbed ratings must already be stored:
    :func:`judgekit.probes.perturb.run_variants`). Returns the probe section's data."""
    from judgekit.rubric.model import rubric_named_in

    where = f"Probe file {source}"
    rubric = rubric_named_in(probe.rubric, where)
    ctx = Context(store, rubric, probe.judges, probe.reference, probe.by, where, probe.n_resamples, probe.seed)
    judges: list[dict[str, Any]] = []
    notes: list[str] = []
    stable = [] if probe.stability is None else (probe.stability.judges or list(probe.judges))
    for judge in stable:
        if not has_trials(ctx, judge):
            raise JudgekitError(f"{where}: stability needs trials, and {judge} has no item with two ok trials "
                                f"under {rubric.id}; rate it with trials: 2 or more in its panel, or name the "
                                "judges that have trials in stability.judges.")
    if probe.self_preference is not None and probe.families is not None:
        check_families(ctx, probe.families, probe.judges, "families")
        notes += [f"self-preference: {j} has no family in families.judges; not probed"
                  for j in probe.judges if j not in probe.families.judges]
    for judge in probe.judges:
        rows: list[dict[str, Any]] = []
        for i, cov in enumerate(probe.covariates):
            rows += covariate_rows(ctx, judge, cov, cov.margin, probe.min_items, f"covariates[{i}]")
        if probe.self_preference is not None and probe.families is not None:
            rows += self_preference_rows(ctx, judge, probe.families, probe.self_preference.margin,
                                         probe.min_items, "families")
        if probe.stability is not None and judge in stable:
            rows += stability_rows(ctx, judge, probe.stability.min_alpha, probe.min_items)
        if probe.drift is not None:
            rows += _drift_rows(ctx, judge, probe.drift.margin, probe.min_items)
        if probe.perturb is not None and judge in (probe.perturb.judges or probe.judges):
            rows += flip_rows(ctx, judge, probe.perturb.variants, probe.perturb.max_flip_rate, probe.min_items)
        judges.append({"judge": judge, "state": combine_states([r["state"] for r in rows]), "probes": rows})
    return {"rubric": rubric.id, "rubric_hash": rubric.hash, "reference": ctx.reference, "by": list(probe.by),
            "min_items": probe.min_items, "judges": judges, "notes": notes,
            "state": combine_states([j["state"] for j in judges])}


def check_families(ctx: Context, fam: Families, judges: Sequence[str], key_path: str) -> None:
    """A family mapping that would do nothing is refused: a judge named in ``fam.judges`` that is
    neither probed nor a judge in the store (a typo), or no probed judge with a family."""
    known = set(judges) | set(ctx.store.raters(rubric=ctx.rubric).query("rater_kind == 'judge'")["rater_id"])
    for j in fam.judges:
        if j not in known:
            raise JudgekitError(f"{ctx.where}: {key_path}.judges names {excerpt(j)}, which is not a judge probed "
                                f"here or in the store (judges: {', '.join(judges)}); fix the name.")
    if not any(j in fam.judges for j in judges):
        raise JudgekitError(f"{ctx.where}: {key_path}.judges gives no family to any judge probed here "
                            f"({', '.join(judges)}), so self-preference would test nothing; add their families.")


def has_trials(ctx: Context, judge: str) -> bool:
    """Whether ``judge`` rated some item twice or more (ok trials): what ``min_stability`` needs."""
    r = ctx.store.ratings(rubric=ctx.rubric, rater_ids=[judge])
    ok = r[r["status"] == "ok"]
    return bool((ok.groupby("item_id").size() >= 2).any())
