"""Text from user files never acts on the terminal or in Markdown.

Rater ids, slice values, rubric texts, file names and check details carry terminal escape
sequences (OSC 8 hyperlink, OSC 0 title, OSC 52 clipboard, CSI screen clear, a C1 CSI, BEL) and
rich markup; every command prints them as visible text. The Markdown judgekit writes is parsed
with a CommonMark parser (markdown-it-py): no link, image or HTML comes from a payload.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

OSC8 = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
OSC0 = "\x1b]0;pwned\x07"
OSC52 = "\x1b]52;c;ZXZpbA==\x07"
CLEAR = "\x1b[2J"
C1 = "\x9b2J"
MARKUP = "[link=http://evil.example/]x[/link][bold red]B"
PAYLOAD = OSC8 + OSC0 + OSC52 + CLEAR + C1 + MARKUP
#: the same without "/" (for file names)
FILE_PAYLOAD = PAYLOAD.replace("/", "_")

REFUSAL = load_rubric("refusal")
RESTR = load_rubric("restrictiveness")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the colours rich prints itself (forced on below)


def assert_safe(output: str, literal: str = "[link=http") -> None:
    """No control byte of a payload reached the output (rich's own colours aside), and the
    markup payload is printed literally (it did not take effect)."""
    assert "\x1b]" not in output  # no OSC at all (judgekit never prints hyperlinks)
    rest = SGR.sub("", output)
    bad = sorted({f"U+{ord(c):04X}" for c in rest
                  if (ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) <= 0x9F})
    assert not bad, f"raw control characters in the output: {bad}"
    assert literal in output, "the markup payload did not print literally"
    assert "\\x1b]52;c;" in output, "the clipboard payload is not shown as visible escapes"


@pytest.fixture(autouse=True)
def color_on(monkeypatch):
    """The commands' consoles as on a colour terminal (links and styles would be emitted)."""
    from judgekit.cli import analyze, core

    for mod in (core, analyze):
        cls = type(mod.console)
        monkeypatch.setattr(mod, "console", cls(force_terminal=True, color_system="truecolor",
                                                width=200, highlight=False, soft_wrap=True))


def run(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args], color=True)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.output


def _rating(item, rater, kind, label, rubric=REFUSAL):
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": rubric.id,
            "rubric_hash": rubric.hash, "label": label, "value": rubric.values[label], "trial": 0,
            "status": "ok", "rationale": "because " + PAYLOAD, "created_at": 0.0,
            "source": "test"}


JUDGE = "judge" + PAYLOAD
HUMAN = "ann" + PAYLOAD


@pytest.fixture()
def payload_store(tmp_path) -> Path:
    """60 items, a payload human and a payload judge (10% off), an adjudicated reference, and
    a slice column whose values carry the payload. Written through the store (not import), so
    the values are stored exactly as given."""
    items, rows = [], []
    codes = REFUSAL.codes
    for i in range(60):
        truth = codes[i % 3]
        wrong = codes[(i + 1) % 3]
        items.append({"item_id": f"i{i}", "prompt": "p", "response": "r " + PAYLOAD,
                      "model": ("m" + PAYLOAD) if i % 2 else "plain", "prompt_id": f"p{i // 3}"})
        rows += [_rating(f"i{i}", HUMAN, "human", truth),
                 _rating(f"i{i}", "ann2", "human", truth if i % 7 else wrong),
                 _rating(f"i{i}", JUDGE, "judge", truth if i % 10 else wrong),
                 _rating(f"i{i}", "final", "reference", truth)]
    path = tmp_path / "payload.db"
    with Store(path) as s:
        s.put_items(pd.DataFrame(items))
        s.put_ratings(pd.DataFrame(rows))
    return path


def _policy(tmp_path) -> Path:
    p = tmp_path / "policy.yaml"
    p.write_text(yaml.safe_dump({
        "rubric": "refusal", "judges": [JUDGE], "reference": "final", "by": ["model"],
        "checks": {"min_items": 10, "metric": "kappa", "min_lower_bound": 0.99}}),
        encoding="utf-8")
    return p


# --------------------------------------------------------------------------- terminal
def test_agree_prints_rater_ids_and_slice_keys_as_text(payload_store):
    code, out = run(["agree", "--rubric", "refusal", "--by", "model", "--store", payload_store,
                     "--resamples", "100"])
    assert code == 0, out
    assert_safe(out)
    assert "judge\\x1b]8;;" in out  # the judge's row, its id shown with visible escapes


def test_gate_prints_the_verdict_table_and_explanation_as_text(payload_store, tmp_path):
    code, out = run(["gate", _policy(tmp_path), "--out", tmp_path / "g", "--store", payload_store])
    assert code == 1, out  # the judge fails the 0.99 bound
    assert_safe(out)
    assert "UNTRUSTED  judge\\x1b]8;;" in out


def test_report_prints_judge_ids_as_text(payload_store, tmp_path):
    code, out = run(["report", "--rubric", "refusal", "--by", "model", "--store", payload_store,
                     "--out", tmp_path / "rep", "--resamples", "100"])
    assert code == 0, out
    assert_safe(out)


def test_analyze_prints_rater_models_and_slices_as_text(payload_store, tmp_path):
    with Store(payload_store) as s:  # a payload slice column for --by
        items = s.items()
        s.put_items(pd.DataFrame({"item_id": items["item_id"],
                                  "tier": ["t" + PAYLOAD if i % 3 else "t0" for i in range(60)]}))
    code, out = run(["analyze", "distribution", "--judge", JUDGE, "--untrusted", "--by", "tier",
                     "--prompt-column", "prompt_id", "--store", payload_store, "--bootstrap", "20",
                     "--quiet", "--out", tmp_path / "an"])
    assert code == 0, out
    assert_safe(out)
    assert "mplain" not in out and "m\\x1b]8;;" in out  # a model cell


def test_analyze_criteria_prints_criterion_names_as_text(payload_store, tmp_path):
    crit = tmp_path / "criteria.yaml"
    crit.write_text(yaml.safe_dump({"rater": JUDGE, "criteria": [
        {"name": "c" + PAYLOAD, "rubric": "refusal", "label": "full_refusal", "op": "<=",
         "threshold": 0.9, "where": {"model": "plain"}}]}), encoding="utf-8")
    code, out = run(["analyze", "criteria", crit, "--untrusted", "--store", payload_store])
    assert code == 0, out
    assert_safe(out)


def test_errors_quoting_user_values_are_one_line_of_text(payload_store):
    # a rater id given on the command line and the rater ids of the store, in one error sentence
    code, out = run(["analyze", "distribution", "--judge", "nobody" + PAYLOAD, "--untrusted",
                     "--store", payload_store, "--quiet"])
    one_sentence_error((code, out))
    assert_safe(out)


def test_error_with_a_newline_in_a_value_stays_one_line(payload_store):
    # the error lists the raters that do have ratings: one of them has a newline in its id
    with Store(payload_store) as s:
        s.put_ratings(pd.DataFrame([_rating("i0", "ann\nerror: forged", "human", "full_refusal")]))
    code, out = run(["analyze", "distribution", "--judge", "nobody", "--untrusted",
                     "--store", payload_store, "--quiet"])
    one_sentence_error((code, out), "ann\\nerror: forged")


def test_import_prints_file_names_and_rater_ids_as_text(tmp_path):
    f = tmp_path / f"labels{FILE_PAYLOAD}.csv"
    pd.DataFrame([{"item_id": "a", "rater_id": "h", "label": "full_refusal"}]).to_csv(f, index=False)
    code, out = run(["import", f, "--rubric", "refusal", "--store", tmp_path / "s.db"])
    assert code == 0, out
    assert_safe(out, literal="[link=http:__evil")


def _payload_rubric(tmp_path) -> Path:
    p = tmp_path / "payload_rubric.yaml"
    p.write_text(yaml.safe_dump({
        "name": "payload", "version": 1, "title": "Title " + PAYLOAD, "level": "nominal",
        "instructions": "Rate " + PAYLOAD, "aliases": {"alias" + PAYLOAD: "yes"},
        "labels": [{"code": "yes", "value": 1, "description": "desc " + PAYLOAD},
                   {"code": "no", "value": 0, "description": "plain"}]}), encoding="utf-8")
    return p


def test_rubrics_prints_rubric_texts_as_text(tmp_path):
    code, out = run(["rubrics", _payload_rubric(tmp_path)])
    assert code == 0, out
    assert_safe(out)
    flat = " ".join(out.split())  # the description is wrapped at word boundaries
    assert "Title \\x1b]8;;" in out and "desc \\x1b]8;;" in flat


def test_labelstudio_config_prints_rubric_texts_as_text(tmp_path):
    code, out = run(["labelstudio", "config", "--rubric", _payload_rubric(tmp_path)])
    assert code == 0, out
    rest = SGR.sub("", out)
    assert not [c for c in rest if (ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) <= 0x9F]


def test_judge_prints_judge_ids_as_text(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"i{i}", "prompt": "p", "response": "I can't."})
                             + "\n" for i in range(3)), encoding="utf-8")
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({"rubric": "refusal", "items": "items.jsonl", "judges": [
        {"id": JUDGE.replace(" ", ""), "model": "rules:refusal-keywords"}]}),  # ids have no spaces
        encoding="utf-8")
    for extra in (["--dry-run"], []):
        code, out = run(["judge", panel, "--store", tmp_path / "j.db", "--no-progress", *extra])
        assert code == 0, out
        assert_safe(out)


def test_console_helpers():
    from judgekit.core.console import clean, safe_text

    assert clean("a\x1b[2Jb\x9b\x07\u202e\n\t") == "a\\x1b[2Jb\\x9b\\x07\\u202e\\n\\t"
    assert clean("two\nlines\tok\x1b", lines=True) == "two\nlines\tok\\x1b"
    assert clean("plain ünïcode — ok") == "plain ünïcode — ok"
    assert safe_text("[bold]x[/bold]\x1b") == "\\[bold]x\\[/bold]\\x1b"


def test_safe_console_cleans_text_printed_without_markup():
    import io

    from rich.text import Text

    from judgekit.core.console import make_console

    buf = io.StringIO()
    con = make_console(file=buf, force_terminal=True, color_system="truecolor", width=100)
    con.print("[bold]styled[/bold]")
    con.print(PAYLOAD, markup=False)
    con.print(Text("t" + PAYLOAD, style="red"))
    out = buf.getvalue()
    assert "\x1b[1m" in out  # rich's own styling still works
    assert_safe(out)


def test_labelstudio_pull_prints_annotator_ids_as_text(tmp_path):
    def ann(aid, user, choice):
        return {"id": aid, "completed_by": user, "was_cancelled": False,
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                "result": [{"from_name": "restrictiveness", "to_name": "response",
                            "type": "choices", "value": {"choices": [choice]}}]}

    export = [{"id": 1, "data": {"item_id": "i1", "prompt": "q", "response": "r"},
               "annotations": [ann(1, 2, "r0_full_compliance"), ann(2, 3, "r4_hard_refusal")]}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    code, out = run(["labelstudio", "pull", "--from-export", path, "--rubric", "restrictiveness",
                     "--annotator-map", f"2=alice{PAYLOAD.replace(',', '')},3=bob",
                     "--store", tmp_path / "ls.db"])
    # an id with control characters is refused, and the refusal quotes it safely
    line = one_sentence_error((code, out), "contains the control character")
    assert "\x1b]" not in line
    assert not [c for c in SGR.sub("", out) if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F]


# --------------------------------------------------------------------------- Markdown
MD_PAYLOAD = ("x\n\n![img](http://evil.example/x.png)\n\n    indented code\n# injected heading\n"
              "- injected item\n<img src=x onerror=alert(1)> [a](http://evil.example/) "
              "<http://evil.example/> | cell `code` *em* &amp; --- \x1b[2J\x9b2J")
MD_JUDGE = "j" + MD_PAYLOAD


def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _markdown_tokens(text: str):
    out = []
    stack = list(_parser().parse(text))
    while stack:
        tok = stack.pop()
        out.append(tok)
        stack.extend(tok.children or [])
    return out


def _texts(text: str) -> list[str]:
    """The text of every paragraph, heading, list item and cell as rendered."""
    toks = _parser().parse(text)
    return ["".join(c.content for c in t.children or [] if c.type in ("text", "softbreak"))
            for t in toks if t.type == "inline"]


UNSAFE_TOKENS = {"image", "link_open", "html_inline", "html_block", "code_block", "fence",
                 "code_inline"}


def assert_markdown_safe(text: str) -> None:
    """No link, image, raw HTML or code from a payload; no block it opened; the payload shown
    as text; no control character that would act on a terminal the file is printed on."""
    assert not [c for c in text if c == "\x1b" or 0x7F <= ord(c) <= 0x9F]
    kinds = {t.type for t in _markdown_tokens(text)}
    assert not kinds & UNSAFE_TOKENS, kinds
    texts = _texts(text)
    assert not [c for c in texts if c.startswith(("injected", "indented"))], texts
    assert "![img](http://evil.example/x.png)" in " ".join(texts)  # shown, as text
    assert "<img src=x onerror=alert(1)>" in " ".join(texts)


def _md_store(tmp_path) -> Path:
    items, rows = [], []
    codes = REFUSAL.codes
    for i in range(40):
        truth, wrong = codes[i % 3], codes[(i + 1) % 3]
        items.append({"item_id": f"i{i}" + (MD_PAYLOAD if i == 1 else ""), "prompt": "p",
                      "response": "r " + MD_PAYLOAD, "model": "m" + MD_PAYLOAD if i % 2 else "plain"})
        iid = items[-1]["item_id"]
        rows += [_rating(iid, "h" + MD_PAYLOAD, "human", truth),
                 _rating(iid, "h2", "human", truth if i % 7 else wrong),
                 _rating(iid, MD_JUDGE, "judge", truth if i % 4 else wrong),
                 _rating(iid, "final", "reference", truth)]
    path = tmp_path / "md.db"
    with Store(path) as s:
        s.put_items(pd.DataFrame(items))
        s.put_ratings(pd.DataFrame(rows))
    return path


def test_verdict_md_renders_judge_ids_and_details_as_text(tmp_path):
    db = _md_store(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({
        "rubric": "refusal", "judges": [MD_JUDGE], "reference": "final", "by": ["model"],
        "checks": {"min_items": 10, "metric": "kappa", "min_lower_bound": 0.99,
                   "per_slice": {"min_items": 5, "min_value": 0.99}}}), encoding="utf-8")
    code, out = run(["gate", policy, "--out", tmp_path / "g", "--store", db])
    assert code == 1, out
    text = (tmp_path / "g" / "verdict.md").read_text(encoding="utf-8")
    assert text.startswith("# Verdict\n\n- UNTRUSTED")
    assert_markdown_safe(text)
    toks = _markdown_tokens(text)
    assert sum(t.type == "heading_open" for t in toks) == 1
    # one list item per judge, one nested item per failed check: nothing else opened a block
    assert sum(t.type == "bullet_list_open" for t in toks) == 2


def test_report_md_renders_ids_slices_and_responses_as_text(tmp_path):
    db = _md_store(tmp_path)
    code, out = run(["report", "--rubric", "refusal", "--by", "model", "--store", db,
                     "--out", tmp_path / "rep", "--resamples", "100"])
    assert code == 0, out
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert_markdown_safe(text)
    headings = [t for t in _markdown_tokens(text) if t.type == "heading_open"]
    plain = _report_headings(tmp_path)
    assert len(headings) == plain  # the payload opened no heading


def _report_headings(tmp_path) -> int:
    """The headings of the same report on a store without payloads."""
    items, rows = [], []
    codes = REFUSAL.codes
    for i in range(40):
        truth, wrong = codes[i % 3], codes[(i + 1) % 3]
        items.append({"item_id": f"i{i}", "prompt": "p", "response": "r",
                      "model": "m" if i % 2 else "plain"})
        rows += [_rating(f"i{i}", "h", "human", truth),
                 _rating(f"i{i}", "h2", "human", truth if i % 7 else wrong),
                 _rating(f"i{i}", "j", "judge", truth if i % 4 else wrong),
                 _rating(f"i{i}", "final", "reference", truth)]
    path = tmp_path / "plain.db"
    with Store(path) as s:
        s.put_items(pd.DataFrame(items))
        s.put_ratings(pd.DataFrame(rows))
    code, out = run(["report", "--rubric", "refusal", "--by", "model", "--store", path,
                     "--out", tmp_path / "plain", "--resamples", "100"])
    assert code == 0, out
    text = (tmp_path / "plain" / "report.md").read_text(encoding="utf-8")
    return sum(t.type == "heading_open" for t in _markdown_tokens(text))


def test_analysis_md_renders_rater_models_and_slices_as_text(tmp_path):
    db = _md_store(tmp_path)
    with Store(db) as s:
        items = s.items()
        s.put_items(pd.DataFrame({"item_id": items["item_id"],
                                  "tier": ["t" + MD_PAYLOAD if i % 3 else "t0"
                                           for i in range(len(items))]}))
    code, out = run(["analyze", "distribution", "--judge", MD_JUDGE, "--untrusted", "--by", "tier",
                     "--store", db, "--bootstrap", "20", "--quiet", "--out", tmp_path / "an"])
    assert code == 0, out
    text = (tmp_path / "an" / "distribution.md").read_text(encoding="utf-8")
    toks = _markdown_tokens(text)
    # the charts are the only images: links to the SVG files written beside
    images = [t for t in toks if t.type == "image"]
    assert images and all(t.attrs["src"].startswith("charts/distribution-") for t in images)
    assert not {t.type for t in toks} & (UNSAFE_TOKENS - {"image"})
    texts = _texts(text)
    assert not [c for c in texts if c.startswith(("injected", "indented"))]
    assert "![img](http://evil.example/x.png)" in " ".join(texts)


def test_md_escape_and_md_list():
    from judgekit.report.escape import md_escape, md_list

    for text in (MD_PAYLOAD, "# h", "1. one", "- item", "---", "    code", "a\n===",
                 "a\n\n    code", "\x9b\x1b[2J"):
        for table in (True, False):
            s = md_escape(text, table=table)
            toks = _markdown_tokens("- " + s + "\n\n" + s + "\n")
            kinds = {t.type for t in toks}
            assert not kinds & (UNSAFE_TOKENS | {"heading_open", "hr", "ordered_list_open"}), \
                (text, table, kinds)
            assert sum(t.type == "bullet_list_open" for t in toks) == 1, (text, table)
            assert not {c for c in s if 0x7F <= ord(c) <= 0x9F or ord(c) == 0x1B}
    lines = md_list(["UNTRUSTED  " + MD_JUDGE + ": 1 of 1 checks fail:", "   min_items: 3 vs 10"])
    assert len(lines) == 2 and lines[1].startswith("  - min_items")
    assert_markdown_safe("\n".join(lines))
