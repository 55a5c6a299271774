"""``judgekit gate --sequential``: label in rounds and stop as soon as the figures are decided,
with the error rate still controlled.

Two calibration figures are means over labelled conversations of a bounded per-conversation
value, so an anytime-valid confidence sequence (:func:`judgekit.stats.sequential.sequential_decision`,
the betting CS of Waudby-Smith & Ramdas 2024) decides them round by round:

* RCE_t(judge) − RCE_t(reference) = mean over conversations c of |Rj_ct − H_c| − |Rr_ct − H_c|,
  each term in [−1, 1];
* Drift(t)(judge) − Drift(t)(reference) = mean over c of
  (|Rj_ct − H_c| − |Rj_c1 − H_c|) − (|Rr_ct − H_c| − |Rr_c1 − H_c|), each term in [−2, 2]

(Drift(t) = RCE_t − RCE_1; conversations with both turns rated by the judge and the reference;
look-alikes left out unless the policy includes them). Each such check, per model and turn, is
read at the end of every round and frozen at the first round where its CS lies within ±margin
(pass) or wholly outside it (fail). The sequence is read at level 1 − 2α (the policy's
``alpha``, 0.05 by default: a 90% sequence), and the hedged CS's one-sided errors are each at
most half its 2α, so a figure off by more than the margin passes with probability ≤ α whenever
one stops — the same error as the fixed-n check's two one-sided tests. Its verdict check records the CS at that round as the interval of
|difference| (so the reader re-derives its state by the same ``ci<=`` rule) and the conversations
used. Rounds: the labelled conversations in the order their labels were stored, ``round_size``
per round. Other checks (C, agreement, rates) are fixed-n checks on all labels so far: their
error rate holds for the final n, not for a stopping time chosen by looking at them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import abs_interval
from judgekit.verdict.check import Budget, Check, Subject, interval_of, new_check
from judgekit.verdict.numbers import signed
from judgekit.verdict.read import finite

if TYPE_CHECKING:
    from judgekit.gate.checks import JudgeResult

#: the figures --sequential decides (means over conversations)
SEQUENTIAL_FIGURES = ("RCE_t", "drift")


def _per_conversation(store: Any, policy: Any, rubric: Any, report: Any, judge: str) -> Any:
    """Per labelled conversation and turn: |R − H| of the judge and of the reference, with the
    conversation's model and its order (first stored reference label)."""
    import pandas as pd

    from judgekit.analysis.frames import per_item_values
    from judgekit.gate.fidelity import harm_of

    spec = policy.checks.analysis_fidelity
    ref_id = (report.data.get("reference") or {}).get("rater")
    if not ref_id or ref_id == "consensus":
        raise JudgekitError("--sequential needs a named reference rater (reference: in the policy), whose "
                            "labels arrive in rounds; consensus has no order.")
    ref = store.ratings(rubric=rubric, rater_ids=[ref_id])
    order = {iid: k for k, iid in enumerate(dict.fromkeys(ref["item_id"].astype(str)))}
    rv = per_item_values(ref, rubric).set_index("item_id")["value"]
    jv = per_item_values(store.ratings(rubric=rubric, rater_ids=[judge]), rubric).set_index("item_id")["value"]
    items = store.items()
    items = items.assign(item_id=items["item_id"].astype(str))
    h = harm_of(store, items, spec)  # as the fixed gate: the harm column, else the human harm ratings
    conv = "conversation_id" if "conversation_id" in items.columns else spec.prompt_column
    if conv is None or conv not in items.columns:
        raise JudgekitError("--sequential needs a conversation_id column (or analysis_fidelity prompt_column).")
    df = pd.DataFrame({"item_id": items["item_id"], "model": items[spec.model_column].astype(str),
                       "conv": items[conv].astype(str),
                       "turn": pd.to_numeric(items[spec.turn_column], errors="coerce")})
    if not spec.include_lookalikes and spec.lookalike_column in items.columns:
        look = items[spec.lookalike_column].astype(str).str.lower().isin(("true", "1", "yes"))
        df = df[~look.to_numpy()]
    df = df.assign(h=df["item_id"].map(h), rj=df["item_id"].map(jv), rr=df["item_id"].map(rv),
                   order=df["item_id"].map(order))
    df = df.dropna(subset=["h", "rj", "rr", "turn"])
    df = df.assign(ej=(df["rj"] - df["h"]).abs(), er=(df["rr"] - df["h"]).abs())
    first = df.groupby("conv")["order"].min()
    return df.assign(conv_order=df["conv"].map(first))


def sample_rounds(store: Any, names: list[str]) -> dict[str, int]:
    """item id → its round: the position (0-based) of the first of the recorded samples ``names``
    (the labelling batches `judgekit sample` recorded, in the order given) that holds it. A name
    the store does not hold is one sentence."""
    have = set(store.sample_names()) if hasattr(store, "sample_names") else set()
    out: dict[str, int] = {}
    for r, name in enumerate(names):
        if name not in have:
            raise JudgekitError(f"--rounds names the sample {name!r}, which the store does not hold; recorded "
                                f"samples: {', '.join(sorted(have)) or 'none'}.")
        for row in store.sample_rows(name):
            out.setdefault(str(row.item_id), r)
    return out


def sequential_checks(store: Any, policy: Any, rubric: Any, report: Any, *, round_size: int,
                      rounds_of: dict[str, int] | None = None) -> tuple[dict[str, list[Check]], dict[str, Any]]:
    """judge → its sequential fidelity checks (module doc), and the rounds record of the verdict.
    ``rounds_of`` (item id → round, :func:`sample_rounds`): a conversation's round is that of its
    first item in a sample; labelled conversations in no sample form one last round."""
    import numpy as np

    from judgekit.stats.sequential import sequential_decision

    spec = policy.checks.analysis_fidelity
    if spec is None or spec.analysis != "calibration" or not set(spec.chosen) & set(SEQUENTIAL_FIGURES):
        raise JudgekitError("--sequential decides the calibration figures RCE_t and drift round by round; add one "
                            "of them to the policy's analysis_fidelity (analysis: calibration).")
    out: dict[str, list[Check]] = {}
    n_conv = 0
    decided_at: dict[str, int] = {}
    for judge in policy.judges:
        df = _per_conversation(store, policy, rubric, report, judge)
        convs = df.drop_duplicates("conv").sort_values("conv_order")["conv"].tolist()
        n_conv = max(n_conv, len(convs))
        if rounds_of is not None:
            first = df.assign(r=df["item_id"].map(rounds_of)).groupby("conv")["r"].min()
            last = len(set(rounds_of.values()))
            round_of = {c: int(first[c]) if first[c] == first[c] else last for c in convs}
        else:
            round_of = {c: k // round_size for k, c in enumerate(convs)}
        checks: list[Check] = []
        for model in sorted(df["model"].unique()):
            dm = df[df["model"] == model]
            wide_j = dm.pivot_table(index="conv", columns="turn", values="ej", aggfunc="mean")
            wide_r = dm.pivot_table(index="conv", columns="turn", values="er", aggfunc="mean")
            turns = sorted(wide_j.columns)
            for fig in (f for f in spec.chosen if f in SEQUENTIAL_FIGURES):
                margin = spec.margin(fig)
                for t in turns:
                    if fig == "drift" and t == turns[0]:
                        continue
                    if fig == "drift":
                        x = (wide_j[t] - wide_j[turns[0]]) - (wide_r[t] - wide_r[turns[0]])
                        bounds = (-2.0, 2.0)
                    else:
                        x = wide_j[t] - wide_r[t]
                        bounds = (-1.0, 1.0)
                    x = x.dropna()
                    rk = np.array([round_of[c] for c in x.index])
                    xs = x.to_numpy(float)[np.argsort(rk, kind="stable")]
                    rk = np.sort(rk)
                    n_rounds = int(rk.max()) + 1 if len(rk) else 0
                    rounds = [xs[rk == r] for r in range(n_rounds)]
                    cell = f"{fig}(model={model}, turn={int(t)})"
                    subject = Subject(analysis="calibration", figure=fig, cell=cell, model=str(model), turn=str(int(t)))
                    if not len(xs):
                        ch = new_check("analysis_fidelity", judge, None, margin, 0,
                                       f"no labelled conversation of {model} at turn {int(t)}", subject=subject,
                                       unit="conversations", min_n=spec.min_units,
                                       floor="conversations is below min_units")
                        checks.append(ch.with_budget(Budget(None, f"{ch.name}: label conversations of {model}.")))
                        continue
                    # a (1 − 2α) sequence: each one-sided error ≤ α, as the fixed-n check (two one-sided tests)
                    dec = sequential_decision(rounds, margin, "within", 2 * spec.alpha, bounds=bounds)
                    lo, hi = dec.interval
                    used = dec.n_used
                    mean = float(xs[:used].mean())
                    ci = [finite(v) for v in abs_interval(lo, hi)]
                    where = (f"decided at round {dec.round} of {n_rounds}" if dec.round is not None
                             else f"not decided after {n_rounds} rounds")
                    ch = new_check("analysis_fidelity", judge, finite(abs(mean)), margin, used, (
                        f"sequential calibration {cell}: judge − reference "
                        f"{signed(mean)}, anytime-valid {100 * spec.level:.4g}% confidence sequence [{signed(lo)}, {signed(hi)}] on {used} "
                        f"conversations, {where} ({'recorded samples' if rounds_of is not None else f'rounds of {round_size}'}); "
                        f"|difference| must stay within {margin:g}"),
                        interval=interval_of(ci, "confidence-sequence", spec.level), subject=subject,
                        unit="conversations", min_n=spec.min_units, floor="conversations is below min_units")
                    if ch.state == "inconclusive":
                        ch = ch.with_budget(Budget(round_size, (
                            f"{ch.name}: about {round_size} more conversations (another round) would likely help decide "
                            "it; run `judgekit gate --sequential` again after labelling them (a sequential check needs "
                            "about 2.5–3× the single-look budget)."), {}, round_size, "conversations (another round)"))
                    elif dec.round is not None:
                        decided_at[f"{judge}: {ch.name}"] = dec.round
                    checks.append(ch)
        out[judge] = checks
    n_rounds_all = (-(-n_conv // round_size) if n_conv else 0) if rounds_of is None else len(set(rounds_of.values()))
    return out, {"round_size": round_size if rounds_of is None else None, "rounds": n_rounds_all, "conversations": n_conv,
                 "figures": [f for f in spec.chosen if f in SEQUENTIAL_FIGURES], "decided_at_round": decided_at}


def apply_sequential(results: list[JudgeResult], seq: dict[str, list[Check]]) -> None:
    """Replace each judge's fixed-n checks of the sequential figures by the sequential ones
    (same names); the judge's state and budget follow from its checks."""
    for r in results:
        kept = [ch for ch in r.checks if ch.kind != "analysis_fidelity" or ch.subject.figure not in SEQUENTIAL_FIGURES]
        r.checks = kept + seq.get(r.judge, [])
