"""The panel's derived raters (``panel:<method>``): recomputed from the stored judge ratings after
every run (and re-parse), written only where they changed. The rules are in
:mod:`judgekit.judges.aggregate`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.judges.aggregate import aggregate, default_min_votes, majority_vote
from judgekit.judges.panelfile import Panel
from judgekit.store.database import Store

if TYPE_CHECKING:  # imported once there is something to aggregate
    import pandas as pd


def write_aggregates(panel: Panel, store: Store) -> dict[str, int]:
    """Recompute the panel's derived raters (``panel:<method>``) from the stored ratings."""
    spec = panel.file.aggregate
    if spec is None:
        return {}
    judge_ids = spec.judges or [e.id for e in panel.judges]
    if len(judge_ids) < 2:
        return {}
    if spec.methods and all(m == "majority" for m in spec.methods):
        same = _majority_unchanged(panel, store, judge_ids)
        if same is not None:  # a rerun that changed no vote: nothing to write, no pandas
            return same
    import pandas as pd

    ratings = store.ratings(rubric=panel.rubric, rater_ids=judge_ids)
    ids = set(panel.table.ids)
    ratings = ratings[ratings["item_id"].isin(ids)]
    out: dict[str, int] = {}
    frames = []
    for method in spec.methods:
        agg = aggregate(ratings, panel.rubric, method=method, judges=judge_ids, tie=spec.tie,
                        min_votes=spec.min_votes)
        out[f"panel:{method}"] = len(agg)
        frames.append(agg)
    if frames:
        df = pd.concat(frames, ignore_index=True)
        df["rubric"] = panel.rubric.id
        df["rubric_hash"] = panel.rubric.hash
        df["source"] = "panel-aggregate"
        _put_changed(store, df)
    return out


def _majority_unchanged(panel: Panel, store: Store, judge_ids: list[str]) -> dict[str, int] | None:
    """The counts :func:`write_aggregates` returns when every ``panel:majority`` rating it would
    write is stored already with the same label, status and rationale (the rule of
    :func:`_put_changed`), computed from plain rows as :func:`~judgekit.judges.aggregate.
    aggregate` computes them; None when one would change (the frame path then writes it)."""
    spec = panel.file.aggregate
    assert spec is not None
    rubric, derived = panel.rubric, "panel:majority"
    need = default_min_votes(len(judge_ids)) if spec.min_votes is None else spec.min_votes
    judges, ids = set(judge_ids), set(panel.table.ids)
    votes: dict[str, dict[str, list[str]]] = {}  # item -> judge -> ok labels, in stored order
    old: dict[str, tuple[str | None, str, str | None]] = {}
    for iid, rater, trial, label, status, rationale in store.rating_rows(
            rubric.id, rubric.hash, [*judge_ids, derived]):
        if rater in judges:
            if iid in ids:
                by_judge = votes.setdefault(iid, {})
                if status == "ok" and label is not None:
                    by_judge.setdefault(rater, []).append(label)
        elif trial == 0:
            old[iid] = (label, status, rationale)
    for iid, by_judge in votes.items():
        if len(by_judge) < need:
            new: tuple[str | None, str, str] = (
                None, "abstain", f"only {len(by_judge)} of {len(judge_ids)} judges gave a label (need {need})")
        else:
            label, _, status, text = majority_vote(by_judge, rubric.values, spec.tie)
            new = (label, status, text)
        was = old.get(iid)
        if was is None or (was[0], was[1], was[2] or "") != new:
            return None
    return {derived: len(votes)}


def _put_changed(store: Store, df: pd.DataFrame) -> None:
    """Write only derived ratings that changed (a cached rerun writes nothing).

    :meth:`Store.put_ratings` compares label and status only to decide what goes to the history,
    and rewrites every row it is given (a new ``created_at`` and row order); an aggregate changes
    when its rationale does (another vote split) and must stay untouched when nothing changed."""
    if df.empty:
        return
    raters = df["rater_id"].unique().tolist()
    old = store.ratings(rubric=df["rubric"].iat[0], rater_ids=raters)
    old = old[old["rubric_hash"] == df["rubric_hash"].iat[0]]
    key = ["item_id", "rater_id", "trial"]
    merged = df.merge(old[[*key, "label", "status", "rationale"]], on=key, how="left",
                      suffixes=("", "_old"))
    changed = (
        (merged["label"].fillna("\0") != merged["label_old"].fillna("\0"))
        | (merged["status"] != merged["status_old"])
        | (merged["rationale"].fillna("") != merged["rationale_old"].fillna(""))
    )
    store.put_ratings(df[changed.to_numpy()])


__all__ = ["write_aggregates"]
