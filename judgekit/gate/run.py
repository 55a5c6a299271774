"""The trust gate: a policy file → a verdict per judge.

A policy names the rubric, the judges, the reference and the thresholds a judge must clear.
The verdict (:mod:`judgekit.verdict.read`) records each check (:class:`judgekit.verdict.check.Check`,
built once by :func:`judgekit.gate.checks.evaluate`) with what it is and what it found — its
figure, threshold, n, interval with its method and level, and state — and the hashes of the
rubric, the items that carry human or reference ratings, the human ratings and each judge, so
that analysis code can ask for a verdict that is consistent and matches the store it uses
(:func:`require_trusted` with ``store=``).

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

Three states (:func:`judgekit.verdict.check.derive_state`). Each check is ``pass``, ``fail`` or
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
an inconclusive check and judge carry a label ``budget`` (:func:`judgekit.gate.budget.label_budget`): about how many
more human-rated items (and in which slices) would likely decide it, in one sentence.

Exit codes of ``judgekit gate``: 0 every judge passes, 1 a judge fails, 3 none fails but some
judge is inconclusive, 2 bad input.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from judgekit.core.hashing import digest as _digest
from judgekit.errors import JudgekitError, excerpt
from judgekit.gate.alt import alt_inputs_results as alt_inputs_results  # re-exported: its old home
from judgekit.gate.checks import JudgeResult, Report, evaluate
from judgekit.rubric.model import rubric_named_in
from judgekit.verdict.check import budget_json, check_json, combine_states, judge_checks
from judgekit.verdict.fidelity_policy import record_alpha
from judgekit.verdict.log import judge_ratings_hash, record_verdict
from judgekit.verdict.policy import Policy, load_policy
from judgekit.verdict.read import (
    SCHEMA_VERSION,
    judge_identity,
    load_verdict,
    ratings_hash,
    store_hashes,
)
from judgekit.version import __version__

__all__ = ["Policy", "Report", "evaluate", "explain", "gate_reference_warning", "judge_identity", "load_policy",
           "load_verdict", "ratings_hash", "run_gate"]


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
    rubric, store = _policy_rubric(store, policy, policy_path)
    view_info: dict[str, Any] = {"view": rubric.view_info()} if policy.view is not None else {}
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
    probes: dict[str, list[Any]] = {}
    if has_probes(policy):
        from judgekit.gate.probe_checks import (
            gate_checks,  # (pandas: only for a policy with probes)
        )

        probes = gate_checks(store, policy, rubric, f"Policy file {policy_path}", codes=plain)
    fid = crit = None
    if policy.checks.analysis_fidelity is not None:
        from judgekit.gate.fidelity import CriteriaMemo, criteria_digests, fidelity_results

        memo = CriteriaMemo()  # (a criteria file is read once for the figures and the digests)
        fid = fidelity_results(store, policy, policy_path, rubric, report, memo=memo)
        crit = criteria_digests(policy, policy_path, rubric, memo)  # (analysis: criteria, issue 22)
    from judgekit.gate.calls import own_calls

    results = evaluate(policy, report, alt, probes=probes, fidelity=fid,
                       calls=own_calls(store, rubric, list(policy.judges)))
    from judgekit.gate.provenance import apply_provenance

    sources = apply_provenance(results, store, rubric)  # one source per judge, else a failing check
    seq_info = None
    if sequential is not None:  # rounds of `sequential` conversations (judgekit.gate.sequential)
        from judgekit.gate.sequential import apply_sequential, sequential_checks

        seq, seq_info = sequential_checks(store, policy, rubric, report, round_size=sequential, rounds=rounds)
        if rounds:
            seq_info["samples"] = list(rounds)
        apply_sequential(results, seq)
    from judgekit.store.provenance import meta_hashes

    judges = [_judge_entry(store, rubric, policy, r, hashes, sources[r.judge]) for r in results]
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
        "state": combine_states([r.state for r in results]),
        "passed": all(r.state == "pass" for r in results),
        "judges": judges,
        **view_info,
        "meta_hashes": meta_hashes(store, rubric),  # issue 20: the labelled items' metadata
        **({"sequential": seq_info} if seq_info is not None else {}),
        **({"criteria_digests": crit} if crit is not None else {}),
    }
    if record:  # (``judgekit plan`` reads a pilot without recording a verdict)
        record_verdict(store, verdict)
    return verdict, report


def _policy_rubric(store: Any, policy: Policy, policy_path: str | Path) -> tuple[Any, Any]:
    """The rubric ``policy`` gates under (its view when it names one) and ``store`` seen through it."""
    rubric = rubric_named_in(policy.rubric, f"Policy file {policy_path}")
    if policy.view is None:
        return rubric, store
    from judgekit.rubric.views import ViewSource, rubric_view

    rubric = rubric_view(rubric, policy.view, where=f"Policy file {policy_path}: view")
    return rubric, ViewSource(store, rubric)


def gate_reference_warning(store: Any, policy_path: str | Path, reference: str) -> str | None:
    """The warning that the gate's ``reference`` (the verdict's) is one human annotator while
    other human raters exist under the policy's rubric (:func:`judgekit.agreement.adjudicate.reference_warning`,
    with its κ and n against the others' majority), else None. Never part of the verdict."""
    from judgekit.store import digests

    if reference == "consensus":
        return None
    policy, _ = load_policy(policy_path)
    rubric, viewed = _policy_rubric(store, policy, policy_path)
    if digests.plain_store(viewed):  # by SQL first: the lean gate loads no pandas without cause
        kinds = digests.rater_kinds(viewed, rubric)
        if kinds.get(reference) != "human" or sum(k == "human" for k in kinds.values()) < 2:
            return None
    from judgekit.agreement.adjudicate import reference_warning

    return reference_warning(viewed, rubric, reference)


def _judge_entry(store: Any, rubric: Any, policy: Policy, r: JudgeResult, hashes: Any,
                 sources: dict[str, Any]) -> dict[str, Any]:
    """One judge of the verdict: its state, checks (:func:`judgekit.verdict.check.check_json`) and
    budget, its identity and ratings' hash and provenance, and its certificates (computed once,
    here, and stored)."""
    from judgekit.verdict.certify import certify

    entry: dict[str, Any] = {"judge": r.judge, "state": r.state, "passed": r.state == "pass",
                             "checks": [check_json(ch) for ch in r.checks], "budget": budget_json(r.budget)}
    if r.not_applied:
        entry["not_applied"] = list(r.not_applied)
    entry.update({k: v for k, v in judge_identity(store, r.judge, rubric).items() if k != "judge"})
    certs = certify(r.checks, policy)
    if certs:
        entry["figures"] = certs
    entry["judge_ratings_hash"] = (hashes["judges"][r.judge] if hashes else judge_ratings_hash(store, rubric, r.judge))
    entry.update(sources)  # where its ratings came from, and the one source certified (judgekit.gate.provenance)
    return entry


_WORD = {"pass": "TRUSTED   ", "fail": "UNTRUSTED ", "inconclusive": "INCONCLUSIVE"}


def explain(verdict: dict[str, Any]) -> list[str]:
    """A short human-readable explanation of a verdict: one line per judge, then one per check
    that did not pass (with its interval and n; a small sample says so), and for an
    inconclusive judge its label budget in one sentence."""
    lines = []
    from judgekit.gate.fidelity import fidelity_lines
    from judgekit.verdict.numbers import beside, short

    typed = {j["judge"]: judge_checks(j) for j in verdict["judges"]}
    for j in verdict["judges"]:
        state = j["state"]
        checks = typed[j["judge"]]
        head = f"{_WORD[state]} {j['judge']} for {verdict['rubric']}"
        skipped = [f"             {s}" for s in j.get("not_applied") or []]
        if state == "pass":
            lines += [f"{head}: all {len(checks)} checks pass.", *skipped]
            continue
        failed = [c for c in checks if c.state == "fail"]
        open_ = [c for c in checks if c.state == "inconclusive"]
        parts = [f"{len(x)} of {len(checks)} checks {w}" for x, w in ((failed, "fail"), (open_, "inconclusive")) if x]
        lines.append(f"{head}: {'; '.join(parts)}:")
        for c in failed + open_:
            if c.kind == "analysis_fidelity":
                continue  # listed with every fidelity figure below (judgekit.gate.fidelity.fidelity_lines)
            iv = c.interval
            thr = c.threshold
            interval = f" [{iv.label()} {beside(iv.low, thr)}–{beside(iv.high, thr)}]" if iv else ""
            tag = " (inconclusive)" if c.state == "inconclusive" else ""
            lines.append(f"             {c.name}{tag}: {beside(c.figure, thr)}{interval} vs threshold "
                         f"{short(thr)} (n={c.n}) — {c.detail}")
        if j.get("budget"):
            lines.append(f"             Label budget: {j['budget']['sentence']}")
        lines += skipped
    for j in verdict["judges"]:
        lines.extend(fidelity_lines(j["judge"], typed[j["judge"]]))
    if any(j.get("figures") for j in verdict["judges"]):
        from judgekit.verdict.certify import figure_lines

        lines.extend(figure_lines(verdict))
    if verdict.get("sequential"):
        from judgekit.gate.sequential import sequential_lines

        lines.extend(sequential_lines(verdict))
    return lines
