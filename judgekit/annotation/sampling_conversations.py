"""The ``--by-conversation`` sampling design: whole conversations for people to rate.

Per-turn figures (Drift(t) = RCE_t − RCE_1, C(t), the refusal rate at turn t) compare turns of the
*same* conversations; a human sample of scattered items rarely holds turn 1 and turn 6 of one
conversation, so it cannot check them (the gate's ``analysis_fidelity`` then stays
inconclusive). This design draws conversations, not items:

1. ``stratum`` — at least ``min_per_stratum`` conversations of every stratum (the strata columns
   of a conversation's first item), drawn at random within it;
2. ``conversation`` — then conversations drawn at random from the rest until the chosen items
   reach ``size`` (whole conversations, so the last one may go past it).

``min_per_stratum`` counts conversations and ``size`` items: when the floor alone (strata ×
``min_per_stratum`` conversations × their turns) exceeds ``size``, the floor wins and a
``warning:`` note says so.

Every item of a chosen conversation is chosen. Within a stratum the chosen conversations are a
uniform random subset of its conversations, so each item's ``weight`` is ``N_s / n_s``
(conversations of the stratum / chosen ones), and ``overlap`` marks whole conversations (a share
``overlap`` of the chosen ones) for two annotators. An item without a conversation id is a
conversation of its own. Judge signals are not used: targeting disagreements would make the
conversations a biased sample of the turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.store.schema import is_missing


@dataclass
class ConversationDraw:
    """The design (``item_id, reason, stratum, weight, overlap``) and what to say about it."""

    design: pd.DataFrame
    conversations: int
    population_conversations: int
    uncovered: int
    notes: list[str] = field(default_factory=list)


def draw_conversations(
    items: pd.DataFrame,
    stratum: np.ndarray,
    *,
    size: int,
    column: str,
    min_per_stratum: int,
    overlap: float,
    seed: int,
    source: str,
) -> ConversationDraw:
    """Choose whole conversations (module doc). ``stratum`` holds each item's stratum key
    (empty when there are no strata); ``column`` names the conversation."""
    if column not in items.columns:
        have = ", ".join(c for c in items.columns if c not in ("prompt", "messages", "response", "content_hash"))
        raise JudgekitError(
            f"{source}: by_conversation needs the conversation column {column!r}, which is not item "
            f"metadata (items have: {have}); give --conversation-column."
        )
    pop = items.reset_index(drop=True)
    ids = pop["item_id"].astype(str).to_numpy()
    raw = pop[column].tolist()
    lonely = sum(is_missing(v) or v == "" for v in raw)
    conv = np.array([f"\x1fitem:{i}" if is_missing(v) or v == "" else str(v) for v, i in zip(raw, ids, strict=True)],
                    dtype=object)
    notes = []
    if lonely:
        notes.append(f"{lonely} items have no {column}: each is a conversation of its own.")
    codes, uniq = pd.factorize(conv)
    n_conv = len(uniq)
    first = pd.Series(range(len(pop))).groupby(codes).first().to_numpy()
    conv_stratum = np.asarray(stratum, dtype=object)[first]
    conv_size = np.bincount(codes, minlength=n_conv)
    rng = np.random.default_rng(seed)
    reason = np.full(n_conv, None, dtype=object)
    if min_per_stratum:
        for key in pd.unique(conv_stratum):
            cand = np.flatnonzero(conv_stratum == key)
            if len(cand) < min_per_stratum:
                notes.append(f"stratum {key or '(all)'} has {len(cand)} conversations, fewer than "
                             f"{min_per_stratum}: all are chosen.")
            k = min(min_per_stratum, len(cand))
            reason[rng.choice(cand, k, replace=False) if k < len(cand) else cand] = "stratum"
    chosen_items = int(conv_size[reason != None].sum())  # noqa: E711 (elementwise)
    if min_per_stratum and chosen_items > size:
        n_strata = len(pd.unique(conv_stratum))
        notes.append(
            f"warning: --min-per-stratum {min_per_stratum} conversations in each of the "
            f"{n_strata} strata alone takes {chosen_items} items, more than --size {size}, and "
            f"wins: {chosen_items} items are chosen (lower --min-per-stratum, or use fewer --by "
            "columns, to keep to --size)."
        )
    for c in rng.permutation(np.flatnonzero(reason == None)):  # noqa: E711
        if chosen_items >= size:
            break
        reason[c] = "conversation"
        chosen_items += int(conv_size[c])
    if size > len(pop):
        notes.append(f"size {size} exceeds the {len(pop)} items available: all are chosen.")
    picked = np.flatnonzero(reason != None)  # noqa: E711
    n_s = pd.Series(conv_stratum).value_counts()
    k_s = pd.Series(conv_stratum[picked]).value_counts()
    conv_weight = np.array([n_s[s] / k_s[s] if s in k_s.index else np.nan for s in conv_stratum])
    over = np.zeros(n_conv, dtype=int)
    k_over = round(overlap * len(picked))
    if k_over:
        over[rng.choice(picked, min(k_over, len(picked)), replace=False)] = 1
    sel = np.flatnonzero(reason[codes] != None)  # noqa: E711
    design = pd.DataFrame({
        "item_id": ids[sel],
        "reason": reason[codes][sel].astype(str),
        "stratum": [s if s else None for s in np.asarray(stratum, dtype=object)[sel]],
        "weight": conv_weight[codes][sel].astype(float),
        "overlap": over[codes][sel],
    })
    order = {"stratum": 0, "conversation": 1}
    design = design.sort_values("reason", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    uncovered = int(np.isnan(conv_weight[codes]).sum())
    return ConversationDraw(design=design, conversations=len(picked), population_conversations=n_conv,
                            uncovered=uncovered, notes=notes)
