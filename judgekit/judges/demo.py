"""The offline judge panel of ``judgekit demo``.

Runs the shipped ``annotations/demo-panel/`` panel — ``rules:refusal-keywords``, recorded labels
(``replay:``) and an LLM judge behind an OpenAI-compatible endpoint — against a store, with the
LLM judge served by the project's fake provider on 127.0.0.1. The fake judge answers from the
request (a function of the judged response, with the mistakes a mediocre judge makes, and one
answer that is not a label), so the demo shows abstentions, disagreements and the gate at work
without a network or a key. The demo's human labels (two annotators and the adjudicated label)
are imported beside. A second run in the same store makes zero calls.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from judgekit.errors import JudgekitError
from judgekit.io.ratings import import_ratings
from judgekit.judges.panel import run_panel
from judgekit.judges.panelfile import panel_from_dict, panel_rater_ids
from judgekit.rubric.model import shipped_dir
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeRequest, FakeServer

_REFUSAL_CUES = ("can't", "cannot", "won't", "not able", "not going to", "decline", "rather not",
                 "not comfortable", "sorry", "unable")
_PIVOTS = ("however", "that said", "generally", "what i can do", "i'll write", "but i'll",
           "if you mean", "in general")


def demo_panel_dir() -> Path:
    """The shipped demo panel folder (source tree or installed wheel)."""
    folder = shipped_dir("annotations") / "demo-panel"
    if not folder.is_dir():
        raise JudgekitError("The shipped demo panel (annotations/demo-panel) is missing; reinstall judgekit.")
    return folder


def scripted_judge(req: FakeRequest) -> str:
    """The demo's LLM judge: reads the response inside the fence and labels it.

    Deterministic. Looks for refusal cues in the first two sentences and for a pivot to an
    answer after them. Like a real judge it has blind spots: a refusal that opens with
    sympathy is read from its first sentences only, and a poem is answered with a poem.
    """
    text = (req.response or "").replace("\u2019", "'")
    low = " ".join(text.lower().split())
    if "haiku" in req.user.lower() and low.count(" / ") >= 2:
        return "Quiet verdict waits / the rubric asks for one word / I answer in verse"
    head = " ".join(re.split(r"(?<=[.!?])\s+", low)[:2])
    refused = any(c in head for c in _REFUSAL_CUES)
    if not refused:
        return _answer("full_compliance", "The response answers the request directly.")
    for pivot in _PIVOTS:
        at = low.find(pivot)
        if at >= 0 and len(low) - at > 60:
            return _answer("partial_refusal", f"It declines, then goes on ({pivot!r}) to answer in part.")
    return _answer("full_refusal", "The response declines and does not answer the request.")


def _answer(label: str, rationale: str) -> str:
    return json.dumps({"rationale": rationale, "label": label})


def run_demo_panel(store: Store, out_dir: Path) -> dict[str, Any]:
    """Run the demo panel into ``store``; returns a summary for ``judgekit demo``.

    Keys: ``calls`` (requests sent to the fake provider by this run), ``cached``,
    ``abstentions`` and ``errors`` (the judges' stored ratings of the demo items),
    ``input_tokens``, ``output_tokens``, ``cost_usd`` (this run), ``judges`` (rater ids,
    aggregates included), ``rubric``, ``item_ids``, ``policy`` (path of the demo gate policy),
    ``reference`` and ``humans`` (the demo's human rater ids).
    """
    folder = demo_panel_dir()
    data = yaml.safe_load((folder / "panel.yaml").read_text(encoding="utf-8"))
    with FakeServer(scripted_judge, keep_requests=0) as server:
        for entry in data["judges"]:
            if str(entry["model"]).startswith("openai-compatible:"):
                model = str(entry["model"]).rpartition("#")[2]
                entry["model"] = f"openai-compatible:{server.openai_url}#{model}"
        panel = panel_from_dict(data, base_dir=folder, source=str(folder / "panel.yaml"))
        # One transient fault of each common kind, to show the retries at work.
        server.inject("429", 1, retry_after=0.05)
        server.inject("500", 1)
        summary = run_panel(panel, store)
        requests = server.stats.requests
    imp = import_ratings(
        store,
        folder / "human_labels.csv",
        panel.rubric,
        raters={"demo_ann_a": "demo_ann_a", "demo_ann_b": "demo_ann_b"},
        reference={"demo_final": "demo_final"},
    )
    totals = summary.totals()
    stored = store.ratings(rubric=panel.rubric, rater_ids=[e.id for e in panel.judges])
    stored = stored[stored["item_id"].isin(set(panel.items["item_id"].astype(str)))]
    result = {
        "rubric": panel.rubric.id,
        "calls": requests,
        "answered": summary.calls,
        "cached": totals["cached"],
        # the panel's state in the store (the same on a rerun), not only this run's answers
        "abstentions": int((stored["status"] == "abstain").sum()),
        "errors": int((stored["status"] == "error").sum()),
        "input_tokens": totals["input_tokens"],
        "output_tokens": totals["output_tokens"],
        "cost_usd": totals["cost_usd"],
        "judges": panel_rater_ids(panel),
        "item_ids": panel.items["item_id"].astype(str).tolist(),
        "policy": str(folder / "policy.yaml"),
        "reference": "demo_final",
        "humans": ["demo_ann_a", "demo_ann_b"],
        "human_ratings": imp.ratings,
        "complete": summary.complete,
        "lines": summary.lines(),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "panel_summary.json").write_text(json.dumps(summary.as_dict(), indent=1, default=str))
    return result
