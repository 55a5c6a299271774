"""Agreement per turn of a conversation is a first-class slice of the judge report whenever the
items carry a turn column, with the signed bias per turn.

The synthetic store: 4 turns x 60 items, an adjudicated reference, two humans who agree with it,
a steady judge (the same two slips on every turn) and a drifting judge that calls 5 more
full refusals something milder at each later turn — a bias toward compliance that grows with the
conversation, the error that moves a Drift(t) figure.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from judgekit.cli import main
from judgekit.report import turns
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

pytest_plugins = ["tests.analysis_fixtures", "tests.report_fixtures"]

REFUSAL = load_rubric("refusal")
CODES = ["full_compliance", "partial_refusal", "full_refusal"]
N_PER_TURN = 60


def _labels() -> tuple[pd.DataFrame, dict[str, dict[str, str]]]:
    items, lab = [], {"final": {}, "h1": {}, "h2": {}, "steady": {}, "drift": {}}
    for t in range(1, 5):
        for k in range(N_PER_TURN):
            iid = f"c{k}/t{t}"
            items.append({"item_id": iid, "prompt": f"prompt {k} turn {t}", "response": f"r{k}",
                          "model": "m1" if k % 2 else "m2", "turn": t})
            ref = CODES[k % 3]
            for r in ("final", "h1", "h2"):
                lab[r][iid] = ref
            # steady: two fixed slips per turn (a compliance read as partial)
            lab["steady"][iid] = "partial_refusal" if k in (0, 3) else ref
            # drift: at turn t, the first 5 * (t - 1) full refusals (k = 2, 5, 8, ...) are read
            # as milder, alternating partial refusal and full compliance
            j = k // 3
            if ref == "full_refusal" and j < 5 * (t - 1):
                lab["drift"][iid] = "partial_refusal" if j % 2 == 0 else "full_compliance"
            else:
                lab["drift"][iid] = ref
    return pd.DataFrame(items), lab


@pytest.fixture(scope="module")
def turn_store(tmp_path_factory):
    from tests.analysis_fixtures import ratings_frame

    items, lab = _labels()
    path = tmp_path_factory.mktemp("turns") / "judgekit.db"
    kinds = {"final": "reference", "h1": "human", "h2": "human", "steady": "judge", "drift": "judge"}
    with Store(path) as store:
        store.put_items(items)
        for rater, labels in lab.items():
            store.put_ratings(ratings_frame(labels.items(), REFUSAL, rater=rater, kind=kinds[rater]))
    return path, items, lab


@pytest.fixture(scope="module")
def turn_report(turn_store, tmp_path_factory):
    path, items, lab = turn_store
    out = tmp_path_factory.mktemp("turn-report")
    r = CliRunner().invoke(main, ["report", "--store", str(path), "--rubric", "refusal", "--by", "model",
                                  "--out", str(out), "--resamples", "100"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return out, items, lab


#: the label each judge is most biased on over all items (the one its bias is drawn for):
#: drift calls 30 of 80 full refusals milder (share −30/240); steady's two slips per turn move
#: full compliance and partial refusal by ∓8/240 each, a tie the report breaks by label order.
BIAS_CODE = {"drift": "full_refusal", "steady": "full_compliance"}


def _expected(items, lab, judge: str, t: int) -> tuple[float, float]:
    ids = items.loc[items["turn"] == t, "item_id"].tolist()
    ref = [lab["final"][i] for i in ids]
    said = [lab[judge][i] for i in ids]
    kappa = float(cohen_kappa_score(ref, said))
    code = BIAS_CODE[judge]
    share = (sum(s == code for s in said) - sum(r == code for r in ref)) / len(ids)
    return kappa, share


def test_the_report_slices_by_turn_without_being_asked(turn_report):
    out, _, _ = turn_report
    doc = json.loads((out / "report.json").read_text())
    assert doc["agreement"]["by"] == ["model", "turn"]
    keys = [s["key"] for s in doc["agreement"]["slices"] if s["by"] == "turn"]
    assert keys == ["1", "2", "3", "4"]


def test_markdown_per_turn_table_has_kappa_and_bias_with_intervals(turn_report):
    out, items, lab = turn_report
    md = (out / "report.md").read_text()
    section = md.split("## Agreement per turn (turn)", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("| turn")]
    assert len(rows) == 4
    for t, row in zip(range(1, 5), rows, strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == str(t) and cells[1] == str(N_PER_TURN)
        # the judges' columns are found by their headers
        header = [c.strip() for c in section.splitlines()[2].strip("|").split("|")]
        for judge in ("drift", "steady"):
            kappa, share = _expected(items, lab, judge, t)
            k_cell = cells[header.index(f"{judge}: Cohen's κ \\[95% CI\\]")]
            b_cell = cells[header.index(f"{judge} ({BIAS_CODE[judge]}): bias \\[95% CI\\]")]
            assert k_cell.startswith(f"{kappa:.3f} \\[") if kappa < 1 else k_cell.startswith("1.000")
            assert b_cell.startswith(f"{share:.3f} \\[".replace("-0.000", "0.000"))
            assert cells[header.index(f"{judge}: n")] == str(N_PER_TURN)
    # the drifting judge's bias at turn 4: 15 of 60 full refusals called milder -> -0.25
    assert _expected(items, lab, "drift", 4)[1] == pytest.approx(-15 / 60)
    # steady: 2 slips a turn, the same on every turn -> -2/60 full compliance on each
    assert _expected(items, lab, "steady", 2) == (pytest.approx(cohen_kappa_score(
        [lab["final"][f"c{k}/t2"] for k in range(60)], [lab["steady"][f"c{k}/t2"] for k in range(60)])),
        pytest.approx(-2 / 60))
    assert "the label in brackets after the judge" in section


def test_html_per_turn_charts_with_ceiling_overlay_and_bias(turn_report):
    out, items, lab = turn_report
    html = (out / "report.html").read_text()
    assert ">Agreement per turn<" in html
    section = html.split(">Agreement per turn<", 1)[1]
    kchart = section.split("Cohen&#x27;s κ vs the reference, per turn</title>", 1)[1].split("</svg>", 1)[0]
    # one line per judge (solid) and the human–human ceiling overlaid (dashed)
    paths = kchart.count("<path")
    assert paths == 3 and kchart.count('stroke-dasharray="6 4"/>') >= 1
    kappa4, share4 = _expected(items, lab, "drift", 4)
    assert f"drift: x = 4, {kappa4:.3f} [" in kchart and "items rated = 60" in kchart
    bchart = section.split("Signed bias per turn (share of the most biased label: judge − reference)</title>", 1)[1]
    bchart = bchart.split("</svg>", 1)[0]
    assert f"drift (full_refusal): x = 4, {share4:.3f} [" in bchart
    assert f"drift (full_refusal): x = 1, {0.0:.3f} [" in bchart
    assert "steady (full_compliance): x = 3, -0.033 [" in bchart


def test_no_turn_column_no_turn_section(turn_store, tmp_path):
    path, items, lab = turn_store
    from judgekit.report.collect import report_by, turn_column

    with Store(path) as store:
        assert turn_column(store) == "turn"
        assert report_by(store, ["model"]) == ["model", "turn"]
        assert report_by(store, ["turn", "model"]) == ["turn", "model"]
    # a store whose items have one turn only: nothing is added
    from tests.analysis_fixtures import ratings_frame

    one = tmp_path / "one.db"
    flat = items[items["turn"] == 1]
    with Store(one) as store:
        store.put_items(flat)
        for rater, kind in (("final", "reference"), ("steady", "judge")):
            store.put_ratings(ratings_frame([(i, lab[rater][i]) for i in flat["item_id"]], REFUSAL,
                                            rater=rater, kind=kind))
        assert turn_column(store) is None and report_by(store, ["model"]) == ["model"]
    r = CliRunner().invoke(main, ["report", "--store", str(one), "--rubric", "refusal", "--out",
                                  str(tmp_path / "rep"), "--resamples", "100"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Agreement per turn" not in (tmp_path / "rep" / "report.md").read_text()
    assert "Agreement per turn" not in (tmp_path / "rep" / "report.html").read_text()


def _fig(v, lo=None, hi=None, n=10, why=None):
    return {"value": v, "low": lo, "high": hi, "n": n, "undefined": why}


def test_turn_slices_numeric_order_and_undefined_reasons():
    def sl(key, kappa, ceiling=None):
        return {"by": "turn", "key": key, "n_items": 10, "n_in_scope": 10,
                "human_ceiling": {"kappa": ceiling} if ceiling else {},
                "judges": {"j": {"n_rated": 10, "vs_reference": {"kappa": kappa},
                                 "bias": {"n": 10, "mean_diff": _fig(0.1, 0.0, 0.2)}}}}

    agreement = {"by": ["turn"], "judges": ["j"], "slices": [
        {"by": None, "key": "all", "judges": {"j": {"bias": {"n": 30, "mean_diff": _fig(0.1, 0.0, 0.2)}}}},
        sl("10", _fig(0.5, 0.4, 0.6)), sl("2", _fig(None, why="one label only"), _fig(0.9, 0.8, 1.0)),
        sl("(missing)", _fig(0.7, 0.6, 0.8))]}
    assert [s["key"] for s in turns.turn_slices(agreement)] == ["2", "10"]
    series, overlay = turns.agreement_by_turn(agreement, "kappa")
    assert series == {"j": [(2.0, None, None, None, 10, "one label only"), (10.0, 0.5, 0.4, 0.6, 10, None)]}
    assert overlay == {"human–human": [(2.0, 0.9, 0.8, 1.0, 10, None)]}
    what, bias = turns.bias_by_turn(agreement)  # type: ignore[misc]
    assert what == "mean judge − reference" and bias["j"][1] == (10.0, 0.1, 0.0, 0.2, 10, None)
    grid = turns.turn_grid(agreement, "kappa", "κ")
    assert grid is not None
    assert grid.rows[0] == ["2", "10", "undefined (one label only)", "10", "0.100 [0.000, 0.200]"]
    # one turn is no per-turn slice
    agreement["slices"] = agreement["slices"][:2]
    assert turns.turn_slices(agreement) == [] and turns.turn_grid(agreement, "kappa", "κ") is None


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_per_turn_section_renders_in_a_browser(turn_report, report_browser):
    out, _, _ = turn_report
    dom, console = report_browser.dump_dom(out / "report.html")
    assert console == []
    section = dom.split("<h2>Agreement per turn</h2>", 1)[1].split("</section>", 1)[0]
    assert section.count("<svg") == 2  # agreement per turn, signed bias per turn
    assert section.count('class="ci-band"') + section.count('class="ci-whisker"') > 0
