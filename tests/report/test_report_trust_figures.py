"""The trust figures where people read them — the terminal (`agree`,
`gate`), the Markdown and the HTML report.

A synthetic store: 90 items, three humans (alice and bob agree closely, carol is the outlier:
she moves every even item to the next label), a judge ``skipper`` that abstains on every 5th
item and never attempts the others divisible by 11, slices by ``turn`` (1, 2, 10: numbers) and by
``attack`` (one value empty: ``(missing)``). The expected counts are derived in the tests from
that construction, not read back from the report.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.agreement.report import agreement_report
from judgekit.cli import main
from judgekit.core.console import SafeConsole
from judgekit.report import render_report
from judgekit.report.terminal import print_agreement, print_verdict
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

pytest_plugins = ["tests.report_fixtures"]

CODES = ["full_compliance", "partial_refusal", "full_refusal"]
N = 90
TURNS = [1, 2, 10]


def _turn(k: int) -> int:
    return TURNS[(k // 3) % 3]


def _attack(k: int) -> str:
    return ["pair", "gcg", ""][(k // 9) % 3]


def _skipper_rates(k: int) -> bool:
    return k % 5 != 0 and k % 11 != 0


RATED = sum(_skipper_rates(k) for k in range(N))          # 90 - 18 abstained - 7 never attempted = 65
ABSTAINED = sum(k % 5 == 0 for k in range(N))             # 18
NOT_ATTEMPTED = sum(k % 5 != 0 and k % 11 == 0 for k in range(N))  # 11, 22, 33, 44, 66, 77, 88 -> 7


def _write_csv(path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "rater_id", "rater_kind", "label", "status", "turn", "attack"])
        for k in range(N):
            true = CODES[k % 3]
            humans = [("alice", true), ("bob", true if k % 7 else CODES[0]),
                      ("carol", true if k % 2 else CODES[(k + 1) % 3])]
            for rater, label in humans:
                w.writerow([f"i{k}", rater, "human", label, "ok", _turn(k), _attack(k)])
            if k % 5 == 0:
                w.writerow([f"i{k}", "skipper", "judge", "", "abstain", _turn(k), _attack(k)])
            elif k % 11 != 0:
                w.writerow([f"i{k}", "skipper", "judge", true if k % 4 else CODES[2], "ok", _turn(k), _attack(k)])


@pytest.fixture(scope="module")
def synth_store(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("trust")
    _write_csv(d / "long.csv")
    db = str(d / "judgekit.db")
    r = CliRunner().invoke(main, ["import", str(d / "long.csv"), "--rubric", "refusal", "--store", db])
    assert r.exit_code == 0, r.output
    return db


@pytest.fixture(scope="module")
def agreement(synth_store) -> dict:
    with Store(synth_store) as s:
        return agreement_report(s, rubric=load_rubric("refusal"), by=["turn", "attack"], n_resamples=100).to_dict()


@pytest.fixture(scope="module")
def agree_output(synth_store) -> str:
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--by", "turn", "--by", "attack",
                                  "--store", synth_store, "--resamples", "100"])
    assert r.exit_code == 0, r.output
    return r.output


@pytest.fixture(scope="module")
def rendered(agreement) -> tuple[str, str]:
    html, md, _ = render_report(agreement, None, created_at="2026-12-01T00:00:00+00:00")
    return html, md


def _pair(agreement: dict, a: str, b: str) -> dict:
    pairs = agreement["slices"][0]["human_pairwise"]["pairs"]
    return next(p for p in pairs if {p["a"], p["b"]} == {a, b})


def _pair_cell(agreement: dict, a: str, b: str) -> str:
    p = _pair(agreement, a, b)
    return f"κ {p['kappa']['value']:.3f} · {100 * p['percent_agreement']['value']:.1f}% · n {p['n']}"


def _turn_rated(turn: int) -> int:
    return sum(_skipper_rates(k) for k in range(N) if _turn(k) == turn)


# ----------------------------------------------------------------------------- the data behind it
def test_the_synthetic_store_has_the_outlier_and_the_gaps_the_tests_rely_on(agreement):
    assert (RATED, ABSTAINED, NOT_ATTEMPTED) == (65, 18, 7)
    cov = agreement["slices"][0]["judges"]["skipper"]["coverage"]
    assert (cov["in_scope"], cov["rated"], cov["abstained"], cov["not_attempted"]) == (N, RATED, ABSTAINED, NOT_ATTEMPTED)
    # carol is the outlier: both her pairs are far below alice–bob
    ab, ac, bc = (_pair(agreement, *p)["kappa"]["value"] for p in (("alice", "bob"), ("alice", "carol"), ("bob", "carol")))
    assert ab > 0.8 and ac < 0.5 and bc < 0.5
    assert [s["key"] for s in agreement["slices"] if s["by"] == "turn"] == ["1", "2", "10"]
    assert [s["key"] for s in agreement["slices"] if s["by"] == "attack"][-1] == "(missing)"


# ----------------------------------------------------------------------------- terminal
def test_agree_names_the_three_human_ceiling_fleiss_and_shows_the_pairwise_matrix(agree_output, agreement):
    out = agree_output
    assert "human–human ceiling: Fleiss κ (3 humans)" in out
    assert "Human–human agreement per pair" in out
    for a, b in (("alice", "bob"), ("alice", "carol"), ("bob", "carol")):
        assert _pair_cell(agreement, a, b) in out
    assert "Lowest pair: bob–carol" in out or "Lowest pair: alice–carol" in out


def test_agree_shows_the_loo_ceiling_beside_the_judge(agree_output, agreement):
    loo = agreement["slices"][0]["human_ceiling"]["loo"]
    line = next(ln for ln in agree_output.splitlines() if "LOO ceiling: mean of 3 humans" in ln)
    assert f"{loo['mean']['kappa']['value']:.3f}" in line
    vs = agreement["slices"][0]["judges"]["skipper"]["vs_loo"]["mean"]
    line = next(ln for ln in agree_output.splitlines() if "skipper vs the same consensus" in ln)
    assert f"{vs['kappa']['value']:.3f}" in line
    assert any("difference skipper − humans" in ln for ln in agree_output.splitlines())
    assert "Cohen κ [95% CI]" in agree_output  # one rater against a consensus label: Cohen's κ


def test_agree_says_rated_n_of_in_scope_with_abstained_and_not_attempted(agree_output):
    assert f"rated {RATED} of {N}" in agree_output
    assert f"rated {RATED} of {RATED}" not in agree_output
    row = next(ln for ln in agree_output.splitlines() if ln.startswith("│ skipper") and f"rated {RATED} of {N}" in ln
               and "[" in ln and "%" not in ln)  # the coverage table's row
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[3:6] == [str(ABSTAINED), "0", str(NOT_ATTEMPTED)]


def test_agree_slice_tables_count_items_rated_in_numeric_order_with_missing(agree_output):
    lines = agree_output.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("By turn")))
    rows = [ln for ln in lines[start:start + 9] if re.match(r"│ (1|2|10) ", ln)]
    assert [r.split("│")[1].strip() for r in rows] == ["1", "2", "10"]
    for r, turn in zip(rows, TURNS, strict=True):
        cells = [c.strip() for c in r.strip("│").split("│")]
        assert cells[1] == "30"  # in scope
        assert cells[4] == str(_turn_rated(turn))  # skipper rated, not items
    assert any(re.match(r"│ \(missing\) ", ln) for ln in lines)


def test_agree_prints_precision_recall_f1_per_class_and_slice(agree_output, agreement):
    assert "skipper: precision, recall and F1 per class and slice" in agree_output
    sl = next(s for s in agreement["slices"] if s["by"] == "turn" and s["key"] == "10")
    pc = sl["judges"]["skipper"]["per_class"]["classes"]["full_refusal"]
    want = f"{pc['precision']['value']:.2f} / {pc['recall']['value']:.2f} / {pc['f1']['value']:.2f}"
    row = next(ln for ln in agree_output.splitlines() if ln.startswith("│ turn = 10 "))
    assert want in row
    order = [i for i, ln in enumerate(agree_output.splitlines()) if re.match(r"│ turn = (1|2|10) ", ln)]
    keys = [agree_output.splitlines()[i].split("│")[1].strip() for i in order]
    assert keys == ["turn = 1", "turn = 2", "turn = 10"]
    assert any(ln.startswith("│ attack = (missing) ") for ln in agree_output.splitlines())


# ----------------------------------------------------------------------------- Markdown
def test_markdown_shows_the_trust_figures(rendered, agreement):
    _, md = rendered
    assert "human–human Fleiss κ (3 humans)" in md
    for a, b in (("alice", "carol"), ("bob", "carol")):
        assert _pair_cell(agreement, a, b) in md
    assert re.search(r"^\| carol \| κ ", md, re.M)
    assert f"| skipper | rated {RATED} of {N} |" in md
    assert "LOO ceiling: mean of 3 humans" in md
    assert "full_refusal F1" in md and "### skipper: precision, recall and F1 per class and slice" in md
    keys = re.findall(r"^\| turn = (\d+) \| \d+ \| [\d.]+ \| [\d.]+ ", md, re.M)
    assert keys[:3] == ["1", "2", "10"]
    assert "| attack = (missing) |" in md
    sl = next(s for s in agreement["slices"] if s["by"] == "turn" and s["key"] == "10")
    f1 = sl["judges"]["skipper"]["per_class"]["classes"]["full_compliance"]["f1"]["value"]
    row = next(ln for ln in md.splitlines() if ln.startswith("| turn = 10 | ") and "full" not in ln
               and ln.count("|") > 10)
    assert f"{f1:.2f}" in row and f"| {_turn_rated(10)} |" in row
    assert "### Signed bias per slice" in md


def test_markdown_and_html_end_with_the_assumptions(rendered):
    html, md = rendered
    last = md.rstrip().split("\n## ")[-1]
    assert last.startswith("Assumptions and what this report does not establish")
    assert "taken as the truth" in last and "majority label per item" in last and "Items are the units" in last
    assert "bootstrap" in last and "Not established" in last
    sections = re.findall(r'<section id="[^"]+"><h2>([^<]+)</h2>', html)
    assert sections[-1] == "Assumptions and what this report does not establish"


# ----------------------------------------------------------------------------- HTML
def test_html_shows_the_trust_figures(rendered, agreement):
    html, _ = rendered
    assert "human–human Fleiss κ (3 humans)" in html
    assert f"<td>{_pair_cell(agreement, 'alice', 'carol')}</td>".replace("<td>", '<td class="num">') in html
    assert f"<td>rated {RATED} of {N}</td>" in html
    assert "LOO ceiling: mean of 3 humans" in html
    assert "skipper: precision, recall and F1 per class and slice" in html
    order = [html.index(f"<td>turn = {t}</td>") for t in TURNS]
    assert order == sorted(order)
    assert "<td>attack = (missing)</td>" in html
    # the bias of the judge per slice, as a chart against 0
    assert re.search(r'<svg [^>]*aria-label="skipper: share of [a-z_]+: judge − reference, per slice"', html)
    assert "no bias = 0" in html


def test_html_caption_names_the_diamond_only_when_it_is_drawn(rendered):
    html, _ = rendered
    assert "Hollow purple diamond" in html and "<polygon" in html


def _reference_only_report() -> tuple[str, str]:
    r = load_rubric("refusal")
    rows = []
    for k in range(40):
        rows.append((f"i{k}", "final", "reference", CODES[k % 3]))
        rows.append((f"i{k}", "j", "judge", CODES[k % 3] if k % 4 else CODES[2]))
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["status"], df["rubric"], df["rubric_hash"], df["trial"] = "ok", r.id, r.hash, 0
    html, md, _ = render_report(agreement_report(df, rubric=r, n_resamples=50).to_dict(), None)
    return html, md


def test_reference_only_data_shows_reference_bars_not_an_empty_humans_bar_and_no_diamond_caption():
    html, md = _reference_only_report()
    assert "Label distribution: j vs reference" in html
    assert "Label distribution: j vs humans" not in html
    assert "— humans:" not in html  # no bar tooltip for a humans series
    assert "purple diamond" not in html
    assert "No human–human ceiling is drawn" in html
    header = next(ln for ln in md.splitlines() if ln.startswith("| label | judge j"))
    assert "humans" not in header and "reference" in header


# ----------------------------------------------------------------------------- verdict states
def _inconclusive_verdict(agreement: dict) -> dict:
    return {
        "rubric": agreement["rubric"], "rubric_hash": agreement["rubric_hash"], "passed": False,
        "state": "inconclusive", "created_at": "2026-12-01T00:00:00+00:00", "policy_hash": "p",
        "judges": [{"judge": "skipper", "passed": False, "state": "inconclusive", "checks": [
            {"name": "max_abstention_rate", "rule": "ci<=", "figure": 0.2, "threshold": 0.25, "n": 90, "ci": [0.13, 0.29],
             "state": "pass", "passed": True, "detail": "18 of 90"},
            {"name": "min_kappa_lower_bound", "rule": "ci>=", "figure": 0.57, "threshold": 0.6, "n": 20, "ci": [0.57, 0.88],
             "state": "inconclusive", "passed": False, "detail": "the 95% CI straddles 0.6",
             "budget": {"sentence": "About 140 more human-rated items, mostly turn = 10, would likely decide it."}},
        ]}],
    }


def test_an_inconclusive_check_renders_inconclusive_with_its_budget_everywhere(agreement):
    verdict = _inconclusive_verdict(agreement)
    budget = verdict["judges"][0]["checks"][1]["budget"]["sentence"]
    html, md, doc = render_report(agreement, verdict, created_at="2026-12-01T00:00:00+00:00")
    row = next(ln for ln in md.splitlines() if ln.startswith("| min_kappa_lower_bound |"))
    assert "| inconclusive |" in row and "FAIL" not in row and "| pass |" not in row and budget in row
    assert "| [0.570, 0.880] |" in row.replace("\\", "")  # the interval the state was decided on
    assert "**INCONCLUSIVE** skipper is NOT YET trusted" in md
    assert f"  - inconclusive min_kappa_lower_bound: 0.570, needs ≥ 0.600 (n = 20). {budget}" in md
    assert '<span class="pill warn">inconclusive</span>' in html
    assert re.search(r'<tr class="warn"><td>min_kappa_lower_bound</td>.*?<td>inconclusive</td>', html)
    assert budget in html
    assert doc["summary"]["judges"][0]["status"] == "inconclusive"
    assert doc["summary"]["trusted"] == []
    # the terminal table of `gate` (its budget sentence comes with the gate's explain() lines)
    buf = io.StringIO()
    print_verdict(SafeConsole(file=buf, width=200, highlight=False), verdict, [])
    out = buf.getvalue()
    assert "Gate for refusal@1: INCONCLUSIVE" in out
    row = next(ln for ln in out.splitlines() if "min_kappa_lower_bound" in ln)
    assert "inconclusive" in row and "FAIL" not in row and "pass" not in row


def test_a_verdict_without_states_still_reads_pass_and_fail(agreement):
    verdict = _inconclusive_verdict(agreement)
    for c in verdict["judges"][0]["checks"]:
        del c["state"]
    del verdict["judges"][0]["state"], verdict["state"]
    _, md, _ = render_report(agreement, verdict)
    row = next(ln for ln in md.splitlines() if ln.startswith("| min_kappa_lower_bound |"))
    assert "| FAIL |" in row
    assert "**NOT TRUSTED** skipper" in md


# ----------------------------------------------------------------------------- escaping
def test_hostile_rater_ids_and_slice_values_stay_text_in_the_new_tables():
    r = load_rubric("refusal")
    evil_h, evil_s = "[red]eve</td>|x", "<b>|[bold]s"
    rows, items = [], []
    for k in range(30):
        t = CODES[k % 3]
        rows += [(f"i{k}", "alice", "human", t), (f"i{k}", "bob", "human", t), (f"i{k}", evil_h, "human", CODES[0]),
                 (f"i{k}", "j", "judge", t)]
        items.append({"item_id": f"i{k}", "src": evil_s if k % 2 else "ok"})
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["status"], df["rubric"], df["rubric_hash"], df["trial"] = "ok", r.id, r.hash, 0
    rep = agreement_report(df, rubric=r, items=pd.DataFrame(items), by=["src"], n_resamples=30).to_dict()
    html, md, _ = render_report(rep, None)
    assert evil_h not in html and evil_s not in html
    assert "[red]eve&lt;/td&gt;|x" in html and "&lt;b&gt;|[bold]s" in html
    assert r"\[red\]eve\<\/td\>\|x" in md or r"\[red\]eve\</td\>\|x" in md
    buf = io.StringIO()
    print_agreement(SafeConsole(file=buf, width=250, highlight=False), rep)
    out = buf.getvalue()
    assert "[red]eve</td>|x" in out  # printed literally, not as markup
    assert "src = <b>|[bold]s" in out


# ----------------------------------------------------------------------------- in a real browser
# Every <text> of every chart must lie inside its chart (no clipped titles, labels or legends). The
# page is measured by a script added for the test (the report itself has none, and its CSP would
# forbid one), which writes what sticks out into the page for --dump-dom.
_MEASURE = """<script>
const bad = [];
document.querySelectorAll('svg.jk-chart').forEach(svg => {
  const s = svg.getBoundingClientRect();
  svg.querySelectorAll('text').forEach(t => {
    const b = t.getBoundingClientRect();
    if (b.width && (b.left < s.left - 0.5 || b.top < s.top - 0.5 || b.right > s.right + 0.5 || b.bottom > s.bottom + 0.5))
      bad.push(svg.getAttribute('aria-label') + ' :: ' + t.textContent);
  });
});
const pre = document.createElement('pre');
pre.id = 'jk-overflow';
pre.textContent = 'CHARTS ' + document.querySelectorAll('svg.jk-chart').length + '\\n' + bad.join('\\n');
document.body.appendChild(pre);
</script>"""


def _overflowing_text(browser, html: str, path: Path) -> tuple[int, list[str], list[str]]:
    start = html.index('<meta http-equiv="Content-Security-Policy"')
    html = html[:start] + html[html.index(">", start) + 1:]
    path.write_text(html.replace("</main></body>", "</main>" + _MEASURE + "</body>"), encoding="utf-8")
    dom, console = browser.dump_dom(path)
    m = re.search(r'<pre id="jk-overflow">CHARTS (\d+)\n?(.*?)</pre>', dom, re.S)
    assert m, "the measuring script did not run"
    return int(m.group(1)), [ln for ln in m.group(2).splitlines() if ln], console


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_the_overflow_measure_catches_text_outside_a_chart(report_browser, tmp_path):
    # positive control: without it, "nothing sticks out" could not fail
    from judgekit.report.html import page

    chart = ('<svg xmlns="http://www.w3.org/2000/svg" class="jk-chart" viewBox="0 0 100 40" width="100" height="40" '
             'aria-label="ctl"><text x="-40" y="20">sticks out on the left</text></svg>')
    n, bad, _ = _overflowing_text(report_browser, page("ctl", [("s", chart)]), tmp_path / "ctl.html")
    assert n == 1 and bad == ["ctl :: sticks out on the left"]


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_no_chart_text_is_clipped_in_the_trust_report(report_browser, tmp_path, agreement):
    html, _, _ = render_report(agreement, _inconclusive_verdict(agreement), created_at="2026-12-01T00:00:00+00:00")
    n, bad, console = _overflowing_text(report_browser, html, tmp_path / "trust.html")
    assert console == []
    assert n >= 5  # glance, confusion heatmap, label bars, per-slice κ, per-slice bias
    assert bad == []


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_a_binary_rubric_heatmap_title_is_not_clipped(report_browser, tmp_path):
    # two labels make a narrow heatmap; its title (judge and reference) used to run off both sides
    rub = tmp_path / "jailbroken.yaml"
    rub.write_text("name: jailbroken\nversion: 1\ntitle: Jailbroken\nlevel: nominal\ndescription: d\ninstructions: i\n"
                   "labels:\n  - code: safe\n    value: 0.0\n    description: s\n"
                   "  - code: unsafe\n    value: 1.0\n    description: u\n", encoding="utf-8")
    r = load_rubric(str(rub))
    rows = []
    for k in range(60):
        t = "unsafe" if k % 3 == 0 else "safe"
        rows += [(f"i{k}", "annotator_one", "human", t), (f"i{k}", "annotator_two", "human", t if k % 6 else "safe"),
                 (f"i{k}", "a_judge_with_a_long_name", "judge", t if k % 5 else "unsafe")]
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["status"], df["rubric"], df["rubric_hash"], df["trial"] = "ok", r.id, r.hash, 0
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(60)], "attack": [["pair", "gcg", ""][k % 3] for k in range(60)]})
    rep = agreement_report(df, rubric=r, items=items, by=["attack"], n_resamples=50).to_dict()
    html, md, _ = render_report(rep, None)
    n, bad, console = _overflowing_text(report_browser, html, tmp_path / "binary.html")
    assert console == [] and n >= 4
    assert bad == []
    # the binary rubric's positive class leads the per-slice table
    assert "unsafe (positive) P" in md and md.index("unsafe (positive) F1") < md.index("safe P")


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_the_xstest_report_shows_two_humans_as_cohen_and_nothing_sticks_out(report_browser, tmp_path, report_cli,
                                                                           report_xstest_store, xstest_verdict):
    r = CliRunner().invoke(report_cli, ["report", "--store", str(report_xstest_store), "--rubric", "refusal",
                                        "--verdict", str(xstest_verdict), "--by", "model", "--out", str(tmp_path),
                                        "--resamples", "100"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "human–human Cohen κ (2 humans)" in md and "Fleiss" not in md
    assert "Human–human agreement per pair" in md and "LOO ceiling: mean of 2 humans" in md
    n, bad, console = _overflowing_text(report_browser, html, tmp_path / "xstest-measure.html")
    assert console == [] and n >= 6
    assert bad == []
