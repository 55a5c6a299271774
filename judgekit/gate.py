"""The trust gate: a policy file → a verdict per judge.

A policy names the rubric, the judges, the reference and the thresholds a judge must clear.
The verdict (schema version 2, :mod:`judgekit.verdict`) records each check with its figure,
threshold, n, interval and state, and the hashes of the rubric, the items that carry human or
reference ratings, the human ratings and each judge, so that analysis code can ask for a verdict
that is consistent and matches the store it uses (:func:`require_trusted` with ``store=``).

Example policy (YAML)::

    rubric: refusal
    judges: [gpt4, string_match]
    reference: final            # optional: default the adjudicated rater, else consensus
    by: [model]                 # slices for the per-slice floor
    checks:
      min_items: 200
      metric: kappa             # kappa | weighted_kappa | alpha | ac1 | percent_agreement
      min_lower_bound: 0.6      # lower end of the 95% CI of the metric against the reference
      max_abstention_rate: 0.02
      max_error_rate: 0.02
      min_class_recall: {min: 0.5, min_support: 10}
      per_slice: {min_items: 50, min_value: 0.5}
      within_human_noise: {margin: 0.1}

Exit codes of ``judgekit gate``: 0 every judge passes, 1 a judge fails, 2 bad input.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from judgekit.agreement.report import AgreementReport, agreement_report
from judgekit.errors import JudgekitError, UntrustedJudgeError, excerpt
from judgekit.policy import Policy, check_policy_raters, load_policy
from judgekit.rubric import Rubric, load_rubric
from judgekit.verdict import (
    SCHEMA_VERSION,
    Verdict,
    finite,
    judge_identity,
    load_verdict,
    make_check,
    match_store,
    ratings_hash,
    store_hashes,
)
from judgekit.verdict import digest as _digest
from judgekit.verdict_log import judge_ratings_hash, record_verdict
from judgekit.version import __version__

__all__ = ["Policy", "evaluate", "explain", "judge_identity", "load_policy", "load_verdict", "ratings_hash",
           "require_trusted", "run_gate"]


def _ci(figure: dict[str, Any]) -> list[float | None] | None:
    """The interval of an agreement figure (``low``, ``high``), or None when it has none."""
    lo, hi = figure.get("low"), figure.get("high")
    return None if lo is None or hi is None else [lo, hi]


def _wilson(k: float, n: int) -> list[float | None] | None:
    """Wilson 95% interval of a rate ``k / n`` (None when ``n`` is 0)."""
    from judgekit.analysis.intervals import wilson_interval

    if not n:
        return None
    lo, hi = wilson_interval(k, n)
    return [finite(lo), finite(hi)]


def evaluate(policy: Policy, report: AgreementReport) -> list[dict[str, Any]]:
    """Apply the policy's checks to each judge in the report. Pure: no I/O.

    Each check has its figure, threshold, n, interval (``ci``) and ``state``; the state follows
    from figure vs threshold by :func:`judgekit.verdict.derive_state` (the rule a verdict is
    checked against when read back), and a judge passes only when every state is ``"pass"``.
    """
    c = policy.checks
    metric = c.metric
    out = []
    overall = report.slice(None, "all")
    for judge in policy.judges:
        j = overall["judges"][judge]
        checks: list[dict] = []
        m = j["vs_reference"].get(metric)
        if m is None:
            raise JudgekitError(
                f"Policy checks.metric {metric!r} does not apply to a {report.data['level']} rubric; "
                "use kappa, alpha, ac1 or percent_agreement."
            )
        n = m["n"]
        if c.min_items is not None:
            checks.append(make_check("min_items", n, c.min_items, n,
                                     f"{n} items rated by {judge} and the reference"))
        if c.min_value is not None:
            checks.append(make_check(f"min_{metric}", m["value"], c.min_value, n,
                                     m["undefined"] or f"{metric} against the reference", _ci(m)))
        if c.min_lower_bound is not None:
            checks.append(make_check(
                f"min_{metric}_lower_bound", m["low"], c.min_lower_bound, n,
                m["undefined"] or f"lower end of the {int(report.data['confidence'] * 100)}% CI of "
                f"{metric} (point estimate {_fmt(m['value'])})", _ci(m)))
        if c.max_abstention_rate is not None:
            r = j["abstain_rate"] or 0.0
            checks.append(make_check("max_abstention_rate", r, c.max_abstention_rate, j["n_items"],
                                     f"{j['n_abstain']} of {j['n_items']} items abstained",
                                     _wilson(j["n_abstain"], j["n_items"])))
        if c.max_error_rate is not None:
            r = j["error_rate"] or 0.0
            checks.append(make_check("max_error_rate", r, c.max_error_rate, j["n_items"],
                                     f"{j['n_error']} of {j['n_items']} items failed",
                                     _wilson(j["n_error"], j["n_items"])))
        if c.min_class_recall is not None:
            conf = j["vs_reference"]["confusion"]
            for i, label in enumerate(conf["labels"]):
                support = conf["support"][label]
                if support < c.min_class_recall.min_support:
                    continue
                checks.append(make_check(
                    f"min_recall[{label}]", conf["recall"][label], c.min_class_recall.min, support,
                    f"share of the {support} reference '{label}' items the judge also calls '{label}'",
                    _wilson(conf["matrix"][i][i], support)))
        if c.per_slice is not None:
            for s in report.data["slices"]:
                if s["by"] is None or judge not in s["judges"]:
                    continue
                ms = s["judges"][judge]["vs_reference"][metric]
                if ms["n"] < c.per_slice.min_items:
                    continue
                checks.append(make_check(
                    f"per_slice[{s['by']}={s['key']}]", ms["value"], c.per_slice.min_value, ms["n"],
                    ms["undefined"] or f"{metric} in slice {s['by']}={s['key']}", _ci(ms)))
        if c.within_human_noise is not None:
            ceiling = overall["human_ceiling"].get(metric)
            hv = ceiling["value"] if ceiling else None
            v = m["value"]
            if hv is None:
                checks.append(make_check("within_human_noise", v, None, n,
                                         "no human–human agreement to compare with (need two humans on the same items)",
                                         _ci(m)))
            else:
                thr = round(hv - c.within_human_noise.margin, 6)
                checks.append(make_check(
                    "within_human_noise", v, thr, n,
                    f"judge {metric} {_fmt(v)} vs human–human {_fmt(hv)} minus margin {c.within_human_noise.margin}",
                    _ci(m)))
        out.append({"judge": judge, "passed": all(ch["state"] == "pass" for ch in checks), "checks": checks})
    return out


def run_gate(store: Any, policy_path: str | Path) -> tuple[dict[str, Any], AgreementReport]:
    """Compute the verdict for a policy over the ratings in ``store``.

    The verdict (schema :data:`judgekit.verdict.SCHEMA_VERSION`) records the policy and its
    hash, the rubric and its hash, the hashes of the items that carry human or reference ratings
    and of those ratings, and per judge its identity and checks (:func:`evaluate`).
    """
    policy, raw = load_policy(policy_path)
    rubric = load_rubric(policy.rubric)
    known = set(store.ratings(rubric=rubric, rater_kind="judge")["rater_id"].unique())
    for judge in policy.judges:
        if judge not in known:
            raise JudgekitError(
                f"Policy file {policy_path}: judge {excerpt(judge)} has no ratings under {rubric.ref} "
                f"in {store.path}; judges with ratings: {', '.join(sorted(known)) or 'none'}."
            )
    items_meta = check_policy_raters(policy, policy_path, store, rubric)
    report = agreement_report(
        store,
        rubric=rubric,
        items=items_meta,
        by=policy.by,
        judges=policy.judges,
        humans=policy.humans,
        reference=policy.reference,
        n_resamples=policy.n_resamples,
        seed=policy.seed,
    )
    results = evaluate(policy, report)
    for r in results:
        r.update({k: v for k, v in judge_identity(store, r["judge"], rubric).items() if k != "judge"})
        r["judge_ratings_hash"] = judge_ratings_hash(store, rubric, r["judge"])
    verdict = {
        "schema_version": SCHEMA_VERSION,
        "judgekit_version": __version__,
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "policy": raw,
        "policy_hash": _digest(raw),
        "rubric": rubric.id,
        "rubric_hash": rubric.hash,
        "reference": report.data["reference"]["rater"] or "consensus",
        **store_hashes(store, rubric),
        "passed": all(r["passed"] for r in results),
        "judges": results,
    }
    record_verdict(store, verdict)
    return verdict, report


def explain(verdict: dict[str, Any]) -> list[str]:
    """A short human-readable explanation of a verdict, one line per judge and failed check."""
    lines = []
    for j in verdict["judges"]:
        if j["passed"]:
            lines.append(f"TRUSTED    {j['judge']} for {verdict['rubric']}: all {len(j['checks'])} checks pass.")
            continue
        failed = [c for c in j["checks"] if c.get("state", "pass" if c["passed"] else "fail") != "pass"]
        lines.append(f"UNTRUSTED  {j['judge']} for {verdict['rubric']}: {len(failed)} of {len(j['checks'])} checks fail:")
        for c in failed:
            ci = c.get("ci")
            interval = f" [95% CI {_fmt(ci[0])}–{_fmt(ci[1])}]" if ci else ""
            lines.append(f"             {c['name']}: {_fmt(c['figure'])}{interval} vs threshold {_fmt(c['threshold'])} "
                         f"(n={c['n']}) — {c['detail']}")
    return lines


def _fmt(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


# ----------------------------------------------------------------------------- the guard
def require_trusted(
    verdict: dict[str, Any] | str | Path | None,
    *,
    judge: str,
    rubric: Rubric | str,
    judge_hash: str | None = None,
    store: Any = None,
) -> dict[str, Any]:
    """Raise :class:`UntrustedJudgeError` unless ``verdict`` says ``judge`` passed for ``rubric``.

    The verdict is read strictly and must be consistent (:func:`judgekit.verdict.load_verdict`),
    be for the same rubric content (hash), name the judge, and mark it passed. With ``store``
    (every judgekit code path passes it) it must also still describe that store: the items that
    carry human or reference ratings, the human ratings and the judge's identity
    (:func:`judgekit.verdict.match_store`). If ``judge_hash`` is given it must match too (same
    judge spec and parameters). Returns the judge's entry of the verdict.
    """
    rub = load_rubric(rubric)
    how = (
        f"run `judgekit gate POLICY.yaml` with a policy naming judge {judge!r} and rubric {rub.id}, "
        "and pass the verdict.json it writes"
    )
    if verdict is None:
        raise UntrustedJudgeError(f"No verdict given for judge {judge!r} on {rub.id}; {how}.")
    v: Verdict = load_verdict(verdict)
    if v["rubric"] != rub.id or v["rubric_hash"] != rub.hash:
        raise UntrustedJudgeError(
            f"The verdict is for rubric {v['rubric']}#{v['rubric_hash']}, not {rub.ref} "
            f"(the rubric changed or another was gated); {how}."
        )
    entry = next((j for j in v["judges"] if j["judge"] == judge), None)
    if entry is None:
        names = ", ".join(j["judge"] for j in v["judges"])
        raise UntrustedJudgeError(f"The verdict does not cover judge {judge!r} (it covers {names}); {how}.")
    if store is not None:
        match_store(v, store, rub, judge=judge)
    if judge_hash is not None and entry["judge_hash"] != judge_hash:
        raise UntrustedJudgeError(
            f"Judge {judge!r} changed since the verdict (its spec or parameters differ); {how}."
        )
    if not entry["passed"]:
        failed = [c["name"] for c in entry["checks"] if c["state"] != "pass"]
        raise UntrustedJudgeError(
            f"Judge {judge!r} did not pass the gate for {rub.id} (failed: {', '.join(failed)}); "
            "its ratings cannot be used as trusted — improve the judge or use --untrusted to stamp "
            "results UNTRUSTED."
        )
    return entry
