"""A 50,000-rating store (10,000 items x 5 raters, 4 models): the agreement report's figures,
overall and per model, against an independent computation written here (pandas pivot, majority
written out, scikit-learn's Cohen kappa, the ``krippendorff`` package)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement.report import agreement_report
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
CODES = list(REFUSAL.codes)
HUMANS = ["h1", "h2", "h3"]
JUDGES = ["j1", "j2"]
N_ITEMS = 10_000


def _ratings() -> pd.DataFrame:
    rng = np.random.default_rng(50_000)
    truth = rng.choice(3, size=N_ITEMS, p=[0.6, 0.1, 0.3])
    models = np.array(["m1", "m2", "m3", "m4"])[rng.integers(0, 4, N_ITEMS)]
    rows = []
    for rater, p_right in (("h1", 0.85), ("h2", 0.8), ("h3", 0.75), ("j1", 0.7), ("j2", 0.9)):
        right = rng.random(N_ITEMS) < p_right
        label = np.where(right, truth, rng.integers(0, 3, N_ITEMS))
        status = np.where(rng.random(N_ITEMS) < (0.03 if rater == "j2" else 0.0), "abstain", "ok")
        for i in range(N_ITEMS):
            ok = status[i] == "ok"
            rows.append((f"it{i:05d}", rater, "judge" if rater[0] == "j" else "human",
                         CODES[label[i]] if ok else "", status[i], models[i]))
    return pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "model"])


@pytest.fixture(scope="module")
def scale_case(tmp_path_factory):
    from judgekit.store.database import Store

    folder = tmp_path_factory.mktemp("scale")
    long = _ratings()
    path = folder / "ratings.csv"
    long.to_csv(path, index=False)
    store = Store(folder / "judgekit.db")
    summary = import_ratings(store, path, REFUSAL)
    assert summary.ratings == 50_000 and tuple(summary.written) == (50_000, 0, 0)
    report = agreement_report(store, rubric=REFUSAL, by=["model"], n_resamples=200)
    store.close()
    return long, report


def _expected(long: pd.DataFrame, items: pd.Index) -> dict:
    """The figures of one slice, computed independently of judgekit."""
    ok = long[long["status"] == "ok"]
    pos = ok.pivot(index="item_id", columns="rater_id", values="label").reindex(items)
    pos = pos.apply(lambda col: col.map({c: i for i, c in enumerate(CODES)}))  # NaN when not rated
    hum = pos[HUMANS].to_numpy()
    # majority of the humans who rated the item; a tie (or nobody) is no reference
    counts = np.stack([(hum == v).sum(axis=1) for v in range(3)], axis=1)
    top = counts.max(axis=1)
    unique_top = (counts == top[:, None]).sum(axis=1) == 1
    ref = np.where((top > 0) & unique_top, counts.argmax(axis=1), np.nan)
    out: dict = {"n_reference": int(np.isfinite(ref).sum()), "judges": {}}
    out["alpha_humans_all"] = krippendorff.alpha(reliability_data=hum.T, level_of_measurement="nominal")
    for j in JUDGES:
        jv = pos[j].to_numpy()
        both = np.isfinite(ref) & np.isfinite(jv)
        a, b = ref[both].astype(int), jv[both].astype(int)
        judged = np.isfinite(jv)
        asked = long[(long["rater_id"] == j) & long["item_id"].isin(items)]
        out["judges"][j] = {
            "n": int(both.sum()),
            "percent_agreement": float((a == b).mean()),
            "kappa": cohen_kappa_score(a, b, labels=[0, 1, 2]),
            "alpha": krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="nominal"),
            "n_rated": int(judged.sum()),
            "n_abstain": int((asked["status"] == "abstain").sum()),
            "vs_h1_kappa": cohen_kappa_score(
                *(x[np.isfinite(pos["h1"].to_numpy()) & judged].astype(int)
                  for x in (pos["h1"].to_numpy(), jv)), labels=[0, 1, 2]),
            "alpha_with_judge": krippendorff.alpha(
                reliability_data=np.vstack([hum[judged].T, jv[judged]]), level_of_measurement="nominal"),
            "alpha_humans": krippendorff.alpha(reliability_data=hum[judged].T,
                                               level_of_measurement="nominal"),
        }
    return out


def _check_slice(got: dict, want: dict) -> None:
    assert got["n_reference"] == want["n_reference"]
    assert got["human_ceiling"]["alpha"]["value"] == pytest.approx(want["alpha_humans_all"], abs=1e-6)
    for j, w in want["judges"].items():
        g = got["judges"][j]
        vs = g["vs_reference"]
        assert vs["n"] == w["n"] and vs["kappa"]["n"] == w["n"]
        for m in ("percent_agreement", "kappa", "alpha"):
            assert vs[m]["value"] == pytest.approx(w[m], abs=1e-6), (j, m)
            assert vs[m]["low"] <= vs[m]["value"] <= vs[m]["high"]
        assert g["n_rated"] == w["n_rated"] and g["n_abstain"] == w["n_abstain"]
        assert g["vs_humans"]["h1"]["kappa"]["value"] == pytest.approx(w["vs_h1_kappa"], abs=1e-6)
        assert g["alpha_humans"]["value"] == pytest.approx(w["alpha_humans"], abs=1e-6)
        assert g["alpha_with_judge"]["value"] == pytest.approx(w["alpha_with_judge"], abs=1e-6)


def test_overall_figures_of_a_50k_rating_store_match_an_independent_computation(scale_case):
    long, report = scale_case
    items = pd.Index(sorted(long["item_id"].unique()))
    got = report.slice(None, "all")
    assert got["n_items"] == N_ITEMS
    _check_slice(got, _expected(long, items))
    # j2 abstained on about 3% of the items, and those are not disagreements
    assert 200 < got["judges"]["j2"]["n_abstain"] < 400


def test_per_model_figures_of_a_50k_rating_store_match_an_independent_computation(scale_case):
    long, report = scale_case
    by_model = long.drop_duplicates("item_id").set_index("item_id")["model"]
    keys = [s["key"] for s in report.data["slices"] if s["by"] == "model"]
    assert keys == ["m1", "m2", "m3", "m4"]
    for key in keys:
        items = pd.Index(sorted(by_model.index[by_model == key]))
        got = report.slice("model", key)
        assert got["n_items"] == len(items)
        _check_slice(got, _expected(long, items))
