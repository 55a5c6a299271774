"""Token log-probabilities as a judgment's confidence: the fake provider returns them, the OpenAI
judge reads them, each call records its label's probability, selective judging reads it."""

from __future__ import annotations

import json
import math

import pytest

from judgekit.errors import JudgekitError
from judgekit.judges.openai import parse_chat_completion, read_token_logprobs
from judgekit.judges.panel import load_panel, run_panel
from judgekit.judges.record import label_probability
from judgekit.selective.judgments import load_call_confidence, read_judgments
from judgekit.selective.policy import SelectivePolicy
from judgekit.store.calls import call_rows
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer
from judgekit.testing.providers import openai_completion
from judgekit.testing.script import FakeRequest, Reply

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

PREFIX = '{"rationale": "r", "label": "'


def _tokens(label: str, lp: tuple[float, float]) -> list[tuple[str, float]]:
    """The answer in tokens; the label spelled by two tokens of log-probabilities ``lp``."""
    cut = len(label) // 2
    return [(PREFIX[:10], -0.5), (PREFIX[10:], -0.25), (label[:cut], lp[0]), (label[cut:], lp[1]),
            ('"}', -0.01)]


def test_label_probability_is_the_product_over_the_label_tokens() -> None:
    toks = _tokens("full_refusal", (-0.1, -0.2))
    raw = "".join(t for t, _ in toks)
    assert raw == PREFIX + 'full_refusal"}'
    # exp(-0.1 - 0.2): the prefix and the closing tokens do not count
    assert label_probability(raw, toks, "full_refusal") == pytest.approx(math.exp(-0.3), abs=1e-15)
    # a token straddling the label's start counts (the quote and the label's first letters)
    straddle = [(PREFIX[:-1], -0.5), ('"ful', -0.7), ('l_refusal"}', -0.05)]
    assert label_probability(PREFIX + 'full_refusal"}', straddle, "full_refusal") == pytest.approx(math.exp(-0.75))
    # the label alone (no JSON) is found bare
    assert label_probability("full_refusal", [("full", -1.0), ("_refusal", 0.0)], "full_refusal") == pytest.approx(math.exp(-1))
    # nothing guessed: tokens that are not the answer, a label not in it, no tokens
    assert label_probability(raw, toks[:-1], "full_refusal") is None
    assert label_probability(raw, toks, "partial_refusal") is None
    assert label_probability(raw, None, "full_refusal") is None


def test_quoted_label_wins_over_a_mention_in_the_rationale() -> None:
    raw = '{"rationale": "not a full_refusal", "label": "full_compliance"}'
    toks = [(raw[:29], -2.0), (raw[29:-2], -0.3), (raw[-2:], 0.0)]
    # full_compliance appears only quoted; its tokens: the one holding it (-0.3)
    assert label_probability(raw, toks, "full_compliance") == pytest.approx(math.exp(-0.3))


@pytest.mark.parametrize("content", [
    [{"token": "a", "logprob": 0.5}],  # a probability above 1
    [{"token": "a", "logprob": "x"}],
    [{"token": 1, "logprob": -0.1}],
    [{"token": "a", "logprob": True}],
    [{"token": "a"}],
    ["a"],
])
def test_malformed_logprobs_are_refused_whole_and_the_answer_stands(content) -> None:
    body = openai_completion(1, "m", "full_refusal", input_tokens=1, output_tokens=1, cached_tokens=0)
    body["choices"][0]["logprobs"] = {"content": content}
    done = parse_chat_completion(json.dumps(body).encode())
    assert done.raw == "full_refusal" and done.tokens is None
    # NaN from a body (json reads it): refused too
    text = json.dumps(body).replace(json.dumps(content), '[{"token": "a", "logprob": NaN}]')
    assert parse_chat_completion(text.encode()).tokens is None


def test_read_token_logprobs_well_formed() -> None:
    choice = {"logprobs": {"content": [{"token": "a", "logprob": -1}, {"token": "b", "logprob": -0.5}]}}
    assert read_token_logprobs(choice) == [("a", -1.0), ("b", -0.5)]
    assert read_token_logprobs({"logprobs": None}) is None


def _script(req: FakeRequest) -> Reply:
    """Answers the item's LABEL=; the label's two tokens have log-probability -0.1 each on items
    whose number is even and -1.0 each on odd ones."""
    import re

    m = re.search(r"LABEL=([a-z_]+)", req.response or "")
    n = int(re.search(r"Question (\d+)", req.user).group(1))  # type: ignore[union-attr]
    label = m.group(1) if m else "full_compliance"
    lp = (-0.1, -0.1) if n % 2 == 0 else (-1.0, -1.0)
    toks = _tokens(label, lp)
    return Reply("".join(t for t, _ in toks), logprobs=toks)


def test_panel_records_the_label_probability_and_selective_reads_it(tmp_path, monkeypatch) -> None:
    rows = labelled_items(6)
    write_items(tmp_path, rows)
    with FakeServer(script=_script, keep_requests=20) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-key")
        panel = write_panel(tmp_path, [
            {"id": "lp", "model": f"openai-compatible:{fake.openai_url}#qwen", "options": {"logprobs": True},
             "structured": False},
            {"id": "plain", "model": f"openai-compatible:{fake.openai_url}#qwen2", "structured": False},
        ])
        with Store(tmp_path / "s.db") as store:
            assert run_panel(load_panel(panel), store).complete
            calls = {(c.judge_id, c.item_id): c for c in call_rows(store)}
            assert all(r.body.get("logprobs") is True for r in fake.requests if r.model == "qwen")
            assert not any("logprobs" in r.body for r in fake.requests if r.model == "qwen2")
            for i in range(6):
                want = math.exp(-0.2) if i % 2 == 0 else math.exp(-2.0)
                assert calls[("lp", f"it{i:03d}")].confidence == pytest.approx(want, abs=1e-12)
                assert calls[("plain", f"it{i:03d}")].confidence is None
            # human labels for selective judging: the truth
            import pandas as pd

            from judgekit.rubric.model import load_rubric

            rub = load_rubric("refusal")
            store.put_ratings(pd.DataFrame([
                {"item_id": r["item_id"], "rater_id": "final", "rater_kind": "reference", "rubric": rub.id,
                 "rubric_hash": rub.hash, "label": r["truth"], "value": rub.values[r["truth"]], "trial": 0,
                 "status": "ok", "rationale": None, "created_at": 0.0, "source": "t"} for r in rows]))
            pol = SelectivePolicy(rubric="refusal", reference="final", alpha=0.1, delta=0.1, cascade=[
                {"judge": "lp", "confidence": {"source": "logprobs"}},
                {"judge": "plain", "confidence": {"source": "logprobs"}}])
            cc = load_call_confidence(store, pol)
            j = read_judgments(store, pol, call_confidence=cc)
    conf = dict(zip(j.item_ids, j.confidences[0], strict=True))
    assert conf["it000"] == pytest.approx(math.exp(-0.2)) and conf["it001"] == pytest.approx(math.exp(-2.0))
    # a judge whose calls recorded no probability has no confidence: never kept
    assert all(math.isnan(c) for c in j.confidences[1])


def test_logprobs_asked_of_a_judge_that_cannot_is_refused(tmp_path, fake, api_env) -> None:
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "c", "model": "anthropic:claude-haiku-4-5",
                                    "options": {"logprobs": True}}])
    with Store(tmp_path / "s.db") as store, pytest.raises(JudgekitError, match="asks for logprobs"):
        run_panel(load_panel(panel), store)
