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
