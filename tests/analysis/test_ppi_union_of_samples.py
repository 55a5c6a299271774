"""Labels drawn in two recorded samples — a pilot, then a main sample of the conversations not yet
labelled — are one labelling design: `analyze --correct ppi` corrects over their union, whether or
not `--sample` names one of them, and refuses in one sentence only what cannot be combined."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.testing.study import make_study


def _run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _ok(*args: object) -> str:
    res = _run(*args)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def two_samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A store with the judges on every item and the reference's labels of a pilot (stratified
    by model) and of a main sample drawn afterwards from the conversations not yet labelled."""
    tmp = tmp_path_factory.mktemp("union")
    items, ratings = make_study(seed=3, conversations_per_tier=8, lookalikes=4, human_share=1.0)
    items.to_csv(tmp / "items.csv", index=False)
    ratings[ratings["rater_kind"] == "judge"].to_csv(tmp / "judges.csv", index=False)
    ref = ratings[ratings["rater_kind"] == "reference"]
    db = tmp / "s.db"
    _ok("import", tmp / "judges.csv", "--rubric", "restrictiveness", "--items", tmp / "items.csv",
        "--store", db)
    drawn: dict[str, set[str]] = {}
    for name, extra in (("pilot", ["--size", 90, "--by", "model", "--min-per-stratum", 4]),
                        ("main", ["--size", 240, "--exclude-rated", "--random-share", 1])):
        _ok("sample", "--name", name, "--by-conversation", "--rubric", "restrictiveness", *extra,
            "--store", db, "--out", tmp / f"{name}.csv")
        drawn[name] = set(pd.read_csv(tmp / f"{name}.csv")["item_id"].astype(str))
        ref[ref["item_id"].isin(drawn[name])].to_csv(tmp / f"{name}_labels.csv", index=False)
        _ok("import", tmp / f"{name}_labels.csv", "--rubric", "restrictiveness", "--store", db)
    assert drawn["pilot"] and drawn["main"] and not drawn["pilot"] & drawn["main"]
    return {"db": db, "tmp": tmp, "items": items, "drawn": drawn}


def _corrected(two_samples: dict[str, object], *sample: str) -> dict[str, object]:
    tmp = Path(str(two_samples["tmp"]))
    out = tmp / ("out-" + "-".join(sample or ("none",)))
    _ok("analyze", "calibration", "--judge", "judge-fair", "--rubric", "restrictiveness",
        "--harm-column", "severity", "--store", two_samples["db"], "--correct", "ppi",
        "--reference", "adjudicated", *(("--sample", *sample) if sample else ()),
        "--bootstrap", 100, "--untrusted", "--quiet", "--out", out)
    return json.loads((out / "calibration.json").read_text())


def _ppi_rows(data: dict[str, object]) -> list[dict[str, object]]:
    tables = data["tables"]
    assert isinstance(tables, dict)
    return [r for key, t in tables.items() if key.startswith("ppi") for r in t["rows"]]


def test_pilot_and_main_are_corrected_as_one_design(two_samples) -> None:
    union = _corrected(two_samples)
    labelled = two_samples["drawn"]["pilot"] | two_samples["drawn"]["main"]  # type: ignore[index]
    items = two_samples["items"]
    scope = items[~items["benign_lookalike"].astype(bool)]  # RCE leaves out benign look-alikes
    conv = scope.set_index("item_id")["conversation_id"]
    n_conv = conv.reindex(sorted(labelled)).dropna().nunique()
    rows = _ppi_rows(union)
    # every labelled conversation, of either sample, enters the corrected RCE of its model
    rce = [r for r in union["tables"]["ppi_summary"]["rows"] if r["figure"] == "RCE"]
    assert sum(int(r["n_labelled"]) for r in rce) == n_conv
    meta = union["meta"]["ppi"]
    assert set(meta["sample"].split("+")) == {"pilot", "main"} and meta["stratified"] is True
    note = next(n for n in union["notes"] if n.startswith("Corrected figures"))
    assert "pilot" in note and "main" in note and "stratified by model" in note
    # naming either sample is not refused: the other's labels join the same design
    for name in ("main", "pilot"):
        named = _corrected(two_samples, name)
        assert _ppi_rows(named) == rows, name


def test_a_sample_drawn_by_disagreement_cannot_join_the_union() -> None:
    from judgekit.analysis.correction.design import design_strata, union_design

    items = pd.DataFrame({"item_id": [f"c{c}t{t}" for c in range(6) for t in (1, 2)],
                          "conversation_id": [f"c{c}" for c in range(6) for _ in (1, 2)],
                          "model": ["ab"[c % 2] for c in range(6) for _ in (1, 2)]})
    pilot = pd.DataFrame({"item_id": ["c0t1", "c0t2"], "reason": "stratum",
                          "stratum": "model=a", "weight": 3.0, "overlap": 0})
    targeted = pd.DataFrame({"item_id": ["c1t1"], "reason": "disagreement", "stratum": None,
                             "weight": 1.0, "overlap": 0})
    with pytest.raises(JudgekitError) as err:
        union_design([("pilot", pilot), ("hard", targeted)])
    one_sentence_error((2, f"error: {err.value}"), "'hard'", "disagreement")
    active = targeted.assign(reason="active")
    with pytest.raises(JudgekitError) as err:
        union_design([("pilot", pilot), ("round", active)])
    one_sentence_error((2, f"error: {err.value}"), "'round'", "active")
    # two random samples: one design, the cross of their strata columns
    main = pd.DataFrame({"item_id": ["c2t1", "c2t2"], "reason": "conversation",
                         "stratum": None, "weight": 2.0, "overlap": 0})
    design, name = union_design([("pilot", pilot), ("main", main)])
    assert name == "pilot+main" and len(design) == 4
    assert design["stratum"].tolist() == ["model=a", "model=a", None, None]
    assert np.isfinite(design["weight"]).all()
    out = design_strata(items, design, labelled=["c0t1", "c2t2"], cluster_col="conversation_id",
                        sample=name)
    assert out.strata == {f"c{c}": "model=" + "ab"[c % 2] for c in range(6)}
    assert "pilot, main" in out.description and "one design" in out.description


def test_a_sample_drawn_from_a_filtered_population_records_the_filter_as_its_stratum(
        tmp_path) -> None:
    # a pilot at random, then a main sample of the severity-4 items only (`--where`): the union
    # over-represents severity 4, so the design must stratify by severity, or every pooled
    # corrected figure is pulled toward severity 4 (treated as one simple random sample)
    from judgekit.analysis.correction.design import design_strata, union_design
    from judgekit.annotation.sampling import sample_design, sample_items, spec_from_dict
    from judgekit.store import Store

    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(40)],
                          "severity": [1 + k % 4 for k in range(40)],
                          "prompt": "p", "response": "r"})
    with Store(tmp_path / "s.db") as store:
        store.put_items(items, source="items.csv")
        sample_items(store, spec_from_dict({"name": "pilot", "size": 8, "seed": 1}))
        sample_items(store, spec_from_dict({"name": "main", "size": 6, "seed": 2}),
                     where=["severity=4"])
        pilot, main = sample_design(store, "pilot"), sample_design(store, "main")
    assert set(main["stratum"]) == {"severity=4"}
    design, name = union_design([("main", main), ("pilot", pilot)])
    labelled = set(design["item_id"])
    out = design_strata(items, design, labelled=labelled, cluster_col="item_id", sample=name)
    assert out.strata is not None
    assert {out.strata[f"i{k}"] for k in range(40)} == {f"severity={s}" for s in (1, 2, 3, 4)}


def test_a_design_whose_items_changed_stratum_since_the_draw_is_refused() -> None:
    # drawn by harm tier (from harm ratings); harm ratings added since move two chosen items to
    # another tier: the recorded inclusion probabilities no longer match the recomputed strata
    from judgekit.analysis.correction.design import design_strata

    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(12)],
                          "harm_tier": [1, 1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5]})
    design = pd.DataFrame({"item_id": ["i0", "i1", "i6", "i7"], "reason": "stratum",
                           "stratum": ["harm_tier=1", "harm_tier=1", "harm_tier=5",
                                       "harm_tier=5"], "weight": 3.0, "overlap": 0})
    ok = design_strata(items, design, labelled=design["item_id"], cluster_col="item_id")
    assert ok.strata is not None and ok.strata["i0"] == "harm_tier=1"
    moved = items.assign(harm_tier=[5, 5, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5])
    with pytest.raises(JudgekitError) as err:
        design_strata(moved, design, labelled=design["item_id"], cluster_col="item_id",
                      sample="s")
    one_sentence_error((2, f"error: {err.value}"), "'s'", "'i0'", "harm_tier=1", "harm_tier=5")


def test_naming_the_samples_that_drew_the_labels_leaves_out_a_targeted_one_that_overlaps(
        tmp_path) -> None:
    # the labels are a random pilot's; a sample drawn later by disagreement (never labelled)
    # happens to share a labelled item: naming the pilot describes every label, so the targeted
    # sample is not pulled in (and its refusal does not block the correction)
    from judgekit.analysis.correction.design import find_sample
    from judgekit.annotation.sampling import record_sample
    from judgekit.store import Store

    pilot = pd.DataFrame({"item_id": ["i0", "i1", "i2"], "reason": "random", "stratum": None,
                          "weight": 4.0, "overlap": 0})
    hard = pd.DataFrame({"item_id": ["i2", "i7"], "reason": "disagreement", "stratum": None,
                         "weight": 1.0, "overlap": 0})
    with Store(tmp_path / "s.db") as store:
        store.put_items(pd.DataFrame({"item_id": [f"i{k}" for k in range(12)], "prompt": "p",
                                      "response": "r"}), source="items.csv")
        record_sample(store, "pilot", pilot)
        record_sample(store, "hard", hard)
        design, name = find_sample(store, ["i0", "i1", "i2"], "pilot")
        assert name == "pilot" and sorted(design["item_id"]) == ["i0", "i1", "i2"]
        # unnamed, both samples hold labels: the targeted one is refused in one sentence
        with pytest.raises(JudgekitError) as err:
            find_sample(store, ["i0", "i1", "i2"], None)
        one_sentence_error((2, f"error: {err.value}"), "'hard'", "--sample")
