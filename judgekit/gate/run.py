"""The trust gate: a policy file → a verdict per judge.

A policy names the rubric, the judges, the reference and the thresholds a judge must clear.
The verdict (schema version 2, :mod:`judgekit.verdict.read`) records each check with its figure,
threshold, n, interval and state, and the hashes of the rubric, the items that carry human or
reference ratings, the human ratings and each judge, so that analysis code can ask for a verdict
that is consistent and matches the store it uses (:func:`require_trusted` with ``store=``).

Example policy (YAML)::

    rubric: refusal
    # view: binary              # optional: gate under a view of the rubric (rubric_views)
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
      min_coverage: 0.95        # share of in-scope items the judge rated (Wilson CI)
      max_abs_bias: {max: 0.05, per_slice: true}
      alt_test: {epsilon: 0.2, q: 0.05, min_winning_rate: 0.5}
      # probes (docs/probes.md): each an equivalence margin, Holm over the slices tested
      max_covariate_effect: {column: response_chars, target: full_refusal, max: 0.1}
      max_self_preference: {max: 0.1, column: model, judges: {gpt4: openai}, models: {gpt4: openai, ...}}
      min_stability: {min: 0.8}               # α across a judge's trials
      max_flip_rate: {max: 0.1, variants: [label_order, padding]}   # after `judgekit probe`
      analysis_fidelity: {analysis: calibration, figures: [C, RCE, drift], max_abs_diff: 0.05}

Three states (:func:`judgekit.verdict.checks.derive_state`). Each check is ``pass``, ``fail`` or
``inconclusive``:

* a check whose n is below its floor is ``inconclusive`` (a small sample, flagged in its detail
  and in ``explain``): ``checks.min_items`` is the floor of every overall check (and the
  ``min_items`` check itself is ``pass`` at or above it, ``inconclusive`` below it — never
  ``fail``: more labels can decide it); per-slice checks use ``per_slice.min_items`` and
  ``max_abs_bias.min_items``;
* interval checks decide on their whole CI: pass when it clears the threshold, fail when it
  misses it entirely, inconclusive when it straddles it. Wilson intervals for rates
  (abstention, error, coverage, class recall); the bootstrap for agreement figures
  (``min_lower_bound``; ``within_human_noise`` = the paired difference judge − humans against
  the same leave-one-out consensus, threshold −margin) and for ``max_abs_bias`` (the interval
  of |bias|, the largest over labels for nominal rubrics);
* ``min_value`` and ``per_slice.min_value`` mean the point estimate: it decides pass or fail
  (the CI is recorded, not used) once n reaches the floor;
* ``alt_test`` decides by its own test: pass when the winning rate >= ``min_winning_rate``,
  fail otherwise, inconclusive when too few humans or units qualify.
* ``analysis_fidelity`` (:mod:`judgekit.gate.fidelity`): one ``ci<=`` check per figure of the
  analysis, |figure(judge) − figure(reference)| on the human-rated items against
  ``max_abs_diff``, with its own floor ``min_units`` (labelled conversations or prompts); an
  undefined figure is inconclusive.

A judge is ``pass`` only if every check passes, ``fail`` if any fails, else ``inconclusive``;
an inconclusive check and judge carry a label ``budget`` (:func:`label_budget`): about how many
more human-rated items (and in which slices) would likely decide it, in one sentence.

Exit codes of ``judgekit gate``: 0 every judge passes, 1 a judge fails, 3 none fails but some
judge is inconclusive, 2 bad input.
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from judgekit.core.hashing import digest as _digest
from judgekit.errors import JudgekitError, excerpt
from judgekit.gate.alt import alt_inputs_results as alt_inputs_results  # re-exported: its old home
from judgekit.gate.budget import alt_budget, judge_budget, label_budget
from judgekit.rubric.model import rubric_named_in
from judgekit.verdict.checks import check_kind, combine_states, interval_named, make_check, min_n_of
from judgekit.verdict.fidelity_policy import record_alpha
from judgekit.verdict.log import judge_ratings_hash, record_verdict
from judgekit.verdict.policy import Policy, load_policy
from judgekit.verdict.read import (
    SCHEMA_VERSION,
    finite,
    judge_identity,
    load_verdict,
    ratings_hash,
    store_hashes,
)
from judgekit.version import __version__

if TYPE_CHECKING:
    from judgekit.agreement.report import AgreementReport
    from judgekit.gate.figures import GateReport

#: what :func:`evaluate` reads: the full agreement report or the gate's own (:mod:`judgekit.gate.figures`)
Report = Union["AgreementReport", "GateReport"]

__all__ = ["Policy", "evaluate", "explain", "judge_identity", "load_policy", "load_verdict", "ratings_hash",
           "run_gate"]


def _ci(figure: dict[str, Any]) -> list[float | None] | None:
    """The interval of an agreement figure (``low``, ``high``), or None when it has none."""
    lo, hi = figure.get("low"), figure.get("high")
    return None if lo is None or hi is None else [lo, hi]


def _wilson(k: float, n: int) -> list[float | None] | None:
    """Wilson 95% interval of a rate ``k / n`` (None when ``n`` is 0)."""
    from judgekit.stats.intervals import wilson_interval

    if not n:
        return None
    lo, hi = wilson_interval(k, n)
    return [finite(lo), finite(hi)]


def _abs_interval(lo: float, hi: float) -> tuple[float, float]:
    """Interval of |x| when x lies in [lo, hi]."""
    if lo <= 0 <= hi:
        return 0.0, max(-lo, hi)
    return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))


def _bias_figure(bias: dict[str, Any]) -> tuple[float | None, list[float | None] | None, str]:
    """The max_abs_bias figure of one judge and slice: |bias| (point), the interval of |bias|
    (the largest over labels for nominal rubrics) and a detail naming the figure."""
    top = bias["max_abs"]
    if top["value"] is None:
        return None, None, top.get("undefined") or "no bias figure"
    if top["of"] == "mean_diff":
        figs = {"": bias["mean_diff"]}
        what = f"mean signed difference judge − reference on the rubric's values {top['signed']:+.3f}"
    else:
        figs = bias["share_diff"]
        what = (f"largest difference of a label's share judge − reference: {top['code']} "
                f"{top['signed']:+.3f}")
    bounds = [_abs_interval(f["low"], f["high"]) for f in figs.values()
              if f.get("low") is not None and f.get("high") is not None]
    if not bounds:
        return top["value"], None, what
    return top["value"], [finite(max(b[0] for b in bounds)), finite(max(b[1] for b in bounds))], what


_LOO = ("percent_agreement", "kappa", "weighted_kappa")


def evaluate(policy: Policy, report: Report, alt: dict[str, Any] | None = None,
             probes: dict[str, list[dict[str, Any]]] | None = None,
             fidelity: dict[str, Any] | None = None,
             calls: dict[str, dict[str, int]] | None = None) -> list[dict[str, Any]]:
    """Apply the policy's checks to each judge in the report. Pure: no I/O.

    Each check has its figure, threshold, n, interval (``ci``) and ``state``; the state follows
    by :func:`judgekit.verdict.checks.derive_state` (the rule a verdict is checked against when read
    back): ``pass``, ``fail`` or ``inconclusive``. A judge is ``pass`` only when every check
    passes, ``fail`` when any fails, else ``inconclusive``; an inconclusive check and judge
    carry a label ``budget`` (:func:`label_budget`). ``alt`` maps each judge to its
    :class:`~judgekit.agreement.alternative_annotator.AltTestResult` (``run_gate`` computes it
    from the store when the policy has ``alt_test``). ``probes`` maps each judge to its probe
    checks (:func:`judgekit.gate.probe_checks.gate_checks`; ``run_gate`` computes them); ``fidelity``
    maps each judge to its figure pairs (:func:`judgekit.gate.fidelity.fidelity_results`, for
    ``analysis_fidelity``). ``calls`` maps each judge to its own calls
    (:func:`judgekit.gate.calls.own_calls`): abstention and error rates are then decided on every
    item the judge rated, and label budgets never exceed the items the judge rated.
    """
    from judgekit.gate.budget import rate_budget, undecidable_budget

    c = policy.checks
    metric = c.metric
    floor = c.min_items
    out = []
    overall = report.slice(None, "all")
    conf = int(report.data["confidence"] * 100)
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
        own = (calls or {}).get(judge)
        # the items the judge rated that no human has labelled yet: the most a budget can ask for
        spare = None if own is None else max(own["items"] - n, 0)

        def add(name: str, figure: Any, threshold: Any, n_: int | None, detail: str,
                ci: Any = None, min_n: int | None = floor, point: Any = None,
                checks: list[dict] = checks, unit: str = "human-rated items",
                available: int | None = spare, undefined: str | None = None) -> dict[str, Any]:
            ch = make_check(name, figure, threshold, n_, detail, ci, min_n=min_n)
            if ch["state"] == "inconclusive":
                ch["budget"] = label_budget(ch, point=figure if point is None else point, min_n=min_n,
                                            seed=policy.seed, unit=unit, available=available,
                                            undefined=undefined if figure is None else None)
            checks.append(ch)
            return ch

        if c.min_items is not None:
            add("min_items", n, c.min_items, n, f"{n} items rated by {judge} and the reference")
        if c.min_value is not None:
            add(f"min_{metric}", m["value"], c.min_value, n,
                m["undefined"] or f"{metric} against the reference (the point estimate decides)", _ci(m),
                undefined=m["undefined"])
        if c.min_lower_bound is not None:
            add(f"min_{metric}_lower_bound", m["low"], c.min_lower_bound, n,
                m["undefined"] or f"lower end of the {conf}% CI of {metric} (point estimate {_fmt(m['value'])})",
                _ci(m), point=m["value"], undefined=m["undefined"])
        for key, rate_thr, word in (("abstain", c.max_abstention_rate, "abstained"),
                                    ("error", c.max_error_rate, "failed")):
            if rate_thr is None:
                continue
            name = "max_abstention_rate" if key == "abstain" else "max_error_rate"
            if own is not None:  # the judge's own calls, on every item it rated
                k_, n_calls = own[key], own["calls"]
                where = f"{k_} of {n_calls} calls of {judge} {word} (all items it rated, human-labelled or not)"
            else:
                k_, n_calls = j[f"n_{key}"], j["n_items"]
                where = f"{k_} of {n_calls} items {word}"
            ch = make_check(name, (k_ / n_calls) if n_calls else 0.0, rate_thr, n_calls, where,
                            _wilson(k_, n_calls), min_n=floor)
            if ch["state"] == "inconclusive":
                ch["budget"] = rate_budget(ch, judge=judge, k=k_, unjudged=own["unjudged"] if own else 1,
                                           min_n=floor, seed=policy.seed)
            checks.append(ch)
        if c.min_coverage is not None:
            cov = j["coverage"]
            share = cov["share"]
            add("min_coverage", share["value"], c.min_coverage, cov["in_scope"],
                f"rated {cov['rated']} of {cov['in_scope']} in-scope items (abstained {cov['abstained']}, "
                f"errored {cov['errored']}, not attempted {cov['not_attempted']})", _ci(share))
        if c.min_class_recall is not None:
            cm = j["vs_reference"]["confusion"]
            for i, label in enumerate(cm["labels"]):
                support = cm["support"][label]
                if support < c.min_class_recall.min_support:
                    continue
                add(f"min_recall[{label}]", cm["recall"][label], c.min_class_recall.min, support,
                    f"share of the {support} reference '{label}' items the judge also calls '{label}'",
                    _wilson(cm["matrix"][i][i], support), min_n=None)
                b = checks[-1]["budget"]
                total = sum(cm["support"].values())
                if b is not None and b["items"] is not None and total > support:
                    more = math.ceil(b["items"] * total / support)
                    if spare is not None and more > spare:
                        checks[-1]["budget"] = undecidable_budget(checks[-1]["name"], (
                            f"it would need about {more:,} more human-rated items at the label's current share "
                            f"{support} of {total}, but the data holds only {spare:,} more"))
                        continue
                    b["sentence"] = (f"{checks[-1]['name']}: about {b['items']} more items with the reference "
                                     f"label '{label}' (about {more} more human-rated items at its current share "
                                     f"{support} of {total}) would likely decide it (CI half-width ∝ 1/√n, "
                                     "confirmed by one simulation).")
                    b["items"] = more
        if c.per_slice is not None:
            for s in report.data["slices"]:
                if s["by"] is None or judge not in s["judges"]:
                    continue
                ms = s["judges"][judge]["vs_reference"][metric]
                add(f"per_slice[{s['by']}={s['key']}]", ms["value"], c.per_slice.min_value, ms["n"],
                    ms["undefined"] or f"{metric} in slice {s['by']}={s['key']} (the point estimate decides)",
                    _ci(ms), min_n=c.per_slice.min_items, available=None,
                    undefined=ms["undefined"] or ("undefined" if ms["value"] is None else None))
        if c.max_abs_bias is not None:
            b = c.max_abs_bias
            fv, fci, what = _bias_figure(j["bias"])
            add("max_abs_bias", fv, b.max, j["bias"]["n"], f"|bias| against the reference: {what}", fci)
            if b.per_slice:
                for s in report.data["slices"]:
                    if s["by"] is None or judge not in s["judges"]:
                        continue
                    sb = s["judges"][judge]["bias"]
                    fv, fci, what = _bias_figure(sb)
                    add(f"max_abs_bias[{s['by']}={s['key']}]", fv, b.max, sb["n"],
                        f"|bias| in slice {s['by']}={s['key']}: {what}", fci, min_n=b.min_items)
        if c.within_human_noise is not None:
            lm = metric if metric in _LOO else "kappa"
            loo = overall["human_ceiling"].get("loo") or {}
            mean = j.get("vs_loo", {}).get("mean", {})
            diff = (mean.get("difference") or {}).get(lm) or {}
            thr = round(-c.within_human_noise.margin, 6)
            name_k = {"kappa": "Cohen κ", "weighted_kappa": "quadratic-weighted Cohen κ",
                      "percent_agreement": "% agreement"}[lm]
            if diff.get("value") is None:
                why = (loo.get("undefined") or diff.get("undefined")
                       or "no leave-one-out comparison (need two humans on the same items)")
                # below checks.min_items it is inconclusive, as every overall check (derive_state)
                ch = add("within_human_noise", None, thr, mean.get("n", 0),
                         f"no like-for-like human comparison: {why}", unit="items rated by two or more humans",
                         available=None, undefined=why)
                n_hum = len(report.data.get("ceiling_raters") or report.data.get("humans") or [])
                if ch["state"] == "inconclusive" and n_hum < 2:
                    ch["budget"] = undecidable_budget("within_human_noise", (
                        f"only a second annotator can decide it: it compares {judge} and each human with the "
                        f"others' consensus on the same items, and {n_hum} human rated them; more items rated by "
                        "one human do not help — have a second human rate some of the same items"))
            else:
                jv = mean[lm]["value"]
                hv = mean["human_same_items"][lm]["value"]
                note = "" if lm == metric else f" ({metric} has no leave-one-out form; {lm} is used)"
                add("within_human_noise", diff["value"], thr, mean["n"],
                    f"{name_k} of the judge vs the leave-one-out consensus {_fmt(jv)} against each human vs "
                    f"the same consensus "
                    f"{_fmt(hv)} on the same items (mean over {mean['n_humans']} humans): paired difference "
                    f"{_fmt(diff['value'])}, must stay above −margin {c.within_human_noise.margin}{note}",
                    _ci(diff), unit="items rated by two or more humans",
                    available=None if own is None else max(own["items"] - mean["n"], 0))
        if c.alt_test is not None:
            at = c.alt_test
            res = (alt or {}).get(judge)
            if res is None or res.undefined_reason is not None:
                why = res.undefined_reason if res is not None else "not computed"
                ch = make_check("alt_test", None, at.min_winning_rate, res.n_units if res else 0,
                                f"alternative annotator test (ε={at.epsilon}, q={at.q}) cannot run: {why}",
                                min_n=floor)
                ch["budget"] = alt_budget(res, at.min_units_per_human)
                checks.append(ch)
            else:
                won = sum(h.rejected for h in res.per_human)
                add("alt_test", finite(res.winning_rate), at.min_winning_rate, res.n_units,
                    f"alternative annotator test (ε={at.epsilon}, q={at.q}): the judge wins against {won} of "
                    f"{res.n_humans} humans, winning rate ω={_fmt(finite(res.winning_rate))}, advantage "
                    f"probability ρ={_fmt(finite(res.advantage_probability))} (the test decides, no CI)")
        for ch in (probes or {}).get(judge, []):
            kind = check_kind(ch["name"])
            if ch["state"] == "inconclusive" and kind is not None and not ch.get("budget"):
                ch["budget"] = label_budget(ch, point=ch["figure"], min_n=min_n_of(kind[0], policy), seed=policy.seed)
            checks.append(ch)
        if c.analysis_fidelity is not None:
            from judgekit.gate.fidelity import fidelity_checks

            checks += fidelity_checks(c.analysis_fidelity, (fidelity or {}).get(judge, []), seed=policy.seed)
        state = combine_states([ch["state"] for ch in checks])
        out.append({"judge": judge, "state": state, "passed": state == "pass", "checks": checks,
                    "budget": judge_budget(judge, checks) if state == "inconclusive" else None})
    return out


def run_gate(store: Any, policy_path: str | Path, *, full_report: bool = False,
             record: bool = True, sequential: int | None = None,
             rounds: list[str] | None = None) -> tuple[dict[str, Any], Report]:
    """Compute the verdict for a policy over the ratings in ``store``.

    The verdict (schema :data:`judgekit.verdict.read.SCHEMA_VERSION`) records the policy and its
    hash, the rubric and its hash, the hashes of the items that carry human or reference ratings
    and of those ratings, and per judge its identity and checks (:func:`evaluate`); with an
    ``analysis: criteria`` fidelity check, the digest of each gated criterion (``criteria_digests``).

    Returns the verdict and the figures it was decided on: the agreement report with only the
    figures the policy's checks read (:func:`judgekit.gate.figures.decide_figures`), or with
    ``full_report`` every figure (slower: every rater pair in every slice; the verdict is the
    same, each figure coming from the same function).
    """
    policy, raw = load_policy(policy_path)
    raw = record_alpha(raw)  # the verdict says which interval its fidelity checks read
    rubric = rubric_named_in(policy.rubric, f"Policy file {policy_path}")
    view_info: dict[str, Any] = {}
    if policy.view is not None:
        from judgekit.rubric.views import ViewSource, rubric_view

        rubric = rubric_view(rubric, policy.view, where=f"Policy file {policy_path}: view")
        store = ViewSource(store, rubric)
        view_info = {"view": rubric.view_info()}
    from judgekit.store import digests

    if digests.plain_store(store):
        known = {r for r, k in digests.rater_kinds(store, rubric).items() if k == "judge"}
    else:
        known = set(store.ratings(rubric=rubric, rater_kind="judge")["rater_id"].unique())
    for judge in policy.judges:
        if judge not in known:
            raise JudgekitError(
                f"Policy file {policy_path}: judge {excerpt(judge)} has no ratings under {rubric.ref} "
                f"in {store.path}; judges with ratings: {', '.join(sorted(known)) or 'none'}."
            )
    from judgekit.gate.figures import decide_figures, has_probes, reads_variants
    from judgekit.verdict.hashes import matrix_hashes

    report, codes = decide_figures(store, policy, policy_path, rubric, full_report=full_report)
    # the verdict's hashes from the same matrix when it holds the stored ratings as they are
    hashes = matrix_hashes(store, rubric, codes, policy.judges, variants=reads_variants(policy))
    # the alt test and the probes read the same matrix (without perturbed item copies)
    plain = None if reads_variants(policy) else codes
    alt = alt_inputs_results(store, policy, rubric, report, plain) if policy.checks.alt_test else None
    probes: dict[str, list[dict[str, Any]]] = {}
    if has_probes(policy):
        from judgekit.gate.probe_checks import (
            gate_checks,  # (pandas: only for a policy with probes)
        )

        probes = gate_checks(store, policy, rubric, f"Policy file {policy_path}", codes=plain)
    fid = crit = None
    if policy.checks.analysis_fidelity is not None:
        from judgekit.gate.fidelity import criteria_digests, fidelity_results

        fid = fidelity_results(store, policy, policy_path, rubric, report)
        crit = criteria_digests(policy, policy_path, rubric)  # (analysis: criteria, issue 22)
    from judgekit.gate.calls import own_calls

    results = evaluate(policy, report, alt, probes=probes, fidelity=fid,
                       calls=own_calls(store, rubric, list(policy.judges)))
    seq_info = None
    if sequential is not None:  # rounds of `sequential` conversations (judgekit.gate.sequential)
        from judgekit.gate.sequential import apply_sequential, sample_rounds, sequential_checks

        seq, seq_info = sequential_checks(store, policy, rubric, report, round_size=sequential,
                                          rounds_of=sample_rounds(store, rounds) if rounds else None)
        if rounds:
            seq_info["samples"] = list(rounds)
        apply_sequential(results, seq)
    from judgekit.store.provenance import meta_hashes, provenance_digests  # issue 20
    from judgekit.verdict.certify import certify
    for r in results:
        r.update({k: v for k, v in judge_identity(store, r["judge"], rubric).items() if k != "judge"})
        certs = certify(r, policy)
        if certs:
            r["figures"] = certs
        r["judge_ratings_hash"] = (hashes["judges"][r["judge"]] if hashes else
                                   judge_ratings_hash(store, rubric, r["judge"]))
        r["provenance"] = provenance_digests(store, rubric, r["judge"])  # issue 20: where they came from
    verdict = {
        "schema_version": SCHEMA_VERSION,
        "judgekit_version": __version__,
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "policy": raw,
        "policy_hash": _digest(raw),
        "rubric": rubric.id,
        "rubric_hash": rubric.hash,
        "reference": report.data["reference"]["rater"] or "consensus",
        **({k: hashes[k] for k in ("items_hash", "human_ratings_hash")} if hashes else store_hashes(store, rubric)),
        "state": combine_states([r["state"] for r in results]),
        "passed": all(r["passed"] for r in results),
        "judges": results,
        **view_info,
        "meta_hashes": meta_hashes(store, rubric),  # issue 20: the labelled items' metadata
        **({"sequential": seq_info} if seq_info is not None else {}),
        **({"criteria_digests": crit} if crit is not None else {}),
    }
    if record:  # (``judgekit plan`` reads a pilot without recording a verdict)
        record_verdict(store, verdict)
    return verdict, report


_WORD = {"pass": "TRUSTED   ", "fail": "UNTRUSTED ", "inconclusive": "INCONCLUSIVE"}


def explain(verdict: dict[str, Any]) -> list[str]:
    """A short human-readable explanation of a verdict: one line per judge, then one per check
    that did not pass (with its interval and n; a small sample says so), and for an
    inconclusive judge its label budget in one sentence."""
    lines = []
    for j in verdict["judges"]:
        state = j.get("state", "pass" if j["passed"] else "fail")
        head = f"{_WORD[state]} {j['judge']} for {verdict['rubric']}"
        if state == "pass":
            lines.append(f"{head}: all {len(j['checks'])} checks pass.")
            continue
        failed = [c for c in j["checks"] if c["state"] == "fail"]
        open_ = [c for c in j["checks"] if c["state"] == "inconclusive"]
        parts = [f"{len(x)} of {len(j['checks'])} checks {w}" for x, w in ((failed, "fail"), (open_, "inconclusive")) if x]
        lines.append(f"{head}: {'; '.join(parts)}:")
        for c in failed + open_:
            if c["name"].startswith("analysis_fidelity["):
                continue  # listed with every fidelity figure below (judgekit.gate.fidelity.fidelity_lines)
            ci = c.get("ci")
            interval = f" [{_ci_label(c)} {_fmt(ci[0])}–{_fmt(ci[1])}]" if ci else ""
            tag = " (inconclusive)" if c["state"] == "inconclusive" else ""
            lines.append(f"             {c['name']}{tag}: {_fmt(c['figure'])}{interval} vs threshold "
                         f"{_fmt(c['threshold'])} (n={c['n']}) — {c['detail']}")
        if j.get("budget"):
            lines.append(f"             Label budget: {j['budget']['sentence']}")
    from judgekit.gate.fidelity import fidelity_lines

    for j in verdict["judges"]:
        lines.extend(fidelity_lines(j))
    if any(j.get("figures") for j in verdict["judges"]):
        from judgekit.verdict.certify import figure_lines

        lines.extend(figure_lines(verdict, Policy(**verdict["policy"])))
    return lines


def _ci_label(check: dict[str, Any]) -> str:
    """How explain() labels a check's interval: its real level (a probe's Holm-level interval or a
    fidelity check's 1 − 2α one says it in its detail, e.g. "98.33% interval", "90% CI"), else "95% CI"."""
    from judgekit.probes.bands import interval_level

    level = interval_level(detail := str(check.get("detail") or ""))
    return f"{level} interval" if level else (interval_named(detail) or "95% CI")


def _fmt(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


