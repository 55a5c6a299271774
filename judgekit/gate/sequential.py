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
used; an undecided check's budget is the conversations (labels, not rounds) that would likely
decide it, within what the study can still supply.

**Rounds are the order the labels arrived** (issue 34): optional stopping is valid only when the
order of the conversations does not depend on their values. So a round is one or more
consecutive writes of the reference's labels (one import, one pull: :func:`label_arrivals`), at
least ``round_size`` new conversations each; the rows inside one file are never cut into rounds
(their order is whoever wrote the file's). ``--rounds`` names recorded samples instead; each must
have been recorded before any of its labels was stored, in the order named. A conversation joins
the round in which its last label arrived. The verdict records each round's writes (their
digests). Other checks (C, agreement, rates) are fixed-n checks on all labels so far: their error
rate holds for the final n, not for a stopping time chosen by looking at them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import abs_interval
from judgekit.verdict.check import Budget, Check, Subject, interval_of, new_check
from judgekit.verdict.numbers import signed, signed_pair
from judgekit.verdict.read import finite

if TYPE_CHECKING:
    import pandas as pd

    from judgekit.gate.checks import JudgeResult
    from judgekit.verdict.fidelity_policy import AnalysisFidelity

#: the figures --sequential decides (means over conversations)
SEQUENTIAL_FIGURES = ("RCE_t", "drift")


@dataclass(frozen=True)
class Rounds:
    """The rounds of a sequential gate: item id → its round (0-based), and what each round is
    (for the verdict: the writes or the sample it holds and their digests)."""

    of_item: dict[str, int]
    record: list[dict[str, Any]]
    how: str


def per_conversation(items: pd.DataFrame, h: pd.Series, judge: pd.Series, ref: pd.Series,
                     spec: AnalysisFidelity, conv: str) -> pd.DataFrame:
    """Per item of a conversation with H and both ratings: ``item_id, model, conv, turn, ej, er``
    (|R − H| of the judge and of the reference), look-alikes left out unless the policy includes
    them. ``h``, ``judge``, ``ref``: values by item id."""
    import pandas as pd

    df = pd.DataFrame({"item_id": items["item_id"].astype(str), "model": items[spec.model_column].astype(str),
                       "conv": items[conv].astype(str),
                       "turn": pd.to_numeric(items[spec.turn_column], errors="coerce")})
    if not spec.include_lookalikes and spec.lookalike_column in items.columns:
        look = items[spec.lookalike_column].astype(str).str.lower().isin(("true", "1", "yes"))
        df = df[~look.to_numpy()]
    df = df.assign(h=df["item_id"].map(h), rj=df["item_id"].map(judge), rr=df["item_id"].map(ref))
    df = df.dropna(subset=["h", "rj", "rr", "turn"])
    return df.assign(ej=(df["rj"] - df["h"]).abs(), er=(df["rr"] - df["h"]).abs())


def _study(store: Any, policy: Any, rubric: Any, report: Any) -> tuple[Any, str, str]:
    """The items (ids as text), their conversation column and the reference's id."""
    spec = policy.checks.analysis_fidelity
    ref_id = (report.data.get("reference") or {}).get("rater")
    if not ref_id or ref_id == "consensus":
        raise JudgekitError("--sequential needs a named reference rater (reference: in the policy), whose "
                            "labels arrive in rounds; consensus has no order.")
    items = store.items()
    items = items.assign(item_id=items["item_id"].astype(str))
    conv = "conversation_id" if "conversation_id" in items.columns else spec.prompt_column
    if conv is None or conv not in items.columns:
        raise JudgekitError("--sequential needs a conversation_id column (or analysis_fidelity prompt_column).")
    return items, conv, str(ref_id)


def _digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


def arrival_rounds(store: Any, rubric: Any, ref_id: str, conv_of: dict[str, str], round_size: int) -> Rounds:
    """Rounds from the writes of the reference's labels in the order they were stored: consecutive
    writes gathered until a round holds at least ``round_size`` conversations new to it (one write
    is never split: the order of rows inside it is the file's)."""
    from judgekit.store.arrivals import label_arrivals

    of_item: dict[str, int] = {}
    record: list[dict[str, Any]] = []
    seen: set[str] = set()
    new = 0
    for a in label_arrivals(store, rubric, ref_id):
        if not record or new >= round_size:
            record.append({"round": len(record) + 1, "writes": [], "conversations": 0})
            new = 0
        fresh = {conv_of[i] for i in a.item_ids if i in conv_of} - seen
        seen |= fresh
        new += len(fresh)
        record[-1]["writes"].append({"provenance": a.group, "digest": _digest(list(a.item_ids))})
        record[-1]["conversations"] += len(fresh)
        for i in a.item_ids:
            of_item[i] = len(record) - 1
    return Rounds(of_item, record, f"rounds of at least {round_size} conversations in the order their labels were stored")


def sample_rounds(store: Any, rubric: Any, ref_id: str, names: list[str]) -> Rounds:
    """Rounds from the recorded samples ``names`` (in the order given): a conversation's round is
    that of the first of them holding one of its items. Refused in one sentence: a name the store
    does not hold, a sample recorded after labels of its items were stored (its content may have
    been chosen knowing them), or names out of the order the samples were recorded."""
    from judgekit.store.arrivals import label_arrivals, sample_recorded_at

    have = set(store.sample_names())
    stored_at = {i: a.stored_at for a in label_arrivals(store, rubric, ref_id) for i in a.item_ids}
    of_item: dict[str, int] = {}
    record: list[dict[str, Any]] = []
    last: tuple[str, float] | None = None
    for r, name in enumerate(names):
        if name not in have:
            raise JudgekitError(f"--rounds names the sample {name!r}, which the store does not hold; recorded "
                                f"samples: {', '.join(sorted(have)) or 'none'}.")
        at = sample_recorded_at(store, name) or 0.0
        if last is not None and at < last[1]:
            raise JudgekitError(f"--rounds names {name!r} after {last[0]!r}, but {name!r} was recorded first; "
                                "rounds are in the order the samples were drawn and labelled: name them in that order.")
        ids = [str(row.item_id) for row in store.sample_rows(name)]
        early = [i for i in ids if stored_at.get(i, at) < at]
        if early:
            raise JudgekitError(f"--rounds names the sample {name!r}, recorded after labels of {len(early):,} of its "
                                f"items were stored (e.g. {early[0]!r}); a round is a sample drawn before its labels "
                                "arrived — drop it from --rounds or use --round-size (rounds in the order labels were stored).")
        for i in ids:
            of_item.setdefault(i, r)
        record.append({"round": r + 1, "sample": name, "digest": _digest(ids)})
        last = (name, at)
    if last is not None:
        _no_batch_left_out(store, names, last, stored_at, of_item)
    return Rounds(of_item, record, "recorded samples")


def _no_batch_left_out(store: Any, names: list[str], last: tuple[str, float], stored_at: dict[str, float],
                       of_item: dict[str, int]) -> None:
    """Refuse (one sentence) ``--rounds`` that leave out a batch: a sample recorded before the last
    one named, drawn before its labels and holding labelled items no named sample holds — choosing
    which batches count, after seeing their labels, would choose the first look."""
    from judgekit.store.arrivals import sample_recorded_at

    for name in sorted(set(store.sample_names()) - set(names)):
        at = sample_recorded_at(store, name) or 0.0
        if at >= last[1]:
            continue
        labelled = [i for i in (str(row.item_id) for row in store.sample_rows(name)) if i in stored_at]
        if labelled and all(stored_at[i] >= at for i in labelled) and any(i not in of_item for i in labelled):
            raise JudgekitError(f"--rounds leaves out the sample {name!r}, drawn before {last[0]!r} and labelled; a "
                                "round cannot be skipped (which batches count would be chosen after seeing their "
                                "labels): name every labelled batch in the order drawn.")


def _conversation_rounds(df: pd.DataFrame, rounds: Rounds) -> dict[str, int]:
    """conversation → its round: the round of its last label (items in no round: one round after all)."""
    last = len(rounds.record)
    r = df["item_id"].map(rounds.of_item).fillna(last)
    return {str(c): int(v) for c, v in r.groupby(df["conv"]).max().items()}


def _cell_values(dm: pd.DataFrame, fig: str) -> list[tuple[int, pd.Series, tuple[float, float]]]:
    """(turn, per-conversation value, its bounds) of ``fig`` in one model's rows."""
    wide_j = dm.pivot_table(index="conv", columns="turn", values="ej", aggfunc="mean")
    wide_r = dm.pivot_table(index="conv", columns="turn", values="er", aggfunc="mean")
    turns = sorted(wide_j.columns)
    out = []
    for t in turns:
        if fig == "drift" and t == turns[0]:
            continue
        if fig == "drift":
            x = (wide_j[t] - wide_j[turns[0]]) - (wide_r[t] - wide_r[turns[0]])
            out.append((int(t), x.dropna(), (-2.0, 2.0)))
        else:
            out.append((int(t), (wide_j[t] - wide_r[t]).dropna(), (-1.0, 1.0)))
    return out


@dataclass(frozen=True)
class Cell:
    """One sequential check's data: its figure, model and turn, the per-conversation values
    (indexed by conversation) and their bounds."""

    figure: str
    model: str
    turn: int
    x: pd.Series
    bounds: tuple[float, float]


def _one_check(judge: str, spec: AnalysisFidelity, c: Cell, round_of: dict[str, int], how: str,
               left: int | None) -> tuple[Check, int | None]:
    """The sequential check of one cell, and the round (1-based) that decided it."""
    import numpy as np

    from judgekit.gate.budget import label_budget
    from judgekit.stats.sequential import sequential_decision

    fig, model, t, x, bounds = c.figure, c.model, c.turn, c.x, c.bounds
    margin = spec.margin(fig)
    cell = f"{fig}(model={model}, turn={t})"
    subject = Subject(analysis="calibration", figure=fig, cell=cell, model=model, turn=str(t))
    if not len(x):
        ch = new_check("analysis_fidelity", judge, None, margin, 0, f"no labelled conversation of {model} at turn {t}",
                       subject=subject, unit="conversations", min_n=spec.min_units,
                       floor="conversations is below min_units")
        return ch.with_budget(Budget(None, f"{ch.name}: label conversations of {model}.")), None
    rk = np.array([round_of[str(c)] for c in x.index])
    order = np.argsort(rk, kind="stable")
    xs, rk = x.to_numpy(float)[order], rk[order]
    n_rounds = int(rk.max()) + 1
    # a (1 − 2α) sequence: each one-sided error ≤ α, as the fixed-n check (two one-sided tests)
    dec = sequential_decision([xs[rk == r] for r in range(n_rounds)], margin, "within", 2 * spec.alpha,
                              bounds=bounds)
    lo, hi = dec.interval
    used = dec.n_used
    mean = float(xs[:used].mean())
    where = (f"decided at round {dec.round} of {n_rounds}" if dec.round is not None
             else f"not decided after {n_rounds} rounds")
    ch = new_check("analysis_fidelity", judge, finite(abs(mean)), margin, used, (
        f"sequential calibration {cell}: judge − reference {signed(mean)}, anytime-valid {100 * spec.level:.4g}% "
        f"confidence sequence [{', '.join(signed_pair(lo, hi))}] on {used} conversations, {where} ({how}); "
        f"|difference| must stay within {margin:g}"),
        interval=interval_of([finite(v) for v in abs_interval(lo, hi)], "confidence-sequence", spec.level),
        subject=subject, unit="conversations", min_n=spec.min_units, floor="conversations is below min_units")
    if ch.state == "inconclusive":  # the need in conversations (labels), within what the study still has
        b = label_budget(ch, available=left)
        ch = ch.with_budget(Budget(b.items, b.sentence.replace("would likely decide it", (
            "would likely decide it (label them, then run `judgekit gate --sequential` again)")), {}, b.need, b.unit))
    return ch, dec.round


def figure_checks(df: pd.DataFrame, judge: str, spec: AnalysisFidelity, round_of: dict[str, int], how: str,
                  left: dict[str, int] | None = None) -> tuple[list[Check], dict[str, int | None], dict[str, int]]:
    """A judge's sequential checks of every model and turn (module doc) from its per-conversation
    rows (:func:`per_conversation`), with ``round_of`` (conversation → round, 0-based) and
    ``left`` (model → conversations the study can still label); and per figure the round (1-based)
    at which it was decided — the first round one of its checks failed, else the round its last
    check passed; None while one is open — and each decided check's round."""
    checks: list[Check] = []
    at_round: dict[str, int] = {}
    decided: dict[str, int | None] = {}
    for fig in (f for f in spec.chosen if f in SEQUENTIAL_FIGURES):
        fails: list[int] = []
        passes: list[int] = []
        open_ = False
        for model in sorted(df["model"].unique()):
            for t, x, bounds in _cell_values(df[df["model"] == model], fig):
                ch, at = _one_check(judge, spec, Cell(fig, str(model), t, x, bounds), round_of, how,
                                    None if left is None else left.get(str(model), 0))
                checks.append(ch)
                if ch.state != "inconclusive" and at is not None:
                    at_round[ch.name] = at
                if ch.state == "fail" and at is not None:
                    fails.append(at)
                elif ch.state == "pass" and at is not None:
                    passes.append(at)
                else:
                    open_ = True
        decided[fig] = min(fails) if fails else (None if open_ or not passes else max(passes))
    return checks, decided, at_round


def _left(items: pd.DataFrame, df: pd.DataFrame, spec: AnalysisFidelity, conv: str) -> dict[str, int]:
    """model → conversations of the study not yet labelled (look-alikes left out as in the figure)."""
    keep = items
    if not spec.include_lookalikes and spec.lookalike_column in items.columns:
        keep = items[~items[spec.lookalike_column].astype(str).str.lower().isin(("true", "1", "yes")).to_numpy()]
    total = keep.groupby(keep[spec.model_column].astype(str))[conv].nunique()
    done = df.groupby("model")["conv"].nunique()
    return {str(m): int(n - done.get(m, 0)) for m, n in total.items()}


def sequential_checks(store: Any, policy: Any, rubric: Any, report: Any, *, round_size: int,
                      rounds: list[str] | None = None) -> tuple[dict[str, list[Check]], dict[str, Any]]:
    """judge → its sequential fidelity checks (module doc), and the rounds record of the verdict.
    ``rounds``: recorded sample names (:func:`sample_rounds`); default the order the labels were
    stored (:func:`arrival_rounds`)."""
    from judgekit.analysis.frames import per_item_values
    from judgekit.gate.fidelity import harm_of

    spec = policy.checks.analysis_fidelity
    if spec is None or spec.analysis != "calibration" or not set(spec.chosen) & set(SEQUENTIAL_FIGURES):
        raise JudgekitError("--sequential decides the calibration figures RCE_t and drift round by round; add one "
                            "of them to the policy's analysis_fidelity (analysis: calibration).")
    items, conv, ref_id = _study(store, policy, rubric, report)
    conv_of = dict(zip(items["item_id"], items[conv].astype(str), strict=True))
    plan = (sample_rounds(store, rubric, ref_id, rounds) if rounds
            else arrival_rounds(store, rubric, ref_id, conv_of, round_size))
    h = harm_of(store, items, spec)  # as the fixed gate: the harm column, else the human harm ratings
    rv = per_item_values(store.ratings(rubric=rubric, rater_ids=[ref_id]), rubric).set_index("item_id")["value"]
    out: dict[str, list[Check]] = {}
    n_conv = 0
    decided_at: dict[str, int] = {}
    figures_at: dict[str, dict[str, int | None]] = {}
    for judge in policy.judges:
        jv = per_item_values(store.ratings(rubric=rubric, rater_ids=[judge]), rubric).set_index("item_id")["value"]
        df = per_conversation(items, h, jv, rv, spec, conv)
        round_of = _conversation_rounds(df, plan)
        n_conv = max(n_conv, len(round_of))
        out[judge], figures_at[judge], at_round = figure_checks(df, judge, spec, round_of, plan.how,
                                                                _left(items, df, spec, conv))
        decided_at.update({f"{judge}: {name}": r for name, r in at_round.items()})
    return out, {"round_size": None if rounds else round_size, "rounds": len(plan.record), "conversations": n_conv,
                 "figures": [f for f in spec.chosen if f in SEQUENTIAL_FIGURES], "decided_at_round": decided_at,
                 "figure_decided_at_round": figures_at, "round_writes": plan.record}


def sequential_lines(verdict: dict[str, Any]) -> list[str]:
    """What a sequential verdict says to do next, per judge: stop labelling when each of its
    sequential figures is decided (the round it was), else which figures are still open."""
    seq = verdict.get("sequential")
    if not isinstance(seq, dict):
        return []
    lines = []
    for judge, figs in (seq.get("figure_decided_at_round") or {}).items():
        open_ = [f for f, r in figs.items() if r is None]
        done = ", ".join(f"{f} at round {r}" for f, r in figs.items() if r is not None)
        if not open_:
            lines.append(f"Sequential: every figure of {judge} is decided ({done}) — stop labelling for it.")
        else:
            n = int(seq.get("rounds") or 0)
            lines.append(f"Sequential: {judge} still has {', '.join(open_)} open after {n} round{'s' * (n != 1)}"
                         + (f" ({done} decided)" if done else "")
                         + "; label the conversations its budget names and run `judgekit gate --sequential` again.")
    return lines


def apply_sequential(results: list[JudgeResult], seq: dict[str, list[Check]]) -> None:
    """Replace each judge's fixed-n checks of the sequential figures by the sequential ones
    (same names); the judge's state and budget follow from its checks."""
    for r in results:
        kept = [ch for ch in r.checks if ch.kind != "analysis_fidelity" or ch.subject.figure not in SEQUENTIAL_FIGURES]
        r.checks = kept + seq.get(r.judge, [])
