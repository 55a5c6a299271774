"""Confidence of a judgment from what a judge already produces.

Trials of one judge, a panel of judges, per-trial label probabilities or token
log-probabilities; for the selective judging of :mod:`judgekit.stats.selective` (Jung, Brahman &
Choi, "Trust or Escalate", ICLR 2025, Sec. 3.2).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class LabelConfidence:
    """A label and the confidence in it; ``n`` counts the votes or labels it rests on."""

    label: Hashable | None
    confidence: float
    n: int


def _modal_share(labels: Sequence[Hashable | None]) -> LabelConfidence:
    votes = [x for x in labels if x is not None]
    if not votes:
        return LabelConfidence(None, math.nan, 0)
    label, count = Counter(votes).most_common(1)[0]
    return LabelConfidence(label, count / len(votes), len(votes))


def trial_agreement_confidence(labels_of_trials: Sequence[Hashable | None]) -> LabelConfidence:
    """Share of the modal label among one judge's repeated trials on one item.

    ``confidence = max_y #{t : y_t = y} / T`` over the ``T`` trials with a label (``None`` =
    unparsable trial, dropped, as the authors drop failed calls). The hard-vote version of the
    paper's "simulated annotators" (Jung et al. 2025, Sec. 3.2), where trials vary the few-shot
    demonstrations and the answer order. Ties: the label seen first wins (the confidence is the
    same). No labelled trial: label ``None``, confidence NaN (never kept).
    """
    return _modal_share(labels_of_trials)


def panel_agreement_confidence(labels_by_judge: Sequence[Hashable | None]) -> LabelConfidence:
    """Share of the modal label among a panel of different judges on one item.

    Same formula as :func:`trial_agreement_confidence`, over judges instead of trials
    (``None`` = that judge gave no label, dropped).
    """
    return _modal_share(labels_by_judge)


def simulated_annotators_confidence(
    probs_per_trial: npt.ArrayLike,
) -> tuple[int, float]:
    """The paper's simulated-annotators confidence from per-trial label probabilities.

    ``probs_per_trial[t, y]`` is trial ``t``'s probability of label ``y`` (trials = few-shot sets
    x answer orders, mapped back to the same label order). As the authors' ``simulate_annotators``
    then ``torch.max``: ``p_y = mean_t probs[t, y]``, label ``argmax_y p_y`` (first on ties),
    confidence ``max_y p_y``.
    """
    p = np.asarray(probs_per_trial, dtype=float)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] == 0:
        raise ValueError("probs_per_trial must be a non-empty (trials, labels) array")
    mean = p.mean(axis=0)
    y = int(np.argmax(mean))
    return y, float(mean[y])


def logprob_confidence(
    label_logprobs: Mapping[Hashable, float], *, normalize: bool = True
) -> LabelConfidence:
    """Probability of the chosen (most likely) label from token log-probabilities.

    ``p_y = exp(l_y) / sum_z exp(l_z)`` over the labels given (``normalize=True``, a softmax over
    the label tokens: mass on other tokens is ignored), or ``p_y = exp(l_y)`` (``normalize=False``,
    as the authors' ``math.exp(logprob)``). A label absent from the top log-probabilities may be
    passed as ``-inf``. Returns the argmax label (first on ties) and its probability; ``n`` is the
    number of labels.
    """
    if not label_logprobs:
        raise ValueError("need at least one label log-probability")
    labels = list(label_logprobs)
    lp = np.array([label_logprobs[x] for x in labels], dtype=float)
    if np.any(np.isnan(lp)) or np.any(lp > 0):
        raise ValueError("log-probabilities must be <= 0 and not NaN")
    i = int(np.argmax(lp))
    if np.isneginf(lp[i]):
        return LabelConfidence(None, math.nan, len(labels))
    if normalize:
        z = lp[i] + math.log(float(np.sum(np.exp(lp - lp[i]))))
        prob = math.exp(lp[i] - z)
    else:
        prob = math.exp(lp[i])
    return LabelConfidence(labels[i], prob, len(labels))


def support_confidence(label: Hashable, others: Sequence[Hashable | None]) -> float:
    """Share of a panel that supports one judge's label: ``(1 + #{o : o = label}) / (1 + #{o :
    o is not None})`` over the other judges' labels ``others`` (``None`` = no label, dropped).

    Unlike :func:`panel_agreement_confidence` (the modal label's share) this is the confidence in
    *this* judge's label, the one a selective cascade keeps.
    """
    votes = [o for o in others if o is not None]
    return (1 + sum(o == label for o in votes)) / (1 + len(votes))
