"""The labelling page shows no empty time range beside each turn.

Label Studio's dialogue layout prints ``start - end`` beside each turn's role; judgekit's turns
carry no times, so every turn read ``00:00:00 - 00:00:00``. The generated config hides that span with CSS
(:data:`judgekit.annotation.labelstudio.config.HIDE_TURN_TIME`) and the task data carry no
time keys. The browser check applies the config's ``<Style>`` and Label Studio's own stylesheet
(from the installed release) to the markup its Paragraphs component renders, with the class
names read from its bundle, and asks Chromium whether the time span is displayed; the same page
without judgekit's style is the positive control (there the span shows).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

import pandas as pd
import pytest

from judgekit.annotation.labelstudio.config import HIDE_TURN_TIME, label_config
from judgekit.annotation.labelstudio.tasks import task_data
from judgekit.rubric.model import load_rubric

pytest_plugins = ["tests.report_fixtures"]

REPO = Path(__file__).resolve().parents[2]


def _style(config: str) -> str:
    style = ET.fromstring(config).find("Style")
    assert style is not None and style.text
    return style.text


def test_config_hides_the_turn_time_inside_the_conversation_only():
    root = ET.fromstring(label_config([load_rubric("refusal")]))
    assert HIDE_TURN_TIME in _style(label_config([load_rubric("refusal")]))
    # the Paragraphs sit in the View the rule is scoped to (other Label Studio views keep their times)
    wrap = next(v for v in root.iter("View") if v.get("className") == "jk-conversation")
    assert [p.get("name") for p in wrap.iter("Paragraphs")] == ["conversation"]
    # Label Studio escapes <, >, & and quotes in a <Style>: the rule must need none of them
    assert not set("<>&\"'") & set(HIDE_TURN_TIME)


def test_task_turns_carry_no_time_keys():
    # a multi-turn item whose messages carry extra keys (start, end, duration, timestamp): the
    # task's turns are role and content only, so nothing could fill the time range
    msgs = [{"role": "user", "content": "hi", "start": 0, "end": 3, "timestamp": "2024-01-01T00:00:00Z"},
            {"role": "assistant", "content": "hello", "duration": 2}]
    items = pd.DataFrame([{"item_id": "c1/t2", "messages": json.dumps(msgs), "response": "r", "turn": 2}])
    tasks = task_data(items)
    turns = tasks[0]["messages"]
    assert [sorted(t) for t in turns] == [["content", "role"], ["content", "role"]]


def _ls_dist() -> Path:
    venv = Path(os.environ.get("JUDGEKIT_LS_VENV") or REPO / ".cache" / "labelstudio-venv")
    if not any(venv.glob("lib/python*/site-packages/web/dist/apps/labelstudio")):
        proc = subprocess.run(["bash", str(REPO / "scripts" / "labelstudio-server.sh"), "install"],
                              capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, f"Label Studio could not be installed: {proc.stderr[-2000:]}"
    found = sorted(venv.glob("lib/python*/site-packages/web/dist/apps/labelstudio"))
    assert found, f"no Label Studio frontend under {venv}"
    return found[0]


@pytest.mark.labelstudio
@pytest.mark.browser
@pytest.mark.timeout(1500)
def test_label_studio_dialogue_turns_show_no_time_range(report_browser, tmp_path):
    dist = _ls_dist()
    bundle = "".join(p.read_text(errors="replace") for p in dist.glob("*.js"))
    # the CSS-module names of the Paragraphs component in this release
    m = re.search(r'newUI:"(newUI--[\w-]+)".{0,200}?titleWrapper:"(titleWrapper--[\w-]+)",time:"(time--[\w-]+)"', bundle)
    assert m, "the Label Studio bundle no longer names Paragraphs' titleWrapper/time classes: check the rule"
    new_ui, wrapper, time = m.groups()
    css = "".join(p.read_text(errors="replace") for p in dist.glob("*.css"))
    assert f".{time}" in css  # Label Studio styles the span: it is shown unless hidden

    def page(name: str, extra_style: str) -> Path:
        turns = "".join(
            f'<div class="{new_ui}"><span class="{wrapper}" data-skip-node="true"><span>{role}</span>'
            f'<span class="{time}" id="t{k}"> - </span></span><span><span>{escape(text)}</span></span></div>'
            for k, (role, text) in enumerate([("user", "hi"), ("assistant", "hello")]))
        probe = ("<script>document.body.setAttribute('data-shown', Array.from(document.querySelectorAll("
                 f"'.{time}')).map(e => getComputedStyle(e).display).join(','));</script>")
        html = (f"<!doctype html><html><head><style>{css}</style><style>{extra_style}</style></head><body>"
                f'<div class="jk-conversation">{turns}</div>{probe}</body></html>')
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        return path

    style = _style(label_config([load_rubric("refusal")]))
    dom, _ = report_browser.dump_dom(page("with.html", style))
    assert 'data-shown="none,none"' in dom
    control, _ = report_browser.dump_dom(page("without.html", ""))
    shown = re.search(r'data-shown="([^"]*)"', control)
    # Label Studio alone shows the time range (a flex item of the title row: computed display "block")
    assert shown and len(shown.group(1).split(",")) == 2 and "none" not in shown.group(1).split(",")
