"""The gate in front of every analysis: a judge's ratings need a matching passing verdict.

:func:`check_trust` looks at the raters of a ratings frame. Human and reference raters need
nothing. Each judge rater needs one of the given verdicts to pass
:func:`judgekit.verdict.trust.require_trusted` for that judge and rubric (and, given the ``store`` the
ratings came from, still describe it: the human ratings, the items they are about and the judge's
identity, see :func:`judgekit.verdict.read.match_store`); otherwise the analysis refuses to
run (``UntrustedJudgeError``, one sentence saying how to get a verdict) — unless the caller forces
it with ``untrusted=True``, in which case the result is stamped UNTRUSTED everywhere.

Certified figures (issue 22): given ``figures`` (the names :mod:`judgekit.verdict.certify` gives the
figures the analysis computes), a judge that did not pass every check is still trusted *for the
figures its verdict certifies* (:func:`judgekit.verdict.trust.figure_certificates`): the report
records, per judge, each figure's certificate (``TrustReport.figures``), and
:mod:`judgekit.analysis.trust_figures` leaves the others out of the result (or stamps them UNTRUSTED
with ``untrusted``). A judge whose verdict certifies none of them (e.g. it fails a primary agreement
check) is refused as before. ``criteria=`` does the same per criterion of ``judgekit analyze
criteria`` (:mod:`judgekit.analysis.criteria.certified`).
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
    #: "rater under rubric" → figure → ``{"state", "sentence"}`` for a judge trusted only for the
    #: figures its verdict certifies (empty for a judge that passed every check).
    figures: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

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
            figures={k: {**self.figures.get(k, {}), **other.figures.get(k, {})}
                     for k in {**self.figures, **other.figures}},
        )

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trusted": self.trusted, "untrusted": self.untrusted,
                               "human_raters": self.humans}
        if self.figures:
            out["figures"] = self.figures
        return out


@dataclass(frozen=True)
class TrustContext:
    """What the trust guard of an analysis reads: the ``verdicts`` (parsed ``verdict.json`` dicts
    or paths), the judges' identities (``judge_hashes``: rater → judge hash, from the store), the
    ``store`` the ratings came from, and ``untrusted`` to force the run (every figure stamped
    UNTRUSTED). The default trusts human and reference raters only."""

    verdicts: Sequence[Any] = ()
    judge_hashes: Mapping[str, str] | None = None
    untrusted: bool = False
    store: Any = None
    #: the part of the items the analysis is restricted to (``--where``: ``[(column, [values])]``):
    #: a verdict trusts a judge there only if its checks are about it (:mod:`judgekit.verdict.population`)
    population: Sequence[tuple[str, Sequence[str]]] = ()

    def check(self, ratings: pd.DataFrame, rubric: Rubric, *, figures: Sequence[str] | None = None,
              criteria: Mapping[str, str] | None = None) -> TrustReport:
        """:func:`check_trust` of ``ratings`` under ``rubric`` in this context."""
        return check_trust(ratings, rubric, self.verdicts, judge_hashes=self.judge_hashes,
                           untrusted=self.untrusted, store=self.store, figures=figures,
                           criteria=criteria, population=self.population)


def _how_to_get_one(judge: str, rubric: Rubric) -> UntrustedJudgeError:
    return UntrustedJudgeError(
        f"Ratings of judge {judge!r} under {rubric.id} need a passing verdict before an analysis "
        f"may use them: run `judgekit gate POLICY.yaml` for that judge and rubric and pass the "
        f"verdict.json it writes, or run the analysis untrusted (every figure is then stamped "
        f"UNTRUSTED).",
        cli_hint="On the command line: --verdict verdict.json, or --untrusted.",
    )


def check_trust(
    ratings: pd.DataFrame,
    rubric: Rubric,
    verdicts: Sequence[Any] = (),
    *,
    judge_hashes: Mapping[str, str] | None = None,
    untrusted: bool = False,
    store: Any = None,
    figures: Sequence[str] | None = None,
    criteria: Mapping[str, str] | None = None,
    population: Sequence[tuple[str, Sequence[str]]] = (),
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

    ``figures`` (certificate names, e.g. ``("C", "RCE", "drift", "drift_tier")``): a judge without a
    passing verdict whose verdict certifies one of them is trusted for those only
    (``TrustReport.figures``; module doc).

    ``criteria`` (criterion name → the digest of its definition,
    :func:`judgekit.analysis.criteria.spec.criterion_digest`; ``judgekit analyze criteria``): the
    figures are those criteria's rates, ``rate(criterion=NAME)``, each certified on its own
    (:func:`judgekit.verdict.certify.certify_criteria`: its check, every primary check, and the
    same definition as the gate read).

    ``population`` (``--where``: ``[(column, [values])]``): the verdict must also certify the judge,
    or each figure, on that part of the items — a check about each cell, every one passing
    (:mod:`judgekit.verdict.population`); a figure it does not cover there is left out like an
    uncertified one, and a judge with none covered is refused in one sentence.
    """
    if criteria:
        from judgekit.verdict.certify import criterion_figure

        figures = [criterion_figure(n) for n in criteria]
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
        certs: dict[str, dict[str, Any]] | None = None
        if passed is None and figures:
            passed, certs, entry = _find_certified(rater, rubric, loaded, jhash, store, figures, criteria)
            if passed is None and certs:  # certificates, none of them passing
                error = (_criterion_refused(rater, rubric, certs) if criteria
                         else _none_certified(rater, rubric, certs))
        if passed is not None and entry is not None and population:
            passed, certs, error = _population(rater, rubric, loaded, entry, certs, figures, population)
        if passed is not None and entry is not None and store is not None:
            error = _foreign(ratings, rater, rubric, entry, store)
            passed = None if error is not None else passed
        if passed is not None:
            report.trusted[key] = passed
            if certs is not None:
                report.figures[key] = certs
            continue
        if untrusted:
            report.untrusted[key] = str(error) if error else "no verdict given"
            continue
        if error is not None:
            raise error
        raise _how_to_get_one(rater, rubric)
    return report


def _population(
    judge: str, rubric: Rubric, verdicts: Sequence[Any], entry: dict[str, Any],
    certs: dict[str, dict[str, Any]] | None, figures: Sequence[str] | None, population: Sequence[tuple[str, Sequence[str]]],
) -> tuple[str | None, dict[str, dict[str, Any]] | None, UntrustedJudgeError | None]:
    """The trust of ``judge`` (its verdict ``entry``, trusted outright or for ``certs``) restricted
    to ``population``: ``(description or None, certificates, refusal or None)``. Figures whose own
    checks do not cover it become ``uncovered``; none left, or a judge trusted outright whose checks
    do not cover it (no figure certificates), is refused."""
    from judgekit.verdict.check import judge_checks
    from judgekit.verdict.population import figure_covers, judge_covers, phrase
    from judgekit.verdict.read import policy_of

    verdict = next((v for v in verdicts if any(j == entry for j in v["judges"])), None)
    if verdict is None:  # (the entry always comes from one of them)
        return None, None, _not_for(None, judge, rubric, phrase(population), "its verdict was not found")
    policy, checks, where = policy_of(verdict), judge_checks(entry), phrase(population)
    stored = entry.get("figures") or {}
    named = certs if certs is not None else {f: stored[f] for f in figures or () if f in stored}
    if not named:
        why = judge_covers(checks, population, policy)
        if why is None:
            return _describe(verdict), certs, None
        return None, None, _not_for(verdict, judge, rubric, where, why)
    out: dict[str, dict[str, Any]] = {}
    for fig, cert in named.items():
        why = figure_covers(checks, fig, population, policy) if cert["state"] == "pass" else None
        out[fig] = cert if why is None else {"state": "uncovered", "sentence": f"{fig}: not certified for {where} ({why})"}
    ok = [f for f, c in out.items() if c["state"] == "pass"]
    if not ok:
        return None, None, _not_for(verdict, judge, rubric, where, "; ".join(c["sentence"] for c in out.values()))
    return f"{_describe(verdict)}, certifying {', '.join(ok)} for {where} only", out, None


def _not_for(verdict: Any, judge: str, rubric: Rubric, where: str, why: str) -> UntrustedJudgeError:
    """The refusal of a judge whose verdict does not certify it on the analysis's ``--where``."""
    source = getattr(verdict, "source", None)
    return UntrustedJudgeError(
        f"{f'Verdict {source}' if source else 'The verdict'} does not certify judge {judge!r} on {rubric.id} for the part of the items this analysis is "
        f"restricted to ({where}): {why}; a verdict certifies the labelled items as a whole and the cells its "
        "checks name, so gate with checks about that part (a `by` slice with per_slice, or analysis_fidelity "
        "per model, tier or turn) and pass that verdict, or run the analysis without --where or untrusted.",
        cli_hint="On the command line: --untrusted.",
    )


def _find_certified(
    judge: str, rubric: Rubric, verdicts: Sequence[Any], judge_hash: str | None, store: Any,
    figures: Sequence[str], criteria: Mapping[str, str] | None = None,
) -> tuple[str | None, dict[str, dict[str, Any]] | None, dict[str, Any] | None]:
    """The first verdict certifying one of ``figures`` for ``judge``: its description, the
    certificate of each of ``figures`` (a figure the policy does not check: not certified) and
    the judge's entry. When none does: ``(None, certificates, None)`` with the first verdict's
    certificates of those figures it checks (None when no verdict checks any)."""
    from judgekit.verdict.trust import figure_certificates

    found: dict[str, dict[str, Any]] = {}
    for verdict in verdicts:
        try:
            certs = figure_certificates(verdict, judge=judge, rubric=rubric, judge_hash=judge_hash,
                                        store=store, criteria=dict(criteria) if criteria else None)
        except JudgekitError:
            continue
        out = {f: certs.get(f) or {"state": "unchecked",
                                   "sentence": f"{f}: not certified (the verdict's policy does not check it)"}
               for f in figures}
        if not any(c["state"] == "pass" for c in out.values()):
            found = found or {f: c for f, c in out.items() if c["state"] != "unchecked"}
            continue
        entry = next(j for j in verdict["judges"] if j["judge"] == judge)
        ok = [f for f in figures if out[f]["state"] == "pass"]
        return f"{_describe(verdict)}, certifying {', '.join(ok)} only", out, entry
    return None, found or None, None


def _none_certified(judge: str, rubric: Rubric, certs: dict[str, dict[str, Any]]) -> UntrustedJudgeError:
    """The refusal of a judge whose verdict certifies none of the analysis's figures."""
    order = sorted(certs.values(), key=lambda c: c["state"] != "fail")  # UNTRUSTED ones first
    said = "; ".join(c["sentence"] for c in order)
    return UntrustedJudgeError(
        f"The verdict certifies none of this analysis's figures for judge {judge!r} on {rubric.id} "
        f"({said}); its ratings cannot be used as trusted: improve the judge or label more and gate it "
        "again, or run the analysis untrusted (every figure is then stamped UNTRUSTED).",
        cli_hint="On the command line: --untrusted.",
    )


def _criterion_refused(judge: str, rubric: Rubric, certs: dict[str, dict[str, Any]]) -> UntrustedJudgeError:
    """The refusal of a judge, without a passing verdict, for a criterion its verdict does not
    certify (``check_trust(criteria=...)``): the certificate's sentence names the criterion."""
    said = "; ".join(c["sentence"] for c in certs.values())
    return UntrustedJudgeError(
        f"Judge {judge!r} did not pass every check of its gate for {rubric.id}, and its verdict does not "
        f"certify this criterion ({said}): run `judgekit gate POLICY.yaml` again with this criteria file "
        "(labelling more or improving the judge when a check fails or is open) and pass the verdict.json "
        "it writes, or run the analysis untrusted (its figures are then stamped UNTRUSTED).",
        cli_hint="On the command line: --verdict verdict.json, or --untrusted.",
    )


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
