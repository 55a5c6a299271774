"""The demo's selective-judging step on XSTest v2 (recorded labels, no calls).

The cascade of ``annotations/xstest-v2/selective.yaml``: the string-match judge, trusted only
where it says ``full_refusal`` (its confidence is 1 when a refusal prefix matched, 0 otherwise:
the only signal a string match has), then the GPT-4 judge, trusted where the string match agrees
with it (panel support 1, else 0.5). Half of the 2,250 human-labelled items calibrate; the other
half play the new items: the cascade keeps some, escalates the rest, and because they have human
labels too the realised agreement on the kept ones can be compared with the guarantee.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from judgekit.core.atomic import write_text_atomic
from judgekit.selective.calibrate import calibrate_policy, summary_lines
from judgekit.selective.judgments import split_labelled
from judgekit.selective.policy import load_selective_policy
from judgekit.stats.selective_cascade import apply_cascade
from judgekit.store.database import Store


def xstest_selective(store: Store, ann: Path, out_dir: Path, console: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Calibrate the XSTest cascade on half the labelled items, apply it to the other half, print
    the guarantee, the coverage and the escalated items; writes ``selective.json``. Returns a
    short summary and the calibration document (for the report's section)."""
    from judgekit.core.console import clean

    policy = load_selective_policy(ann / "xstest-v2" / "selective.yaml")
    console.rule("4d. Selective judging: trust the judges where they are sure, escalate the rest")
    cal, j = calibrate_policy(store, policy)
    for line in summary_lines(cal):
        console.print(clean(line), markup=False)
    _, held = split_labelled(j, policy.calibration.fraction, policy.calibration.seed)
    who = apply_cascade(j.confidence_at(held), cal.thresholds())
    escalated = [j.item_ids[i] for i, k in zip(held, who, strict=True) if k is None]
    models = store.item_values("model") or {}
    by_model = Counter(str(models.get(i, "?")) for i in escalated)
    console.print(
        f"  escalated to people: {len(escalated)} of the {len(held)} held-out items "
        f"(by model: {', '.join(f'{m} {n}' for m, n in sorted(by_model.items()))}); "
        f"e.g. {', '.join(escalated[:3])}", markup=False,
    )
    doc = cal.to_dict()
    doc["held_out_escalated"] = escalated
    write_text_atomic(out_dir / "selective.json", json.dumps(doc, indent=1, allow_nan=False))
    return {
        "guarantee": doc["guarantee"],
        "coverage": round(cal.coverage, 4),
        "held_out_coverage": None if cal.held_out_coverage is None else round(cal.held_out_coverage, 4),
        "held_out_agreement": None if cal.held_out_agreement is None else round(cal.held_out_agreement, 4),
        "escalated": len(escalated),
    }, doc


__all__ = ["xstest_selective"]
