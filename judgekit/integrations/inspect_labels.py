"""Write people's labels from a judgekit store back into an Inspect log, with Inspect's
score-editing API (``inspect_ai.log.edit_score``): each labelled sample's score becomes the
person's label, the edit's provenance names the rater, and the score's history keeps the grade it
replaces (Inspect's own review workflow). Samples are matched as the scorer names them
(:func:`judgekit.integrations.inspect_scorer.sample_item`: the sample id, ``<id>#<epoch>`` after
the first epoch)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import (
    ProvenanceData,
    edit_score,
    read_eval_log,
    recompute_metrics,
    write_eval_log,
)
from inspect_ai.scorer import ScoreEdit

from judgekit.integrations.bridge import JudgekitError, human_labels

__all__ = ["write_human_labels"]


def write_human_labels(
    log_file: str | Path,
    *,
    store: str | Path,
    rubric: str | Path,
    rater: str,
    score: str = "judge",
    out: str | Path | None = None,
) -> int:
    """Edit score ``score`` of each sample of ``log_file`` that ``rater`` labelled in ``store``
    to that label; write the log to ``out`` (default: in place). Returns how many were edited."""
    from judgekit.store.postgres import is_postgres_url, redact_url

    labels = human_labels(store, rubric, rater)
    shown = redact_url(str(store)) if is_postgres_url(str(store)) else store  # never its password
    if not labels:
        raise JudgekitError(f"Rater {rater!r} has no label under {rubric} in {shown}; check the rater id.")
    log = read_eval_log(str(log_file))
    edited = 0
    for sample in log.samples or []:
        iid = str(sample.id) if sample.epoch <= 1 else f"{sample.id}#{sample.epoch}"
        if iid not in labels:
            continue
        edit_score(log, sample.id, score, ScoreEdit(
            value=labels[iid], provenance=ProvenanceData(author=rater, reason=f"human label from judgekit store {shown}")),
            recompute_metrics=False, epoch=sample.epoch)
        edited += 1
    if edited:
        recompute_metrics(log)
    write_eval_log(log, str(out or log_file))
    return edited
