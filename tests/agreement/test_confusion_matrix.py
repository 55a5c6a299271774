"""Confusion matrix of a judge against a reference, and the scores derived from it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from sklearn.metrics import precision_recall_fscore_support

from judgekit.agreement import ConfusionResult, confusion_matrix
from judgekit.errors import JudgekitError

LABELS = ["full_compliance", "full_refusal", "partial_refusal"]


def test_matrix_rows_are_reference_columns_are_judge():
    reference = ["full_refusal", "full_refusal", "full_compliance", "partial_refusal", None]
    judge = ["full_refusal", "full_compliance", "full_compliance", "full_refusal", "full_refusal"]
    result = confusion_matrix(reference, judge, labels=LABELS)
    assert isinstance(result, ConfusionResult)
    assert result.labels == LABELS
    assert result.matrix.dtype.kind == "i"
    # The unit with no reference rating is dropped; 4 pairs remain.
    assert result.matrix.tolist() == [[1, 0, 0], [1, 1, 0], [0, 1, 0]]
    assert result.n == 4
    # full_refusal: TP = 1, judge said it twice (precision 1/2), reference twice (recall 1/2)
    assert result.precision["full_refusal"] == 0.5
    assert result.recall["full_refusal"] == 0.5
    assert result.f1["full_refusal"] == 0.5  # 2 TP / (2 TP + FP + FN) = 2 / 4
    # partial_refusal: the judge never said it -> precision 0/0 is undefined, recall 0/1 = 0
    assert math.isnan(result.precision["partial_refusal"])
    assert result.recall["partial_refusal"] == 0.0
    assert result.f1["partial_refusal"] == 0.0  # 0 / (0 + 0 + 1)
    assert result.support == {"full_compliance": 1, "full_refusal": 2, "partial_refusal": 1}


def test_unused_label_is_nan_not_zero():
    result = confusion_matrix(["a", "b"], ["a", "b"], labels=["a", "b", "c"])
    assert result.matrix.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 0]]
    assert math.isnan(result.precision["c"])
    assert math.isnan(result.recall["c"])
    assert math.isnan(result.f1["c"])
    assert result.support["c"] == 0


def test_matches_sklearn_on_random_data():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 4, 300)
    y_pred = np.where(rng.random(300) < 0.7, y_true, rng.integers(0, 4, 300))
    labels = [0, 1, 2, 3]
    result = confusion_matrix(y_true, y_pred, labels=labels)
    assert np.array_equal(result.matrix, sk_confusion_matrix(y_true, y_pred, labels=labels))
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    for i, label in enumerate(labels):
        assert result.precision[label] == pytest.approx(p[i])
        assert result.recall[label] == pytest.approx(r[i])
        assert result.f1[label] == pytest.approx(f[i])
        assert result.support[label] == s[i]


def test_to_dict_is_json_safe():
    result = confusion_matrix([1, 2, 2], [1, 2, 1], labels=[1, 2, 3])
    payload = result.to_dict()
    text = json.dumps(payload, allow_nan=False)  # raises if a NaN slipped through
    back = json.loads(text)
    assert back["labels"] == [1, 2, 3]
    assert back["matrix"] == [[1, 0, 0], [1, 1, 0], [0, 0, 0]]
    assert back["precision"] == {"1": 0.5, "2": 1.0, "3": None}
    assert back["recall"] == {"1": 1.0, "2": 0.5, "3": None}
    assert back["support"] == {"1": 1, "2": 2, "3": 0}


def test_errors():
    with pytest.raises(JudgekitError, match=r"confusion_matrix: rating 'x' is not in categories"):
        confusion_matrix(["a", "x"], ["a", "a"], labels=["a", "b"])
    with pytest.raises(JudgekitError, match=r"confusion_matrix: the two rating sequences"):
        confusion_matrix(["a"], ["a", "b"], labels=["a", "b"])
