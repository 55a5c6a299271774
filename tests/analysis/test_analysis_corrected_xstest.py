"""Corrected refusal rates on the shipped XSTest v2 labels: 15% per model as the labelled set.

Every XSTest response carries its adjudicated label, so the corrected rate from 15% can be
checked against the adjudicated rate over all items (computed here from the CSV directly).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgekit.analysis.correction.groups import (
    GroupColumns,
    corrected_by_group,
    xstest_corrected,
    xstest_labels_path,
)
from judgekit.errors import JudgekitError

REFUSAL = {"2_full_refusal", "3_partial_refusal"}
MODELS = ["gpt4", "llama2new", "llama2orig", "mistralguard", "mistralinstruct"]


@pytest.fixture(scope="module")
def labels() -> pd.DataFrame:
    return pd.read_csv(xstest_labels_path(), dtype=str, keep_default_na=False)


@pytest.mark.parametrize("judge", ["strmatch_label", "gpt4_label"])
@pytest.mark.parametrize("method", ["rogan_gladen", "ppi"])
def test_xstest_per_model(labels: pd.DataFrame, judge: str, method: str) -> None:
    out = xstest_corrected(judge=judge, method=method, seed=0)
    assert out["model"].tolist() == MODELS
    known = {"1_full_compliance", *REFUSAL}
    raw_err, cor_err = [], []
    for _, row in out.iterrows():
        m = labels[(labels["model"] == row["model"]) & labels[judge].isin(known)]
        n = len(m)
        assert row["n_total"] == n  # gpt4_label's free-text outputs are left out
        assert row["n_labelled"] == round(0.15 * n)
        assert row["raw"] == pytest.approx(m[judge].isin(REFUSAL).mean())
        truth = m["final_label"].isin(REFUSAL).mean()
        assert row["reference_all"] == pytest.approx(truth)
        if row["note"]:
            assert np.isnan(row["corrected"])
            continue
        assert row["ci_low"] <= row["corrected"] <= row["ci_high"]
        assert bool(row["covered"]) == (row["ci_low"] <= truth <= row["ci_high"])
        raw_err.append(abs(row["raw"] - truth))
        cor_err.append(abs(row["corrected"] - truth))
    # the correction from 15% is closer to the adjudicated rate than the judge alone
    assert np.mean(cor_err) < np.mean(raw_err)
    # on this seed every corrected interval holds the adjudicated rate (docs/analysis.md table)
    assert out["covered"].dropna().astype(bool).all()


def test_xstest_gpt4_strmatch_figures(labels: pd.DataFrame) -> None:
    # the string matcher never says partial refusal, so it under-counts every model's refusals
    out = xstest_corrected(judge="strmatch_label", method="ppi")
    assert (out["raw"] <= out["reference_all"] + 0.02).all()
    n_strmatch = labels[labels["model"] == "gpt4"]["strmatch_label"].isin(REFUSAL).sum()
    assert out.loc[out["model"] == "gpt4", "raw"].item() == pytest.approx(n_strmatch / 450)
    # Rogan–Gladen refuses where the judge barely tells refusals apart (one sentence, kept)
    rg = xstest_corrected(judge="gpt4_label", method="rogan_gladen")
    note = rg.loc[rg["model"] == "mistralinstruct", "note"].item()
    assert note.startswith("The judge's sensitivity + specificity − 1 for 'refusal' is ")
    assert "use method='ppi'" in note


def test_corrected_by_group_bad_input() -> None:
    t = pd.DataFrame({"g": ["a"], "j": ["x"], "r": ["x"]})
    with pytest.raises(JudgekitError, match="no column 'model'"):
        corrected_by_group(t, GroupColumns("j", "r", "model"), positive=["x"])
    with pytest.raises(JudgekitError, match="share=1.5 must be between 0 and 1"):
        corrected_by_group(t, GroupColumns("j", "r", "g"), positive=["x"], share=1.5)
    with pytest.raises(JudgekitError, match="XSTest judge 'final_label' is unknown"):
        xstest_corrected(judge="final_label")
