"""Certify figures, not only judges: which of a study's pre-registered figures a verdict
supports for a judge.

A policy's checks are *primary* unless it names them in ``secondary`` (check kinds such as
``max_error_rate`` or ``per_slice`` that are reported but do not block a figure); the agreement
floor (``min_items`` with ``min_value``/``min_lower_bound``, or ``alt_test``/``within_human_noise``
when they are the agreement check) is always primary. Each figure of ``analysis_fidelity`` (C, RCE,
Drift(t), Drift(t | tier), …) is certified on its own:

* ``pass`` (certified, TRUSTED for it): every primary check that is not a fidelity check passes,
  and every fidelity check of the figure passes (each model, turn, tier);
* ``fail`` (UNTRUSTED for it): one of them fails;
* ``inconclusive`` ("not established"): otherwise, with what would establish it (the largest
  label budget of its open checks, or why no number of labels can).

Each figure also has its state per model (``models``: the same rule on that model's checks), as
a study publishes Drift(t) per model and a judge can move one model's figure and not another's:
``drift: UNTRUSTED … — by model: UNTRUSTED for m-eroding, m-steady; not established for m-stiff``.

So a figure whose checks pass is trusted even while another figure is still open, and the
judge's overall ``state`` (every check, :func:`judgekit.verdict.check.combine_states`) stays as
before. :func:`certify` is pure: the gate computes the certificates once and stores them in the
verdict (``figures``); reading a verdict recomputes them once and refuses a ``figures`` entry
edited in the file (:func:`judgekit.verdict.read.validate_verdict`).

With ``analysis: criteria`` :func:`certify_criteria` also certifies each criterion on its own (its
check and every primary check), and only for the definition the gate read (the verdict's
``criteria_digests``), for ``judgekit analyze criteria``.
"""

from __future__ import annotations

from typing import Any

from judgekit.verdict.check import Check, combine_states

WORD = {"pass": "certified", "fail": "UNTRUSTED", "inconclusive": "not established"}


def _need(checks: list[Check]) -> str:
    """What would establish a figure: the largest budget of its open checks, in its unit."""
    best: tuple[int, str] | None = None
    undecidable = 0
    for ch in checks:
        b = ch.budget
        if b is None or b.items is None:
            undecidable += 1
        elif b.need is not None and b.unit and (best is None or b.need > best[0]):
            best = (b.need, f"about {b.need:,} more {b.unit}")
    if undecidable:  # more labels cannot establish it: never "would need N more" as if they could
        rest = len(checks) - undecidable
        other = f"; {best[1]} would decide the other {rest}" if best is not None and rest else ""
        return (f"cannot be established with this study: {undecidable} of its {len(checks)} open checks cannot be "
                f"decided with it (each says why){other}")
    if best is not None:
        return f"would need {best[1]}"
    return "would need the checks it depends on to pass"


def _figure_of(ch: Check) -> str | None:
    return ch.subject.figure if ch.kind == "analysis_fidelity" else None


def certify(checks: list[Check], policy: Any) -> dict[str, dict[str, Any]]:
    """figure → ``{"state", "sentence", "models"}`` for one judge's checks (module doc); empty
    when the policy has no ``analysis_fidelity``."""
    spec = policy.checks.analysis_fidelity
    if spec is None:
        return {}
    base = _primary(checks, policy)
    base_state = combine_states([ch.state for ch in base])
    out: dict[str, dict[str, Any]] = {}
    for fig in spec.chosen:
        own = [ch for ch in checks if _figure_of(ch) == fig]
        out[fig] = (_certificate(f"{fig}: ", own, base, f"{len(own)} checks pass, and every primary check") if own
                    else {"state": "inconclusive", "sentence": f"{fig}: not established (no labelled unit defines it)"})
        models = _by_model(own, base_state)
        if models:
            out[fig]["models"] = models
    return out


def _primary(checks: list[Check], policy: Any) -> list[Check]:
    """The judge's primary checks that are not fidelity checks: every figure depends on them."""
    secondary = set(getattr(policy, "secondary", None) or [])
    return [ch for ch in checks if ch.kind != "analysis_fidelity" and ch.kind not in secondary]


def criterion_figure(name: str) -> str:
    """``rate(criterion=NAME)``: the figure of one criterion, as its fidelity check names it."""
    return f"rate(criterion={name})"


def certify_criteria(verdict: dict[str, Any], checks: list[Check], policy: Any,
                     criteria: dict[str, str]) -> dict[str, dict[str, Any]]:
    """``rate(criterion=NAME)`` → ``{"state", "sentence"}`` for each of ``criteria`` (name → the
    digest of its definition in the criteria file being analysed), for one judge entry of
    ``verdict`` (its ``checks``); empty when the policy's ``analysis_fidelity`` is not ``analysis: criteria``.

    A criterion's rate is certified (``pass``) when its own fidelity check
    (``analysis_fidelity[criteria:rate(criterion=NAME)]``) and every primary check that is not a
    fidelity check pass (the base of :func:`certify`), and the verdict's ``criteria_digests``
    records the same definition for NAME. Otherwise ``fail`` or ``inconclusive`` (the checks),
    ``changed`` (defined otherwise than when the gate read it, or a verdict written before the
    digests), or ``missing`` (the gate did not check it)."""
    spec = policy.checks.analysis_fidelity
    if spec is None or spec.analysis != "criteria":
        return {}
    base = _primary(checks, policy)
    recorded = verdict.get("criteria_digests")
    out: dict[str, dict[str, Any]] = {}
    for name, digest in criteria.items():
        fig = criterion_figure(name)
        own = [ch for ch in checks if ch.kind == "analysis_fidelity" and ch.subject.criterion == name]
        if not own:
            out[fig] = {"state": "missing", "sentence": (
                f"criterion {name!r}: not certified (the verdict's gate did not check it: it is not a criterion "
                f"of the criteria file the gate read, under the gated rubric)")}
            continue
        if recorded is None or recorded.get(name) != digest:
            why = ("the verdict was written before judgekit recorded what defines each criterion"
                   if recorded is None else "the criteria file defines it otherwise than when the gate read it: "
                   "its rubric, labels, where or compare changed")
            out[fig] = {"state": "changed", "sentence": f"criterion {name!r}: not certified ({why})"}
            continue
        out[fig] = _certificate(f"criterion {name!r}: rate ", own, base, "its check passes, and every primary check")
    return out


def _certificate(head: str, own: list[Check], base: list[Check], passed: str) -> dict[str, Any]:
    """``{"state", "sentence"}`` of a figure from its own checks and the primary ones: certified when
    all pass, UNTRUSTED when one fails (naming up to three), else not established (what would
    establish it)."""
    state = combine_states([ch.state for ch in base + own])
    if state == "pass":
        return {"state": state, "sentence": f"{head}certified ({passed})"}
    if state == "fail":
        bad = [ch.name for ch in own + base if ch.state == "fail"]
        return {"state": state, "sentence": f"{head}UNTRUSTED ({', '.join(bad[:3])}{' and more' if len(bad) > 3 else ''} fail)"}
    open_ = [ch for ch in own + base if ch.state == "inconclusive"]
    return {"state": state, "sentence": f"{head}not established ({_need(open_)})"}


def _by_model(own: list[Check], base_state: str) -> dict[str, str]:
    """model → the figure's state for that model alone (its checks about that model, and every
    primary check): a study publishes Drift(t) per model, and a judge may move one model's figure
    and not another's."""
    groups: dict[str, list[str]] = {}
    for ch in own:
        if ch.subject.model is not None:
            groups.setdefault(ch.subject.model, []).append(ch.state)
    return {m: combine_states([base_state, *states]) for m, states in sorted(groups.items())}


def by_model_phrase(cert: dict[str, Any]) -> str:
    """``UNTRUSTED for m-eroding, m-steady; certified for m-stiff``: a figure's states per model,
    when they differ (empty when they do not)."""
    models = cert.get("models") or {}
    if len(set(models.values())) < 2:
        return ""
    parts = []
    for state in ("fail", "inconclusive", "pass"):
        which = [m for m, s in models.items() if s == state]
        if which:
            parts.append(f"{WORD[state]} for {', '.join(which)}")
    return "; ".join(parts)


def figure_lines(verdict: dict[str, Any]) -> list[str]:
    """One line per judge saying which figures the verdict certifies (its stored certificates),
    and what the others need."""
    lines = []
    for j in verdict["judges"]:
        certs = j.get("figures") or {}
        if not certs:
            continue
        ok = [f for f, c in certs.items() if c["state"] == "pass"]
        head = (f"Figures of {j['judge']}: TRUSTED for {', '.join(ok)}" if ok
                else f"Figures of {j['judge']}: none certified")
        lines.append(head + ".")
        for c in certs.values():
            if c["state"] != "pass":
                per = by_model_phrase(c)
                lines.append(f"             {c['sentence']}" + (f" — by model: {per}" if per else ""))
    return lines
