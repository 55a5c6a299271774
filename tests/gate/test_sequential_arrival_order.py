"""`gate --sequential` reads its rounds in the order the labels arrived: one import is one write
(the rows of a file are in whatever order its writer chose, so they are never cut into rounds),
and a recorded sample is a round only when it was drawn before its labels were stored, named in
the order the samples were drawn. Undecided sequential checks say the conversations (labels) that
would likely decide them, not a round size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main


def _study(tmp_path: Path, **kw: Any) -> dict[str, Any]:
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, figures=("drift",), n_resamples=100, human_share=1.0, **kw)
    ratings, items = pd.read_csv(paths["ratings"]), pd.read_csv(paths["items"])
    conv = items.set_index("item_id")["conversation_id"]
    policy = tmp_path / "p.yaml"
    policy.write_text(paths["policy"].read_text().replace("judges: [judge-fair, judge-lean]", "judges: [judge-lean]"))
    ratings[ratings["rater_kind"] == "judge"].to_csv(tmp_path / "judges.csv", index=False)
    return {"paths": paths, "ratings": ratings, "items": items, "conv": conv, "policy": policy,
            "store": tmp_path / "s.db"}


def _import(s: dict[str, Any], frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False)
    res = CliRunner().invoke(main, ["import", str(path), "--rubric", "restrictiveness", "--store", str(s["store"])])
    assert res.exit_code == 0, res.output


def _gate(s: dict[str, Any], out: Path, *more: str) -> Any:
    return CliRunner().invoke(main, ["gate", str(s["policy"]), "--store", str(s["store"]), "--sequential",
                                     *more, "--out", str(out)])


@pytest.fixture()
def judged(tmp_path: Path) -> dict[str, Any]:
    s = _study(tmp_path, conversations_per_tier=30)
    res = CliRunner().invoke(main, ["import", str(tmp_path / "judges.csv"), "--rubric", "restrictiveness",
                                    "--items", str(s["paths"]["items"]), "--store", str(s["store"])])
    assert res.exit_code == 0, res.output
    return s


def test_a_sorted_reference_file_is_one_round_and_certifies_nothing_the_fixed_gate_fails(judged: dict[str, Any],
                                                                                         tmp_path: Path) -> None:
    import json

    s = judged
    r = s["ratings"]
    ref = r[r["rater_id"] == "adjudicated"]
    lean = r[r["rater_id"] == "judge-lean"].set_index("item_id")["label"]
    # the conversations where the leaning judge agrees with the reference at every turn come first
    agrees = (ref.set_index("item_id")["label"] == lean.reindex(ref["item_id"]).to_numpy()).groupby(s["conv"]).all()
    key = ref["item_id"].map(s["conv"]).map(agrees).map({True: 0, False: 1})
    _import(s, ref.assign(k=key.to_numpy()).sort_values("k", kind="stable").drop(columns="k"), tmp_path / "ref.csv")
    fixed = CliRunner().invoke(main, ["gate", str(s["policy"]), "--store", str(s["store"]), "--out", str(tmp_path / "f")])
    assert fixed.exit_code in (0, 1, 3), fixed.output
    fv = json.loads((tmp_path / "f" / "verdict.json").read_text())
    assert fv["judges"][0]["figures"]["drift"]["state"] == "fail"
    res = _gate(s, tmp_path / "g", "--round-size", "20")
    assert res.exit_code in (0, 1, 3), res.output
    v = json.loads((tmp_path / "g" / "verdict.json").read_text())
    # no model the fixed gate leaves uncertified is certified by reading the file's sorted rows as rounds
    seq_models, fixed_models = v["judges"][0]["figures"]["drift"]["models"], fv["judges"][0]["figures"]["drift"]["models"]
    assert not [m for m, st in seq_models.items() if st == "pass" and fixed_models.get(m) != "pass"], (seq_models,
                                                                                                     fixed_models)
    # what to do next follows from the round each figure was decided at (here one look: still open)
    at = v["sequential"]["figure_decided_at_round"]["judge-lean"]["drift"]
    assert (f"Sequential: every figure of judge-lean is decided (drift at round {at}) — stop labelling for it."
            if at else "Sequential: judge-lean still has drift open after 1 round;") in res.output, res.output
    # one import: one round, whatever --round-size; the verdict records the write it holds
    seq = v["sequential"]
    assert seq["rounds"] == 1 and len(seq["round_writes"][0]["writes"]) == 1
    assert seq["round_writes"][0]["writes"][0]["provenance"].startswith("import:")


def _sample(s: dict[str, Any], name: str, size: int, seed: str) -> set[str]:
    res = CliRunner().invoke(main, ["sample", "--name", name, "--size", str(size), "--by-conversation", "--seed", seed,
                                    "--exclude-rated", "--rubric", "restrictiveness",
                                    "--store", str(s["store"]), "--out", str(s["store"].parent / f"{name}.csv")])
    assert res.exit_code == 0, res.output
    return set(pd.read_csv(s["store"].parent / f"{name}.csv")["item_id"].astype(str))


def _labels_of(s: dict[str, Any], ids: set[str]) -> pd.DataFrame:
    r = s["ratings"]
    return r[(r["rater_id"] == "adjudicated") & r["item_id"].astype(str).isin(ids)]


def test_rounds_are_samples_drawn_before_their_labels_in_the_order_drawn(judged: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    import json

    s = judged
    b1 = _sample(s, "b1", 300, "1")
    _import(s, _labels_of(s, b1), tmp_path / "b1.csv")
    b2 = _sample(s, "b2", 300, "2")
    _import(s, _labels_of(s, b2), tmp_path / "b2.csv")
    res = _gate(s, tmp_path / "g", "--rounds", "b1,b2")
    assert res.exit_code in (0, 1, 3), res.output
    seq = json.loads((tmp_path / "g" / "verdict.json").read_text())["sequential"]
    assert seq["samples"] == ["b1", "b2"] and seq["rounds"] == 2
    assert [w["sample"] for w in seq["round_writes"]] == ["b1", "b2"] and all(len(w["digest"]) == 16
                                                                            for w in seq["round_writes"])
    # named out of the order they were drawn: refused
    one_sentence_error(_gate(s, tmp_path / "h", "--rounds", "b2,b1"), "--rounds names 'b1' after 'b2'")
    # a sample recorded after its labels were stored (its content may be chosen knowing them): refused
    res = CliRunner().invoke(main, ["sample", "--name", "b0", "--size", "600", "--by-conversation", "--seed", "3",
                                    "--store", str(s["store"])])
    assert res.exit_code == 0, res.output
    res = _gate(s, tmp_path / "i", "--rounds", "b1,b2,b0")
    one_sentence_error(res, "--rounds names the sample 'b0', recorded after labels of")
    assert not (tmp_path / "i" / "verdict.json").exists()


def test_an_open_sequential_check_asks_for_conversations_within_the_study(judged: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    import json

    s = judged
    few = _sample(s, "pilot", 120, "5")  # 20 conversations: too few to decide the fair judge's drift
    _import(s, _labels_of(s, few), tmp_path / "pilot.csv")
    s["policy"].write_text(s["policy"].read_text().replace("judges: [judge-lean]", "judges: [judge-fair]"))
    res = _gate(s, tmp_path / "g", "--round-size", "20")
    assert res.exit_code in (0, 1, 3), res.output
    v = json.loads((tmp_path / "g" / "verdict.json").read_text())
    open_ = [c for c in v["judges"][0]["checks"] if c["state"] == "inconclusive" and "calibration:drift(" in c["name"]]
    assert open_
    for c in open_:
        sentence = c["budget"]["sentence"]
        assert "another round" not in sentence, sentence
        # a need is either a count of conversations this study can still supply (150 per model, 20 labelled)
        # or "cannot be decided with this study"
        need = c["budget"]["need"]
        assert ((need is not None and 1 <= need <= 130 and c["budget"]["unit"] == "conversations")
                or (need is None and "cannot be decided with this study" in sentence)), c["budget"]


def test_a_sample_recorded_after_labels_dated_in_the_future_is_not_a_round(judged: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    # the labels' file says they were made in 2090: when they were stored is the store's to say
    s = judged
    r = s["ratings"]
    ref = r[r["rater_id"] == "adjudicated"].assign(created_at="2090-01-01T00:00:00Z")
    _import(s, ref, tmp_path / "ref.csv")
    res = CliRunner().invoke(main, ["sample", "--name", "late", "--size", "600", "--by-conversation", "--seed", "3",
                                    "--store", str(s["store"])])
    assert res.exit_code == 0, res.output
    one_sentence_error(_gate(s, tmp_path / "g", "--rounds", "late"), "--rounds names the sample 'late', recorded after")


def test_re_importing_earlier_labels_in_another_row_order_keeps_the_order_they_arrived(judged: dict[str, Any],
                                                                                        tmp_path: Path) -> None:
    import json

    s = judged
    r = s["ratings"]
    ref = r[r["rater_id"] == "adjudicated"]
    convs = sorted(set(ref["item_id"].map(s["conv"])))
    first = ref[ref["item_id"].map(s["conv"]).isin(convs[: len(convs) // 2])]
    _import(s, first, tmp_path / "a.csv")
    _import(s, ref.drop(first.index), tmp_path / "b.csv")
    res = _gate(s, tmp_path / "g", "--round-size", "1")
    assert res.exit_code in (0, 1, 3), res.output
    before = [w["provenance"] for rd in json.loads((tmp_path / "g" / "verdict.json").read_text())["sequential"][
        "round_writes"] for w in rd["writes"]]
    assert len(before) == 2
    # the same labels of the first write again, rows reversed (no label changes): no new arrival
    _import(s, first.iloc[::-1], tmp_path / "a2.csv")
    res = _gate(s, tmp_path / "h", "--round-size", "1")
    assert res.exit_code in (0, 1, 3), res.output
    after = [w["provenance"] for rd in json.loads((tmp_path / "h" / "verdict.json").read_text())["sequential"][
        "round_writes"] for w in rd["writes"]]
    assert after == before


def test_rounds_cannot_leave_out_an_earlier_labelled_batch(judged: dict[str, Any], tmp_path: Path) -> None:
    # two batches drawn before any label, both labelled: naming only the second (after seeing both)
    # would make the batch one likes best the first look
    s = judged
    b1 = _sample(s, "b1", 300, "1")
    b2 = _sample(s, "b2", 300, "2")
    _import(s, _labels_of(s, b1 | b2), tmp_path / "b.csv")
    one_sentence_error(_gate(s, tmp_path / "g", "--rounds", "b2"), "--rounds leaves out the sample 'b1'")
    assert not (tmp_path / "g" / "verdict.json").exists()
    res = _gate(s, tmp_path / "h", "--rounds", "b1,b2")
    assert res.exit_code in (0, 1, 3), res.output
