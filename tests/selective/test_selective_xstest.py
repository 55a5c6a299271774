"""The demo's selective-judging step on XSTest v2, checked against the CSV with pandas."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console

from judgekit.selective.demo import xstest_selective
from judgekit.stats.selective import clopper_pearson_upper

ANN = Path(__file__).resolve().parents[2] / "annotations"


def _code(v: object) -> str | None:
    m = re.fullmatch(r"\d_(full_compliance|full_refusal|partial_refusal)", str(v))
    return m.group(1) if m else None


def test_xstest_cascade_guarantee_coverage_and_escalated(xstest_store, tmp_path):
    console = Console(record=True, width=200)
    out, doc = xstest_selective(xstest_store, ANN, tmp_path, console)
    text = console.export_text()

    # --- the same calibration by hand from the CSV -------------------------------------------
    d = pd.read_csv(ANN / "xstest-v2" / "xstest_v2_labels.csv").sort_values("item_id").reset_index(drop=True)
    d["sm"], d["g4"], d["h"] = d.strmatch_label.map(_code), d.gpt4_label.map(_code), d.final_label.map(_code)
    perm = np.random.default_rng(0).permutation(len(d))  # the policy's split: fraction 0.5, seed 0
    cal = d.iloc[np.sort(perm[:1125])]
    held = d.iloc[np.sort(perm[1125:])]
    # string match, trusted where it says full_refusal: even those items fail alpha = 0.15
    sm_kept = cal[cal.sm == "full_refusal"]
    k_sm = int((sm_kept.sm != sm_kept.h).sum())
    assert clopper_pearson_upper(k_sm, len(sm_kept), 0.05) > 0.15
    # so GPT-4 sees all 1125; support 1 where the string match agrees: passes; all 1125 fail
    agree = cal[cal.g4 == cal.sm]
    k_g4 = int((agree.g4 != agree.h).sum())
    assert clopper_pearson_upper(k_g4, len(agree), 0.05) <= 0.15
    k_all = int((cal.g4 != cal.h).sum())
    assert clopper_pearson_upper(k_all, 1125, 0.05) > 0.15
    assert out["coverage"] == round(len(agree) / 1125, 4)
    # held out: kept where the two judges agree; escalated the rest
    h_agree = held[held.g4 == held.sm]
    assert out["held_out_coverage"] == round(len(h_agree) / len(held), 4)
    assert out["held_out_agreement"] == round(float((h_agree.g4 == h_agree.h).mean()), 4)
    assert out["held_out_agreement"] >= 0.85  # the guarantee, realised on this split
    assert out["escalated"] == len(held) - len(h_agree)

    # --- what the demo prints and writes ------------------------------------------------------
    pct = round(100 * len(agree) / 1125)
    assert (f"On the {pct}% of items it keeps (confidence >= 0.5001), judge gpt4's expected agreement "
            "with the humans (final) is >= 0.85 with probability >= 0.95 over the calibration "
            "sample") in " ".join(text.split())  # the console wraps the sentence
    assert "string_match     keeps nothing" in text
    assert f"escalated to people: {out['escalated']} of the {len(held)} held-out items" in text
    assert json.loads((tmp_path / "selective.json").read_text()) == doc
    assert "Cost per kept label: unknown" in text  # imported labels: no recorded calls
    assert sorted(doc["held_out_escalated"]) == sorted(held[held.g4 != held.sm].item_id)


def test_report_section_escapes_and_states_the_guarantee(xstest_store, tmp_path):
    from xml.etree import ElementTree

    from judgekit.report.selective import html_section, markdown_section

    _, doc = xstest_selective(xstest_store, ANN, tmp_path, Console(record=True, width=200))
    evil = "<script>x</script>|*"
    doc["stages"][1]["judge"] = evil
    doc["curves"][evil] = doc["curves"].pop("gpt4")
    html = html_section(doc)
    assert "<script>" not in html and "&lt;script&gt;" in html
    svg = html[html.index("<svg"):]
    ElementTree.fromstring(svg)  # well-formed
    assert "judge gpt4&#x27;s expected agreement with the humans (final) is &gt;= 0.85 with probability &gt;= 0.95 over the calibration sample" in html
    md = "\n".join(markdown_section(doc))
    assert "<script>x</script>|" not in md
    assert "Cost per kept label: unknown" in md
    assert "exchangeable" in md
