"""The report's "Analysis fidelity" section: per judge and figure, the judge's value, the
reference's value and the difference with its CI (at the level the verdict's checks read: 1 − 2α),
on the human-rated items.

:func:`fidelity_extras` recomputes the figures of the verdict's ``analysis_fidelity`` check from
the store (the same computation, seed and resamples as the gate, :mod:`judgekit.gate.fidelity`, so
the numbers are the verdict's); :func:`fidelity_grid` lays them out as a plain table for the
HTML and Markdown renderers (they escape the cells).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.report.escape import fmt_int, fmt_num
from judgekit.report.trust import Grid

__all__ = ["fidelity_extras", "fidelity_grid"]

_STATE = {"pass": "within", "fail": "OUTSIDE", "inconclusive": "inconclusive"}


def fidelity_extras(store: Any, rubric: Any, verdict: dict[str, Any] | None,
                    policy_dir: str | Path = ".") -> dict[str, Any] | None:
    """``{"max_abs_diff", "analysis", "min_units", "rows": [...]}`` (a row per judge and figure:
    ``judge`` (its id), ``judge_value``, ``reference``, ``diff``, ``ci``, ``n``, ``unit``,
    ``state``, ``undefined``) for a verdict whose policy has
    ``analysis_fidelity`` (None otherwise, or for a verdict about another rubric); a criteria
    file the policy names relative to its own folder is looked up under ``policy_dir``. When the
    figures cannot be recomputed, ``{"error": sentence}``."""
    if not verdict or (verdict.get("rubric"), verdict.get("rubric_hash")) != (rubric.id, rubric.hash):
        return None
    from judgekit.gate.fidelity import fidelity_checks, fidelity_results
    from judgekit.verdict.fidelity_policy import recorded_alpha
    from judgekit.verdict.read import policy_of

    policy = policy_of(verdict)
    spec = policy.checks.analysis_fidelity
    if spec is None:
        return None
    # the α the verdict's checks were decided at (a verdict without it read the 95% interval)
    spec = spec.model_copy(update={"alpha": recorded_alpha(verdict["policy"]) or spec.alpha})
    policy = policy.model_copy(update={"checks": policy.checks.model_copy(update={"analysis_fidelity": spec})})
    try:
        pairs = fidelity_results(store, policy, Path(policy_dir) / "policy.yaml", rubric,
                                 reference=verdict.get("reference"), humans=policy.humans)
    except JudgekitError as exc:
        return {"error": str(exc)}
    rows = []
    for judge, figs in pairs.items():
        for p, ch in zip(figs, fidelity_checks(spec, judge, figs, seed=policy.seed), strict=True):
            row = p.as_dict()
            row["judge_value"] = row.pop("judge")
            rows.append({"judge": judge, **row, "state": ch.state})
    return {"analysis": spec.analysis, "max_abs_diff": spec.max_abs_diff, "min_units": spec.min_units,
            "margins": dict(spec.margins), "alpha": spec.alpha, "level": spec.level, "rows": rows}


def _signed(x: Any) -> str:
    return "—" if x is None else f"{x:+.3f}"


def fidelity_grid(fid: dict[str, Any] | None) -> Grid | None:
    """The section's table, or None without fidelity figures."""
    if not fid or not fid.get("rows"):
        return None
    rows = []
    for r in fid["rows"]:
        ci = r.get("ci")
        diff = (f"{_signed(r['diff'])} [{_signed(ci[0])}, {_signed(ci[1])}]" if ci and r.get("diff") is not None
                else _signed(r.get("diff")))
        rows.append([str(r["judge"]), str(r["name"]), fmt_num(r.get("judge_value"), 3) if r.get("judge_value") is not None else "undef.",
                     fmt_num(r.get("reference"), 3) if r.get("reference") is not None else "undef.", diff,
                     f"{fmt_int(r.get('n'))} {r.get('unit')}", _STATE.get(str(r.get("state")), str(r.get("state"))),
                     str(r.get("undefined") or "")])
    level = f"{100 * float(fid.get('level') or 0.95):.4g}%"
    own = ", ".join(f"{f} {m:g}" for f, m in (fid.get("margins") or {}).items())
    margin = f"{fid['max_abs_diff']:g}" + (f" ({own})" if own else "")
    alpha = f" (two one-sided tests at {float(fid['alpha']):g})" if fid.get("alpha") is not None else ""
    note = (f"{fid['analysis']} figures computed twice on the items the reference rated: from the judge's labels "
            f"and from the reference's. difference = judge − reference with its {level} paired bootstrap CI "
            f"(resampling whole conversations or prompts); a judge's figure is within when the whole CI of "
            f"|difference| is at most its margin {margin}{alpha}, outside when all of it is above, inconclusive "
            f"otherwise or with fewer than {fid['min_units']} labelled units behind it.")
    return Grid("Analysis fidelity: the study's figures from the judge vs from the reference",
                ["judge", "figure", "judge value", "reference value", f"difference [{level} CI]", "n", "fidelity",
                 "undefined because"], rows, numeric=[2, 3, 4], note=note)
