"""Refusal as a distribution over samples.

One model output is one draw. When a prompt was sampled several times (items sharing a prompt
unit, see :mod:`judgekit.analysis.frames`, with a ``sample`` index), its refusal rate is a
property that can be estimated: this module reports per prompt the refusal rate with a Wilson 95%
interval, the ``refusal_form`` distribution across its samples, and — per model and per slice —
the mean refusal rate (bootstrap CI resampling prompts), the pooled rate, and the share of prompts
whose behaviour is not constant across samples.

What counts as a refusal is stated in every output:

* under the ``refusal`` rubric (or any rubric with those codes): ``full_refusal`` or
  ``partial_refusal`` (override with ``refusal_codes``);
* under any other rubric with values (``restrictiveness``): ``value >= threshold`` (0.75 by
  default: deflection or hard refusal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.columns import points as chart_points
from judgekit.analysis.correction.trials import LABEL_RULE, TRIAL_RULE, item_labels
from judgekit.analysis.distribution.emitted import emitted_pool_strings
from judgekit.analysis.distribution.exchangeability import (
    EXCHANGEABLE,
    behaviour,
    sample_group_note,
)
from judgekit.analysis.distribution.refusal import refusal_definition
from judgekit.analysis.frames import (
    check_column_names,
    check_rubric,
    check_slice_values,
    fill_unit_key,
    item_columns,
    model_series,
    one_rater,
    require_item_columns,
    unit_columns,
)
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.analysis.result import AnalysisResult, Chart, Table, rated_by
from judgekit.analysis.trust import TrustContext, TrustReport
from judgekit.analysis.trust_figures import DISTRIBUTION, guard_result
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric
from judgekit.stats.intervals import bootstrap_stat, percentile_ci, wilson_interval

_ONE_DRAW = (
    "one run measures one draw, not a property of the model: a prompt with a single sample "
    "has a refusal rate of 0 or 1 and a Wilson interval as wide as its data allows"
)
#: the columns the analysis adds to its tables besides the user's (prompt unit, slice) columns
ADDED_COLUMNS = (
    "model", "n_samples", "n_rated", "refusals", "n_unrated", "rate", "ci_low", "ci_high",
    "constant", "forms", "modal_form", "form_varies", "n_prompts", "n_clusters",
    "samples_per_prompt", "mean_rate", "pooled_rate", "always_refused", "never_refused",
    "prompts_multi_sample", "share_not_constant", "not_constant_ci_low", "not_constant_ci_high",
    "single_sample_prompts", "behaviour",
)
#: working columns of the computation
_INTERNAL = ("_model", "refused", "_x")
_WHAT = "analyze distribution"


@dataclass(frozen=True)
class FormRatings:
    """The rater's ``refusal_form`` ratings beside its refusal ratings: ``ratings`` under
    ``rubric``, and optionally ``matches``, the same ratings with what a rule judge matched
    (:func:`judgekit.judges.matches.attach_matches`), which adds the emitted refusal-pool
    strings."""

    ratings: pd.DataFrame
    rubric: Rubric
    matches: pd.DataFrame | None = None


def refusal_distribution(
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    *,
    rubric: Rubric,
    forms: FormRatings | None = None,
    columns: ItemColumns | None = None,
    threshold: float = 0.75,
    refusal_codes: Sequence[str] | None = None,
    trust: TrustContext | None = None,
    resampling: Resampling | None = None,
) -> AnalysisResult:
    """Refusal rate per prompt over its samples, and its distribution per model and slice.

    ``ratings``: one rater's long ratings under ``rubric`` (``refusal`` or ``restrictiveness``);
    ``items``: ``item_id`` plus metadata (``model``, ``prompt_id``/``conversation_id``,
    ``sample``, ``turn``, the ``columns.by`` columns: :class:`~judgekit.analysis.options.ItemColumns`).
    ``forms``: the same rater's ``refusal_form`` ratings (optional). A judge rater needs a passing
    verdict for each rubric it is used under (``trust``: :class:`~judgekit.analysis.trust.TrustContext`,
    see :func:`judgekit.analysis.trust.check_trust`); ``trust.untrusted`` forces the run and stamps
    every title UNTRUSTED.

    Tables (``result.table(key)``): ``per_prompt``, ``by_model``, ``by_<column>`` for each slice
    (``turn`` added automatically when the items have it), ``forms`` (when ``forms`` is given).
    ``resampling.n_resamples`` bootstrap replicates resample prompts for the CI of the mean rate.
    ``columns.sample_group`` (a column such as provenance or day) splits each prompt's samples
    into groups reported separately (per prompt and group, and a ``by_<sample_group>`` table),
    for samples that are not exchangeable. Every prompt's ``behaviour`` says ``not constant
    (k of n)`` when some but not all of its n rated samples are refusals, whatever n is. Trials
    collapse per sample by :data:`TRIAL_RULE` (their disagreement: ``meta["judge_trials"]``). Forms
    with ``matches`` add ``pool_strings`` (and ``pool_strings_by_<column>``), the emitted
    refusal-pool strings.
    """
    columns, trust, resampling = columns or ItemColumns(), trust or TrustContext(), resampling or Resampling()
    rater = one_rater(ratings, what=_WHAT)
    check_rubric(ratings, rubric, what=_WHAT)
    report = trust.check(ratings, rubric, figures=DISTRIBUTION.figures)
    form_shares: pd.DataFrame | None = None
    forms = forms if forms is not None and not forms.ratings.empty else None
    if forms is not None:
        report = report.merge(_check_forms(forms, rater, rubric, trust))
        form_shares = item_labels(forms.ratings, forms.rubric.codes)
    definition, indicator = refusal_definition(rubric, threshold=threshold,
                                               refusal_codes=refusal_codes)
    layout = _layout(items, columns, forms.rubric.codes if forms is not None else ())
    df, trials = _per_sample(ratings, layout, indicator, columns)
    per_prompt = _per_prompt(df, layout, forms, form_shares)
    pp = per_prompt.rename(columns={"model": "_model"})
    total = resampling.n_resamples * (pp.groupby("_model").ngroups + sum(
        pp.groupby(["_model", c], dropna=False).ngroups for c in layout.slice_cols))
    tables = _summary_tables(pp, layout, resampling, total)
    if forms is not None and form_shares is not None:
        tables += _form_tables(df, forms, form_shares, layout.slice_cols)
    tables.append(Table("per_prompt", "Refusal rate per prompt over its samples (Wilson 95%)",
                        per_prompt))
    result = AnalysisResult(
        kind="distribution",
        title=f"Refusal as a distribution — {rater} on {rubric.id}",
        meta={
            **rated_by(rater, rubric),
            "form_rubric": forms.rubric.id if forms is not None else None,
            "prompt_unit": layout.ucols,
            "slices": layout.slice_cols,
            "n_items": int(len(df)),
            "n_prompts": int(len(per_prompt)),
            "n_boot": resampling.n_resamples,
            "seed": resampling.seed,
            "trust": report.as_dict(),
            "bootstrap_replicates_total": int(total),
            "judge_trials": trials,
        },
        definitions=_definitions(definition, layout.ucols),
        notes=layout.notes + _trials_note(rater, trials) + _sample_notes(per_prompt),
        tables=tables,
        charts=_charts(pp, tables, layout.slice_cols),
    )
    return guard_result(result, report, DISTRIBUTION, untrusted=trust.untrusted)


@dataclass
class _Layout:
    """The items of a distribution, reduced to the columns it reads, and how they group."""

    items: pd.DataFrame
    #: the prompt unit's columns
    ucols: list[str]
    #: the ``--by`` columns (and the sample group), the model column left out
    by: list[str]
    #: the slices with a table each (the turn first, when the items have one)
    slice_cols: list[str]
    notes: list[str]

    @property
    def keys(self) -> list[str]:
        """The keys of a prompt (and its sample group): model, prompt unit, slices."""
        return ["_model", *self.ucols, *[c for c in self.by if c not in self.ucols]]


def _check_forms(forms: FormRatings, rater: str, rubric: Rubric, trust: TrustContext) -> TrustReport:
    """The trust report of the forms, which must be by the same rater as the refusal ratings."""
    check_rubric(forms.ratings, forms.rubric, what=_WHAT)
    form_rater = one_rater(forms.ratings, what=_WHAT)
    if form_rater != rater:
        raise JudgekitError(
            f"analyze distribution: the {forms.rubric.id} ratings are by {form_rater!r}, the "
            f"{rubric.id} ratings by {rater!r}; use the same rater for both."
        )
    return trust.check(forms.ratings, forms.rubric)


def _layout(items: pd.DataFrame, columns: ItemColumns, form_codes: Sequence[str]) -> _Layout:
    """Check the columns the options name and keep only those of ``items``."""
    items = items.copy()
    items["item_id"] = items["item_id"].astype(str)
    by = list(dict.fromkeys(columns.by))
    require_item_columns(items, by, option="--by")
    notes: list[str] = []
    model_col, group = columns.model, columns.sample_group
    if group is not None:
        require_item_columns(items, [group], option="--sample-group")
        if group not in by:
            by.append(group)
        notes.append(sample_group_note(group))
    if model_col in by:  # the tables are per model already
        by.remove(model_col)
        notes.append(f"--by {model_col} adds no slice: every table is per model already "
                     "(--model-column).")
    ucols = unit_columns(items, prompt_col=columns.prompt, turn_col=columns.turn)
    if model_col in ucols:
        raise JudgekitError(
            f"--model-column {model_col!r} is also the prompt unit ({' + '.join(ucols)}); give "
            "--prompt-column the column that names the prompt (e.g. prompt_id)."
        )
    check_slice_values(items, {"--prompt-column": ucols, "--by": by})
    check_column_names({"--prompt-column": ucols, "--by": by},
                       (*ADDED_COLUMNS, *form_codes, *_INTERNAL), what=_WHAT)
    check_column_names({"--model-column": [model_col]}, _INTERNAL, what=_WHAT)
    items = fill_unit_key(items, ucols[0])
    items = item_columns(items, [model_col, *ucols, *by, columns.sample, columns.turn])
    slice_cols = [c for c in by if c not in ucols]
    if columns.turn in items.columns and columns.turn not in slice_cols:
        slice_cols = [columns.turn, *slice_cols]
    return _Layout(items, ucols, by, slice_cols, notes)


def _per_sample(ratings: pd.DataFrame, layout: _Layout, indicator: Callable[[pd.Series], Any],
                columns: ItemColumns) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per sample (item): whether the majority of its ok trials say refusal (NaN when no trial is
    ok or the trials tie: :data:`TRIAL_RULE`), with its item columns, the model as ``_model`` and
    a sample index; and the judge's trial counts (``judge_trials`` of the result's meta)."""
    r = ratings[["item_id", "label", "status"]].copy()
    r["item_id"] = r["item_id"].astype(str)
    ok = r["status"].eq("ok") & r["label"].notna()
    r["_ref"] = np.where(ok, indicator(r["label"].where(ok, "")), np.nan)
    g = r.groupby("item_id", sort=False)["_ref"]
    share, n_ok = g.mean(), g.count()
    # trials are the judge's, not the model's samples: majority of the ok trials, a tie abstains
    refused = pd.Series(np.where(share > 0.5, 1.0, np.where(share < 0.5, 0.0, np.nan)), index=share.index)
    per_item = refused.rename("refused").reset_index()
    several = n_ok >= 2
    trials = {"rule": TRIAL_RULE, "samples_with_trials": int(several.sum()),
              "samples_trials_differ": int((several & (share > 0) & (share < 1)).sum()),
              "samples_tied": int((several & (share == 0.5)).sum())}
    items = layout.items
    missing_items = set(per_item["item_id"]) - set(items["item_id"])
    if missing_items:
        raise JudgekitError(
            f"analyze distribution: {len(missing_items)} rated items are not in the items table "
            f"(e.g. {sorted(missing_items)[0]!r}); import the items with their metadata."
        )
    df = items.merge(per_item, on="item_id", how="inner")
    df["_model"] = model_series(df, columns.model)
    if columns.sample not in df.columns:
        df[columns.sample] = df.groupby(["_model", *layout.ucols], sort=False).cumcount()
    return df, trials


def _trials_note(rater: str, trials: dict[str, Any]) -> list[str]:
    """The judge's instability across its trials, stated as the judge's (never the model's)."""
    if not trials["samples_with_trials"]:
        return []
    return [f"{rater}'s trials: on {trials['samples_trials_differ']} of {trials['samples_with_trials']} "
            "samples judged more than once the trials gave different answers — instability of the judge, "
            "not of the model; each sample counts once, by the majority of its ok trials, and "
            f"{trials['samples_tied']} tied samples count as unrated."]


def _per_prompt(df: pd.DataFrame, layout: _Layout, forms: FormRatings | None,
                form_shares: pd.DataFrame | None) -> pd.DataFrame:
    """Per prompt: samples, rated samples, refusals, the rate with its Wilson interval, whether
    it is constant, its behaviour (and its forms)."""
    keys = layout.keys
    g = df.groupby(keys, sort=True, dropna=False)
    per_prompt = g.agg(
        n_samples=("refused", "size"),
        n_rated=("refused", "count"),
        refusals=("refused", "sum"),
        lo_value=("refused", "min"),
        hi_value=("refused", "max"),
    ).reset_index()
    per_prompt["n_unrated"] = per_prompt["n_samples"] - per_prompt["n_rated"]
    n = per_prompt["n_rated"].to_numpy(float)
    k = per_prompt["refusals"].to_numpy(float)
    per_prompt["rate"] = np.divide(k, n, out=np.full_like(k, np.nan), where=n > 0)
    lo, hi = wilson_interval(k, n)
    per_prompt["ci_low"], per_prompt["ci_high"] = lo, hi
    per_prompt["constant"] = (
        per_prompt["lo_value"].eq(per_prompt["hi_value"]).astype("boolean")
        .mask(per_prompt["n_rated"] < 2)
    )
    per_prompt = per_prompt.drop(columns=["lo_value", "hi_value"])
    per_prompt["behaviour"] = [behaviour(kk, nn) for kk, nn in zip(k, n, strict=True)]
    if forms is not None and form_shares is not None:
        per_prompt = _attach_forms(per_prompt, df, form_shares, forms.rubric, keys)
    return per_prompt.rename(columns={"_model": "model"})


def _summary_tables(pp: pd.DataFrame, layout: _Layout, resampling: Resampling,
                    total: int) -> list[Table]:
    """``by_model`` and ``by_<slice>``: the refusal rate per model (and slice), the headline."""
    def tick(done: int) -> None:
        if resampling.progress is not None:
            resampling.progress(done, total)

    unit = layout.ucols[0]
    summary = _summaries(pp, ["_model"], cluster_col=unit, resampling=resampling, progress=tick)
    tables = [Table("by_model", "Refusal rate per model", summary,
                    f"mean over prompts of the per-prompt rate; 95% CIs: bootstrap resampling "
                    f"{unit}; pooled = refusals / rated samples.")]
    for col in layout.slice_cols:
        t = _summaries(pp, ["_model", col], cluster_col=unit, resampling=resampling, progress=tick)
        tables.append(Table(f"by_{col}", f"Refusal rate per model and {col}", t))
    return tables


def _form_tables(df: pd.DataFrame, forms: FormRatings, form_shares: pd.DataFrame,
                 slice_cols: list[str]) -> list[Table]:
    """``forms`` and ``forms_by_<slice>`` (each form's share of samples), and the emitted
    refusal-pool strings when a rule judge matched them."""
    frub = forms.rubric
    tables = [Table(
        "forms",
        f"Form of the response across samples ({frub.id}), share of samples",
        _form_table(df, form_shares, frub, ["_model"]),
        f"each sample counts once, by the {LABEL_RULE} (an abstaining sample is unrated for "
        "the form).",
    )]
    for col in slice_cols:
        tables.append(Table(
            f"forms_by_{col}",
            f"Form of the response per model and {col} ({frub.id})",
            _form_table(df, form_shares, frub, ["_model", col]),
        ))
    matches = forms.matches
    if matches is not None and matches["match_rule"].eq("refusal_pool").any():
        for keys_ in (["_model"], *(["_model", c] for c in slice_cols)):
            what = " and ".join(["model", *keys_[1:]])
            tables.append(Table(
                "_by_".join(["pool_strings", *keys_[1:]]),
                f"Emitted refusal-pool strings per {what} ({frub.id})",
                emitted_pool_strings(matches, df, keys_),
                "n = ok judge answers matched to the string; n_ok = ok answers of the "
                "group; share = n / n_ok (a group that emitted no pool string: n = 0).",
            ))
    return tables


def _sample_notes(per_prompt: pd.DataFrame) -> list[str]:
    """What a reader must know about the samples: prompts with one rated sample, unrated ones."""
    notes: list[str] = []
    single = int((per_prompt["n_rated"] == 1).sum())
    n_prompts = len(per_prompt)
    if n_prompts and single == n_prompts:
        notes.append(
            f"Every prompt has one rated sample: {_ONE_DRAW}. Sample each prompt several times "
            "to measure refusal as a distribution."
        )
    elif single:
        notes.append(f"{single} of {n_prompts} prompts have one rated sample: {_ONE_DRAW}.")
    unrated = int(per_prompt["n_unrated"].sum())
    if unrated:
        notes.append(
            f"{unrated} samples have no usable rating (every trial abstained or errored); they "
            "are left out of n, not counted as compliance or refusal."
        )
    return notes


def _definitions(definition: str, ucols: list[str]) -> dict[str, str]:
    return {
        "refusal": definition,
        "rate": "per prompt: refusals / rated samples; a sample judged several times counts "
                f"once, by the {TRIAL_RULE}",
        "interval": f"Wilson 95% score interval per prompt: {EXCHANGEABLE}; per model and slice: 95% percentile bootstrap resampling "
                    f"{ucols[0]} (the turns of one conversation are not independent)",
        "pooled_rate": "refusals / rated samples over the group; no interval, because "
                       "samples of one prompt are not independent (use mean_rate's)",
        "constant": "a prompt with >= 2 rated samples is constant when every sample got the "
                    "same refusal value",
        "behaviour": "per prompt: 'not constant (k of n)' when k of its n rated samples are "
                     "refusals and 0 < k < n, whatever n; 'always refused (n of n)', 'never "
                     "refused (0 of n)'; one rated sample says so",
        "prompt_unit": " + ".join(ucols),
    }


def _summaries(
    pp: pd.DataFrame,
    keys: list[str],
    *,
    cluster_col: str,
    resampling: Resampling,
    progress: Callable[[int], None],
) -> pd.DataFrame:
    """Per group: mean of per-prompt rates and share of non-constant prompts, with CIs from a
    bootstrap that resamples clusters (conversations, or prompts) — the turns of one
    conversation are not independent prompts."""
    rows = []
    for gkey, grp in pp.groupby(keys, sort=True, dropna=False):
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        rated = grp[grp["n_rated"] > 0]
        rates = rated["rate"].to_numpy(float)
        multi = (rated["n_rated"] >= 2).to_numpy(float)
        nonconst = (rated["constant"].astype("boolean") == False).fillna(False).to_numpy(float)  # noqa: E712
        n_multi = int(multi.sum())

        def stat(w: np.ndarray, r: np.ndarray = rates, m: np.ndarray = multi,
                 nc: np.ndarray = nonconst) -> np.ndarray:
            mean = (w @ r) / w.sum(axis=1)
            den = w @ m
            share = np.divide(w @ nc, den, out=np.full_like(den, np.nan), where=den > 0)
            return np.stack([mean, share], axis=1)

        if len(rates):
            clusters = pd.factorize(rated[cluster_col].astype(str))[0]
            reps = bootstrap_stat(stat, clusters, n_boot=resampling.n_resamples,
                                seed=resampling.seed, progress=progress)
            if reps.size:
                lo, hi = percentile_ci(reps)
            else:
                lo = hi = np.full(2, np.nan)
            n_clusters = int(clusters.max()) + 1
            n_multi_clusters = len(set(clusters[multi > 0].tolist()))
            lo, hi = _boundary_floor(lo, hi, rates, nonconst[multi > 0], n_clusters, n_multi_clusters)
            # one cluster (a single-prompt summary) resamples to itself: a zero-width interval
            # would claim certainty the sample does not give, so there is none
            zero = ~(hi - lo > 0)
            lo, hi = np.where(zero, np.nan, lo), np.where(zero, np.nan, hi)
        else:
            lo = hi = np.full(2, np.nan)
            n_clusters = 0
        n_samples = int(rated["n_rated"].sum())
        row = dict(zip(["model", *keys[1:]], gkey, strict=True))
        row.update(
            n_prompts=len(rated),
            n_clusters=n_clusters,
            n_samples=n_samples,
            samples_per_prompt=float(rated["n_rated"].median()) if len(rated) else np.nan,
            mean_rate=float(rates.mean()) if len(rates) else np.nan,
            ci_low=float(lo[0]),
            ci_high=float(hi[0]),
            pooled_rate=float(rated["refusals"].sum() / n_samples) if n_samples else np.nan,
            always_refused=float((rates == 1).mean()) if len(rates) else np.nan,
            never_refused=float((rates == 0).mean()) if len(rates) else np.nan,
            prompts_multi_sample=n_multi,
            share_not_constant=float(nonconst.sum() / n_multi) if n_multi else np.nan,
            not_constant_ci_low=float(lo[1]),
            not_constant_ci_high=float(hi[1]),
            single_sample_prompts=int((rated["n_rated"] == 1).sum()),
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _boundary_floor(lo: np.ndarray, hi: np.ndarray, rates: np.ndarray, nonconst: np.ndarray,
                    n_clusters: int, n_clusters_multi: int) -> tuple[np.ndarray, np.ndarray]:
    """A cluster bootstrap of a share that is 0 or 1 in every cluster gives a zero-width
    interval ([1, 1] when every prompt always refused), which claims certainty the sample does
    not give: there the interval is the Wilson interval of 0 (or all) of the ``n_clusters``
    clusters (E. B. Wilson 1927), e.g. [0.95, 1] for 72 conversations all refused."""
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    for i, (values, n) in enumerate(((rates, n_clusters), (nonconst, n_clusters_multi))):
        if n <= 0 or not len(values):
            continue
        if np.all(values == values[0]) and values[0] in (0.0, 1.0):
            wl, wh = wilson_interval(n * float(values[0]), n)
            lo[i], hi[i] = float(wl), float(wh)
    return lo, hi


def _attach_forms(
    per_prompt: pd.DataFrame,
    df: pd.DataFrame,
    form_shares: pd.DataFrame,
    form_rubric: Rubric,
    keys: list[str],
) -> pd.DataFrame:
    codes = form_rubric.codes
    f = df[list(dict.fromkeys([*keys, "item_id"]))].merge(form_shares, on="item_id", how="inner")
    if f.empty:
        per_prompt["forms"] = ""
        per_prompt["modal_form"] = None
        per_prompt["form_varies"] = pd.NA
        return per_prompt
    sums = f.groupby(keys, sort=True, dropna=False)[codes].sum()
    n_form = f.groupby(keys, sort=True, dropna=False)[codes].count().max(axis=1)
    modal = sums.idxmax(axis=1).where(sums.sum(axis=1) > 0)
    distinct = (sums > 0).sum(axis=1)

    def fmt(row: pd.Series) -> str:
        return "; ".join(f"{c}: {row[c]:g}" for c in codes if row[c] > 0)

    extra = pd.DataFrame({
        "forms": sums.apply(fmt, axis=1),
        "modal_form": modal,
        "form_varies": (distinct > 1).astype("boolean").mask(n_form < 2),
    }).reset_index()
    return per_prompt.merge(extra, on=keys, how="left")


def _form_table(
    df: pd.DataFrame, form_shares: pd.DataFrame, form_rubric: Rubric, keys: list[str]
) -> pd.DataFrame:
    codes = form_rubric.codes
    f = df[list(dict.fromkeys([*keys, "item_id"]))].merge(form_shares, on="item_id", how="inner")
    f = f.dropna(subset=codes)
    if f.empty:
        return pd.DataFrame(columns=["model", *keys[1:], "n_samples", *codes])
    g = f.groupby(keys, sort=True, dropna=False)
    out = g[codes].mean()
    out.insert(0, "n_samples", g.size())
    out = out.reset_index().rename(columns={"_model": "model"})
    return out


def _charts(pp: pd.DataFrame, tables: list[Table], slice_cols: list[str]) -> list[Chart]:
    charts: list[Chart] = []
    # Empirical CDF of per-prompt refusal rates: the distribution the single-number rate hides,
    # with the Dvoretzky–Kiefer–Wolfowitz 95% band F ± sqrt(ln(2 / 0.05) / (2n)) (Massart 1990).
    series: dict[str, list[tuple[Any, ...]]] = {}
    for model, grp in pp.groupby("_model", sort=True):
        rates = np.sort(grp["rate"].dropna().to_numpy(float))
        if not len(rates):
            continue
        grid = np.linspace(0.0, 1.0, 21)
        cdf = np.searchsorted(rates, grid, side="right") / len(rates)
        eps = float(np.sqrt(np.log(2 / 0.05) / (2 * len(rates))))
        series[str(model)] = [(float(x), float(y), max(0.0, float(y) - eps), min(1.0, float(y) + eps),
                               len(rates)) for x, y in zip(grid, cdf, strict=True)]
    if series:
        charts.append(Chart(
            "rate_cdf",
            "Share of prompts with refusal rate <= x (per model)",
            series,
            x_label="per-prompt refusal rate",
            y_label="share of prompts",
            y_range=(0.0, 1.0),
            n_label="prompts",
            ci_note="Dvoretzky–Kiefer–Wolfowitz band F ± √(ln 40 / 2n), simultaneous over x; it "
                    "treats the prompts as independent draws",
        ))
    by_key = {t.key: t.frame for t in tables}
    for col in slice_cols:
        frame = by_key.get(f"by_{col}")
        if frame is None or frame.empty:
            continue
        xs = pd.to_numeric(frame[col], errors="coerce")
        if xs.isna().any():
            continue  # a categorical slice is a table, not a line
        for metric, label, key in (
            ("mean_rate", "mean refusal rate", f"rate_by_{col}"),
            ("share_not_constant", "share of prompts not constant", f"nonconstant_by_{col}"),
        ):
            # points with their 95% CI (cluster bootstrap) and n = prompts
            n_col = "n_prompts" if metric == "mean_rate" else "prompts_multi_sample"
            s = chart_points(frame.assign(_x=xs), "model", metric, x="_x", n=n_col)
            if s:
                charts.append(Chart(key, f"{label.capitalize()} by {col} (per model)", s,
                                    x_label=col, y_label=label, y_range=(0.0, 1.0),
                                    n_label="prompts"))
    return charts

