"""An Inspect AI scorer that grades with a judgekit judge, under its verdict.

``judgekit/judge`` in Inspect's registry (through the ``inspect_ai`` entry point, module
:mod:`judgekit.integrations.inspect_registry`)::

    from inspect_ai import Task, task
    from judgekit.integrations.inspect_scorer import judge

    @task
    def refusal() -> Task:
        return Task(dataset=..., scorer=judge(panel="panel.yaml", judge="gpt",
                                              verdict="verdict.json", store="study.db"))

At creation the scorer checks the verdict (:func:`judgekit.require_trusted`) and raises
:class:`judgekit.UntrustedJudgeError` — one sentence naming the verdict and what to run — before
any call when the judge is not trusted, or the verdict is for another rubric, another judge spec
or parameters, or a store that changed since. Each sample is then rated as a judgekit panel rates
an item (the same prompt, the same call cache: an item judged before is not paid again), the
rating lands in the store, and the score's value is the rubric label; an abstention or a failed
call is ``Score.unscored()`` (left out of the metrics, never a silent shrink).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import anyio

# what Inspect's command line prints without a traceback (no public name for it)
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, frequency, metric, scorer
from inspect_ai.solver import TaskState

from judgekit.integrations.bridge import (
    GatedJudge,
    ItemRating,
    JudgekitError,
    UntrustedJudgeError,
    corrected_share,
    gated_judge,
    judge_items,
)

__all__ = ["JudgeNotTrusted", "ScorerSetupError", "corrected_rate", "judge", "sample_item"]


class JudgeNotTrusted(UntrustedJudgeError, PrerequisiteError):
    """The verdict does not trust the judge: an :class:`~judgekit.UntrustedJudgeError` that
    Inspect's command line prints as its one sentence, without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = str(self)


class ScorerSetupError(JudgekitError, PrerequisiteError):
    """A scorer argument judgekit cannot use (a panel file, judge or rubric): one sentence."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = str(self)

#: item columns the scorer fills itself; sample metadata keys with these names are left out
_CORE = frozenset({"item_id", "prompt", "messages", "response"})


def sample_item(state: TaskState) -> dict[str, Any]:
    """The judgekit item of a sample: ``item_id`` (the sample id; ``<id>#<epoch>`` after the first
    epoch), ``prompt`` (a text input) or ``messages`` (a chat input), ``response`` (the output's
    completion), ``model`` and ``sample`` (the epoch), and the sample's scalar metadata."""
    sid = str(state.sample_id)
    item: dict[str, Any] = {"item_id": sid if state.epoch <= 1 else f"{sid}#{state.epoch}"}
    if isinstance(state.input, str):
        item["prompt"] = state.input
    else:
        item["messages"] = [{"role": m.role, "content": m.text} for m in state.input]
    item["response"] = state.output.completion
    item["model"] = str(state.model)
    item["sample"] = state.epoch
    for key, value in (state.metadata or {}).items():
        if key not in _CORE and key not in item and (value is None or isinstance(value, str | int | float | bool)):
            item[key] = value
    return item


#: Inspect prefixes a name with the package's for a module installed in site-packages, or installed
#: editable under the package's own name; judgekit's distribution is judgekit-trust, so an editable
#: install prefixes it here (``judgekit/judge``, ``judgekit/corrected_rate`` either way: a log names
#: them so, and Inspect finds them again through the entry point)
_PREFIX = "" if "site-packages" in Path(__file__).resolve().as_posix() else "judgekit/"


@metric(f"{_PREFIX}corrected_rate", scores="unreduced")  # the labels themselves (a reducer would average them away)
def corrected_rate(labels: list[str], human: str = "human_label") -> Metric:
    """The share of scored samples whose label is one of ``labels`` (a refusal rate:
    ``["full_refusal", "partial_refusal"]``), corrected for the judge's error by the samples whose
    metadata carries a human label under the key ``human`` (PPI++, judgekit's estimator; each
    sample its own unit). NaN with fewer than two such samples. Add it to a task beside the
    scorer's own: ``Task(..., scorer=judge(...), metrics=[frequency(), corrected_rate([...])])``.
    """
    wanted = set(labels)

    def compute(scores: list[SampleScore]) -> float:
        judged: dict[str, bool] = {}
        people: dict[str, bool] = {}
        for k, s in enumerate(scores):
            if not isinstance(s.score.value, str):
                continue  # unscored (an abstention): not a unit of the rate
            key = f"{s.sample_id}#{k}"
            judged[key] = s.score.value in wanted
            h = (s.sample_metadata or {}).get(human)
            if isinstance(h, str) and h:
                people[key] = h in wanted
        return corrected_share(judged, people)

    return compute


def _score(rating: ItemRating, gj: GatedJudge) -> Score:
    meta: dict[str, Any] = {"judge": gj.entry.id, "rubric": gj.rubric.ref, "verdict": gj.verdict, "item_id": rating.item_id,
            "status": rating.status}
    if rating.status != "ok" or rating.label is None:
        return Score.unscored(reason=rating.status, explanation=rating.rationale, metadata=meta)
    if rating.value is not None and math.isfinite(rating.value):
        meta["value"] = rating.value
    return Score(value=rating.label, explanation=rating.rationale, metadata=meta)


@scorer(metrics=[frequency()], name=f"{_PREFIX}judge")
def judge(
    judge: str | Mapping[str, Any],
    verdict: str | Path | None,
    store: str | Path = "judgekit.db",
    panel: str | Path | None = None,
    rubric: str | Path | None = None,
    figure: str | None = None,
) -> Scorer:
    """Grade each sample with judgekit judge ``judge`` under ``verdict``.

    ``judge``: a judge id of the panel file ``panel`` (its rubric is the panel's unless
    ``rubric`` is given), or a judge entry as a mapping of panel-file keys (``{"id": "gpt",
    "model": "openai:gpt-4o-mini"}``) with ``rubric``. ``store``: the judgekit store the verdict
    was made on; the ratings are written there. ``figure``: require only that the verdict
    certifies this figure (``rate``, ``C``, ...) rather than a passed gate.
    """
    try:
        gj = gated_judge(judge=judge, verdict=verdict, store=store, rubric=rubric, panel=panel, figure=figure)
    except UntrustedJudgeError as exc:
        raise JudgeNotTrusted(str(exc)) from None
    except JudgekitError as exc:
        raise ScorerSetupError(str(exc)) from None

    async def score(state: TaskState, target: Target) -> Score:
        item = sample_item(state)
        rated = await anyio.to_thread.run_sync(partial(judge_items, gj, [item], source=f"inspect:{state.model}"))
        return _score(rated[0], gj)

    return score
