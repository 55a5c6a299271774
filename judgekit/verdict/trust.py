"""The guard of every analysis: a judge's ratings are used as trusted only under a verdict that
passed it and still matches the store (:func:`require_trusted`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.errors import UntrustedJudgeError
from judgekit.rubric.model import Rubric, load_rubric
from judgekit.verdict.read import (
    Verdict,
    load_verdict,
    match_store,
)


# ----------------------------------------------------------------------------- the guard
def require_trusted(
    verdict: dict[str, Any] | str | Path | None,
    *,
    judge: str,
    rubric: Rubric | str,
    judge_hash: str | None = None,
    store: Any = None,
    figure: str | None = None,
) -> dict[str, Any]:
    """Raise :class:`UntrustedJudgeError` unless ``verdict`` says ``judge`` passed for ``rubric``.

    The verdict is read strictly and must be consistent (:func:`judgekit.verdict.read.load_verdict`),
    be for the same rubric content (hash), name the judge, and mark it ``"pass"`` (an
    ``"inconclusive"`` judge is not trusted). With ``store``
    (every judgekit code path passes it) it must also still describe that store: the items that
    carry human or reference ratings, the human ratings and the judge's identity
    (:func:`judgekit.verdict.read.match_store`). If ``judge_hash`` is given it must match too (same
    judge spec and parameters). Returns the judge's entry of the verdict.
    """
    v, entry, rub, how = _checked(verdict, judge=judge, rubric=rubric, judge_hash=judge_hash, store=store)
    if figure is not None and (entry["state"] != "pass" or entry.get("figures")):
        _require_figure(v, entry, judge, rub.id, figure, how)
        return entry
    if not entry["passed"] or entry["state"] != "pass":
        failed = [c["name"] for c in entry["checks"] if c["state"] == "fail"]
        open_ = [c["name"] for c in entry["checks"] if c["state"] == "inconclusive"]
        what = "; ".join(p for p in (f"failed: {', '.join(failed)}" if failed else "",
                                     f"inconclusive: {', '.join(open_)}" if open_ else "") if p)
        raise UntrustedJudgeError(
            f"Judge {judge!r} did not pass the gate for {rub.id} ({what}); "
            "its ratings cannot be used as trusted: improve the judge and gate it again, or run the "
            "analysis untrusted (every figure is then stamped UNTRUSTED).",
            cli_hint="On the command line: --untrusted.",
        )
    return entry


def _checked(
    verdict: dict[str, Any] | str | Path | None,
    *,
    judge: str,
    rubric: Rubric | str,
    judge_hash: str | None,
    store: Any,
) -> tuple[Verdict, dict[str, Any], Rubric, str]:
    """What :func:`require_trusted` checks before the judge's state: the verdict (read strictly),
    its rubric, the judge, the store and the judge hash. Returns the verdict, the judge's entry,
    the rubric and the "how to get one" clause of the messages."""
    rub = load_rubric(rubric)
    how = (
        f"run `judgekit gate POLICY.yaml` with a policy naming judge {judge!r} and rubric {rub.id}, "
        "and pass the verdict.json it writes"
    )
    if verdict is None:
        raise UntrustedJudgeError(f"No verdict given for judge {judge!r} on {rub.id}; {how}.")
    v: Verdict = load_verdict(verdict)
    if v.get("view") and (v["rubric"], v["rubric_hash"]) != (rub.id, rub.hash):
        raise UntrustedJudgeError(
            f"{f'Verdict {v.source}' if v.source else 'The verdict'} was made under the view "
            f"{v['view']['name']!r} of {v['view']['rubric']} (rubric {v['rubric']}), so it does not "
            f"trust a judge for {rub.ref}; {how}."
        )
    if v["rubric"] != rub.id or v["rubric_hash"] != rub.hash:
        raise UntrustedJudgeError(
            f"{f'Verdict {v.source}' if v.source else 'The verdict'} is for rubric "
            f"{v['rubric']}#{v['rubric_hash']}, not {rub.ref} "
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
    return v, entry, rub, how


def _require_figure(v: Verdict, entry: dict[str, Any], judge: str, rubric_id: str, figure: str, how: str) -> None:
    """``figure=``: the judge need not pass every check, only those that certify ``figure`` (the
    certificates the gate stored; reading the verdict refused an edited ``figures`` entry)."""
    certs = entry.get("figures") or {}
    if not certs:
        if entry["state"] == "pass":
            return
        raise UntrustedJudgeError(
            f"Judge {judge!r} did not pass the gate for {rubric_id}, and its policy certifies no figure "
            f"(no analysis_fidelity), so {figure!r} is not certified; {how}.")
    cert = certs.get(figure)
    if cert is None:
        raise UntrustedJudgeError(
            f"The verdict certifies figures {', '.join(certs)} for judge {judge!r}, not {figure!r}; add it to the "
            f"policy's analysis_fidelity figures and run the gate again.")
    if cert["state"] != "pass":
        raise UntrustedJudgeError(
            f"The verdict does not certify {figure!r} for judge {judge!r} on {rubric_id}: {cert['sentence']}; "
            "its ratings cannot be used as trusted for this figure — label more, improve the judge, or run "
            "the analysis untrusted (its results are then stamped UNTRUSTED).",
            cli_hint="On the command line: --untrusted.")


def figure_certificates(
    verdict: dict[str, Any] | str | Path,
    *,
    judge: str,
    rubric: Rubric | str,
    judge_hash: str | None = None,
    store: Any = None,
    criteria: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """figure → ``{"state", "sentence"}``: the figures ``verdict`` certifies for ``judge``, after
    the checks :func:`require_trusted` makes before the judge's state (rubric, judge, store,
    judge hash): the certificates the gate stored (reading the verdict refused them unless they are
    what its checks certify, :func:`judgekit.verdict.read.validate_verdict`). Empty when the policy
    certifies no figure.

    ``criteria`` (criterion name → the digest of its definition in the criteria file analysed):
    also each criterion's own certificate, ``rate(criterion=NAME)``
    (:func:`judgekit.verdict.certify.certify_criteria`)."""
    from judgekit.verdict.certify import certify_criteria
    from judgekit.verdict.check import judge_checks
    from judgekit.verdict.read import policy_of

    v, entry, _rub, _how = _checked(verdict, judge=judge, rubric=rubric, judge_hash=judge_hash, store=store)
    certs = dict(entry.get("figures") or {})
    if criteria:
        certs.update(certify_criteria(v, judge_checks(entry), policy_of(v), criteria))
    return certs
