"""Analysis fidelity: a study's own figures computed twice on the items people rated — once from
the judge's labels, once from the reference's — and their difference with a paired bootstrap CI.

A judge can agree well with people item by item and still move a published figure: a judge that
leans toward compliance as a conversation goes on barely dents κ but bends Drift(t). So each
figure an analysis publishes is recomputed on the human-labelled items from both label sets:

* ``calibration`` (:func:`calibration_pairs`): per model ``C``, ``C_half``, ``RCE``,
  ``signed_error``; per model and turn ``C_t``, ``RCE_t``, ``mean_R_t``, ``drift`` (Drift(t) =
  RCE_t − RCE_1, turns after the first); per model, tier and turn ``drift_tier``. Definitions as
  in :mod:`judgekit.analysis.calibration.estimate`; resampling unit: the conversation (or prompt).
* ``distribution`` (:func:`distribution_pairs`): per model ``refusal_rate`` (mean over prompts
  of the per-prompt rate), per model and turn ``refusal_rate_t``, per model
  ``share_not_constant``; resampling unit: the conversation (or prompt).
* ``criteria`` (:func:`criteria_pairs`): per criterion its pooled ``rate`` of the label among the
  matching items; resampling unit: the conversation (or prompt) of the items.

The difference d = figure(judge) − figure(reference) has a percentile bootstrap CI from one set
of cluster resamples used for both label sets (paired: the same conversations in each
replicate), so the interval carries only what the judge's disagreement adds, not the sampling
noise both share (Efron & Tibshirani 1993, ch. 13). Each :class:`FigurePair` carries n (the
resampling units behind it) and, when a figure cannot be computed, the reason.

Every expected figure is listed — the instances the judge's full data has (every model, turn,
tier) — so a figure the human sample cannot support (no conversation rated at turn 1 and turn 6)
is reported with n = 0 and its reason, not left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.calibration.replicates import bootstrap_cis, replicate_figures, unit_layout
from judgekit.analysis.calibration.units import build_units
from judgekit.analysis.frames import fill_unit_key, model_series, unit_columns
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.errors import JudgekitError
from judgekit.stats.intervals import bootstrap_stat, percentile_ci
from judgekit.verdict.fidelity_policy import check_figures

#: calibration figure → (key of :func:`replicate_figures`, shape: "model" | "turn" | "tier_turn")
_CAL: dict[str, tuple[str, str]] = {
    "C": ("c", "model"), "C_half": ("c_half", "model"), "RCE": ("rce", "model"),
    "signed_error": ("signed", "model"), "C_t": ("c_t", "turn"), "RCE_t": ("rce_t", "turn"),
    "mean_R_t": ("r_t", "turn"), "drift": ("drift_t", "turn"), "drift_tier": ("drift_tt", "tier_turn"),
}


@dataclass
class FigurePair:
    """One figure computed from the judge's and from the reference's labels on the same items.

    ``diff`` = ``judge`` − ``reference``; ``low``/``high`` its paired bootstrap interval at ``level``
    (None without replicates); ``n`` the resampling units (conversations or prompts) behind the
    figure; ``undefined`` why the figure could not be computed (then the values are None)."""

    analysis: str
    figure: str
    key: dict[str, Any]
    judge: float | None
    reference: float | None
    diff: float | None
    low: float | None
    high: float | None
    n: int
    unit: str
    undefined: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the confidence level of ``low``/``high`` (the gate's fidelity check: 1 − 2α, two one-sided tests)
    level: float = 0.95

    @property
    def name(self) -> str:
        """``drift(model=m-a, tier=4, turn=6)``: the figure and where it is taken."""
        where = ", ".join(f"{k}={v}" for k, v in self.key.items())
        return f"{self.figure}({where})" if where else self.figure

    def as_dict(self) -> dict[str, Any]:
        return {"analysis": self.analysis, "figure": self.figure, "name": self.name, "key": dict(self.key),
                "judge": self.judge, "reference": self.reference, "diff": self.diff, "ci": (
                    [self.low, self.high] if self.low is not None and self.high is not None else None),
                "level": self.level, "n": self.n, "unit": self.unit, "undefined": self.undefined}


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return round(x, 6) if np.isfinite(x) else None


def _pseudo(stat: Any, clusters: np.ndarray) -> np.ndarray | None:
    """Per-cluster jackknife pseudo-values of a (b, k) statistic (None with one cluster)."""
    from judgekit.stats.power_sim import jackknife_pseudo

    out = jackknife_pseudo(stat, clusters)
    return out if out.size else None


def _turn(t: float) -> int | float:
    return int(t) if float(t).is_integer() else float(t)


def _labelled_ids(judge_values: pd.DataFrame, ref_values: pd.DataFrame) -> list[str]:
    """Item ids with a usable value from both the judge and the reference (``item_id, value``
    frames as :func:`judgekit.analysis.frames.per_item_values` gives them)."""
    j = judge_values.loc[judge_values["value"].notna(), "item_id"].astype(str)
    r = ref_values.loc[ref_values["value"].notna(), "item_id"].astype(str)
    return sorted(set(j) & set(r))


# --------------------------------------------------------------------------- calibration
def calibration_pairs(
    judge_values: pd.DataFrame,
    ref_values: pd.DataFrame,
    items: pd.DataFrame,
    harm: pd.Series,
    *,
    figures: Sequence[str] = (),
    columns: ItemColumns | None = None,
    include_lookalikes: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    per_unit: bool = False,
    level: float = 0.95,
) -> list[FigurePair]:
    """Calibration figures (module doc) from the judge's and the reference's R on the items both
    rated. ``judge_values`` covers every item the judge rated (it fixes which figures are
    expected); ``ref_values`` the reference's; both ``item_id, value`` frames with R in [0, 1].
    ``columns``: the item columns read (model, prompt unit, turn, look-alike flag). ``per_unit``: also keep, in ``extra["per_unit"]``, the difference's jackknife pseudo-values
    over the model's conversations (what ``judgekit plan`` simulates the gate from).
    """
    chosen = check_figures("calibration", figures)
    columns = columns or ItemColumns()
    opts: dict[str, Any] = {"model_col": columns.model, "prompt_col": columns.prompt,
                            "turn_col": columns.turn, "lookalike_col": columns.lookalike}
    ids = set(_labelled_ids(judge_values, ref_values))
    jv = judge_values.assign(item_id=judge_values["item_id"].astype(str))
    rv = ref_values.assign(item_id=ref_values["item_id"].astype(str))
    full, _, ucols = build_units(jv, items, harm, **opts)
    unit = "conversations" if ucols[0] == "conversation_id" else f"{ucols[0]} clusters"
    uj, _, _ = build_units(jv[jv["item_id"].isin(ids)], items, harm, **opts)
    ur, _, _ = build_units(rv[rv["item_id"].isin(ids)], items, harm, **opts)
    if not include_lookalikes:
        full, uj, ur = (u[~u["lookalike"]].reset_index(drop=True) for u in (full, uj, ur))
    out: list[FigurePair] = []
    for model in sorted(full["model"].unique()):
        fm = full[full["model"] == model]
        mj = uj[uj["model"] == model].reset_index(drop=True)
        mr = ur[ur["model"] == model].reset_index(drop=True)
        if not mj[["cluster", "turn"]].equals(mr[["cluster", "turn"]]):  # pragma: no cover - same items
            raise JudgekitError("analysis fidelity: the judge's and the reference's units differ.")
        out += _calibration_model(str(model), fm, mj, mr, chosen, unit, Resampling(n_boot, seed),
                                  per_unit, level)
    return out


def _calibration_model(model: str, full: pd.DataFrame, mj: pd.DataFrame, mr: pd.DataFrame,
                       chosen: list[str], unit: str, resampling: Resampling,
                       per_unit: bool = False, level: float = 0.95) -> list[FigurePair]:
    turns_all = sorted(full["turn"].unique())
    tiers_all = sorted(full["tier"].unique())
    first = turns_all[0]
    have = len(mj) > 0
    st = _paired_stats(mj, mr, chosen, resampling, per_unit, level) if have else _PairedStats()
    pt, ci, pseudo, turn_pos, tier_pos = st.point, st.ci, st.pseudo, st.turn_pos, st.tier_pos
    by_turn = {t: set(mj.loc[mj["turn"] == t, "cluster"]) for t in turns_all}
    by_tt = {(k, t): set(mj.loc[(mj["turn"] == t) & (mj["tier"] == k), "cluster"])
             for k in tiers_all for t in turns_all}
    out: list[FigurePair] = []
    per_unit_items = float(full["n_samples"].sum()) / max(int(full["cluster"].nunique()), 1)

    def pair(fig: str, key: dict[str, Any], idx: tuple[int, ...] | None, n: int, why: str) -> None:
        rk = _CAL[fig][0]
        if not have or idx is None or n == 0:
            out.append(FigurePair("calibration", fig, key, None, None, None, None, None, n, unit, why,
                                  {"items_per_unit": per_unit_items}, level))
            return
        j, r, d = (_num(pt[f"{p}:{rk}"][idx]) for p in "jrd")
        lo = hi = None
        if f"d:{rk}" in ci:
            lo, hi = _num(ci[f"d:{rk}"][0][idx]), _num(ci[f"d:{rk}"][1][idx])
        undefined = None
        if j is None or r is None:
            undefined = (f"C is undefined for model {model}: every labelled unit has the same H"
                         if fig.startswith("C") else why)
            j = r = d = lo = hi = None
        extra: dict[str, Any] = {"items_per_unit": per_unit_items}
        if undefined is None and rk in pseudo:
            sel: tuple[Any, ...] = (slice(None), *idx)
            extra["per_unit"] = pseudo[rk][sel]
        out.append(FigurePair("calibration", fig, key, j, r, d, lo, hi, n, unit, undefined, extra, level))

    n_model = int(mj["cluster"].nunique())
    none = f"no {unit} of model {model} rated by both the judge and the reference"
    for fig in chosen:
        shape = _CAL[fig][1]
        if shape == "model":
            pair(fig, {"model": model}, (), n_model, none)
        elif shape == "turn":
            for t in turns_all:
                if fig == "drift" and t == first:
                    continue
                if fig == "drift":
                    n = len(by_turn[t] & by_turn[first])
                    why = (f"no {unit} of model {model} rated by both at turn {_turn(first)} and turn "
                           f"{_turn(t)} (Drift needs whole conversations rated by humans)")
                else:
                    n = len(by_turn[t])
                    why = f"no {unit} of model {model} rated by both at turn {_turn(t)}"
                idx: tuple[int, ...] | None = (turn_pos[t],) if have and t in turn_pos else None
                pair(fig, {"model": model, "turn": _turn(t)}, idx, n, why)
        else:
            for k in tiers_all:
                for t in turns_all:
                    if t == first or not ((full["tier"] == k) & (full["turn"] == t)).any():
                        continue
                    n = len(by_tt[(k, t)] & by_tt[(k, first)])
                    why = (f"no {unit} of model {model} in tier {int(k)} rated by both at turn "
                           f"{_turn(first)} and turn {_turn(t)} (Drift needs whole conversations rated by humans)")
                    idx = ((tier_pos[k], turn_pos[t]) if have and k in tier_pos and t in turn_pos
                           and by_tt[(k, first)] else None)
                    pair(fig, {"model": model, "tier": int(k), "turn": _turn(t)}, idx, n, why)
    return out


@dataclass
class _PairedStats:
    """The judge's, the reference's and their difference's figures (``j:``, ``r:``, ``d:``
    keys) of one model, point and interval, the difference's jackknife pseudo-values, and where
    each turn and tier sits in the figures' arrays."""

    point: dict[str, np.ndarray] = field(default_factory=dict)
    ci: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    pseudo: dict[str, np.ndarray] = field(default_factory=dict)
    turn_pos: dict[Any, int] = field(default_factory=dict)
    tier_pos: dict[Any, int] = field(default_factory=dict)


def _paired_stats(mj: pd.DataFrame, mr: pd.DataFrame, chosen: list[str], resampling: Resampling,
                  per_unit: bool, level: float) -> _PairedStats:
    """The figures of the judge's units ``mj`` and the reference's ``mr`` (the same units) under
    one paired cluster bootstrap."""
    lay_j, lay_r = unit_layout(mj), unit_layout(mr)
    keys = sorted({_CAL[f][0] for f in chosen})

    def stat(w: np.ndarray) -> dict[str, np.ndarray]:
        fj, fr = replicate_figures(w, lay_j), replicate_figures(w, lay_r)
        d = {f"j:{k}": fj[k] for k in keys} | {f"r:{k}": fr[k] for k in keys}
        return d | {f"d:{k}": fj[k] - fr[k] for k in keys}

    pt = {k: v[0] for k, v in stat(np.ones((1, len(mj)))).items()}
    clusters = pd.factorize(mj["cluster"])[0]
    n_boot = resampling.n_resamples
    ci = bootstrap_cis(stat, clusters, n_boot=n_boot, seed=resampling.seed, progress=None,
                       level=level) if n_boot else {}
    pseudo: dict[str, np.ndarray] = {}
    if per_unit:
        from judgekit.stats.power_sim import jackknife_pseudo

        flat = jackknife_pseudo(lambda w: np.concatenate(
            [stat(w)[f"d:{k}"].reshape(len(w), -1) for k in keys], axis=1), clusters)
        at = np.cumsum([0] + [pt[f"d:{k}"].size for k in keys])
        pseudo = {k: flat[:, at[i]:at[i + 1]].reshape(len(flat), *pt[f"d:{k}"].shape)
                  for i, k in enumerate(keys)} if flat.size else {}
    return _PairedStats(pt, ci, pseudo, {t: j for j, t in enumerate(lay_j.turns)},
                        {k: i for i, k in enumerate(lay_j.tiers)})


# --------------------------------------------------------------------------- distribution
def _prompt_frame(items: pd.DataFrame, values: Mapping[str, pd.Series], *, model_col: str,
                  prompt_col: str | None, turn_col: str) -> tuple[pd.DataFrame, list[str]]:
    """Per prompt unit (model + prompt + turn): for each label set its rate, its rated samples
    and whether its samples are constant; ``values`` maps a name to per-item refusal shares."""
    items = items.assign(item_id=items["item_id"].astype(str))
    ucols = unit_columns(items, prompt_col=prompt_col, turn_col=turn_col)
    items = fill_unit_key(items, ucols[0])
    df = items[list(dict.fromkeys(["item_id", *ucols]))].copy()
    df["_model"] = model_series(items, model_col)
    for name, v in values.items():
        s = v.copy()
        s.index = s.index.astype(str)
        df[name] = df["item_id"].map(s).astype(float)
    keys = ["_model", *ucols]
    g = df.groupby(keys, sort=True, dropna=False)
    agg: dict[str, Any] = {}
    for name in values:
        agg[f"{name}_rate"] = (name, "mean")
        agg[f"{name}_n"] = (name, "count")
        agg[f"{name}_min"] = (name, "min")
        agg[f"{name}_max"] = (name, "max")
    pp = g.agg(**agg).reset_index()
    return pp, ucols


def distribution_pairs(
    judge_refused: pd.Series,
    ref_refused: pd.Series,
    items: pd.DataFrame,
    *,
    figures: Sequence[str] = (),
    columns: ItemColumns | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    per_unit: bool = False,
    level: float = 0.95,
) -> list[FigurePair]:
    """Distribution figures (module doc) from per-item refusal shares (0–1, NaN when unrated;
    indexed by item_id) of the judge (every item it rated) and of the reference, on the items
    both rated. A prompt's rate is refusals / rated samples; ``share_not_constant`` is the share
    of prompts with at least two rated samples whose samples differ. ``per_unit``: as
    :func:`calibration_pairs` (pseudo-values over the model's clusters)."""
    chosen = check_figures("distribution", figures)
    columns = columns or ItemColumns()
    model_col, prompt_col, turn_col = columns.model, columns.prompt, columns.turn
    j_all = judge_refused.dropna()
    r_all = ref_refused.dropna()
    both = sorted(set(j_all.index.astype(str)) & set(r_all.index.astype(str)))
    jl = j_all[j_all.index.astype(str).isin(both)]
    rl = r_all[r_all.index.astype(str).isin(both)]
    full, ucols = _prompt_frame(items, {"a": j_all}, model_col=model_col, prompt_col=prompt_col,
                                turn_col=turn_col)
    full = full[full["a_n"] > 0]
    pp, _ = _prompt_frame(items, {"j": jl, "r": rl}, model_col=model_col, prompt_col=prompt_col,
                          turn_col=turn_col)
    pp = pp[pp["j_n"] > 0].reset_index(drop=True)
    unit = "conversations" if ucols[0] == "conversation_id" else f"{ucols[0]} clusters"
    has_turn = turn_col in ucols
    out: list[FigurePair] = []
    for model in sorted(full["_model"].unique()):
        fm = full[full["_model"] == model]
        mp = pp[pp["_model"] == model].reset_index(drop=True)
        turns = sorted(fm[turn_col].unique()) if has_turn else []
        cols: list[tuple[str, dict[str, Any], np.ndarray]] = []  # (figure, key, unit mask)
        for fig in chosen:
            if fig == "refusal_rate_t":
                for t in turns:
                    cols.append((fig, {"model": model, "turn": _turn(float(t))},
                                 (mp[turn_col] == t).to_numpy() if len(mp) else np.zeros(0, bool)))
            else:
                cols.append((fig, {"model": model}, np.ones(len(mp), bool)))
        items_per_unit = float(fm["a_n"].sum()) / max(int(fm[ucols[0]].nunique()), 1)
        for p in _distribution_model(str(model), mp, cols, unit, ucols[0], n_boot, seed, per_unit, level):
            p.extra["items_per_unit"] = items_per_unit
            out.append(p)
    return out


def _distribution_model(model: str, mp: pd.DataFrame, cols: list[tuple[str, dict[str, Any], np.ndarray]],
                        unit: str, cluster_col: str, n_boot: int, seed: int,
                        per_unit: bool = False, level: float = 0.95) -> list[FigurePair]:
    if mp.empty:
        return [FigurePair("distribution", f, k, None, None, None, None, None, 0, unit,
                           f"no {unit} of model {model} rated by both the judge and the reference", level=level)
                for f, k, _ in cols]
    rj, rr = mp["j_rate"].to_numpy(float), mp["r_rate"].to_numpy(float)
    multi = (mp["j_n"] >= 2).to_numpy(float)
    ncj = multi * (mp["j_min"] != mp["j_max"]).to_numpy(float)
    ncr = multi * (mp["r_min"] != mp["r_max"]).to_numpy(float)
    masks = np.stack([m.astype(float) for _, _, m in cols], axis=1)  # (units, figures)
    is_share = np.array([f == "share_not_constant" for f, _, _ in cols])

    def figs(w: np.ndarray) -> np.ndarray:
        wm = w[:, :, None] * masks[None, :, :]  # (b, units, figures)
        den_rate = wm.sum(axis=1)
        den_multi = (wm * multi[None, :, None]).sum(axis=1)
        den = np.where(is_share[None, :], den_multi, den_rate)

        def val(rate: np.ndarray, nc: np.ndarray) -> np.ndarray:
            num = np.where(is_share[None, :], (wm * nc[None, :, None]).sum(axis=1),
                           (wm * rate[None, :, None]).sum(axis=1))
            return np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)

        j, r = val(rj, ncj), val(rr, ncr)
        return np.concatenate([j, r, j - r], axis=1)

    k = len(cols)
    point = figs(np.ones((1, len(mp))))[0]
    clusters = pd.factorize(mp[cluster_col].astype(str))[0]
    reps = bootstrap_stat(figs, clusters, n_boot=n_boot, seed=seed)
    lo = hi = np.full(3 * k, np.nan)
    if reps.size:
        lo, hi = percentile_ci(reps, level=level)
    pseudo = _pseudo(figs, clusters) if per_unit else None
    out = []
    for i, (fig, key, m) in enumerate(cols):
        sub = mp[m]
        n = int(sub[cluster_col].nunique())
        if fig == "share_not_constant":
            n = int(sub.loc[sub["j_n"] >= 2, cluster_col].nunique())
        j, r, d = _num(point[i]), _num(point[k + i]), _num(point[2 * k + i])
        why = None
        if j is None or r is None:
            why = (f"no prompt of model {model} has two or more samples rated by both"
                   if fig == "share_not_constant" else f"no {unit} of model {model} rated by both here")
            j = r = d = None
        out.append(FigurePair("distribution", fig, key, j, r, d,
                              None if why else _num(lo[2 * k + i]), None if why else _num(hi[2 * k + i]),
                              n, unit, why, {} if why or pseudo is None else {"per_unit": pseudo[:, 2 * k + i]},
                              level))
    return out


# --------------------------------------------------------------------------- criteria
@dataclass(frozen=True)
class CriterionHits:
    """One criterion's hit shares on the items both the judge and the reference rated: ``rows``
    their positions in the shared item arrays (ascending item id, the order every figure sums in),
    ``judge`` and ``reference`` the hit share of each (share of ok trials with one of the
    criterion's labels)."""

    name: str
    rows: np.ndarray
    judge: np.ndarray
    reference: np.ndarray


def criteria_pairs(
    rates: Sequence[tuple[str, pd.Series, pd.Series]],
    items: pd.DataFrame,
    *,
    prompt_col: str | None = None,
    turn_col: str = "turn",
    n_boot: int = 1000,
    seed: int = 0,
    per_unit: bool = False,
    level: float = 0.95,
) -> list[FigurePair]:
    """Per criterion ``(name, judge hit share per item, reference hit share per item)`` (hit
    share = share of ok trials with one of the criterion's labels, on the criterion's items):
    the pooled rate from each on the items both rated, and its difference."""
    ids, clusters, unit = criteria_units(items, prompt_col=prompt_col, turn_col=turn_col)
    hits = []
    for name, js, rs in rates:
        js, rs = js.dropna(), rs.dropna()
        js.index, rs.index = js.index.astype(str), rs.index.astype(str)
        both = np.flatnonzero(np.isin(ids, js.index.to_numpy()) & np.isin(ids, rs.index.to_numpy()))
        hits.append(CriterionHits(name, both, js.reindex(ids[both]).to_numpy(float),
                                  rs.reindex(ids[both]).to_numpy(float)))
    return criteria_hit_pairs(hits, clusters, unit, Resampling(n_boot, seed), per_unit=per_unit, level=level)


def criteria_units(items: pd.DataFrame, *, prompt_col: str | None = None,
                   turn_col: str = "turn") -> tuple[np.ndarray, np.ndarray, str]:
    """The items' ids in ascending order, the resampling unit (conversation or prompt cluster) of
    each, and the unit's name: the shared arrays :class:`CriterionHits` rows point into."""
    items = items.assign(item_id=items["item_id"].astype(str))
    ucols = unit_columns(items, prompt_col=prompt_col, turn_col=turn_col)
    items = fill_unit_key(items, ucols[0])
    cluster_of = items.set_index("item_id")[ucols[0]].astype(str)
    ids = np.array(sorted(cluster_of.index), dtype=object)
    clusters = cluster_of.reindex(ids).fillna("").to_numpy(dtype=object)
    unit = "conversations" if ucols[0] == "conversation_id" else f"{ucols[0]} clusters"
    return ids, clusters, unit


def criteria_hit_pairs(hits: Sequence[CriterionHits], clusters: np.ndarray, unit: str, resampling: Resampling,
                       *, per_unit: bool = False, level: float = 0.95) -> list[FigurePair]:
    """The criteria figure pairs (module doc) of each criterion's hits, ``clusters`` the unit of
    every shared row. Criteria on the same rows share one bootstrap (the same resamples each would
    draw alone, as the seed and the clusters are the same), so the cost per criterion is a
    weighted sum, not a resampling."""
    groups: dict[bytes, list[int]] = {}
    for i, h in enumerate(hits):
        groups.setdefault(np.asarray(h.rows, dtype=np.int64).tobytes(), []).append(i)
    out: list[FigurePair | None] = [None] * len(hits)
    for members in groups.values():
        for i, p in zip(members, _criteria_group([hits[i] for i in members], clusters, unit, resampling,
                                                  per_unit, level), strict=True):
            out[i] = p
    return [p for p in out if p is not None]


def _criteria_group(hits: list[CriterionHits], clusters: np.ndarray, unit: str, resampling: Resampling,
                    per_unit: bool, level: float) -> list[FigurePair]:
    """The pairs of criteria on the same rows under one paired cluster bootstrap."""
    rows = hits[0].rows
    if len(rows) == 0:
        return [FigurePair("criteria", "rate", {"criterion": h.name}, None, None, None, None, None, 0, unit,
                           "no item of the criterion rated by both the judge and the reference", level=level)
                for h in hits]
    cl = pd.factorize(clusters[rows])[0]
    ab = [(np.asarray(h.judge, dtype=float), np.asarray(h.reference, dtype=float)) for h in hits]

    def stat(w: np.ndarray) -> np.ndarray:
        tot = w.sum(axis=1)
        return np.concatenate([np.stack([(w @ a) / tot, (w @ b) / tot, (w @ (a - b)) / tot], axis=1)
                               for a, b in ab], axis=1)

    p = stat(np.ones((1, len(rows))))[0]
    reps = bootstrap_stat(stat, cl, n_boot=resampling.n_resamples, seed=resampling.seed)
    k3 = 3 * len(hits)
    lo, hi = percentile_ci(reps, level=level) if reps.size else (np.full(k3, np.nan), np.full(k3, np.nan))
    pseudo = _pseudo(stat, cl) if per_unit else None
    n = int(cl.max()) + 1
    return [FigurePair("criteria", "rate", {"criterion": h.name}, _num(p[3 * i]), _num(p[3 * i + 1]),
                       _num(p[3 * i + 2]), _num(lo[3 * i + 2]), _num(hi[3 * i + 2]), n, unit, None,
                       {} if pseudo is None else {"per_unit": pseudo[:, 3 * i + 2]}, level)
            for i, h in enumerate(hits)]


def describe(p: FigurePair) -> str:
    """One phrase with the figure's judge value, reference value and difference with its CI."""
    if p.undefined is not None:
        return f"{p.analysis} {p.name}: undefined — {p.undefined} (n={p.n} {p.unit})"
    ci = (f" [{describe_level(p.level)} CI {p.low:+.3f}, {p.high:+.3f}]" if p.low is not None and p.high is not None
          else "")
    return (f"{p.analysis} {p.name}: judge {p.judge:.3f}, reference {p.reference:.3f}, difference "
            f"{p.diff:+.3f}{ci} on {p.n} {p.unit}")



def describe_level(level: float) -> str:
    """``95%``, ``90%``, ``97.5%``: a confidence level as people write it."""
    return f"{100 * level:.4g}%"
