"""The gate in front of every analysis: a judge's ratings need a matching passing verdict.

:func:`check_trust` looks at the raters of a ratings frame. Human and reference raters need
nothing. Each judge rater needs one of the given verdicts to pass
:func:`judgekit.verdict.trust.require_trusted` for that judge and rubric (and, given the ``store`` the
ratings came from, still describe it: the human ratings, the items they are about and the judge's
identity, see :func:`judgekit.verdict.read.match_store`); otherwise the analysis refuses to
run (``UntrustedJudgeError``, one sentence saying how to get a verdict) — unless the caller forces
it with ``untrusted=True``, in which case the result is stamped UNTRUSTED everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.rubric.model import Rubric


@dataclass
class TrustReport:
    """Which judge ratings an analysis used, and on what authority."""

    #: "rater under rubric" → a short description of the passing verdict.
    trusted: dict[str, str] = field(default_factory=dict)
    #: "rater under rubric" → why it is not trusted (only when forced with ``untrusted``).
    untrusted: dict[str, str] = field(default_factory=dict)
    #: raters that need no verdict (human / reference).
    humans: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.untrusted

    def reason(self) -> str:
        """One sentence for the UNTRUSTED stamp."""
        parts = [f"{k} ({v})" for k, v in self.untrusted.items()]
        return "computed from judge ratings without a matching passing verdict: " + "; ".join(parts)

    def merge(self, other: TrustReport) -> TrustReport:
        return TrustReport(
            trusted={**self.trusted, **other.trusted},
            untrusted={**self.untrusted, **other.untrusted},
            humans=sorted(set(self.humans) | set(other.humans)),
        )

    def as_dict(self) -> dict[str, Any]:
        return {"trusted": self.trusted, "untrusted": self.untrusted, "human_raters": self.humans}


def _how_to_get_one(judge: str, rubric: Rubric) -> str:
    return (
        f"Ratings of judge {judge!r} under {rubric.id} need a passing verdict before an analysis "
        f"may use them: run `judgekit gate POLICY.yaml` for that judge and rubric and pass "
        f"--verdict verdict.json, or force the run with --untrusted (every figure is then "
        f"stamped UNTRUSTED)."
    )


def check_trust(
    ratings: pd.DataFrame,
    rubric: Rubric,
    verdicts: Sequence[Any] = (),
    *,
    judge_hashes: Mapping[str, str] | None = None,
    untrusted: bool = False,
    store: Any = None,
) -> TrustReport:
    """Check that every judge rater in ``ratings`` has a passing verdict for ``rubric``.

    ``verdicts`` are parsed ``verdict.json`` dicts or paths to them (anything
    :func:`judgekit.verdict.trust.require_trusted` accepts). ``judge_hashes`` (rater → judge hash, from
    :func:`judgekit.gate.run.judge_identity`) also requires the judge's spec and parameters to be the
    ones the verdict was computed for. ``store`` (the store ``ratings`` came from; every judgekit
    code path passes it) also requires the verdict to still describe that store. Raises
    :class:`~judgekit.errors.UntrustedJudgeError` for the first judge without a passing verdict,
    unless ``untrusted`` is true. A verdict that is malformed or inconsistent is an error even
    with ``untrusted``.
    """
    from judgekit.verdict.read import load_verdict

    loaded = [load_verdict(v) for v in verdicts]
    report = TrustReport()
    if ratings.empty:
        return report
    kinds = ratings[["rater_id", "rater_kind"]].drop_duplicates()
    for rater, kind in zip(kinds["rater_id"].astype(str), kinds["rater_kind"], strict=True):
        if kind in ("human", "reference"):
            report.humans.append(rater)
            continue
        key = f"{rater} under {rubric.id}"
        jhash = (judge_hashes or {}).get(rater)
        passed, error, entry = _find_passing(rater, rubric, loaded, jhash, store)
        if passed is not None and entry is not None and store is not None:
            error = _foreign(ratings, rater, rubric, entry, store)
            passed = None if error is not None else passed
        if passed is not None:
            report.trusted[key] = passed
            continue
        if untrusted:
            report.untrusted[key] = str(error) if error else "no verdict given"
            continue
        if error is not None:
            raise error
        raise UntrustedJudgeError(_how_to_get_one(rater, rubric))
    return report


def _find_passing(
    judge: str, rubric: Rubric, verdicts: Sequence[Any], judge_hash: str | None, store: Any = None
) -> tuple[str | None, JudgekitError | None, dict[str, Any] | None]:
    from judgekit.verdict.trust import require_trusted

    best: JudgekitError | None = None
    for verdict in verdicts:
        try:
            entry = require_trusted(verdict, judge=judge, rubric=rubric, judge_hash=judge_hash, store=store)
        except JudgekitError as exc:
            # Prefer the complaint of a verdict about this rubric over "wrong rubric".
            if best is None or _about(verdict, rubric):
                best = exc
            continue
        return _describe(verdict), None, entry
    return None, best, None


def _foreign(ratings: pd.DataFrame, judge: str, rubric: Rubric, entry: dict[str, Any],
             store: Any) -> UntrustedJudgeError | None:
    """The refusal when ``ratings`` hold ratings of ``judge`` that its passing verdict's ``entry``
    does not cover (:func:`judgekit.verdict.log.foreign_ratings`: imported under its name or edited
    after the gate), else None. :mod:`judgekit.analysis.inputs` leaves them out, saying so."""
    from judgekit.verdict.log import foreign_ratings

    foreign = {(i, t) for i, t, _ in foreign_ratings(store, rubric, judge, entry)}
    if not foreign:
        return None
    mine = ratings.loc[ratings["rater_id"].astype(str) == judge]
    used = [(str(i), int(t)) for i, t in zip(mine["item_id"], mine["trial"], strict=True)
            if (str(i), int(t)) in foreign]
    if not used:
        return None
    return UntrustedJudgeError(
        f"{len(used)} of the ratings of judge {judge!r} under {rubric.id} given to the analysis (e.g. "
        f"item {used[0][0]!r}) were not made by the judge its verdict trusts (imported under its name "
        f"or edited after the gate, in {store.path}); read the ratings with judgekit.analysis.inputs, "
        "which leaves them out, or run `judgekit gate POLICY.yaml` again."
    )


def _about(verdict: Any, rubric: Rubric) -> bool:
    return isinstance(verdict, dict) and str(verdict.get("rubric")) == rubric.id


def _describe(verdict: Any) -> str:
    if isinstance(verdict, dict):
        created = verdict.get("created_at", "?")
        policy = str(verdict.get("policy_hash", "?"))[:12]
        return f"verdict of {created}, policy {policy}"
    return "passing verdict"
