"""A promptfoo Python assertion that grades with a judgekit judge, under its verdict.

promptfoo calls ``get_assert(output, context)`` of a Python file named in a test's assertion
(``type: python``, ``value: file://judge_assert.py``); the file holds one line,
``from judgekit.integrations.promptfoo_assert import get_assert``. The assertion's ``config``
names the judge as the Inspect scorer does (:mod:`judgekit.integrations.inspect_scorer`)::

    assert:
      - type: python
        value: file://judge_assert.py
        config: {panel: panel.yaml, judge: fj, verdict: verdict.json, store: study.db,
                 pass: [full_refusal]}

Before the judge is asked, the verdict is checked (:func:`judgekit.require_trusted`): a judge
not trusted, or a verdict for another rubric, judge spec or store, raises
:class:`judgekit.UntrustedJudgeError` — one sentence naming the verdict and what to run — and
promptfoo reports the assertion as an error; no judge call is made. The output is then rated as a
panel rates an item (the same prompt and call cache; the rating lands in the store, item id
``promptfoo:<digest of prompt and output>`` unless the test's vars give ``item_id``). The
assertion passes when the label is one of ``pass`` (default: every label), its score is the
label's value, its reason the label and the judge's rationale; an abstention fails with the
reason "abstained", never a silent pass.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from judgekit.integrations.bridge import GatedJudge, gated_judge, judge_items, output_item_id

__all__ = ["get_assert", "output_id"]


def output_id(prompt: str, output: str) -> str:
    """The item id of a promptfoo output whose test gives no ``item_id`` var (the assertion's and
    the importer's): ``promptfoo:`` + a digest of the prompt and the output."""
    return output_item_id("promptfoo", prompt, output)


@lru_cache(maxsize=16)
def _gated(config_json: str) -> GatedJudge:
    c = json.loads(config_json)
    return gated_judge(judge=c["judge"], verdict=c.get("verdict"), store=c.get("store", "judgekit.db"),
                       rubric=c.get("rubric"), panel=c.get("panel"), figure=c.get("figure"))


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's entry: a grading result ``{"pass", "score", "reason"}`` for ``output``."""
    config = dict(context.get("config") or {})
    gj = _gated(json.dumps({k: config.get(k) for k in ("judge", "verdict", "store", "rubric", "panel", "figure")},
                           sort_keys=True, default=str))
    variables = dict(context.get("vars") or {})
    prompt = str(context.get("prompt") or "")
    item_id = variables.get("item_id") or output_id(prompt, str(output))
    item = {"item_id": str(item_id), "prompt": prompt, "response": str(output)}
    item.update({k: v for k, v in variables.items()
                 if k not in item and (v is None or isinstance(v, str | int | float | bool))})
    rating = judge_items(gj, [item], source="promptfoo")[0]
    # what the importer reads back (judgekit.integrations.promptfoo_results), never the reason's prose
    meta = {"judgekit": {"judge": gj.entry.id, "rubric": gj.rubric.ref, "verdict": gj.verdict,
                         "item_id": rating.item_id, "label": rating.label, "status": rating.status}}
    if rating.status != "ok" or rating.label is None:
        return {"pass": False, "score": 0.0, "metadata": meta,
                "reason": f"judge {gj.entry.id} {'abstained' if rating.status == 'abstain' else 'failed'}: "
                          f"{rating.rationale or ''}".strip()}
    wanted = config.get("pass")
    ok = wanted is None or rating.label in ([wanted] if isinstance(wanted, str) else list(wanted))
    score = rating.value if rating.value is not None else (1.0 if ok else 0.0)
    return {"pass": bool(ok), "score": float(score), "metadata": meta,
            "reason": f"{gj.entry.id}: {rating.label} ({rating.rationale or 'no rationale'})"}
