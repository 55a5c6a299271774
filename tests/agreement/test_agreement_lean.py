"""The lean agreement path: the figures computed from item patterns are the public
statistics' own (values and bootstrap CIs, draw for draw), the store's one-scan code matrix is
the DataFrame path's, and the report's sections computed from that matrix (slices, worst
disagreements, judge vs judge) are the ones computed from the ratings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgekit.agreement import (
    ac1_ci,
    alpha_ci,
    cohen_kappa,
    fleiss_ci,
    fleiss_kappa,
    gwet_ac1,
    kappa_ci,
    krippendorff_alpha,
    percent_agreement,
    percent_agreement_ci,
)
from judgekit.agreement import pattern_figures as pf
from judgekit.agreement.between import between_all_pairs
from judgekit.agreement.rating_codes import codes_from_frame, codes_from_store
from judgekit.agreement.report import agreement_report, read_codes
from judgekit.agreement.slicing import slice_positions, slice_positions_from_groups
from judgekit.agreement.unit_frames import meta_frame, value_groups
from judgekit.report.collect import worst_disagreements
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
CODES = list(REFUSAL.codes)
CI = {"n_resamples": 300, "confidence": 0.95, "seed": 0}


def _codes(seed: int, n: int, m: int, p_missing: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)
    codes = np.where(rng.random((n, m)) < 0.7, truth[:, None], rng.integers(0, 3, (n, m)))
    return np.where(rng.random((n, m)) < p_missing, -1, codes)


@pytest.mark.parametrize(("seed", "m", "p_missing"), [(1, 2, 0.1), (2, 3, 0.3), (3, 4, 0.5), (4, 5, 0.2)])
def test_pattern_figures_are_the_public_statistics_draw_for_draw(seed, m, p_missing):
    items = _codes(seed, 3_000, m, p_missing)
    rows, inverse = pf.patterns_of(items)
    freq = np.bincount(inverse, minlength=rows.shape[0])
    assert rows.shape[0] <= 4**m and freq.sum() == items.shape[0]
    data = np.where(items >= 0, items, np.nan).T  # raters x units, NaN missing
    cats = [0.0, 1.0, 2.0]

    value, ci = pf.percent_agreement(rows, freq, data, CI)
    assert value == percent_agreement(data)  # the point values: the public statistic, bit for bit
    assert ci() == percent_agreement_ci(data, **CI)
    value, ci = pf.gwet_ac1(rows, freq, data, 3, CI)
    assert value == gwet_ac1(data, categories=cats)
    assert ci() == ac1_ci(data, categories=cats, **CI)
    value, ci = pf.fleiss_kappa(rows, freq, data, 3, CI)
    assert value == fleiss_kappa(data, categories=cats)
    assert ci() == fleiss_ci(data, categories=cats, **CI)
    for level in ("nominal", "ordinal"):
        value, ci = pf.krippendorff_alpha(rows, freq, data, level, 3, CI)
        assert value == krippendorff_alpha(data, level=level, categories=cats)
        assert ci() == alpha_ci(data, level=level, categories=cats, **CI)
    both = (items[:, :2] >= 0).all(axis=1)
    x, y = items[both, 0].astype(float), items[both, 1].astype(float)
    matrix = pf.confusion(rows[:, 0], rows[:, 1], freq, 3)
    assert matrix.sum() == both.sum()
    for weights in (None, "quadratic"):
        value, ci = pf.cohen_kappa(matrix, weights, np.vstack([x, y]), CI)
        assert value == cohen_kappa(x, y, labels=cats, weights=weights)
        assert ci() == kappa_ci(x, y, labels=cats, weights=weights, **CI)


def _long(n_items: int, seed: int, *, trials: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_items)
    rows = []
    for rater, kind, p in (("h2", "human", 0.8), ("h1", "human", 0.75), ("h3", "human", 0.7),
                           ("jb", "judge", 0.85), ("ja", "judge", 0.6)):
        for i in range(n_items):
            if rng.random() < 0.15:
                continue  # not rated
            for t in range(2 if trials and kind == "judge" and i % 7 == 0 else 1):
                label = truth[i] if rng.random() < p else rng.integers(0, 3)
                status = "abstain" if kind == "judge" and rng.random() < 0.05 else "ok"
                rows.append({"item_id": f"it{(i * 7919) % n_items:04d}", "rater_id": rater, "rater_kind": kind,
                             "label": CODES[label] if status == "ok" else None, "status": status, "trial": t,
                             "model": ["m2", "m10", "m1"][i % 3], "turn": [1, 2, None][i % 3]})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    from judgekit.store.database import Store

    out = {}
    for name, trials in (("plain", False), ("trials", True)):
        long = _long(400, 7, trials=trials)
        store = Store(tmp_path_factory.mktemp(name) / "judgekit.db")
        items = long.drop_duplicates("item_id")[["item_id", "model", "turn"]].assign(prompt="p", response="r")
        store.put_items(items)
        store.put_ratings(long.drop(columns=["model", "turn"]).assign(rubric=REFUSAL.id, rubric_hash=REFUSAL.hash))
        out[name] = (store, long)
    yield out
    for store, _ in out.values():
        store.close()


@pytest.mark.parametrize("name", ["plain", "trials"])
def test_store_scan_gives_the_dataframe_paths_matrix(stores, name):
    store, _ = stores[name]
    frame = codes_from_frame(store.ratings(rubric=REFUSAL), CODES)
    scanned = codes_from_store(store, REFUSAL)
    if name == "trials":
        assert scanned is None  # several trials of one (item, judge): the DataFrame path collapses them
        scanned = read_codes(store, REFUSAL)
    assert scanned is not None
    assert scanned.raters == frame.raters == ["h1", "h2", "h3", "ja", "jb"]
    assert list(scanned.kinds) == list(frame.kinds) == ["h2", "h1", "h3", "jb", "ja"]  # first appearance
    assert np.array_equal(scanned.items, frame.items) and list(scanned.items) == sorted(scanned.items)
    assert np.array_equal(scanned.labels, frame.labels) and np.array_equal(scanned.status, frame.status)
    some = list(scanned.items[::3])
    sub = codes_from_store(store, REFUSAL, only_items=some) if name == "plain" else read_codes(store, REFUSAL, only_items=some)
    assert sub is not None and list(sub.items) == sorted(some)


@pytest.mark.parametrize("name", ["plain", "trials"])
def test_report_from_the_store_equals_the_report_from_its_ratings(stores, name):
    store, long = stores[name]
    items = long.drop_duplicates("item_id")[["item_id", "model", "turn"]]
    kw = {"rubric": REFUSAL, "by": ["model", "turn", "model+turn"], "n_resamples": 200}
    from_store = agreement_report(store, **kw).to_dict()
    from_frame = agreement_report(store.ratings(rubric=REFUSAL), items=items, **kw).to_dict()
    assert [(s["by"], s["key"]) for s in from_store["slices"]][:7] == [
        (None, "all"), ("model", "m1"), ("model", "m10"), ("model", "m2"),
        ("turn", "1.0"), ("turn", "2.0"), ("turn", "(missing)")]  # a float column with gaps
    assert from_store == from_frame
    # an independent side: slice sizes and the humans' figures (humans have no trials) from a
    # pandas pivot of the ratings and the public statistics
    humans = long[long["rater_kind"] == "human"]
    wide = humans.pivot(index="item_id", columns="rater_id", values="label").sort_index()
    wide = wide.apply(lambda col: col.map({c: float(i) for i, c in enumerate(CODES)})).astype(float)
    model = long.drop_duplicates("item_id").set_index("item_id")["model"]
    for s in from_store["slices"][:4]:
        part = wide if s["by"] is None else wide[model.reindex(wide.index).to_numpy() == s["key"]]
        n = len(set(long["item_id"])) if s["by"] is None else int((model == s["key"]).sum())
        assert s["n_items"] == n
        mat = part[s["human_ceiling"]["raters"]].to_numpy().T
        ceiling = s["human_ceiling"]
        assert ceiling["percent_agreement"]["value"] == round(percent_agreement(mat), 6)
        assert ceiling["kappa"]["value"] == round(fleiss_kappa(mat, categories=[0.0, 1.0, 2.0]), 6)
        assert ceiling["alpha"]["value"] == round(krippendorff_alpha(mat, categories=[0.0, 1.0, 2.0]), 6)


def _groups(values: dict[str, object], ids: list[str]) -> list[tuple[object, list[str]]]:
    """A key's values grouped as value_groups gives them (absent key: None)."""
    out: dict[tuple[type, object], tuple[object, list[str]]] = {}
    for i in ids:
        v = values.get(i)
        out.setdefault((type(v), v), (v, []))[1].append(i)
    return list(out.values())


def test_slices_from_store_value_groups_equal_the_frame_slices():
    ids = [f"i{k}" for k in range(12)]
    columns = {
        "n": {"i0": 1, "i1": 1.0, "i2": 2, "i3": 10, "i5": 2},  # ints and floats, some missing
        "s": {i: v for i, v in zip(ids, ["a", " ", "b", "", "a", "b", "a", "c", "c", "a", "b", "a"], strict=True)},
        "b": {"i0": True, "i1": False, "i4": True},
        "z": {i: 3 for i in ids},  # every item has it: an int column, unless a rated item is not stored
    }
    groups = {k: _groups(v, ids) for k, v in columns.items()}
    meta = meta_frame(columns, ids)
    for index in (np.asarray(["i9", "i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "nowhere"], dtype=object),
                  np.asarray(ids[::-1], dtype=object)):
        for parts in (["n"], ["s"], ["b"], ["z"], ["n", "s"], ["s", "b", "z"]):
            lean = slice_positions_from_groups(groups, parts, index)
            frame = slice_positions(meta, parts, pd.Index(index))
            assert lean is not None
            assert [(k, p.tolist()) for k, p in lean[0]] == [(k, p.tolist()) for k, p in frame[0]]
            assert lean[1] == frame[1]
    assert slice_positions_from_groups({"l": [([1], ["i0"])]}, ["l"], ids) is None  # unhashable


def test_value_groups_read_the_store_as_item_values_does(stores):
    store, _ = stores["plain"]
    groups = value_groups(store, ["model", "turn"])
    assert groups is not None
    ids = store.item_ids()
    for key in ("model", "turn"):
        values = store.item_values(key)
        assert sorted((str(v), sorted(g)) for v, g in groups[key]) == sorted(
            (str(v), sorted(g)) for v, g in _groups(values, ids))
    assert value_groups(store, ["no_such_key"]) is None and value_groups(store, ["prompt"]) is None


def test_disagreements_and_between_from_codes_equal_those_from_the_ratings(stores):
    store, _ = stores["plain"]
    codes = read_codes(store, REFUSAL)
    for reference in (None, "h1"):
        agreement = agreement_report(store, rubric=REFUSAL, reference=reference, n_resamples=100).to_dict()
        for per_judge in (1, 5, 400):
            lean = worst_disagreements(store, REFUSAL, agreement, per_judge=per_judge, codes=codes)
            full = worst_disagreements(store, REFUSAL, agreement, per_judge=per_judge)
            assert lean == full and len(full) >= min(per_judge, 2)
    lean = between_all_pairs(store, rubric=REFUSAL, judges=["jb", "ja"], n_resamples=150, codes=codes)
    full = between_all_pairs(store, rubric=REFUSAL, judges=["jb", "ja"], n_resamples=150)
    assert lean == full
    assert sorted((r["by"] or "", r["key"]) for r in full[0]["rows"]) == [("", "all"), ("human_rated", "no"),
                                                                            ("human_rated", "yes")]


def test_stale_hashes_are_the_stores(stores, tmp_path):
    from judgekit.agreement.rating_codes import stale_hashes

    store, long = stores["plain"]
    assert stale_hashes(store, REFUSAL) == store.stale_rubric_hashes(REFUSAL) == []
    from judgekit.store.database import Store

    other = Store(tmp_path / "s.db")
    few = long.head(30).drop(columns=["model", "turn"]).assign(rubric=REFUSAL.id)
    other.put_items(long.head(30)[["item_id"]].drop_duplicates().assign(prompt="p", response="r"))
    for h in ("0" * 64, REFUSAL.hash, "f" * 64, "a" * 64):
        other.put_ratings(few.assign(rubric_hash=h))
    assert stale_hashes(other, REFUSAL) == sorted(other.stale_rubric_hashes(REFUSAL)) == ["0" * 64, "a" * 64, "f" * 64]
    other.close()
