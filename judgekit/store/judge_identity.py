"""What identifies a judge in a verdict: its rater id and, for panel judges, the spec and
parameters of its latest call (so a verdict is not used with a judge whose model or prompt
settings changed since)."""

from __future__ import annotations

from typing import Any

from judgekit.core.hashing import judge_hash
from judgekit.store.calls import latest_parameters


def judge_identity(store: Any, judge: str, rubric: Any = None,
                   rubric_hash: str | None = None) -> dict[str, Any]:
    """What identifies a judge: its rater id, and for panel judges the spec and parameters of
    its latest call under ``rubric`` (any rubric when None; a Rubric also fixes the hash)."""
    ident: dict[str, Any] = {"judge": judge, "spec": None, "params": None}
    rubric_id: str | None = None
    # a view's judges answered under the full rubric: their calls are under its id and hash
    rubric = getattr(rubric, "base", rubric)
    if rubric is not None:
        rubric_id = str(getattr(rubric, "id", rubric))
        rubric_hash = getattr(rubric, "hash", rubric_hash)
    try:
        latest = latest_parameters(store, judge, rubric=rubric_id, rubric_hash=rubric_hash)
    except Exception:  # an old store without a calls table
        latest = None
    if latest:
        ident["spec"], ident["params"] = latest.spec, latest.params
    ident["judge_hash"] = judge_hash(judge, ident["spec"], ident["params"])
    return ident
