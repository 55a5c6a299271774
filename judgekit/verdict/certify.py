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
judge's overall ``state`` (every check, :func:`judgekit.verdict.checks.combine_states`) stays as
before. :func:`certify` is pure and is recomputed from the checks whenever a verdict is used
(:func:`judgekit.verdict.trust.require_trusted` with ``figure=``): a ``figures`` entry edited in the
file is refused, never believed.

With ``analysis: criteria`` :func:`certify_criteria` also certifies each criterion on its own (its
check and every primary check), and only for the definition the gate read (the verdict's
``criteria_digests``), for ``judgekit analyze criteria``.
"""

from __future__ import annotations

import re
from typing import Any

from judgekit.verdict.checks import check_kind, combine_states, fidelity_figure
from judgekit.verdict.schema import criterion_of

WORD = {"pass": "certified", "fail": "UNTRUSTED", "inconclusive": "not established"}


def _need(checks: list[dict[str, Any]]) -> str:
    """What would establish a figure: the largest budget of its open checks, in its unit."""
    best: tuple[int, str] | None = None
    undecidable = 0
    for ch in checks:
        b = ch.get("budget") or {}
        said = re.search(r"about ([\d,]+) more (.+?)(?: of | in slice | would |, about | rated )",
                         str(b.get("sentence") or ""))
        if b.get("items") is None:
            undecidable += 1
        elif said:
            n = int(said.group(1).replace(",", ""))
            if best is None or n > best[0]:
                best = (n, f"about {n:,} more {said.group(2)}")
    if best is not None:
        extra = f"; {undecidable} of its checks cannot be decided with this data" if undecidable else ""
        return f"would need {best[1]}{extra}"
    if undecidable:
        return "undecidable with this data: each open check says why"
    return "would need the checks it depends on to pass"


def certify(judge: dict[str, Any], policy: Any) -> dict[str, dict[str, Any]]:
    """figure → ``{"state", "sentence", "models"}`` for one judge entry of a verdict (module doc); empty
    when the policy has no ``analysis_fidelity``."""
    spec = policy.checks.analysis_fidelity
    if spec is None:
        return {}
    checks = judge["checks"]
    base = _primary(judge, policy)
    base_state = combine_states([ch["state"] for ch in base])
    out: dict[str, dict[str, Any]] = {}
    for fig in spec.chosen:
        own = [ch for ch in checks if fidelity_figure(ch["name"]) == fig]
        out[fig] = (_certificate(f"{fig}: ", own, base, f"{len(own)} checks pass, and every primary check") if own
                    else {"state": "inconclusive", "sentence": f"{fig}: not established (no labelled unit defines it)"})
        models = _by_model(own, base_state)
        if models:
            out[fig]["models"] = models
    return out


def _primary(judge: dict[str, Any], policy: Any) -> list[dict[str, Any]]:
    """The judge's primary checks that are not fidelity checks: every figure depends on them."""
    secondary = set(getattr(policy, "secondary", None) or [])
    return [ch for ch in judge["checks"] if fidelity_figure(ch["name"]) is None
            and (check_kind(ch["name"]) or ("",))[0] not in secondary]


def criterion_figure(name: str) -> str:
    """``rate(criterion=NAME)``: the figure of one criterion, as its fidelity check names it."""
    return f"rate(criterion={name})"


def certify_criteria(verdict: dict[str, Any], judge: dict[str, Any], policy: Any,
                     criteria: dict[str, str]) -> dict[str, dict[str, Any]]:
    """``rate(criterion=NAME)`` → ``{"state", "sentence"}`` for each of ``criteria`` (name → the
    digest of its definition in the criteria file being analysed), for one judge entry of
    ``verdict``; empty when the policy's ``analysis_fidelity`` is not ``analysis: criteria``.

    A criterion's rate is certified (``pass``) when its own fidelity check
    (``analysis_fidelity[criteria:rate(criterion=NAME)]``) and every primary check that is not a
    fidelity check pass (the base of :func:`certify`), and the verdict's ``criteria_digests``
    records the same definition for NAME. Otherwise ``fail`` or ``inconclusive`` (the checks),
    ``changed`` (defined otherwise than when the gate read it, or a verdict written before the
    digests), or ``missing`` (the gate did not check it)."""
    spec = policy.checks.analysis_fidelity
    if spec is None or spec.analysis != "criteria":
        return {}
    base = _primary(judge, policy)
    recorded = verdict.get("criteria_digests")
    out: dict[str, dict[str, Any]] = {}
    for name, digest in criteria.items():
        fig = criterion_figure(name)
        own = [ch for ch in judge["checks"] if criterion_of(ch["name"]) == name]
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


def _certificate(head: str, own: list[dict[str, Any]], base: list[dict[str, Any]], passed: str) -> dict[str, Any]:
    """``{"state", "sentence"}`` of a figure from its own checks and the primary ones: certified when
    all pass, UNTRUSTED when one fails (naming up to three), else not established (what would
    establish it)."""
    state = combine_states([ch["state"] for ch in base + own])
    if state == "pass":
        return {"state": state, "sentence": f"{head}certified ({passed})"}
    if state == "fail":
        bad = [ch["name"] for ch in own + base if ch["state"] == "fail"]
        return {"state": state, "sentence": f"{head}UNTRUSTED ({', '.join(bad[:3])}{' and more' if len(bad) > 3 else ''} fail)"}
    open_ = [ch for ch in own + base if ch["state"] == "inconclusive"]
    return {"state": state, "sentence": f"{head}not established ({_need(open_)})"}


def _by_model(own: list[dict[str, Any]], base_state: str) -> dict[str, str]:
    """model → the figure's state for that model alone (its checks named ``model=…``, and every
    primary check): a study publishes Drift(t) per model, and a judge may move one model's figure
    and not another's."""
    groups: dict[str, list[str]] = {}
    for ch in own:
        m = _MODEL.search(str(ch["name"]))
        if m:
            groups.setdefault(m.group(1), []).append(ch["state"])
    return {m: combine_states([base_state, *states]) for m, states in sorted(groups.items())}


#: the model of a fidelity check's name, ``…:drift(model=M, tier=4, turn=6)]``: M is what comes
#: before the trailing tier and turn (a model's name may hold a comma: ``llama, 70b``)
_MODEL = re.compile(r"\(model=(.*?)(?:, tier=[^,()]*)?(?:, turn=[^,()]*)?\)\]$")


def same_figures(stored: Any, certs: dict[str, dict[str, Any]]) -> bool:
    """Whether a verdict's stored ``figures`` entry is what its checks give (``certs``); an entry
    written before the per-model states (no ``models`` key) is compared without them."""
    if not isinstance(stored, dict) or set(stored) != set(certs):
        return False
    return all(isinstance(s := stored[fig], dict)
               and s == (c if "models" in s else {k: v for k, v in c.items() if k != "models"})
               for fig, c in certs.items())


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


def figure_lines(verdict: dict[str, Any], policy: Any) -> list[str]:
    """One line per judge saying which figures the verdict certifies, and what the others need."""
    lines = []
    for j in verdict["judges"]:
        certs = certify(j, policy)
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
