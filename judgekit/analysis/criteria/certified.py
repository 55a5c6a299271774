"""Certified criteria in a criteria result: keep the pooled rates a verdict certifies, leave out
the rest.

A judge that did not pass every check of its gate may still be trusted for one criterion: its
verdict certifies the criterion's rate (:func:`judgekit.verdict.certify.certify_criteria`, read by
:func:`judgekit.analysis.trust.check_trust` with ``criteria=``: the criterion's fidelity check and
every primary check pass, and the criteria file still defines the criterion as the gate read it).
That certificate covers the criterion's *pooled rate* only, so :func:`apply_criteria` leaves out
the figures of that criterion no certificate covers:

* its rows of the ``per_seed`` and ``by_<column>`` tables, and the per-seed columns of its row of
  ``criteria`` (``per_values``, ``per_mean`` and its interval);
* its whole row of ``criteria`` when its figure is not that rate: a ``compare`` criterion (its
  figure is a difference of two rates) or one judged on its per-seed values (``require: each`` or
  ``both``) — such a criterion is then not known to pass (``evaluate_criteria`` returns False);

unless the analysis is forced with ``untrusted``: then they stay and their tables are stamped
UNTRUSTED. The result says which: a note per judge, and ``meta["figures"]`` (figure → state,
sentence, ``shown``), as :mod:`judgekit.analysis.trust_figures` does for calibration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgekit.analysis.criteria.spec import Criterion
from judgekit.analysis.result import UNTRUSTED, AnalysisResult

#: the columns of a criterion's row of ``criteria`` that come from its per-seed values
_PER_COLUMNS = ("per_values", "per_mean", "per_mean_ci_low", "per_mean_ci_high")

_NOT_COVERED = "no certificate covers it"


def _stamp(title: str) -> str:
    return title if title.startswith(UNTRUSTED) else f"{UNTRUSTED} — {title}"


def _whole_row(c: Criterion) -> str | None:
    """Why the criterion's row is not its pooled rate (so no certificate covers it), or None."""
    if c.compare is not None:
        return "its figure is a difference of two rates"
    if c.require != "pooled":
        return f"require: {c.require} judges it on its per-seed values"
    return None


def apply_criteria(result: AnalysisResult, certified: Mapping[str, tuple[str, dict[str, Any]]],
                   criteria: Mapping[str, Criterion], *, untrusted: bool) -> list[str]:
    """Keep what the certificates of ``certified`` (criterion name → (judge key, its
    certificate), for the criteria whose judge is trusted for them alone) cover, leave out (or,
    with ``untrusted``, stamp) the rest (module doc). Returns the judged criteria whose row was
    left out. Nothing changes when ``certified`` is empty."""
    if not certified:
        return []
    names = set(certified)
    states: dict[str, dict[str, Any]] = {}
    whole: dict[str, str] = {}
    for name, (_, cert) in certified.items():
        why = _whole_row(criteria[name])
        states[f"rate(criterion={name})"] = {"state": cert["state"], "sentence": cert["sentence"],
                                             "shown": why is None or untrusted}
        if why is not None:
            whole[name] = why
            fig = "difference" if criteria[name].compare is not None else "result"
            states[f"{fig}(criterion={name})"] = {
                "state": "unchecked", "sentence": f"criterion {name!r}: {why}, which {_NOT_COVERED}",
                "shown": untrusted}
    stamped = False
    left_out: list[str] = []
    for t in result.tables:
        if t.frame.empty or "criterion" not in t.frame.columns:
            continue
        mine = t.frame["criterion"].isin(list(names))
        if not mine.any():
            continue
        if t.key == "criteria":
            out = t.frame["criterion"].isin(list(whole))
            per = mine & ~out & t.frame["per"].astype(str).ne("")
            for name in t.frame.loc[per, "criterion"]:
                states[f"per_seed(criterion={name})"] = {
                    "state": "unchecked", "sentence": f"criterion {name!r}: its per-seed values: {_NOT_COVERED}",
                    "shown": untrusted}
            if not (out.any() or per.any()):
                continue
            if untrusted:
                t.title, stamped = _stamp(t.title), True
                continue
            judged = t.frame.loc[out, "result"] != "DESCRIPTIVE"
            left_out += [str(n) for n in t.frame.loc[out, "criterion"][judged]]
            frame = t.frame.loc[~out].copy()
            cols = [c for c in _PER_COLUMNS if c in frame.columns]
            keep = per[~out]
            frame.loc[keep, cols] = None
            t.frame = frame.reset_index(drop=True)
            continue
        for name in t.frame.loc[mine, "criterion"].unique():
            states.setdefault(f"{t.key}(criterion={name})", {
                "state": "unchecked", "sentence": f"criterion {name!r}: its {t.key} rows: {_NOT_COVERED}",
                "shown": untrusted})
        if untrusted:
            t.title, stamped = _stamp(t.title), True
        else:
            t.frame = t.frame.loc[~mine].reset_index(drop=True)
    result.meta["figures"] = states
    by_judge: dict[str, list[str]] = {}
    for name, (key, _) in certified.items():
        by_judge.setdefault(key, []).append(name)
    for key, crit in by_judge.items():
        result.notes.append(
            f"The verdict of {key} certifies the pooled rate of criteria {', '.join(map(repr, crit))} only; "
            + ("the figures of these criteria it does not cover are shown stamped UNTRUSTED." if untrusted else
               "their per-seed and per-column values, and the rows of those whose figure is not that rate, "
               "are left out of this result (run untrusted to see them stamped UNTRUSTED)."))
    result.notes.extend(f"Not certified: {s['sentence']}." for k, s in states.items()
                        if k.startswith(("difference(", "result(")))
    if left_out:
        result.notes.append(f"{len(left_out)} judged criteria left out ({', '.join(map(repr, left_out))}), so "
                            "not every criterion is known to pass.")
    if stamped:
        result.mark_untrusted("figures the verdict does not certify are shown (the notes say which, and why).")
    return left_out
