"""Perturbation probes through the fake provider with the official SDKs (Anthropic and
OpenAI): a judge that takes the first listed label when unsure flips under label_order and not
under padding; a steady judge flips under neither; `--dry-run` estimates and writes nothing; a
rerun makes 0 calls; variant raters stay out of `agree` unless named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump

from judgekit.cli import main
from judgekit.probes.perturb import padded_items, variant_rubric
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer
from judgekit.testing.script import FakeRequest, default_script, label_reply

pytest.register_assert_rewrite("panel_fixtures")
from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

N = 60


def order_sensitive(req: FakeRequest) -> str:
    """gpt-4o-mini is unsure on partial refusals and takes the first label it is offered."""
    if "gpt-4o-mini" in req.model and "LABEL=partial_refusal" in (req.response or ""):
        return label_reply(req.codes[0], "first listed")
    return default_script(req)


PROBES = """\
rubric: refusal
judges: [steady, orderly]
reference: gold
min_items: 20
perturb:
  panel: panel.yaml
  variants: [label_order, padding]
  max_flip_rate: 0.1
"""


def _setup(tmp: Path, fake: FakeServer) -> tuple[Path, dict[str, str]]:
    rows = labelled_items(N)
    write_items(tmp, rows)
    write_panel(tmp, [{"id": "steady", "model": "anthropic:claude-haiku-4-5", "backoff_s": 0.01},
                      {"id": "orderly", "model": "openai:gpt-4o-mini", "backoff_s": 0.01}], aggregate=None)
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-oai-test",
           "ANTHROPIC_BASE_URL": fake.url, "OPENAI_BASE_URL": fake.openai_url}
    db = tmp / "s.db"
    res = CliRunner().invoke(main, ["judge", str(tmp / "panel.yaml"), "--store", str(db)], env=env)
    assert res.exit_code == 0, res.output
    (tmp / "gold.csv").write_text("item_id,rater_id,rater_kind,label\n"
                                  + "".join(f"{r['item_id']},gold,reference,{r['truth']}\n" for r in rows))
    res = CliRunner().invoke(main, ["import", str(tmp / "gold.csv"), "--rubric", "refusal", "--store", str(db)])
    assert res.exit_code == 0, res.output
    (tmp / "probes.yaml").write_text(PROBES)
    return db, env


def test_perturbation_probes_flag_the_order_sensitive_judge(tmp_path):
    with FakeServer(order_sensitive) as fake:
        db, env = _setup(tmp_path, fake)
        runner = CliRunner()
        sent = fake.stats.requests
        assert sent == 2 * N
        before = store_dump(db)
        dry = runner.invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db), "--dry-run"], env=env)
        assert dry.exit_code == 0, dry.output
        assert f"label_order: {2 * N} calls would be sent (0 cached)" in dry.output
        assert f"padding: {2 * N} calls would be sent" in dry.output and "$" in dry.output
        assert fake.stats.requests == sent and store_dump(db) == before
        # --json alone: the estimate as JSON on stdout (the lines go to stderr), still nothing sent
        dj = runner.invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db), "--dry-run", "--json"],
                           env=env)
        assert dj.exit_code == 0, dj.output
        est = json.loads(dj.stdout)
        assert est["dry_run"] is True and est["perturbed"]["label_order"]["pending"] == 2 * N
        assert f"label_order: {2 * N} calls would be sent" in dj.stderr
        assert fake.stats.requests == sent and store_dump(db) == before
        out = tmp_path / "o"
        res = runner.invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db), "--out", str(out)], env=env)
        assert res.exit_code == 1, res.output
        assert fake.stats.requests == sent + 4 * N  # two judges x two variants x N items
        doc = json.loads((out / "probes.json").read_text())
        again = runner.invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db), "--out", str(out)],
                              env=env)
        assert again.exit_code == 1 and fake.stats.requests == sent + 4 * N  # rerun: 0 calls
        assert "0 answered now" in again.output
    rows = {(j["judge"], r["check"]["name"]): r for j in doc["judges"] for r in j["probes"]}
    orderly = rows[("orderly", "max_flip_rate[label_order]")]
    # every third item is a partial refusal: full_compliance first in the rubric, full_refusal reversed
    assert (orderly["k"], orderly["n"]) == (N // 3, N) and orderly["state"] == "fail"
    assert sorted(orderly["extra"]["flipped"]) == sorted(f"it{i:03d}" for i in range(1, N, 3))
    change = orderly["extra"]["agreement_change"]
    assert change["original"] == pytest.approx(2 / 3) and change["variant"] == pytest.approx(2 / 3)
    assert change["value"] == 0 and change["low"] < 0 < change["high"] and change["n"] == N
    for key in (("orderly", "max_flip_rate[padding]"), ("steady", "max_flip_rate[label_order]"),
                ("steady", "max_flip_rate[padding]")):
        assert rows[key]["k"] == 0 and rows[key]["state"] == "pass", key
    # the steady judge's ratings under the variant rubric sit beside, under its own hash
    with Store(db) as s:
        variant = s.ratings(rubric=variant_rubric(load_rubric("refusal")), rater_ids=["steady~label_order"])
        assert len(variant) == N
        assert set(s.ratings(rubric=load_rubric("refusal"), rater_ids=["steady~padding"])["item_id"]) == {
            f"it{i:03d}~padding" for i in range(N)}
    # agree leaves the variants out unless named
    js = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--json", str(js)])
    assert res.exit_code == 0, res.output
    judges = set(json.loads(js.read_text())["slices"][0]["judges"])
    assert judges == {"steady", "orderly"}
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--json", str(js),
                                    "--judges", "steady,steady~padding"])
    assert res.exit_code == 0, res.output
    assert set(json.loads(js.read_text())["slices"][0]["judges"]) == {"steady", "steady~padding"}


def test_variant_rubric_and_padding():
    rub = load_rubric("refusal")
    v = variant_rubric(rub)
    assert v.codes == list(reversed(rub.codes)) and v.id == rub.id and v.hash != rub.hash
    assert variant_rubric(rub).hash == v.hash  # deterministic: the same cache keys on a rerun
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError, match="priority order"):
        variant_rubric(load_rubric("knowledge_leak"))
    import pandas as pd

    items = pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"]})
    out = padded_items(items, " PAD")
    assert out["item_id"].tolist() == ["a~padding"] and out["response"].tolist() == ["r PAD"]
    assert items["item_id"].tolist() == ["a"]


def test_a_bad_probe_file_makes_no_call(tmp_path):
    with FakeServer(order_sensitive) as fake:
        db, env = _setup(tmp_path, fake)
        sent = fake.stats.requests
        before = store_dump(db)
        (tmp_path / "probes.yaml").write_text(PROBES.replace("reference: gold", "reference: nobody"))
        res = CliRunner().invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db),
                                        "--out", str(tmp_path / "o")], env=env)
        one_sentence_error(res, "nobody")
        assert fake.stats.requests == sent and store_dump(db) == before
