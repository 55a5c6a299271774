"""The lean agreement path gives the per-item path's figures:
point values bit for bit, the old error messages, the old treatment of unknown labels, of rated
items missing from the items table and of perturbed copies' metadata.

The independent side of each test is written here: the per-item arithmetic, or the public
statistics called on an items x raters pivot built by pandas in the test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import one_sentence_error

import judgekit.agreement.figures as figures
from judgekit.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
)
from judgekit.agreement.report import agreement_report
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
HARM = load_rubric("harm_severity")  # ordinal, five labels


def _frame(units: list[list[int]], rubric=REFUSAL, judge: int | None = 0) -> pd.DataFrame:
    c = list(rubric.codes)
    rows = [dict(item_id=f"i{i:04d}", rater_id=f"h{h}", rater_kind="human", label=c[lab], status="ok")
            for i, u in enumerate(units) for h, lab in enumerate(u)]
    if judge is not None:
        rows += [dict(item_id=f"i{i:04d}", rater_id="j", rater_kind="judge", label=c[judge], status="ok")
                 for i in range(len(units))]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- point values
def test_percent_agreement_on_a_rounding_boundary_is_the_per_item_value():
    """7/128 = 0.0546875 exactly; summed over the items in id order (the per-item computation)
    it is a hair below, so it reports 0.054687, as before the lean path."""
    units = [[0, 0, 1]] * 9 + [[0, 0]] * 4 + [[0, 1, 2]] * 115
    units = [units[k] for k in np.random.default_rng(1032).permutation(128)]
    # the per-item computation: each item's share of agreeing rater pairs, averaged in item order
    shares = []
    for u in units:
        m = len(u)
        shares.append(sum(u.count(c) * (u.count(c) - 1) for c in set(u)) / (m * (m - 1)))
    per_item = float(np.ones(128) @ np.array(shares) / 128)
    assert per_item != 7 / 128 and round(per_item, 6) == 0.054687 and round(7 / 128, 6) == 0.054688
    r = agreement_report(_frame(units), rubric=REFUSAL, n_resamples=100).to_dict()
    assert r["slices"][0]["human_ceiling"]["percent_agreement"]["value"] == 0.054687


def _random_frame(seed: int, rubric) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    codes = list(rubric.codes)
    v = len(codes)
    n = int(rng.integers(20, 200))
    raters = [(f"h{i}", "human") for i in range(int(rng.integers(2, 5)))] + [("ja", "judge"), ("jb", "judge")]
    rows = []
    for i in range(n):
        truth = int(rng.integers(0, v))
        for r, k in raters:
            if rng.random() < 0.25:
                continue
            lab = truth if rng.random() < 0.5 else int(rng.integers(0, v))
            rows.append(dict(item_id=f"it{(i * 7919) % 10007:05d}", rater_id=r, rater_kind=k,
                             label=codes[lab], status="ok"))
    frame = pd.DataFrame(rows)
    ids = sorted(set(frame["item_id"]))
    items = pd.DataFrame({"item_id": ids, "model": [["a", "b", "c"][k % 3] for k in range(len(ids))]})
    return frame, items


def _expected(value: float) -> float | None:
    return None if math.isnan(value) else value


@pytest.mark.parametrize("rubric", [REFUSAL, HARM], ids=["nominal", "ordinal"])
def test_unrounded_point_values_are_the_public_statistics_on_the_items(monkeypatch, rubric):
    """With the report's rounding switched off, every ceiling and judge-vs-human value equals
    (==) the public statistic on the slice's items (sorted by id), pivoted here by pandas."""
    monkeypatch.setattr(figures, "num", lambda x: None if x is None or math.isnan(float(x)) else float(x))
    cats = [float(i) for i in range(len(rubric.codes))]
    pos = {c: float(i) for i, c in enumerate(rubric.codes)}
    weights = "quadratic" if rubric.level == "ordinal" else None
    checked = 0
    for seed in range(10):
        frame, items = _random_frame(seed, rubric)
        report = agreement_report(frame, rubric=rubric, items=items, by=["model"], n_resamples=20, seed=seed)
        wide = frame.pivot(index="item_id", columns="rater_id", values="label").sort_index()
        wide = wide.apply(lambda s: s.map(pos)).astype(float)
        model = items.set_index("item_id")["model"]
        for s in report.to_dict()["slices"]:
            part = wide if s["by"] is None else wide[model.reindex(wide.index).to_numpy() == s["key"]]
            hum = [h for h in s["human_ceiling"]["raters"]]
            mat = part[hum].to_numpy().T
            ceiling = s["human_ceiling"]
            assert ceiling["percent_agreement"]["value"] == _expected(percent_agreement(mat))
            assert ceiling["ac1"]["value"] == _expected(gwet_ac1(mat, categories=cats))
            assert ceiling["alpha"]["value"] == _expected(
                krippendorff_alpha(mat, level=rubric.level, categories=cats))
            if len(hum) > 2:
                assert ceiling["kappa"]["value"] == _expected(fleiss_kappa(mat, categories=cats))
            for j, jf in s["judges"].items():
                for h, hf in jf["vs_humans"].items():
                    both = part[[h, j]].dropna()
                    if both.empty:
                        continue
                    x, y = both[h].to_numpy(), both[j].to_numpy()
                    assert hf["kappa"]["value"] == _expected(cohen_kappa(x, y, labels=cats))
                    assert hf["percent_agreement"]["value"] == _expected(percent_agreement(np.vstack([x, y])))
                rated = part[j].notna().to_numpy()
                with_j = part.loc[rated, [*hum, j]].to_numpy().T
                assert jf["alpha_with_judge"]["value"] == _expected(
                    krippendorff_alpha(with_j, level=rubric.level, categories=cats))
                if weights and len(hum) == 2:
                    both = part[hum].dropna()
                    assert ceiling["weighted_kappa"]["value"] == _expected(cohen_kappa(
                        both[hum[0]].to_numpy(), both[hum[1]].to_numpy(), labels=cats, weights=weights))
                checked += 1
    assert checked > 40


# ----------------------------------------------------------------------------- only_items
def _store(tmp_path, frame: pd.DataFrame, rubric=REFUSAL):
    from judgekit.store.database import Store

    store = Store(tmp_path / "judgekit.db")
    store.put_items(pd.DataFrame({"item_id": sorted(set(frame["item_id"]))}).assign(prompt="p", response="r"))
    store.put_ratings(frame.assign(rubric=rubric.id, rubric_hash=rubric.hash))
    return store


NO_REFERENCE = "No human ratings under refusal@1 to form a reference; import human labels first."
NO_RATINGS = f"No ratings under rubric {REFUSAL.ref} in the store"


def _error(source, **kw) -> str:
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError) as info:
        agreement_report(source, rubric=REFUSAL, n_resamples=10, **kw)
    return str(info.value)


def test_only_items_rating_nothing_names_the_missing_rater_not_a_missing_rubric(tmp_path):
    frame = _frame([[0, 1], [2, 2], [1, 1]])
    store = _store(tmp_path, frame)
    for source in (frame, store):
        assert _error(source, only_items=["not-rated"]) == NO_REFERENCE
        assert _error(source, only_items=["not-rated"], humans=["h0"]) == (
            "Human rater 'h0' has no ratings under refusal@1; known human raters: none.")
        # only_items that are rated still give the report on them alone
        r = agreement_report(source, rubric=REFUSAL, only_items=["i0001", "i0002"], n_resamples=10)
        assert r.to_dict()["slices"][0]["n_items"] == 2
    store.close()


def test_no_rating_under_the_rubric_says_so_with_only_items_too(tmp_path):
    frame = _frame([[0, 1], [2, 2]])
    assert _error(frame.iloc[:0], only_items=["i0000"]).startswith(NO_RATINGS)
    other = load_rubric("harm_severity")
    assert _error(frame.assign(rubric=other.id), only_items=["i0000"]).startswith(NO_RATINGS)
    assert _error(_store(tmp_path, _frame([[0, 1]], HARM), HARM), only_items=["i0000"]).startswith(NO_RATINGS)


def test_duplicate_rows_without_trials_and_only_items_rating_nothing_is_an_error_not_a_traceback():
    frame = _frame([[0, 1], [2, 2]])
    frame = pd.concat([frame, frame.head(1)], ignore_index=True)  # (i0000, h0) twice, no trial column
    assert "trial" not in frame.columns
    assert _error(frame, only_items=["not-rated"]) == NO_REFERENCE


# ----------------------------------------------------------------------------- between
def test_between_from_the_reports_codes_puts_items_missing_from_the_items_table_in_missing(tmp_path):
    from judgekit.agreement.between import between_all_pairs, between_report
    from judgekit.agreement.report import read_codes

    c = list(REFUSAL.codes)
    rows = [dict(item_id=f"i{i:04d}", rater_id="h0", rater_kind="human", label=c[i % 3], status="ok")
            for i in range(40)]
    for j, shift in (("ja", 0), ("jb", 1)):
        rows += [dict(item_id=f"i{i:04d}", rater_id=j, rater_kind="judge", label=c[(i + shift * (i % 2)) % 3],
                      status="ok") for i in range(60)]
    store = _store(tmp_path, pd.DataFrame(rows))
    gone = [f"i{i:04d}" for i in (*range(5), *range(50, 55))]  # 5 human-rated, 5 not
    store.conn.executemany("DELETE FROM items WHERE item_id = ?", [(i,) for i in gone])
    store.conn.commit()
    lean = between_all_pairs(store, rubric=REFUSAL, judges=["ja", "jb"], n_resamples=50,
                             codes=read_codes(store, REFUSAL))
    n = {r["key"]: r["n_both"] for r in lean[0]["rows"]}
    assert n == {"all": 60, "yes": 40 - 5, "no": 20 - 5, "(missing)": 10}
    assert any("10 items have no 'human_rated' value" in w for w in lean[0]["warnings"])
    assert lean[0] == between_report(store, rubric=REFUSAL, pair=("ja", "jb"), n_resamples=50)
    store.close()


# ----------------------------------------------------------------------------- metadata keys
def test_a_perturbed_copys_metadata_does_not_count_as_the_items(tmp_path):
    """Only the copy ``i0000~padding`` has ``human_rated``: the items (Store.items()) do not, so
    --between and the report go on, and metadata_keys does not see the key."""
    from click.testing import CliRunner

    from judgekit.agreement.unit_frames import metadata_keys
    from judgekit.cli import main

    frame = _frame([[0, 1], [2, 2], [1, 1], [0, 0]])
    frame = pd.concat([frame, frame[frame["rater_id"] == "j"].assign(rater_id="k")], ignore_index=True)
    store = _store(tmp_path, frame)
    store.put_items(pd.DataFrame({"item_id": ["i0000~padding"], "prompt": "p", "response": "r",
                                  "human_rated": ["x"], "turn": [2]}))
    assert "human_rated" in store.items(variants=True).columns and "human_rated" not in store.items().columns
    assert metadata_keys(store, ["human_rated", "turn"]) == set()
    store.close()
    db = tmp_path / "judgekit.db"
    r = CliRunner().invoke(main, ["report", "--rubric", "refusal", "--store", str(db), "--out",
                                  str(tmp_path / "rep"), "--resamples", "100"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--between", "j,k",
                                  "--resamples", "100"])
    assert r.exit_code == 0, r.output


# ----------------------------------------------------------------------------- rater ids
def test_integer_rater_ids_stay_integers_and_a_missing_rater_id_is_an_error():
    from judgekit.errors import JudgekitError

    frame = _frame([[0, 1], [2, 2], [1, 1], [0, 2]]).replace({"rater_id": {"h0": 1, "h1": 0, "j": 2}})
    r = agreement_report(frame, rubric=REFUSAL, n_resamples=20).to_dict()
    assert r["humans"] == [1, 0] and r["judges"] == [2] and list(r["slices"][0]["judges"]) == [2]
    assert r["slices"][0]["human_ceiling"]["raters"] == [1, 0]
    frame.loc[3, "rater_id"] = None
    with pytest.raises(JudgekitError, match=r"^Rating of item 'i0001' has no rater_id; give every rating"):
        agreement_report(frame, rubric=REFUSAL, n_resamples=20)


# ----------------------------------------------------------------------------- unknown labels
def test_a_stored_label_outside_the_rubric_is_refused_naming_item_rater_and_label(tmp_path):
    """Kept as the lean path has it (exit 2, one sentence). The per-item path exited 0 with
    inconsistent figures: the label counted as a rating in n (ceiling n=8 for a value computed on
    7 items) and in the label shares (summing to 0.9375), as missing in every statistic; the same
    label from a judge already made it exit 2 (confusion_matrix)."""
    from click.testing import CliRunner

    from judgekit.cli import main

    frame = _frame([[0, 0], [1, 1], [2, 2]])
    frame.loc[(frame["item_id"] == "i0000") & (frame["rater_id"] == "h1"), "label"] = "Full_Refusal"
    store = _store(tmp_path, frame)
    before = store.ratings(rubric=REFUSAL).to_dict("records")
    store.close()
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(tmp_path / "judgekit.db"),
                                  "--resamples", "100"])
    one_sentence_error(r, "Rating of item 'i0000' by 'h1' has the label 'Full_Refusal', which is not one of "
                          "the rubric's codes (full_compliance, partial_refusal, full_refusal)")
    from judgekit.store.database import Store

    with Store(tmp_path / "judgekit.db") as again:
        assert again.ratings(rubric=REFUSAL).to_dict("records") == before


# ------------------------------------------------- 1b. point values from gathered pattern counts
def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _not_needed() -> np.ndarray:
    raise AssertionError("the per-item matrix was built although the pattern counts suffice")


@pytest.mark.parametrize("seed", range(16))
def test_pattern_figures_from_item_rows_are_the_public_statistics_bit_for_bit(seed):
    """``items=`` (each item's pattern row) gives the public statistic on the items (==, NaN
    alike) without building the items matrix: 2-5 raters, 2-5 labels, skewed labels (ties and
    single-label slices), 0-80% missing cells, the whole table and a slice of its rows."""
    from judgekit.agreement import pattern_figures as pf

    rng = np.random.default_rng(5000 + seed)
    m, v, n = int(rng.integers(2, 6)), int(rng.integers(2, 6)), int(rng.integers(1, 2500))
    p_missing = float(rng.choice([0.0, 0.2, 0.5, 0.8]))
    labels = rng.choice(v, size=(n, m), p=rng.dirichlet(np.full(v, 0.4)))
    labels = np.where(rng.random((n, m)) < p_missing, -1, labels)
    rows, inverse = pf.patterns_of(labels)
    freq = np.bincount(inverse, minlength=rows.shape[0])
    ci = {"n_resamples": 20, "confidence": 0.95, "seed": seed}
    cats = [float(i) for i in range(v)]
    whole = np.ones(rows.shape[0], dtype=bool)
    both = (rows[:, :2] >= 0).all(axis=1)
    for mask in (whole, both, ~both):
        local = np.cumsum(mask) - 1
        items = local[inverse[mask[inverse]]]
        data = np.where(labels >= 0, labels, np.nan)[mask[inverse]].T  # raters x items, in order
        codes, f = rows[mask], freq[mask]
        assert _same(pf.percent_agreement(codes, f, _not_needed, ci, items=items)[0],
                     percent_agreement(data))
        assert _same(pf.gwet_ac1(codes, f, _not_needed, v, ci, items=items)[0],
                     gwet_ac1(data, categories=cats))
        assert _same(pf.fleiss_kappa(codes, f, _not_needed, v, ci, items=items)[0],
                     fleiss_kappa(data, categories=cats))
        for level in ("nominal", "ordinal"):
            assert _same(pf.krippendorff_alpha(codes, f, _not_needed, level, v, ci, items=items)[0],
                         krippendorff_alpha(data, level=level, categories=cats))
        pair = data[:2][:, ~np.isnan(data[:2]).any(axis=0)]
        matrix = pf.confusion(codes[:, 0], codes[:, 1], f, v)
        for weights in (None, "linear", "quadratic"):
            assert _same(pf.cohen_kappa(matrix, weights, _not_needed, ci)[0],
                         cohen_kappa(pair[0], pair[1], labels=cats, weights=weights))


def test_pattern_percent_agreement_on_the_rounding_boundary_is_the_per_item_sum():
    """The 7/128 items: the gathered per-item shares, averaged as the public function does,
    are the per-item value (a hair below 7/128), not the per-pattern sum."""
    from judgekit.agreement import pattern_figures as pf

    units = [[0, 0, 1]] * 9 + [[0, 0, -1]] * 4 + [[0, 1, 2]] * 115
    labels = np.array([units[k] for k in np.random.default_rng(1032).permutation(128)])
    rows, inverse = pf.patterns_of(labels)
    freq = np.bincount(inverse, minlength=rows.shape[0])
    ci = {"n_resamples": 20, "confidence": 0.95, "seed": 0}
    value = pf.percent_agreement(rows, freq, _not_needed, ci, items=inverse)[0]
    assert value == percent_agreement(np.where(labels >= 0, labels, np.nan).T) != 7 / 128
    assert round(value, 6) == 0.054687


def test_report_with_abstaining_judges_and_five_humans_is_the_public_statistics(monkeypatch):
    """Up to five humans, judges that abstain (no label: missing in the statistics) and missing
    cells: the unrounded ceiling values and judge-vs-human kappa and percent agreement are the
    public statistics on the items (==)."""
    monkeypatch.setattr(figures, "num", lambda x: None if x is None or math.isnan(float(x)) else float(x))
    cats = [0.0, 1.0, 2.0]
    codes = list(REFUSAL.codes)
    pos = {c: float(i) for i, c in enumerate(codes)}
    checked = 0
    for seed in range(6):
        rng = np.random.default_rng(700 + seed)
        raters = [(f"h{i}", "human") for i in range(int(rng.integers(3, 6)))] + [("ja", "judge")]
        rows = []
        for i in range(int(rng.integers(30, 150))):
            truth = int(rng.integers(0, 3))
            for r, k in raters:
                if rng.random() < 0.3:
                    continue
                lab = codes[truth if rng.random() < 0.6 else int(rng.integers(0, 3))]
                abstain = k == "judge" and rng.random() < 0.2
                rows.append(dict(item_id=f"it{i:04d}", rater_id=r, rater_kind=k,
                                 label=None if abstain else lab, status="abstain" if abstain else "ok"))
        frame = pd.DataFrame(rows)
        s = agreement_report(frame, rubric=REFUSAL, n_resamples=20, seed=seed).to_dict()["slices"][0]
        ok = frame[frame["status"] == "ok"]
        wide = ok.pivot(index="item_id", columns="rater_id", values="label").sort_index()
        wide = wide.apply(lambda c: c.map(pos)).astype(float)
        hum = s["human_ceiling"]["raters"]
        mat = wide[hum].to_numpy().T
        ceiling = s["human_ceiling"]
        assert ceiling["percent_agreement"]["value"] == _expected(percent_agreement(mat))
        assert ceiling["ac1"]["value"] == _expected(gwet_ac1(mat, categories=cats))
        assert ceiling["kappa"]["value"] == _expected(fleiss_kappa(mat, categories=cats))
        assert ceiling["alpha"]["value"] == _expected(krippendorff_alpha(mat, categories=cats))
        for h, hf in s["judges"]["ja"]["vs_humans"].items():
            both = wide[[h, "ja"]].dropna() if "ja" in wide else wide[[h]].iloc[:0]
            if both.empty:
                continue
            x, y = both[h].to_numpy(), both["ja"].to_numpy()
            assert hf["kappa"]["value"] == _expected(cohen_kappa(x, y, labels=cats))
            assert hf["percent_agreement"]["value"] == _expected(percent_agreement(np.vstack([x, y])))
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("rubric", [REFUSAL, HARM], ids=["nominal", "ordinal"])
def test_above_the_dense_limit_the_report_computes_on_the_items_and_gets_the_same_figures(monkeypatch, rubric):
    """With the dense-table limit at 0 every point value goes through the public statistic on
    the (raters, items) matrix; the report is the same dict, value for value."""
    from judgekit.agreement import pattern_figures as pf

    monkeypatch.setattr(figures, "num", lambda x: None if x is None or math.isnan(float(x)) else float(x))
    frame, items = _random_frame(3, rubric)
    fast = agreement_report(frame, rubric=rubric, items=items, by=["model"], n_resamples=20).to_dict()
    monkeypatch.setattr(pf, "_DENSE_CELLS", 0)
    monkeypatch.setattr(pf, "_percent_items", lambda u: calls.append("pa") or percent_agreement(u))
    calls: list[str] = []
    slow = agreement_report(frame, rubric=rubric, items=items, by=["model"], n_resamples=20).to_dict()
    assert calls and slow == fast
