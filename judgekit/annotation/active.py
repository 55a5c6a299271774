"""Which items people should rate when labels are dear: an *active* sample, drawn with a known
probability that grows with the judge's predicted error, and recorded so the corrected figures
stay valid (:mod:`judgekit.stats.active`).

1. **Confidence** (:func:`judge_confidence`): per item, from the judge's own ratings — the share
   of its trials that give its modal label, the share of the panel's judges that give that label,
   and any per-item confidence the caller has (log-probabilities, the selective judge's
   confidence) — multiplied: an item is sure only when every signal is.
2. **Predicted error** (:func:`predicted_error`): ``1 − confidence`` before any label is known;
   once earlier rounds have labels, the weighted error rate of the judge within each cell of
   the judge's and the panel's labels (:func:`learned_error` with :func:`label_cells`, shrunk
   toward the overall rate), so each round's probabilities come from what was known before it.
3. **Draw** (:func:`draw_active`): the probabilities of
   :func:`judgekit.stats.active.inclusion_probabilities` (``π ∝ sqrt(predicted error)`` by
   default, floored so every unit keeps a positive probability) at the budget, one independent
   Bernoulli draw per unit. The unit is the item, or the conversation (``cluster_col``) when the
   figure's unit is a conversation: every item of a conversation gets its probability. Units
   labelled in earlier rounds are not drawn again.

**What is recorded.** Each chosen item is a row of the sample with reason ``active``, ``weight``
``1/π`` (its inverse probability) and ``stratum`` ``active:round=R;share=B;floor=F;of=N``: its
round, the round's budget (the expected number of labelled units), the probability floor and
the units the round drew from, so no probability of the round is below ``F·B/N``
(:func:`least_probability`; a weight edited past it is refused). That is what
:func:`judgekit.analysis.correction.active.active_design` reads back; a reviewer can check that
every chosen item carries its probability.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.stats.active import DEFAULT_FLOOR, inclusion_probabilities

#: the reason of an actively drawn item in a recorded sample
ACTIVE_REASON = "active"
#: every predicted error is at least this (an item the judge is sure of can still be wrong)
MIN_ERROR = 0.02


@dataclass(frozen=True)
class DrawRule:
    """How predicted errors become probabilities: ``rule`` (``"sqrt"``: π ∝ sqrt(error), the
    cost-optimal rule; ``"linear"``: π ∝ error) and ``floor`` (no probability below this share of
    the uniform rate), as :func:`judgekit.stats.active.inclusion_probabilities` takes them."""

    rule: str = "sqrt"
    floor: float = DEFAULT_FLOOR


def _modal_share(ok: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    counts = ok.groupby([*by, "label"]).size().rename("n").reset_index()
    counts = counts.sort_values([*by, "n", "label"], ascending=[True] * len(by) + [False, True])
    total = counts.groupby(by)["n"].transform("sum")
    return counts.assign(share=counts["n"] / total).drop_duplicates(by)


def judge_confidence(ratings: pd.DataFrame, judge: str, *, panel: Iterable[str] = (),
                     extra: pd.Series | None = None) -> pd.Series:
    """Per item (indexed by ``item_id``, strings) the judge's confidence in [0, 1]: the share of
    ``judge``'s ok trials giving its modal label × the share of the ``panel`` judges (``judge``
    included) whose modal label is the judge's × ``extra`` (a per-item confidence in [0, 1], e.g.
    from log-probabilities; missing items count 1). Items the judge has no ok rating of get 0.
    ``ratings``: long, with ``item_id, rater_id, label`` (``status`` optional)."""
    r = ratings.assign(item_id=ratings["item_id"].astype(str))
    if "status" in r.columns:
        r = r[r["status"].eq("ok")]
    r = r[r["label"].notna()]
    mine = r[r["rater_id"] == judge]
    if mine.empty:
        raise JudgekitError(f"judge {judge!r} has no ok rating to take a confidence from.")
    own = _modal_share(mine, ["item_id"]).set_index("item_id")
    conf = own["share"].astype(float)
    others = [p for p in panel if p != judge]
    if others:
        modal = _modal_share(r[r["rater_id"].isin([judge, *others])], ["item_id", "rater_id"])
        agrees = modal.merge(own["label"].rename("own").reset_index(), on="item_id")
        share = (agrees["label"] == agrees["own"]).groupby(agrees["item_id"]).mean()
        conf = conf * share.reindex(conf.index).fillna(1.0)
    if extra is not None:
        ex = extra.copy()
        ex.index = ex.index.astype(str)
        conf = conf * ex.reindex(conf.index).fillna(1.0).clip(0.0, 1.0)
    all_ids = pd.Index(sorted(r["item_id"].unique()), name="item_id")
    return conf.reindex(all_ids).fillna(0.0).rename("confidence")


def label_cells(ratings: pd.DataFrame, judges: Iterable[str]) -> pd.Series:
    """Per item, the modal labels of ``judges`` joined by ``|`` (``refusal|compliance``): the
    cell whose error rate :func:`learned_error` learns (a judge without an ok rating: ``-``)."""
    order = list(dict.fromkeys(judges))
    r = ratings.assign(item_id=ratings["item_id"].astype(str))
    if "status" in r.columns:
        r = r[r["status"].eq("ok")]
    r = r[r["label"].notna() & r["rater_id"].isin(order)]
    modal = _modal_share(r, ["item_id", "rater_id"]).pivot(
        index="item_id", columns="rater_id", values="label")
    modal = modal.reindex(columns=order).astype(object).where(modal.notna(), "-")
    key = modal[order[0]].astype(str)
    for j in order[1:]:
        key = key + "|" + modal[j].astype(str)
    return key.rename("cell")


def learned_error(confidence: pd.Series, errors: pd.Series, weights: pd.Series, *,
                  bins: int = 4, prior: float = 5.0, cells: pd.Series | None = None
                  ) -> pd.Series:
    """The judge's predicted error per item from the labels of earlier rounds: items are binned
    by ``confidence`` (quantiles, ``bins`` of them) or, given ``cells`` (item → key, e.g.
    :func:`label_cells`), by cell; each bin's error is the ``weights``-weighted mean of
    ``errors`` (1 where the judge was wrong, or a squared error) on its labelled items, shrunk
    toward the overall weighted rate with ``prior`` pseudo-labels. ``errors``/``weights`` are
    indexed by the labelled items."""
    conf = confidence.astype(float)
    if cells is not None:
        codes = cells.reindex(conf.index).fillna("-").astype(str)
    else:
        codes = pd.qcut(conf.rank(method="first"), q=min(bins, max(1, len(conf))), labels=False)
    err = errors.astype(float)
    w = weights.reindex(err.index).astype(float)
    overall = float((err * w).sum() / w.sum()) if w.sum() > 0 else 0.5
    lab_codes = codes.reindex(err.index)
    num = (err * w).groupby(lab_codes).sum()
    den = w.groupby(lab_codes).sum()
    n = err.groupby(lab_codes).size()
    rate = (num / den * n + prior * overall) / (n + prior)
    return codes.map(rate).fillna(overall).clip(lower=MIN_ERROR).rename("predicted_error")


def predicted_error(confidence: pd.Series) -> pd.Series:
    """Before any label: ``1 − confidence``, at least :data:`MIN_ERROR`."""
    return (1.0 - confidence.astype(float)).clip(lower=MIN_ERROR).rename("predicted_error")


def draw_active(items: pd.DataFrame, error: pd.Series, budget: float, *,
                how: DrawRule = DrawRule(), seed: int = 0, round_no: int = 0,
                cluster_col: str | None = None, known: Iterable[str] = ()) -> pd.DataFrame:
    """One round of an active sample: the chosen items as design rows (``item_id, reason,
    stratum, weight, overlap`` as :data:`judgekit.annotation.sampling.DESIGN_COLUMNS`, plus
    ``probability``). ``error``: the predicted error per item (``item_id`` index); with
    ``cluster_col`` a conversation's is the mean of its items' and the conversation is the unit;
    ``how``: the probability rule and floor;
    ``budget``: the expected number of units labelled in this round; ``known``: units (item ids,
    or conversation ids with ``cluster_col``) labelled in earlier rounds, not drawn again."""
    its = items.assign(item_id=items["item_id"].astype(str))
    err = error.copy()
    err.index = err.index.astype(str)
    e_item = err.reindex(its["item_id"]).fillna(float(err.max()) if len(err) else 1.0)
    if cluster_col is not None:
        if cluster_col not in its.columns:
            raise JudgekitError(f"the items have no {cluster_col!r} column to draw conversations by.")
        unit = its[cluster_col].astype(str).to_numpy()
    else:
        unit = its["item_id"].to_numpy()
    per_unit = pd.Series(e_item.to_numpy(), index=unit).groupby(level=0).mean()
    done = set(map(str, known))
    free = per_unit[~per_unit.index.isin(done)]
    if free.empty:
        raise JudgekitError("every unit is labelled already: there is nothing left to draw.")
    budget = min(float(budget), float(len(free)))
    pi = pd.Series(inclusion_probabilities(free.to_numpy(), budget, rule=how.rule,
                                           floor=how.floor),
                   index=free.index)
    rng = np.random.default_rng([seed, round_no])
    chosen = pi[rng.random(len(pi)) < pi.to_numpy()]
    rows = its[pd.Series(unit).isin(chosen.index).to_numpy()]
    p = pd.Series(unit, index=its["item_id"]).reindex(rows["item_id"]).map(chosen).to_numpy()
    return pd.DataFrame({
        "item_id": rows["item_id"].to_numpy(), "reason": ACTIVE_REASON,
        "stratum": f"active:round={round_no};share={budget:g};floor={how.floor:g};of={len(free)}",
        "weight": 1.0 / p,
        "overlap": 0, "probability": p,
    }).reset_index(drop=True)


def parse_active_stratum(stratum: str) -> tuple[int, float]:
    """(round, budget) of an active design row's ``stratum`` (``active:round=R;share=B``)."""
    try:
        body = str(stratum).split(":", 1)[1]
        fields = dict(part.split("=", 1) for part in body.split(";"))
        return int(fields["round"]), float(fields["share"])
    except (IndexError, KeyError, ValueError):
        raise JudgekitError(f"an active sample row's stratum {stratum!r} does not record its "
                            "round and budget (active:round=R;share=B).") from None


def least_probability(stratum: str) -> float | None:
    """The least probability an active round could give (``floor × budget / units``, the floor
    of :func:`judgekit.stats.active.inclusion_probabilities`) from its ``stratum``; None when the
    row does not record its floor and units (drawn before they were recorded)."""
    fields = dict(part.split("=", 1) for part in str(stratum).split(":", 1)[-1].split(";")
                  if "=" in part)
    try:
        floor, units, budget = float(fields["floor"]), float(fields["of"]), float(fields["share"])
    except (KeyError, ValueError):
        return None
    if not (0.0 < floor <= 1.0 and 0.0 < budget <= units):
        raise JudgekitError(f"an active sample row's stratum {stratum!r} records a floor outside "
                            "(0, 1] or a budget outside (0, units]; draw the sample again.")
    return min(1.0, floor * budget / units)


def round_units(stratum: str) -> int | None:
    """The units an active round drew from (``of=N`` of its ``stratum``); None when the row does
    not record them (drawn before they were recorded)."""
    fields = dict(part.split("=", 1) for part in str(stratum).split(":", 1)[-1].split(";")
                  if "=" in part)
    try:
        return int(float(fields["of"]))
    except (KeyError, ValueError):
        return None


def sample_active(store: Any, name: str, judge: str, budget: float, *, rubric: str,
                  panel: Iterable[str] = (), how: DrawRule = DrawRule(), seed: int = 0,
                  cluster_col: str | None = None) -> list[str]:
    """Draw the next round of the active sample ``name`` and record it in ``store``; returns the
    summary lines. The first call draws round 0 from the judge's confidence
    (:func:`judge_confidence`, :func:`predicted_error`); a later call on the same name draws the
    next round among the units not yet chosen, its predicted errors learned from the reference's
    (human) labels on the earlier rounds when there are some (:func:`learned_error`), and
    records the earlier rows with the new ones. ``budget``: the round's expected number of
    units (items, or conversations with ``cluster_col``)."""
    from judgekit.annotation.sampling import DESIGN_COLUMNS, record_sample, sample_design
    from judgekit.rubric.model import rubric_named_in

    panel = [p for p in panel if p != judge]
    rub = rubric_named_in(rubric, f"judgekit sample --active {judge}")
    items = store.items()
    judged = store.ratings(rubric=rub, rater_kind="judge")
    conf = judge_confidence(judged, judge, panel=panel)
    old = sample_design(store, name) if store.has_sample(name) else None
    if old is not None and not (old["reason"] == ACTIVE_REASON).all():
        raise JudgekitError(f"sample {name!r} was not drawn by `sample --active`; choose another "
                            "name for an active sample.")
    round_no, known, err = 0, set(), predicted_error(conf)
    if old is not None:
        round_no = 1 + max(parse_active_stratum(s)[0] for s in old["stratum"])
        ids = old["item_id"].astype(str)
        its = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
        known = set(its.loc[ids, cluster_col].astype(str) if cluster_col else ids)
        human = store.ratings(rubric=rub, rater_kind=["human", "reference"])
        human = human[human["item_id"].astype(str).isin(set(ids)) & human["label"].notna()]
        mine = judged[judged["rater_id"] == judge]
        if len(human):
            h = _modal_share(human.assign(item_id=human["item_id"].astype(str)), ["item_id"])
            j = _modal_share(mine.assign(item_id=mine["item_id"].astype(str)), ["item_id"])
            both = h.set_index("item_id")["label"].to_frame("h").join(
                j.set_index("item_id")["label"].rename("j"), how="inner")
            wrong = (both["h"] != both["j"]).astype(float)
            w = old.assign(item_id=ids).set_index("item_id")["weight"].reindex(wrong.index)
            err = learned_error(conf, wrong, w, cells=label_cells(judged, [judge, *panel]))
    new = draw_active(items, err, budget, how=how, seed=seed, round_no=round_no,
                      cluster_col=cluster_col, known=known)
    frames = [f for f in (old, new[DESIGN_COLUMNS]) if f is not None]
    record_sample(store, name, pd.concat(frames, ignore_index=True), replace=old is not None)
    unit = "conversations" if cluster_col else "items"
    n_units = new["item_id"].map(items.set_index(items["item_id"].astype(str))[cluster_col]
                                 ).nunique() if cluster_col else len(new)
    return [f"Sample {name!r}, active round {round_no}: {n_units} {unit} ({len(new)} items) "
            f"chosen at an expected {budget:g}, each with probability between "
            f"{new['probability'].min():.3f} and {new['probability'].max():.3f} "
            f"(π ∝ {'sqrt(predicted error)' if how.rule == 'sqrt' else 'predicted error'}, "
            f"floor {how.floor:g} × the uniform rate), recorded as weight 1/π."]
