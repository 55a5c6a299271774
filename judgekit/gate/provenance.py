"""One provenance per gated judge: the gate certifies a judge on ratings of one source.

A judge's ratings under the gated rubric (perturbed item copies left out) come from its own panel
calls (``panel``: each rating checked against the call that made it, by the judge's recorded
configuration) or from one import of a judge run elsewhere (``import:<id>``, as the shipped
XSTest judges are; :mod:`judgekit.store.provenance`). The gate adds one check per judge,
``one_provenance`` when it fails (:func:`apply_provenance`), which fails — so the judge and every figure it
would certify are not certified — when

* its ratings come from more than one source (panel calls and an import, or two imports: the
  labels the humans compare it with would not be the labels an analysis then uses);
* an import replaced its earlier ratings on items with human or reference ratings (an import of
  the reference's labels under the judge's name on the labelled items makes any judge agree);
* a panel rating is not what a call of the judge's configuration answered (edited after the call,
  or made by another configuration).

The check's detail is one sentence naming the source it certified (and the import's digest, which
the verdict's ``provenance`` binds) or what mixed, with the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgekit.verdict.check import DERIVED, Check, new_check

#: the kind of the check (:data:`judgekit.verdict.check.RULES`)
KIND = "one_provenance"
#: what a derived rater's (``panel:majority``) aggregate ratings count as
_AGGREGATE = "panel aggregate"


@dataclass(frozen=True)
class Sources:
    """Where one judge's ratings came from: rating count per source, how many of its ratings on
    labelled items an import wrote over earlier ones, and how many panel ratings no call of its
    configuration made."""

    counts: dict[str, int]
    replaced: int
    not_called: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def judge_sources(store: Any, rubric: Any, judge: str) -> Sources:
    """The :class:`Sources` of ``judge``'s ratings under ``rubric`` (by SQL on the store)."""
    from judgekit.store.provenance import EFFECTIVE, PANEL, labelled_items_sql, rubric_pairs, under
    from judgekit.store.variants import variant_item_sql

    cond, args = under(rubric_pairs(rubric), "r.")
    vcond, vargs = variant_item_sql("r.item_id")
    eff = EFFECTIVE.format(a="r.")
    derived = judge.startswith(DERIVED)
    group = f"CASE WHEN r.source = 'panel-aggregate' THEN '{_AGGREGATE}' ELSE {eff} END" if derived else eff
    counts = {str(g): int(n) for g, n in store.conn.execute(
        f"SELECT {group} AS g, COUNT(*) FROM ratings r WHERE {cond} AND r.rater_id = ? AND {vcond} GROUP BY g"
        " ORDER BY g", [*args, judge, *vargs])}
    sub, sargs = labelled_items_sql(store, rubric)
    hcond, hargs = under(rubric_pairs(rubric))
    # the judge's replaced keys: one scan of the history (it has no index), joined by key
    (replaced,) = store.conn.execute(
        "SELECT COUNT(*) FROM ratings r JOIN (SELECT DISTINCT item_id, rubric, rubric_hash, trial FROM rating_history"
        f" WHERE rater_id = ? AND {hcond}) h ON h.item_id = r.item_id AND h.rubric = r.rubric"
        " AND h.rubric_hash = r.rubric_hash AND h.trial = r.trial"
        f" WHERE {cond} AND r.rater_id = ? AND {eff} LIKE 'import:%' AND r.item_id IN ({sub})",
        [judge, *hargs, *args, judge, *sargs]).fetchone()
    not_called = 0
    if PANEL in counts and not derived:
        from judgekit.store.calls import ratings_not_made_by
        from judgekit.store.judge_identity import judge_identity

        ident = judge_identity(store, judge, rubric)
        identity = None if ident["spec"] is None else (str(ident["spec"]), dict(ident["params"] or {}))
        not_called = sum(1 for _i, _t, g in ratings_not_made_by(store, rubric, judge, list(counts), identity)
                         if g == PANEL)
    return Sources(counts, int(replaced), not_called)


def _name(source: str, digests: dict[str, str]) -> str:
    """A source as a sentence names it: its panel calls, or an import with its digest."""
    from judgekit.store.provenance import PANEL

    if source == PANEL:
        return "its own panel calls"
    if source.startswith("import:"):
        return f"the import {source[len('import:'):]} (its ratings' digest {digests.get(source, '?')})"
    return f"its {source} ratings" if source != "unrecorded" else "ratings written before judgekit recorded sources"


def provenance_check(judge: str, sources: Sources, digests: dict[str, str]) -> Check:
    """The ``one_provenance`` check of ``judge`` (module doc): figure 1 when its ratings have one
    source and none was replaced or edited, else 0; threshold 1; ``n`` its ratings."""
    n, where = sources.total, f"judge {judge!r}"
    fix = ("import the judge's whole run in one file under a new rater id (or judge the items with the panel) "
           "and gate that")
    if len(sources.counts) > 1:
        parts = "; ".join(f"{k:,} from {_name(s, digests)}" for s, k in sources.counts.items())
        detail = (f"{where}'s {n:,} ratings come from {len(sources.counts)} sources ({parts}); a judge is gated on "
                  f"ratings of one source, so it is not certified: {fix}")
    elif sources.replaced:
        detail = (f"an import replaced {sources.replaced:,} of {where}'s earlier ratings on items with human or "
                  f"reference ratings, so the labels gated are not the judge's own run and it is not certified: {fix}")
    elif sources.not_called:
        detail = (f"{sources.not_called:,} of {where}'s panel ratings are not what a call of its configuration "
                  "answered (edited after the call, or made by another configuration), so it is not certified: "
                  "judge the items again with the panel and gate again")
    else:
        (source,) = sources.counts or {"none": 0}
        detail = f"all {n:,} ratings of {where} come from one source, {_name(source, digests)}"
        return new_check(KIND, judge, 1.0, 1.0, n, detail, unit="ratings")
    return new_check(KIND, judge, 0.0, 1.0, n, detail, unit="ratings")


def apply_provenance(results: list[Any], store: Any, rubric: Any) -> dict[str, dict[str, Any]]:
    """Add to each judge's checks (``results``: :class:`judgekit.gate.checks.JudgeResult`) its
    failing ``one_provenance`` check (module doc); a judge whose ratings have one source gets none,
    so a certified judge's checks are the policy's. Returns judge → what its verdict entry records:
    ``provenance`` (``{source: digest}``, :func:`judgekit.store.provenance.provenance_digests`) and,
    when certified on one source, ``source`` (that source's name)."""
    from judgekit.store.provenance import provenance_digests

    out: dict[str, dict[str, Any]] = {}
    for r in results:
        digests = provenance_digests(store, rubric, r.judge)
        sources = judge_sources(store, rubric, r.judge)
        check = provenance_check(r.judge, sources, digests)
        out[r.judge] = {"provenance": digests}
        if check.state == "pass":
            out[r.judge]["source"] = next(iter(sources.counts), None)
        else:
            r.checks.append(check)
    return out
